package contextengine

import (
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/workspace"
	"golang.org/x/mod/modfile"
)

// Caps: the share of the available budget each source may take in the
// first pass. The required items (question, selection) have no cap. Within
// its cap a source's items are taken by score; sources are allocated by
// priority (see the prio constants). A second pass (fillLeftover) hands the
// budget the caps left unused to what was dropped: definitions first (whole,
// then cut to their first lines), then the other sources by priority. Items
// wholly inside another included item are then dropped as duplicates and
// their tokens go round again. So when the budget runs short the sources
// lose items in this order, from first dropped to last (measured by
// TestDegradationOrder):
//
//	open documents → search hits (lowest score first) → other files'
//	diagnostics → the repo map (re-rendered smaller) → recent edits →
//	surrounding code (trimmed to fewer lines) and the enclosing symbol →
//	definitions of used symbols (lowest score first, long ones cut to their
//	head) → this file's diagnostics → project instructions → diagnostics in
//	the selection
//
// Conversation history and tool results are shortened separately (older
// tool results first; FitHistory). The question and the selection are never
// dropped, only cut as a last resort.
var sourceCaps = map[Source]float64{
	SourceWindow:      0.15,
	SourceEnclosing:   0.20,
	SourceDefinitions: 0.35,
	SourceDiagnostics: 0.10,
	SourceRecentEdits: 0.10,
	SourceRepoMap:     0.15,
	SourceSearch:      0.15,
	SourceOpenDocs:    0.10,
	SourceProject:     0.10,
}

// Largest repo map rendered into the prompt, whatever the budget.
const maxRepoMapTokens = 4096

// identRE finds identifiers in code and questions.
var identRE = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]{2,}`)

// englishStop are the words of a question that say nothing about the code:
// the only words dropped from prose. A Go builtin or keyword named in a
// question is a word like any other there ("how are headers copied" keeps
// copy's stem, "what does append do" keeps append).
var englishStop = map[string]bool{}

// codeStop are words too common in code to look up, on top of
// codeStopIdents (keywords and builtins, compared case-sensitively).
var codeStop = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for with this that from what why how does into when then else
		are can you should would could will not have has its use used using file code line lines
		selected selection explain fix make change add remove was were did been being also about which
		who whom whose where there their them they our your here some any all each other than only just
		very more most such same into onto upon over under again further once both few own so too
		is it be by on of to in at as an or if do me my we us a i`) {
		englishStop[w] = true
	}
	for _, w := range strings.Fields(`return func var const type struct interface import package def class self
		new nil null true false none let int string bool err error len make append print println range break
		continue case switch default public private static void async await yield lambda pass raise try except
		finally while elif`) {
		codeStop[w] = true
	}
}

// identifiers returns the distinct identifiers of s, in first-seen order.
// In prose (the question) only English stop words are dropped, in any case;
// in code, English and code stop words, and keywords and builtins only as
// written, so that Go's exported File, Error or String are kept.
func identifiers(s string, max int, prose bool) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range identRE.FindAllString(s, -1) {
		var stop bool
		if prose {
			stop = englishStop[strings.ToLower(m)]
		} else {
			stop = englishStop[m] || codeStop[m] || codeStopIdents[m]
		}
		if stop || seen[m] {
			continue
		}
		seen[m] = true
		out = append(out, m)
		if len(out) >= max {
			break
		}
	}
	return out
}

// span is a file range already in the prompt, to drop duplicates.
type span struct {
	rel        string
	start, end int
}

type spans []span

func (ss spans) covers(rel string, start, end int) bool {
	for _, s := range ss {
		if s.rel == rel && s.start <= start && end <= s.end {
			return true
		}
	}
	return false
}

// indexSources adds the candidates that need the indexes: the enclosing
// symbol, definitions of the symbols the selection uses, search hits for
// the selection's identifiers and the question, and the repo map. It never
// waits for indexing: what is indexed now is used, and the report says so.
func indexSources(req Request, lines []string, sel *Selection, seen spans, report *Report, add func(*Item)) {
	ix := req.Index
	if ix == nil {
		report.Notes = append(report.Notes, "no code index in this session: no repo map, definitions or search hits")
		return
	}
	switch {
	case len(req.NotReady) > 0:
		report.Notes = append(report.Notes, fmt.Sprintf("not ready: %s (still being built; what is indexed so far is used, the files of this question first)", strings.Join(req.NotReady, ", ")))
	case req.IndexPending:
		report.Notes = append(report.Notes, "the indexes are still being built: the repo map, definitions and search hits use what is indexed so far")
	}
	if b := ix.Stats().SearchBackend; b != "" && b != "local" {
		report.Notes = append(report.Notes, fmt.Sprintf("search hits come from %s; the repo map and definitions are local", b))
	}
	selText := ""
	if sel != nil && sel.StartLine <= len(lines) {
		selText = strings.Join(lines[sel.StartLine-1:min(sel.EndLine, len(lines))], "")
	}
	idents := identifiers(selText, 40, false)
	questionWords := identifiers(req.Question, 12, true)

	// The repo map's ranking (a personalized PageRank, the costliest step)
	// runs while the definitions and the search hits are gathered; the
	// map item renders from the cached ranking at allocation time.
	focus := mapFocus(req, idents, questionWords)
	ranked := make(chan struct{})
	go func() {
		defer close(ranked)
		ix.RenderMap(focus, 1024)
	}()

	// So do the searches, each on its own: none needs another's result.
	searches := startSearches(ix, searchQueries(req.Question, questionWords, idents))

	var encl *codeindex.Symbol
	if req.File != "" && sel != nil {
		encl = enclosingSource(req, ix, lines, sel, add)
	}
	var res *resolver
	if req.File != "" && sel != nil {
		res = newResolver(req, ix, lines, sel)
		if calleePass {
			calleeSources(req, res, lines, sel, encl, add)
		}
	}
	sidents, inSel := definitionIdents(req, ix, sel, selText)
	definitionSources(req, ix, res, sidents, inSel, sel, seen, report, add)
	searchSources(req, searches, seen, report, add)
	add(&Item{Source: SourceRepoMap, Location: "repo map", Priority: prioRepoMap, Score: 1,
		render: func(tokens int) string {
			<-ranked
			tokens = min(tokens, maxRepoMapTokens)
			if tokens < 64 {
				return ""
			}
			out, _ := ix.RenderMap(focus, tokens-16)
			if strings.TrimSpace(out) == "" {
				return ""
			}
			return "## Repository map (ranked for this question)\n" + out
		}})
}

// mapFocus is what the repo map is ranked toward: the selection's
// identifiers, the question's words, the current file and the files of the
// diagnostics and recent edits.
func mapFocus(req Request, idents, questionWords []string) codeindex.Focus {
	focus := codeindex.Focus{Identifiers: idents, Mentioned: questionWords}
	if req.File != "" {
		focus.Files = []string{req.File}
		focus.Known = []string{req.File} // in the prompt already: not in the map
	}
	related := map[string]bool{}
	for _, d := range req.Diagnostics {
		related[d.Path] = true
	}
	for _, e := range req.RecentEdits {
		if req.WS != nil {
			related[req.WS.Rel(e.Path)] = true
		}
	}
	for r := range related {
		focus.Related = append(focus.Related, r)
	}
	sort.Strings(focus.Related)
	return focus
}

// enclosingSource adds the symbol that encloses the selection, unless it
// is too long or the selection holds it; it returns that symbol (nil for
// none).
func enclosingSource(req Request, ix codeindex.Index, lines []string, sel *Selection, add func(*Item)) *codeindex.Symbol {
	sym, ok := ix.EnclosingSymbol(req.File, sel.StartLine)
	if !ok || sym.EndLine-sym.Line >= 400 || sym.Line >= sel.StartLine && sym.EndLine <= sel.EndLine {
		return nil
	}
	add(&Item{Source: SourceEnclosing, Location: fmt.Sprintf("%s:%d-%d %s", req.File, sym.Line, sym.EndLine, sym.Name()),
		Text:     fmt.Sprintf("## Enclosing %s %s: %s lines %d-%d\n%s", sym.Kind(), sym.Name(), req.File, sym.Line, sym.EndLine, numbered(lines, sym.Line, sym.EndLine)),
		Priority: prioEnclosing, Score: 1})
	return &sym
}

// definitionIdents returns the names whose definitions are looked up (the
// selection's identifiers, then the question's code-like words) and the
// names the selection uses or defines.
func definitionIdents(req Request, ix codeindex.Index, sel *Selection, selText string) ([]*selIdent, map[string]bool) {
	defined, inSel := map[string]bool{}, map[string]bool{}
	if defs, ok := ix.FileSymbols(req.File); ok && sel != nil {
		for _, d := range defs {
			if d.NameLine >= sel.StartLine && d.NameLine <= sel.EndLine {
				defined[d.Name()] = true
			}
		}
	}
	sidents := selectionIdents(selText, maxSelIdents, defined)
	for _, si := range sidents {
		inSel[si.name] = true
	}
	sidents = append(sidents, questionIdents(req.Question, sidents, defined)...)
	for n := range defined {
		inSel[n] = true
	}
	return sidents, inSel
}

// searchSources adds the hits of each search query, every file's best
// chunk first, as snippets around the best matching line.
func searchSources(req Request, searches []*pendingSearch, seen spans, report *Report, add func(*Item)) {
	hitSeen := map[string]bool{}
	for qi, s := range searches {
		q := s.query
		<-s.done
		res, err := s.res, s.err
		if errors.Is(err, codeindex.ErrNoSearch) {
			report.Notes = append(report.Notes, "no search index in this session: no search hits")
			return
		}
		if err != nil {
			report.Notes = append(report.Notes, fmt.Sprintf("search %q failed: %v", q, err))
			continue
		}
		if res.Partial && qi == 0 {
			report.Notes = append(report.Notes, "the search index is still being built: hits may be missing")
		}
		for rank, h := range bestPerFileFirst(res.Hits, searchHits) {
			key := fmt.Sprintf("%s:%d", h.Path, h.StartLine)
			if hitSeen[key] {
				continue
			}
			hitSeen[key] = true
			if it := searchHitItem(req, q, h, seen, 1/float64(1+rank+qi)); it != nil {
				add(it)
			}
		}
	}
}

// searchHitItem is the candidate of one search hit for query q: a snippet
// of at most 10 lines before and 20 after its best line, within its chunk,
// with the given score; a duplicate when seen holds it, nil when the file
// cannot be read.
func searchHitItem(req Request, q string, h codeindex.Hit, seen spans, score float64) *Item {
	start, end := max(h.StartLine, h.Line-10), min(h.EndLine, h.Line+20)
	if h.EndLine == 0 {
		start, end = max(1, h.Line-5), h.Line+10
	}
	loc := fmt.Sprintf("%s:%d-%d", h.Path, start, end)
	if seen.covers(h.Path, start, end) {
		return &Item{Source: SourceSearch, Location: loc, Priority: prioSearch, Reason: "duplicate: already in the prompt; "}
	}
	text, ok := snippet(req.files, h.Path, start, end)
	if !ok {
		return nil
	}
	sym := ""
	if h.Symbol != "" {
		sym = " in " + h.Symbol
	}
	return &Item{Source: SourceSearch, Location: loc + " (" + q + ")",
		Text:     fmt.Sprintf("## Search hit for %q%s: %s lines %d-%d%s\n%s", q, sym, h.Path, start, end, h.CopiesNote(), text),
		Priority: prioSearch, Score: score}
}

// searchHits is how many hits of each search query become candidates.
const searchHits = 6

// pendingSearch is a search query running; res and err are set when
// done is closed.
type pendingSearch struct {
	query string
	done  chan struct{}
	res   *codeindex.SearchResult
	err   error
}

// startSearches starts a search for each query, all at once: on a large
// tree each takes tens of milliseconds, and they read the index
// independently. Their results are read in the queries' order, so the
// candidates do not depend on which finished first.
func startSearches(ix codeindex.Index, queries []string) []*pendingSearch {
	out := make([]*pendingSearch, len(queries))
	for i, q := range queries {
		s := &pendingSearch{query: q, done: make(chan struct{})}
		out[i] = s
		go func() {
			defer close(s.done)
			s.res, s.err = searchFor(ix, q)
		}()
	}
	return out
}

// searchFor runs one search query, briefly: the prompt is not held up for
// a slow index.
func searchFor(ix codeindex.Index, text string) (*codeindex.SearchResult, error) {
	q, err := codeindex.ParseQuery(text)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	return ix.Search(ctx, q, 2*searchHits)
}

// bestPerFileFirst orders hits so that every file's best chunk comes before
// any file's second one (a question is answered by a file more often than by
// three chunks of one file), and keeps the first n.
func bestPerFileFirst(hits []codeindex.Hit, n int) []codeindex.Hit {
	seen := map[string]bool{}
	var first, rest []codeindex.Hit
	for _, h := range hits {
		if seen[h.Path] {
			rest = append(rest, h)
			continue
		}
		seen[h.Path] = true
		first = append(first, h)
	}
	out := append(first, rest...)
	return out[:min(n, len(out))]
}

// searchQueries: the question as a whole, then the selection's rarest-looking
// identifiers: compound ones (camelCase, snake_case, with digits), longest
// first. A plain word ("command", "buf") matches a large share of a tree's
// chunks: its hits say little, and scoring them all was a build's slowest
// search (the definitions pass still looks the name up).
func searchQueries(question string, qwords, idents []string) []string {
	var out []string
	if len(qwords) > 0 {
		out = append(out, strings.Join(qwords, " "))
	}
	var sorted []string
	for _, id := range idents {
		if looksLikeCode(id) {
			sorted = append(sorted, id)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return len(sorted[i]) > len(sorted[j]) })
	for _, id := range sorted {
		if len(out) >= 3 {
			break
		}
		out = append(out, id)
	}
	return out
}

// snippet returns numbered lines [from, to] of a workspace file.
func snippet(files *wsFiles, rel string, from, to int) (string, bool) {
	f := files.get(rel)
	if !f.ok || f.binary {
		return "", false
	}
	lines := f.lines
	if from > len(lines) {
		return "", false
	}
	return numbered(lines, from, min(to, len(lines))), true
}

// wsFiles reads each workspace file once per build: search hits,
// definitions, callee bodies and the merge of overlapping items often
// come from the same files, and reading and splitting a file again for
// each was most of a build's garbage.
type wsFiles struct {
	ws *workspace.Workspace
	mu sync.Mutex
	m  map[string]*wsFile
}

// wsFile is one file as the build read it.
type wsFile struct {
	lines  []string // strings.SplitAfter(text, "\n"); shared, never changed
	ok     bool     // read without error (workspace.ReadFile)
	binary bool     // workspace.IsBinary
}

func newWSFiles(ws *workspace.Workspace) *wsFiles {
	return &wsFiles{ws: ws, m: map[string]*wsFile{}}
}

// get returns rel as read the first time this build asked for it.
func (c *wsFiles) get(rel string) *wsFile {
	if c == nil || c.ws == nil {
		return &wsFile{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.m[rel]; ok {
		return f
	}
	text, ok, err := c.ws.ReadFile(c.ws.Abs(rel))
	f := &wsFile{ok: err == nil && ok}
	if f.ok {
		// IsBinary looks at the first 8000 bytes only: no copy of the rest.
		f.binary = workspace.IsBinary([]byte(text[:min(len(text), 8000)]))
		f.lines = strings.SplitAfter(text, "\n")
	}
	c.m[rel] = f
	return f
}

// openDocSources adds the other documents open in the editor.
func openDocSources(req Request, seen spans, add func(*Item)) {
	if req.WS == nil {
		return
	}
	docs := req.WS.Docs.All()
	sort.Slice(docs, func(i, j int) bool { return docs[i].Path < docs[j].Path })
	for _, d := range docs {
		rel := req.WS.Rel(d.Path)
		if rel == req.File || workspace.IsBinary([]byte(d.Text)) {
			continue
		}
		lines := strings.SplitAfter(d.Text, "\n")
		end := min(len(lines), 60)
		if seen.covers(rel, 1, end) {
			continue
		}
		add(&Item{Source: SourceOpenDocs, Location: fmt.Sprintf("%s:1-%d", rel, end),
			Text:     fmt.Sprintf("## Open in the editor: %s lines 1-%d\n%s", rel, end, numbered(lines, 1, end)),
			Priority: prioOpenDocs, Score: 0.5})
	}
}

// selIdent is an identifier of the selection with how it is used there.
type selIdent struct {
	name    string
	weight  float64 // how strongly the selection depends on its definition
	quals   map[string]bool
	chains  map[string]bool // the whole receiver expressions: "s.book" of s.book.Record
	first   int             // order of first use
	defined bool            // the selection defines the name itself
}

// selectionIdents finds the identifiers of the selection worth looking up:
// called names and names selected from a package or value weigh most, then
// capitalized names (types, exported functions), then the rest. Keywords
// and names the selection itself defines are left out.
func selectionIdents(sel string, max int, defined map[string]bool) []*selIdent {
	byName := map[string]*selIdent{}
	var out []*selIdent
	for _, loc := range identRE.FindAllStringIndex(sel, -1) {
		name := sel[loc[0]:loc[1]]
		if codeStopIdents[name] || codeStop[name] || englishStop[name] {
			continue
		}
		w := 1.0
		if name[0] >= 'A' && name[0] <= 'Z' {
			w = 1.5
		}
		qual, chain := "", ""
		if loc[0] > 0 && sel[loc[0]-1] == '.' {
			w = 2
			j := loc[0] - 1
			i := j
			for i > 0 && isIdentByte(sel[i-1]) {
				i--
			}
			qual = sel[i:j]
			for i > 1 && sel[i-1] == '.' && isIdentByte(sel[i-2]) {
				i--
				for i > 0 && isIdentByte(sel[i-1]) {
					i--
				}
			}
			chain = sel[i:j]
		}
		rest := strings.TrimLeft(sel[loc[1]:], " \t")
		if strings.HasPrefix(rest, "(") || strings.HasPrefix(rest, "<") && !strings.HasPrefix(rest, "<=") && !strings.HasPrefix(rest, "< ") {
			w += 1
		}
		si := byName[name]
		if si == nil {
			si = &selIdent{name: name, first: len(out), quals: map[string]bool{}, chains: map[string]bool{}}
			byName[name] = si
			out = append(out, si)
		}
		if defined[name] {
			// The selection defines it (the function asked about): its
			// namesakes elsewhere matter less (a method delegating to
			// another type's method of the same name).
			w, si.defined = w/3, true
		}
		if w > si.weight {
			si.weight = w
		}
		if qual != "" {
			si.quals[qual] = true
			si.chains[chain] = true
		}
	}
	if len(out) > max {
		// Keep the most used-looking names (calls, selections), in order.
		sorted := append([]*selIdent(nil), out...)
		sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].weight > sorted[j].weight })
		keep := map[*selIdent]bool{}
		for _, si := range sorted[:max] {
			keep[si] = true
		}
		out = out[:0]
		for _, si := range sorted {
			if keep[si] {
				out = append(out, si)
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].first < out[j].first })
	}
	return out
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// codeStopIdents are keywords and builtins compared case-sensitively (so
// that Go's exported File, Error or String are still looked up).
var codeStopIdents = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`None True False self cls this super undefined null nil true false
		func var const type struct interface import package return defer go chan map select fallthrough goto
		def class lambda async await yield pass raise try except finally while elif not and or is in del global nonlocal assert with as from
		let function export default extends implements new typeof instanceof void keyof readonly declare namespace enum
		string number boolean unknown any never object int int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 uintptr
		float32 float64 complex64 complex128 byte rune bool error len cap make append copy delete panic recover print println
		min max clear close real imag complex iota str dict list tuple set frozenset bytes bytearray isinstance getattr setattr hasattr`) {
		codeStopIdents[w] = true
	}
}

// fileImports is what a file imports, as workspace-relative path prefixes
// (a Go package directory, a Python module path, a resolved relative
// TypeScript/JavaScript specifier), by the name the file uses for each.
type fileImports struct {
	paths   []string          // workspace-relative, without extension
	byAlias map[string]string // local name -> path
	renamed map[string]string // local name -> original name (import {a as b}, from m import a as b)
}

var (
	goImportRE    = regexp.MustCompile(`(?m)^\s*(?:import\s+)?([A-Za-z_][A-Za-z0-9_]*\s+|\.\s+|_\s+)?"([^"\s]+)"\s*$`)
	pyFromRE      = regexp.MustCompile(`(?m)^\s*from\s+(\.*[A-Za-z0-9_.]*)\s+import\s+\(?([^)\n]*)`)
	pyImportRE    = regexp.MustCompile(`(?m)^\s*import\s+([A-Za-z0-9_.]+)(?:\s+as\s+([A-Za-z_][A-Za-z0-9_]*))?`)
	jsFromRE      = regexp.MustCompile(`(?s)(?:import|export)\s+(?:type\s+)?(?:([A-Za-z_$][\w$]*)\s*,?\s*)?(?:\{([^}]*)\}|\*\s+as\s+([A-Za-z_$][\w$]*))?\s*(?:from\s+)?["']([^"']+)["']`)
	jsRequireRE   = regexp.MustCompile(`(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*require\(\s*["']([^"']+)["']\s*\)`)
	importAliasRE = regexp.MustCompile(`^\s*([A-Za-z_$][\w$]*)(?:\s+as\s+([A-Za-z_$][\w$]*))?\s*$`)
)

// importsOf is parseImports with a Go file's imports of the workspace's
// modules named by their folders (inGoModules).
func importsOf(files *wsFiles, rel, text string) fileImports {
	fi := parseImports(rel, text)
	if path.Ext(rel) == ".go" {
		if mods := goModulesOf(files, rel); len(mods) > 0 {
			fi.inGoModules(mods)
		}
	}
	return fi
}

// goModule is a Go module of the workspace: its path and its folder ("" for
// the workspace's root folder).
type goModule struct{ path, dir string }

// goModulesOf returns the modules whose packages Go file rel imports by
// their folders: its own (the nearest go.mod above it) first, then those
// its go.mod replaces with a folder of the workspace (`replace
// example.com/money => ../../libs/cash`) and those the nearest go.work
// above it uses. A module's path need not end in its folder's.
func goModulesOf(files *wsFiles, rel string) []goModule {
	dir, data, ok := findUp(files, dirOf(rel), "go.mod")
	if !ok {
		return nil
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		// A go.mod the strict parser refuses still names its module.
		if mod := modfile.ModulePath(data); mod != "" {
			return []goModule{{mod, dir}}
		}
		return nil
	}
	if f.Module == nil || f.Module.Mod.Path == "" {
		return nil
	}
	mods := []goModule{{f.Module.Mod.Path, dir}}
	for _, r := range f.Replace {
		if r.New.Version != "" || !modfile.IsDirectoryPath(r.New.Path) {
			continue
		}
		if d, ok := folderIn(dir, r.New.Path); ok {
			mods = append(mods, goModule{r.Old.Path, d})
		}
	}
	if wdir, wdata, ok := findUp(files, dir, "go.work"); ok {
		w, err := modfile.ParseWork("go.work", wdata, nil)
		if err != nil {
			return mods
		}
		for _, u := range w.Use {
			d, ok := folderIn(wdir, u.Path)
			if !ok || d == dir {
				continue
			}
			if g := files.get(path.Join(d, "go.mod")); g.ok && !g.binary {
				if p := modfile.ModulePath([]byte(strings.Join(g.lines, ""))); p != "" {
					mods = append(mods, goModule{p, d})
				}
			}
		}
	}
	return mods
}

// findUp returns the folder ("" for the root) and text of the nearest file
// called name in folder dir ("" or "." for the root) or above it.
func findUp(files *wsFiles, dir, name string) (string, []byte, bool) {
	if dir == "" {
		dir = "."
	}
	for ; ; dir = dirOf(dir) {
		p := name
		if dir != "." {
			p = dir + "/" + name
		}
		if f := files.get(p); f.ok && !f.binary {
			if dir == "." {
				dir = ""
			}
			return dir, []byte(strings.Join(f.lines, "")), true
		}
		if dir == "." || dir == "/" {
			return "", nil, false
		}
	}
}

// folderIn returns folder rel (a go.mod's or go.work's relative path) of
// folder base as a workspace folder ("" for the root); false when it
// leaves the workspace or is absolute.
func folderIn(base, rel string) (string, bool) {
	if path.IsAbs(rel) || strings.Contains(rel, "\\") {
		return "", false
	}
	d := path.Join(base, rel)
	if d == ".." || strings.HasPrefix(d, "../") {
		return "", false
	}
	if d == "." {
		d = ""
	}
	return d, true
}

// inGoModules names the imports of mods by their folders in the
// workspace, each by the module with the longest path it is in: a module
// whose path does not end in its folder's (services/shop with `module
// example.com/store`) is placed as imported, and so is the Go tree's own
// (`module std`, whose packages have no dot in their first element)
// wherever it sits.
func (fi *fileImports) inGoModules(mods []goModule) {
	local := func(p string) string {
		best := -1
		for i, m := range mods {
			if (p == m.path || strings.HasPrefix(p, m.path+"/")) && (best < 0 || len(m.path) > len(mods[best].path)) {
				best = i
			}
		}
		if best >= 0 {
			return path.Join(mods[best].dir, strings.TrimPrefix(p[len(mods[best].path):], "/"))
		}
		if first, _, _ := strings.Cut(p, "/"); mods[0].path == "std" && !strings.Contains(first, ".") {
			return path.Join(mods[0].dir, p)
		}
		return p
	}
	for i, p := range fi.paths {
		fi.paths[i] = local(p)
	}
	for k, p := range fi.byAlias {
		fi.byAlias[k] = local(p)
	}
}

func parseImports(rel, text string) fileImports {
	fi := fileImports{byAlias: map[string]string{}, renamed: map[string]string{}}
	dir := path.Dir(rel)
	add := func(p, alias string) {
		p = strings.TrimSuffix(path.Clean(p), "/")
		fi.paths = append(fi.paths, p)
		if alias != "" {
			fi.byAlias[alias] = p
		}
	}
	names := func(list string, p string) {
		for _, part := range strings.Split(list, ",") {
			part = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(part), "type "))
			if m := importAliasRE.FindStringSubmatch(part); m != nil {
				local := m[1]
				if m[2] != "" {
					local = m[2]
					fi.renamed[m[2]] = m[1]
				}
				fi.byAlias[local] = p
			}
		}
	}
	switch ext := path.Ext(rel); ext {
	case ".go":
		// Only the import section: it ends at the first declaration.
		head := text
		if i := strings.Index(text, "\nfunc "); i > 0 {
			head = text[:i]
		}
		for _, m := range goImportRE.FindAllStringSubmatch(head, -1) {
			p := m[2]
			alias := strings.TrimSpace(m[1])
			if alias == "" || alias == "." || alias == "_" {
				alias = path.Base(p)
				if len(alias) > 1 && alias[0] == 'v' && strings.Trim(alias[1:], "0123456789") == "" {
					alias = path.Base(path.Dir(p))
				}
			}
			add(p, alias)
		}
	case ".py", ".pyi":
		for _, m := range pyFromRE.FindAllStringSubmatch(text, -1) {
			mod := m[1]
			p := pyModulePath(dir, mod)
			add(p, "")
			names(m[2], p)
			// from pkg import module: the module itself is a path too.
			for _, part := range strings.Split(m[2], ",") {
				if mm := importAliasRE.FindStringSubmatch(strings.TrimSpace(part)); mm != nil {
					fi.paths = append(fi.paths, path.Join(p, mm[1]))
				}
			}
		}
		for _, m := range pyImportRE.FindAllStringSubmatch(text, -1) {
			alias := m[2]
			if alias == "" {
				alias = m[1][strings.LastIndexByte(m[1], '.')+1:]
			}
			add(strings.ReplaceAll(m[1], ".", "/"), alias)
		}
	case ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts":
		resolve := func(spec string) string {
			if strings.HasPrefix(spec, ".") {
				return path.Join(dir, spec)
			}
			return spec
		}
		for _, m := range jsFromRE.FindAllStringSubmatch(text, -1) {
			p := resolve(m[4])
			add(p, m[1])
			if m[3] != "" {
				fi.byAlias[m[3]] = path.Clean(p)
			}
			if m[2] != "" {
				names(m[2], path.Clean(p))
			}
		}
		for _, m := range jsRequireRE.FindAllStringSubmatch(text, -1) {
			add(resolve(m[2]), m[1])
		}
	}
	return fi
}

// pyModulePath turns a Python module name (possibly relative) into a
// workspace-relative path without extension.
func pyModulePath(dir, mod string) string {
	dots := len(mod) - len(strings.TrimLeft(mod, "."))
	name := strings.ReplaceAll(mod[dots:], ".", "/")
	if dots == 0 {
		return name
	}
	base := dir
	for i := 1; i < dots; i++ {
		base = path.Dir(base)
	}
	return path.Join(base, name)
}

// importMatch says how surely a definition's file is what an import path
// of file from names (0: it is not). Surely (1): the same file or package
// directory, allowing a module prefix on the import (github.com/x/y/pkg
// names pkg/) and a source root the two files share on the definition
// (src/foo/bar.py is foo.bar to src/app.py; go1/net/url is net/url to
// go1/net/http/client.go when the Go tree is a folder of the workspace).
// Less so (rootElsewhere): a path of two names or more under a root the
// importing file is not under (src/store/ledger.py is store.ledger to
// tests/test_ledger.py; staging/src/k8s.io/api/core/v1 is k8s.io/api/core/v1
// to pkg/), where a copy under the file's own root would be surer.
func importMatch(imp, defPath, from string) float64 {
	n := importNamesOf(defPath)
	return n.match(imp, from)
}

// rootElsewhere is importMatch's weight for a path under a root the
// importing file is not under.
const rootElsewhere = 0.5

// importNames are the paths an import may name a file by: the file without
// its extension, its directory (path.Dir), and a package's index or
// __init__ file as its directory.
type importNames [4]string

// importNamesOf returns defPath's importNames. It allocates nothing:
// placement asks it for every definition of a name a build looks up.
func importNamesOf(defPath string) importNames {
	noExt := strings.TrimSuffix(defPath, path.Ext(defPath))
	return importNames{noExt, dirOf(defPath), strings.TrimSuffix(noExt, "/index"), strings.TrimSuffix(noExt, "/__init__")}
}

// match says how surely import path imp of file from names the file (see
// importMatch): imp is one of its names, or ends in "/" and one of them,
// or one of them is a root directory, "/" and imp.
func (n *importNames) match(imp, from string) float64 {
	best := 0.0
	for _, cand := range n {
		if cand == "." || cand == "" {
			continue
		}
		switch {
		case imp == cand:
			return 1
		case len(imp) > len(cand): // imp ends in "/"+cand
			if imp[len(imp)-len(cand)-1] == '/' && strings.HasSuffix(imp, cand) {
				return 1
			}
		default: // cand is root+imp, root ending in "/"
			root := cand[:len(cand)-len(imp)]
			if !strings.HasSuffix(root, "/") || !strings.HasSuffix(cand, imp) {
				continue
			}
			if strings.HasPrefix(from, root) {
				return 1
			}
			if strings.Contains(imp, "/") {
				best = rootElsewhere
			}
		}
	}
	return best
}

// dirOf is path.Dir of a clean slash-separated path (a workspace-relative
// one) without the copy path.Dir makes of it: it runs for every
// definition of a common name a build places.
func dirOf(p string) string {
	switch i := strings.LastIndexByte(p, '/'); {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	default:
		return p[:i]
	}
}

func isTestPath(rel string) bool {
	base := path.Base(rel)
	return strings.HasSuffix(base, "_test.go") || strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") ||
		strings.HasPrefix(base, "test_") || hasDir(rel, "testdata/") || hasDir(rel, "tests/") ||
		hasDir(rel, "test/") || hasDir(rel, "__tests__/")
}

// hasDir reports whether the slash-separated path rel has the directory
// dir ("name/"). (It runs for every definition of a name a build looks
// up: it must not allocate.)
func hasDir(rel, dir string) bool {
	for {
		i := strings.Index(rel, dir)
		if i < 0 {
			return false
		}
		if i == 0 || rel[i-1] == '/' {
			return true
		}
		rel = rel[i+1:]
	}
}

// locality scores how likely a definition is the one the selection means:
// the same file, the same directory (package), a file or package the
// current file imports (more when the selection qualifies the name with
// that import's alias); tests count less.
func locality(d codeindex.Symbol, file string, si *selIdent, imps fileImports) float64 {
	l := 0.0
	names := importNamesOf(d.Path) // once per definition, not per import
	switch {
	case d.Path == file:
		l = 2.5
	case file != "" && names[1] == dirOf(file):
		l = 2
	}
	for q := range si.quals {
		if p, ok := imps.byAlias[q]; ok {
			w := 2.5
			if d.Scope() == "" {
				w = 3.5 // pkg.Name names a package-level definition
			}
			l = max(l, w*names.match(p, file))
		}
	}
	if p, ok := imps.byAlias[si.name]; ok {
		l = max(l, 3*names.match(p, file))
	}
	for _, p := range imps.paths {
		if l >= 1.5 {
			break
		}
		l = max(l, 1.5*names.match(p, file))
	}
	if isTestPath(d.Path) && !isTestPath(file) {
		l -= 1.5
	}
	return l
}

// questionIdents are the names the question mentions that look like code
// (mixedCase, snake_case, or used in the selection): the user asking about
// AddFile wants its definition.
func questionIdents(q string, have []*selIdent, defined map[string]bool) []*selIdent {
	byName := map[string]*selIdent{}
	for _, si := range have {
		byName[si.name] = si
	}
	var out []*selIdent
	for _, name := range identRE.FindAllString(q, -1) {
		if defined[name] || codeStopIdents[name] {
			continue
		}
		if si, ok := byName[name]; ok {
			si.weight += 1 // named in the question too
			continue
		}
		if !looksLikeCode(name) {
			continue
		}
		si := &selIdent{name: name, weight: 2, quals: map[string]bool{}, first: len(have) + len(out)}
		byName[name] = si
		out = append(out, si)
	}
	return out
}

func looksLikeCode(w string) bool {
	if strings.ContainsAny(w, "_0123456789") {
		return true
	}
	for i := 1; i < len(w); i++ {
		if w[i] >= 'A' && w[i] <= 'Z' && w[i-1] >= 'a' && w[i-1] <= 'z' {
			return true
		}
	}
	return false
}

// Definitions: at most this many per name (the best placed ones), and a
// name with more candidates than ambiguousDefs and none near the selection
// (same file, package or an import) is skipped as too ambiguous to guess.
const (
	maxSelIdents  = 60
	defsPerName   = 2
	ambiguousDefs = 2
	maxDefLines   = 80
)

// definitionSources adds the definitions of the names the selection (and
// the question) use, ranked by how the name is used and how near its
// definition is (see locality).
func definitionSources(req Request, ix codeindex.Index, res *resolver, idents []*selIdent, inSel map[string]bool, sel *Selection, seen spans, report *Report, add func(*Item)) {
	if len(idents) == 0 {
		return
	}
	var imps fileImports
	if res != nil {
		imps = res.imps // read once per build: the resolver's are the file's
	} else {
		imps = importsOf(req.files, req.File, req.FileText)
	}
	l := &defLookup{req: req, sel: sel, inSel: inSel, imps: imps, lang: codeindex.LanguageOf(req.File),
		per: map[string][]defCand{}, unresolved: map[string]int{}, resolvedAway: map[string]int{}}
	l.typeQualifiers(res, idents)
	l.lookupNames(idents)
	for _, d := range ix.Definitions(l.names) {
		l.consider(d)
	}
	skipped := l.addDefinitions(seen, add)
	l.notes(skipped, report)
}

// defLookup is one definitionSources' state: the names looked up, what is
// known of their qualifiers, and the candidates kept.
type defLookup struct {
	req   Request
	sel   *Selection
	inSel map[string]bool // names the selection uses or defines
	imps  fileImports
	lang  string // the file's language: definitions of others (but its family) are left out
	// typed holds, for a name used as x.Name where x's type could be read,
	// the definitions (path NUL scope) of that type's Name; allTyped says
	// whether every qualifier of the name resolved.
	typed    map[string]map[string]bool
	allTyped map[string]bool
	byName   map[string]*selIdent
	names    []string // looked up, in the order of the idents
	words    map[string]bool
	// per holds the candidates kept for each name; unresolved and
	// resolvedAway count those left out, for the report.
	per                      map[string][]defCand
	unresolved, resolvedAway map[string]int
}

type defCand struct {
	d   codeindex.Symbol
	loc float64
}

// typeQualifiers reads x.Name where x's type can be read (a receiver, a
// parameter, self): the definitions are that type's (or its bases') Name,
// not every type's. A name whose every qualifier resolved keeps only those.
func (l *defLookup) typeQualifiers(res *resolver, idents []*selIdent) {
	l.typed, l.allTyped = map[string]map[string]bool{}, map[string]bool{}
	if res == nil {
		return
	}
	for _, si := range idents {
		if len(si.chains) == 0 {
			continue
		}
		all := true
		for q := range si.chains {
			t := ""
			if _, pkg := l.imps.byAlias[q]; !pkg || res.env.vars[q] != "" {
				t = res.typeOf(q)
			}
			ms := []codeindex.Symbol(nil)
			if t != "" {
				ms = res.method(t, si.name)
			}
			if len(ms) == 0 {
				all = false
				continue
			}
			if l.typed[si.name] == nil {
				l.typed[si.name] = map[string]bool{}
			}
			for _, m := range ms {
				l.typed[si.name][m.Path+"\x00"+m.Scope()] = true
			}
		}
		l.allTyped[si.name] = all
	}
}

// lookupNames lists the names to look up: each identifier once, and the
// original name of one the file imports renamed.
func (l *defLookup) lookupNames(idents []*selIdent) {
	l.byName = map[string]*selIdent{}
	for _, si := range idents {
		if l.byName[si.name] == nil {
			l.byName[si.name] = si
			l.names = append(l.names, si.name)
		}
		if orig, ok := l.imps.renamed[si.name]; ok && l.byName[orig] == nil {
			l.byName[orig] = &selIdent{name: orig, weight: si.weight, quals: si.quals, first: si.first}
			l.names = append(l.names, orig)
		}
	}
}

// fileNames reports whether the file's text names a scope as a whole word
// (containsWord): for a scope that is one identifier, whether it is one of
// the text's identifiers (the maximal runs of identifier bytes), read once.
func (l *defLookup) fileNames(scope string) bool {
	for i := 0; i < len(scope); i++ {
		if !isIdentByte(scope[i]) {
			return containsWord(l.req.FileText, scope)
		}
	}
	if l.words == nil {
		l.words = identRuns(l.req.FileText)
	}
	return l.words[scope]
}

// consider keeps definition d as a candidate for its name, with its
// locality, unless it is the selection itself, of another language, or
// a namesake the qualifiers rule out.
func (l *defLookup) consider(d codeindex.Symbol) {
	req, sel := l.req, l.sel
	if d.Local || (d.Name() == "init" && d.Scope() == "" && d.Language == "go") {
		return
	}
	if d.Path == req.File && sel != nil && d.Line <= sel.EndLine && d.EndLine >= sel.StartLine {
		return // the selection itself
	}
	if lang := l.lang; lang != "" && d.Language != lang && !(sameFamily(lang, d.Language)) {
		return
	}
	si := l.byName[d.Name()]
	if si == nil {
		return
	}
	loc := locality(d, req.File, si, l.imps)
	if d.Scope() != "" && l.inSel[d.Scope()] {
		loc++ // a method of a type the selection names
	}
	if ts := l.typed[d.Name()]; ts != nil {
		switch {
		case ts[d.Path+"\x00"+d.Scope()]:
			loc = max(loc, 2) + 1.5 // the receiver's type's own method
		case l.allTyped[d.Name()]:
			l.resolvedAway[d.Name()]++ // another type's (or a function's) namesake
			return
		}
	}
	if si.defined && loc < 1.5 {
		return // a name the selection defines: only its namesakes nearby
	}
	if d.Scope() != "" && loc <= 0 && !l.inSel[d.Scope()] && !l.fileNames(d.Scope()) {
		// A member far away whose type this file never names: the
		// selection's x.Name is some other type's Name (a question on
		// a cookie's Name and Value is not about Setting.Value).
		l.unresolved[d.Name()]++
		return
	}
	l.per[d.Name()] = append(l.per[d.Name()], defCand{d, loc})
}

// addDefinitions adds, for each name, its best candidates (at most
// defsPerName, those about as near as the nearest). A name whose nearest
// definition is far is skipped when it is ambiguous or little used; the
// skipped names are returned.
func (l *defLookup) addDefinitions(seen spans, add func(*Item)) (skipped []string) {
	for _, name := range l.names {
		cs := l.per[name]
		if len(cs) == 0 {
			continue
		}
		si := l.byName[name]
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].loc > cs[j].loc })
		best := cs[0].loc
		if best <= 0 && (len(cs) > ambiguousDefs || si.weight < 2) {
			// Far from the selection: only an unambiguous name the
			// selection calls or selects (not a local variable's name
			// that happens to be defined somewhere).
			skipped = append(skipped, fmt.Sprintf("%s (%d)", name, len(cs)))
			continue
		}
		for k, c := range cs {
			// A one-line best candidate is often an alias (Charset =
			// _charset.Charset): let the next one in too.
			oneLine := k == 1 && cs[0].d.EndLine == cs[0].d.Line && c.loc > 0
			if k >= defsPerName || (c.loc < best-0.25 && !oneLine) {
				break
			}
			score := si.weight * (1 + max(0, c.loc)) / (1 + 0.02*float64(si.first))
			if it := definitionItem(l.req.files, c.d, score, seen); it != nil {
				add(it)
			}
		}
	}
	return skipped
}

// definitionItem is the candidate of definition d: its first maxDefLines
// lines; a duplicate when seen holds them, nil when the file cannot be read.
func definitionItem(files *wsFiles, d codeindex.Symbol, score float64, seen spans) *Item {
	end := min(d.EndLine, d.Line+maxDefLines-1)
	if seen.covers(d.Path, d.Line, end) { // inside the selection
		return &Item{Source: SourceDefinitions, Location: fmt.Sprintf("%s:%d %s", d.Path, d.Line, d.Name()), Text: "",
			Priority: prioDefinitions, Score: score, Reason: "duplicate: already in the prompt; "}
	}
	text, ok := snippet(files, d.Path, d.Line, end)
	if !ok {
		return nil
	}
	cut := ""
	if end < d.EndLine {
		cut = fmt.Sprintf("[... %d more lines ...]\n", d.EndLine-end)
	}
	full := fmt.Sprintf("## Definition of %s (%s): %s lines %d-%d\n%s%s", qualified(d), d.Kind(), d.Path, d.Line, end, text, cut)
	return &Item{Source: SourceDefinitions, Location: fmt.Sprintf("%s:%d-%d %s", d.Path, d.Line, end, qualified(d)),
		Text: full, Priority: prioDefinitions, Score: score}
}

// notes says in the report which names were not looked up and which
// definitions were left out.
func (l *defLookup) notes(skipped []string, report *Report) {
	if len(skipped) > 0 {
		report.Notes = append(report.Notes, "definitions not looked up, too many candidates and none near the selection: "+strings.Join(skipped, ", "))
	}
	if len(l.resolvedAway) > 0 {
		var out []string
		for n, c := range l.resolvedAway {
			out = append(out, fmt.Sprintf("%s (%d)", n, c))
		}
		sort.Strings(out)
		report.Notes = append(report.Notes, "namesakes left out, the receiver's type was resolved: "+strings.Join(out, ", "))
	}
	if len(l.unresolved) > 0 {
		var out []string
		for n, c := range l.unresolved {
			if len(l.per[n]) == 0 {
				out = append(out, fmt.Sprintf("%s (%d)", n, c))
			}
		}
		sort.Strings(out)
		if len(out) > 0 {
			report.Notes = append(report.Notes, "members left out, their types are not named in this file: "+strings.Join(out, ", "))
		}
	}
}

// containsWord reports whether w occurs in s as a whole identifier.
// identRuns returns the maximal runs of identifier bytes in s.
func identRuns(s string) map[string]bool {
	runs := map[string]bool{}
	for i := 0; i < len(s); {
		if !isIdentByte(s[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isIdentByte(s[j]) {
			j++
		}
		runs[s[i:j]] = true
		i = j
	}
	return runs
}

func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		a, b := i+j, i+j+len(w)
		if (a == 0 || !isIdentByte(s[a-1])) && (b == len(s) || !isIdentByte(s[b])) {
			return true
		}
		i = a + 1
	}
}

func qualified(d codeindex.Symbol) string {
	if d.Scope() != "" {
		return d.Scope() + "." + d.Name()
	}
	return d.Name()
}

// sameFamily: TypeScript and JavaScript (and their JSX forms) call each other.
func sameFamily(a, b string) bool {
	js := func(l string) bool {
		return l == "typescript" || l == "tsx" || l == "javascript"
	}
	return js(a) && js(b)
}

// minShrunkTokens: below this a cut definition is not worth sending.
const minShrunkTokens = 120
