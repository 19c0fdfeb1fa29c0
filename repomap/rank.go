package repomap

import (
	"go/build/constraint"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Ranking
//
// Files are the nodes of the graph. A file r that references a name i
// defined in files D(i) sends a share of its rank to every d in D(i): the
// random walk goes from a use to the candidate definitions, so files whose
// definitions many (highly ranked) files use rank high. Ranks are computed
// with PageRank (damping 0.85) personalized toward the focus, then each
// definition is scored by the rank that flowed to it.
//
// The weight of the edge r → i (then split evenly among D(i)) is
//
//	w(r, i) = sqrt(uses of i in r) · specific(i) · private(i) · common(i) · ubiquitous(i) · focus(i)
//
// and the walk leaves r along its edges in proportion to w. The factors:
//
//   - sqrt(uses): the tenth use of a name in a file says less than the first;
//     the square root damps repetition without ignoring it.
//   - specific ×3 for long, compound names (≥ 8 characters with a camelCase or
//     snake_case word boundary, e.g. renderBudget, parse_file): they almost
//     always mean one thing, so the edge is likely a true dependency.
//     Names of 1–3 characters (x, id, Do) ×0.3: they collide with unrelated
//     definitions.
//   - private ×0.3 for names starting with "_": implementation details
//     rarely help a reader of the map.
//   - common ×1/(1+log2 |D(i)|): a name defined in many files (String, Error,
//     New, init) is ambiguous; its mass is already split among the definers,
//     and this further lowers how much of the referencing file's rank goes
//     into guesses (1 definer ×1, 2 ×0.5, 8 ×0.25, 512 ×0.1).
//   - ubiquitous ×(5% of files / files using it) for names used by more
//     than 5% of the files (in repositories of 100+ files): string, error,
//     Errorf are vocabulary, not dependencies; without this the file that
//     declares the builtins outranks everything.
//   - a reference in an export list (`export { of } from`, __all__) has no
//     specific, short or private factor: it names exactly what it exports
//     (rxjs's index sent 10× more to defaultIfEmpty than to of or tap).
//   - focus ×10 for the identifiers of the selection and the names mentioned
//     in the question: the walk should follow what the user is looking at.
//   - self ×0.1 when r itself defines i: a file using its own private types
//     and helpers says nothing about what the rest of the code depends on
//     (net/http's sniff.go feeding sniffSig and htmlSig topped the map).
//
// Only names that some file defines form edges; references to the standard
// library or unparsed code lead nowhere. Which definitions a reference can
// mean depends on its form (resolveNames): a qualified Go name
// (context.Context) only those in the package's directory that are not
// methods (pkg.Name never names one); a bare name in a
// language that reaches methods only through a receiver (Go, Python,
// JS/TS: x.m(), self.m(), this.m()) only definitions that are not methods,
// so Go's len(x) and string no longer feed every method named len or
// string; a member access (x.m) any definition of the name.
//
// Build output beside its declaration (compiled .js next to a .d.ts of the
// same stem, a .d.ts next to its .ts) defines nothing in the graph: it
// would double every name (zod's lib/types.js, index.mjs and types.d.ts).
// Its references still count. Overloads (the same name and scope again in
// one file: TypeScript overload signatures, Python property setters) rank
// as one definition, shown by its first line. A file with no edges spreads its
// rank by the personalization vector (the usual treatment of dangling nodes).
//
// Personalization (where the walk restarts): each of Focus.Files weight 1,
// each of Focus.Related 0.5, each file whose path matches a mentioned word
// 0.5, and each file defining a focus identifier or mentioned name 0.25
// (split among that name's definers). With no focus at all every file has
// weight 1 plus 1 for each name its export lists name (Ref.Export: an index
// file's re-exports, Python's __all__) and for each Go example (func
// ExampleX in a _test.go file): plain PageRank, the most depended-upon
// code first, with the package's users entering through what it declares
// it offers and shows (rxjs's operators, http.Redirect, which nothing
// inside the package uses).
//
// The walk leaves r along its edges in proportion to the weights before
// the common and ubiquitous factors; the share those factors remove is not
// followed and restarts at the personalization. (Normalizing by the reduced
// weights instead would give it straight back: a file whose references are
// all to "string" and "error" would pass its whole rank to the builtins.)
//
// A definition's score is the rank that flowed along edges named after it
// into its file, split evenly among same-named definitions in that file,
// plus 1% of its file's rank split among the file's definitions (so that
// unreferenced definitions of highly ranked files, e.g. the selection's own
// file, still order among themselves), ×2 when its name is a focus
// identifier or mentioned name, ×0.1 in test fixtures (testdata/,
// fixtures/, __fixtures__/) and in Go's builtin package (the predeclared
// identifiers, which every Go file uses), ×0.1 in test files unless a focus
// file is a test, ×0.3 in Go internal/ packages when nothing is focused, and
// ×0.6 per directory level below the shallowest file when nothing is
// focused, ×3 for exported API (isAPI: Go's capitalized names, Python's public
// top-level names and members, TypeScript/JavaScript exports) and ×10 more,
// when nothing is focused, for API an export list names (declared: an index
// file's `export { x } from`, a bundle's closing `export { ... }`, Python's
// __all__; the package author's own list of what it offers, which outranks
// names exported only for use between its modules): a map with no focus
// should open on what a package offers, not on its plumbing. The
// definitions of Focus.Known files are left out: the prompt holds them.
const (
	damping        = 0.85
	maxIterations  = 100
	tolerance      = 1e-4 // L1 change of the rank vector (sums to 1) that ends the iteration: ~15 fewer iterations than 1e-5, the same top of the map
	focusBoost     = 10.0
	specificBoost  = 3.0
	shortPenalty   = 0.3
	privatePenalty = 0.3
	baselineShare  = 0.01
	defFocusBoost  = 2.0
	ubiquityShare  = 0.05
	fixturePenalty = 0.1
	selfRefFactor  = 0.3
	testPenalty    = 0.1
	internalFactor = 0.3
	apiBoost       = 3.0
	nestFactor     = 0.6
	declaredBoost  = 10.0
)

// isTestFile reports files that hold tests: their definitions are for the
// tests, not the API.
func isTestFile(rel string) bool {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	switch {
	case strings.HasSuffix(base, "_test.go"), strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"),
		strings.HasSuffix(base, "_test.py"), strings.Contains(base, ".test."), strings.Contains(base, ".spec."):
		return true
	}
	for _, d := range []string{"test/", "tests/", "__tests__/"} {
		if strings.HasPrefix(rel, d) || strings.Contains(rel, "/"+d) {
			return true
		}
	}
	return false
}

// isBuiltinDecl reports Go's builtin package: documentation of the
// predeclared identifiers, referenced by every Go file.
func isBuiltinDecl(rel string) bool {
	return rel == "builtin/builtin.go" || strings.HasSuffix(rel, "/builtin/builtin.go")
}

// isGoInternal reports a Go internal/ package: not importable from outside.
func isGoInternal(rel string) bool {
	return strings.HasSuffix(rel, ".go") && (strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/"))
}

// isAPI reports whether a definition is part of its package's public
// surface, by the language's own rule where it has one.
func isAPI(lang string, d *Def) bool {
	name := d.Name
	if name == "" {
		return false
	}
	switch lang {
	case "go":
		upper := func(s string) bool {
			r, _ := utf8.DecodeRuneInString(s)
			return unicode.IsUpper(r)
		}
		return upper(name) && (d.Depth == 0 || d.Scope == "" || upper(d.Scope))
	case "python":
		return !strings.HasPrefix(name, "_") && (d.Depth == 0 || d.Depth == 1 && !strings.HasPrefix(d.Scope, "_"))
	case "typescript", "tsx", "javascript":
		if d.Depth == 0 {
			return strings.HasPrefix(d.Signature, "export ")
		}
		return d.Depth == 1 && !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, "#") &&
			!strings.HasPrefix(d.Signature, "private ") && !strings.HasPrefix(d.Signature, "protected ")
	}
	return d.TopLevel
}

// isExperimental reports a Go file built only with a GOEXPERIMENT on
// (//go:build goexperiment.jsonv2): not part of the package as the default
// toolchain builds it. Its //go:build expression is false with every
// goexperiment tag off and true with them on (other tags count as set, so
// GOOS- and GOARCH-specific files are not experimental).
func isExperimental(t *FileTags) bool {
	if t.Constraint == "" {
		return false
	}
	expr, err := constraint.Parse("//go:build " + t.Constraint)
	if err != nil {
		return false
	}
	with := func(on bool) func(string) bool {
		return func(tag string) bool {
			if strings.HasPrefix(tag, "goexperiment.") {
				return on
			}
			return true
		}
	}
	return !expr.Eval(with(false)) && expr.Eval(with(true))
}

// isFixture reports test data: testdata/, fixtures/ and __fixtures__/
// directories hold inputs for tests, not the code a question is about.
func isFixture(rel string) bool {
	for _, d := range []string{"testdata/", "fixtures/", "__fixtures__/"} {
		if strings.HasPrefix(rel, d) || strings.Contains(rel, "/"+d) {
			return true
		}
	}
	return false
}

// Focus is what the question is about. All fields are optional.
type Focus struct {
	Files       []string // the selection's file(s), workspace-relative
	Related     []string // files with diagnostics, recently edited files
	Identifiers []string // identifiers in the selection (exact names)
	Mentioned   []string // words of the question: matched to file paths and names, case-insensitively
	// Known files are already in the prompt (the context engine's
	// selection file): their definitions are left out of the map.
	Known []string
}

func (f Focus) key() string {
	var b strings.Builder
	for _, l := range [][]string{f.Files, f.Related, f.Identifiers, f.Mentioned, f.Known} {
		s := append([]string(nil), l...)
		sort.Strings(s)
		b.WriteString(strings.Join(s, "\x00"))
		b.WriteByte(1)
	}
	return b.String()
}

// graph is the static part of the ranking, rebuilt when files change. Names
// are interned once per Map (symtab) and each entry keeps its names' ids, so
// a rebuild after a one-file change is array work, not string hashing.
type graph struct {
	gen    uint64
	files  []string // sorted
	tags   []*FileTags
	idents []string // symtab snapshot: id → name
	// CSR: files defining ident i are defFile[defStart[i]:defStart[i+1]].
	defStart []int32
	defFile  []int32
	defined  []int32 // idents with at least one definer, ascending
	// slot numbers the defined idents densely (-1 for the others), those
	// that some file references first (0..referenced-1, in ident order, with
	// their definers in slotFile[slotStart[k]:slotStart[k+1]]), then the
	// rest: the PageRank's per-name arrays are per slot, and only the
	// referenced slots ever receive flow.
	slot       []int32
	referenced int
	slotStart  []int32
	slotFile   []int32
	// CSR edges: refs of file f are edgeSlot/edgeW[edgeStart[f]:edgeStart[f+1]].
	edgeStart []int32
	edgeSlot  []int32
	edgeW     []float64 // static weight (no focus factor)
	edgeB     []float64 // the same without the common and ubiquitous factors (for normalization)
	// Per file, per definition: its ident (-1 for local definitions) and
	// how many definitions of the same name the file has.
	defIdent [][]int32
	defSame  [][]int32
	fileIdx  map[string]int32
	refFiles []int32 // per ident: files referencing it
	// qualified lists, per plain ident, the qualified and bare idents
	// resolved to some of its definers (resolveNames): their flow counts
	// for it. CSR: qualList[qualStart[i]:qualStart[i+1]]; nil when no
	// name resolves.
	qualStart []int32
	qualList  []int32
	declared  []bool // per ident: named by some export list
	facts     []*fileFacts
	lower     *lowerPaths // shared with withTags copies (same files)
	flowIx    *flowIndex  // shared with withTags copies (same edges)
	scoreIx   *scoreIndex // not shared: withTags changes a file's facts
	numDefs   int         // definitions of all files: the most a ranking scores
}

// lowerPaths are the graph's file paths lowercased, and their base names
// without extensions, for matching mentioned words: made once per graph, on
// the first ranking that has words. byName, byPath and byBase find them by
// a word without a pass over every name and file per ranking.
type lowerPaths struct {
	once         sync.Once
	paths, bases []string
	byPath       map[string][]int32 // lowercased path → files
	byBase       map[string][]int32 // base name → files, ascending
	byName       map[string][]int32 // foldKey of a defined name (bareMark trimmed) → its idents, ascending
}

func (g *graph) lowerFiles() *lowerPaths {
	l := g.lower
	l.once.Do(func() {
		l.paths = make([]string, len(g.files))
		l.bases = make([]string, len(g.files))
		l.byPath = make(map[string][]int32, len(g.files))
		l.byBase = map[string][]int32{}
		for i, f := range g.files {
			lf := strings.ToLower(f)
			base := lf[strings.LastIndexByte(lf, '/')+1:]
			if dot := strings.IndexByte(base, '.'); dot > 0 {
				base = base[:dot]
			}
			l.paths[i], l.bases[i] = lf, base
			l.byPath[lf] = append(l.byPath[lf], int32(i))
			l.byBase[base] = append(l.byBase[base], int32(i))
		}
		l.byName = make(map[string][]int32, len(g.defined))
		for _, id := range g.defined {
			k := foldKey(strings.TrimPrefix(g.idents[id], bareMark))
			l.byName[k] = append(l.byName[k], id)
		}
	})
	return l
}

// foldKey maps s to a key that another string has exactly when
// strings.EqualFold says the two are equal: each rune becomes the smallest
// rune of its simple case-folding orbit (EqualFold compares rune by rune,
// by those orbits).
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

// qualifiedOf returns the qualified and bare idents whose flow counts for
// the plain ident id.
func (g *graph) qualifiedOf(id int32) []int32 {
	if g.qualStart == nil {
		return nil
	}
	return g.qualList[g.qualStart[id]:g.qualStart[id+1]]
}

// fileFacts are what the ranking needs to know of one file that no other
// file changes: computed once per parse (symtab.resolve, or when the graph
// takes new tags of the same shape), not once per ranking.
type fileFacts struct {
	fixture      bool // test data, or Go's builtin package
	test         bool // isTestFile
	internal     bool // isGoInternal
	experimental bool // isExperimental
	depth        int  // directory levels below the workspace root
	defs         []defFacts
	scored       int // definitions a ranking scores (not local, not an overload)
	exports      int // names its export lists name (Ref.Export)
}

// defFacts are one definition's static facts.
type defFacts struct {
	kept  int32 // definitions of its name in the file once overloads are collapsed
	flags uint8
}

const (
	factAPI      = 1 << iota // isAPI
	factMember               // isMember
	factOverload             // overload: the first definition of the name and scope stands for it
)

// computeFacts derives a file's fileFacts from its tags and definition
// idents (-1 for definitions the graph leaves out).
func computeFacts(t *FileTags, ids, same []int32) *fileFacts {
	f := &fileFacts{
		fixture:      isFixture(t.Path) || isBuiltinDecl(t.Path),
		test:         isTestFile(t.Path),
		internal:     isGoInternal(t.Path),
		experimental: isExperimental(t),
		depth:        strings.Count(t.Path, "/"),
		defs:         make([]defFacts, len(ids)),
	}
	for i := range t.Refs {
		if t.Refs[i].Export {
			f.exports++
		}
	}
	if t.Language == "go" && f.test {
		// Go's examples (func ExampleX in a _test.go file, shown by go
		// doc) are the package's own account of how it is used.
		for i := range t.Defs {
			if d := &t.Defs[i]; d.TopLevel && d.Kind == "function" && strings.HasPrefix(d.Name, "Example") {
				f.exports++
			}
		}
	}
	for di, id := range ids {
		if id < 0 {
			continue
		}
		def := &t.Defs[di]
		df := &f.defs[di]
		if isAPI(t.Language, def) {
			df.flags |= factAPI
		}
		if isMember(t.Language, def) {
			df.flags |= factMember
		}
		if same[di] > 1 && overload(t, ids, di) {
			df.flags |= factOverload
		}
		if df.flags&factOverload == 0 {
			f.scored++
		}
		df.kept = same[di]
		if df.kept > 1 {
			df.kept = 0
			for j := range ids {
				if ids[j] == id && !overload(t, ids, j) {
					df.kept++
				}
			}
		}
	}
	return f
}

// withTags returns a copy of g with rel's tags replaced (same shape).
func (g *graph) withTags(rel string, t *FileTags) *graph {
	fi, ok := g.fileIdx[rel]
	if !ok {
		return nil
	}
	ng := *g
	ng.tags = slices.Clone(g.tags)
	ng.tags[fi] = t
	ng.facts = slices.Clone(g.facts)
	ng.facts[fi] = computeFacts(t, g.defIdent[fi], g.defSame[fi])
	ng.numDefs += ng.facts[fi].scored - g.facts[fi].scored
	ng.scoreIx = &scoreIndex{}
	return &ng
}

func (g *graph) definers(id int32) []int32 { return g.defFile[g.defStart[id]:g.defStart[id+1]] }

// symtab interns names for the graph. Guarded by Map.mu.
type symtab struct {
	ids    map[string]int32
	names  []string
	static []float64 // identWeight without the definer factor
	live   int       // names in use at the last graph build
}

func (t *symtab) id(name string) int32 {
	if id, ok := t.ids[name]; ok {
		return id
	}
	id := int32(len(t.names))
	t.ids[name] = id
	t.names = append(t.names, name)
	w := identWeight(strings.TrimPrefix(name, bareMark), 1)
	if strings.IndexByte(name, '.') > 0 {
		w = specificBoost // a qualified name means one thing
	}
	t.static = append(t.static, w)
	return id
}

// bareMark starts the graph name of a bare reference (see graphName); no
// identifier contains it.
const bareMark = "\x01"

// receiverLanguages reach a member (method) only through its receiver:
// x.m(), self.m(), this.m(). A bare m() there never means a method, so a
// bare reference leads only to definitions that are not members (Go's
// len(x) to no method len, string to no method string).
var receiverLanguages = map[string]bool{"go": true, "python": true, "javascript": true, "typescript": true, "tsx": true}

// graphName is the name a reference has in the graph: bare references in
// receiverLanguages get their own name (resolved to the non-member
// definitions of the name, resolveNames); member accesses, qualified names
// and references in other languages keep theirs.
func graphName(lang string, r *Ref) string {
	if !r.Member && receiverLanguages[lang] && strings.IndexByte(r.Name, '.') < 0 {
		return bareMark + r.Name
	}
	return r.Name
}

// isMember reports a definition reached only through a receiver in its
// language (receiverLanguages): a method.
func isMember(lang string, d *Def) bool {
	return d.Kind == "method" && receiverLanguages[lang]
}

// twinOf reports build output beside its declaration or source: compiled
// JavaScript next to a .d.ts of the same stem (the declaration names the
// same API with its types), or a .d.ts next to the .ts it was generated
// from. Its definitions would double every name; its references still count.
func twinOf(rel string, has func(string) bool) bool {
	for _, ext := range []string{".js", ".mjs", ".cjs"} {
		if stem, ok := strings.CutSuffix(rel, ext); ok {
			for _, d := range []string{".d.ts", ".d.mts", ".d.cts"} {
				if has(stem + d) {
					return true
				}
			}
			return false
		}
	}
	if stem, ok := strings.CutSuffix(rel, ".d.ts"); ok {
		return has(stem+".ts") || has(stem+".tsx")
	}
	return false
}

// resolve fills an entry's name ids (once per entry).
func (t *symtab) resolve(e *entry) {
	if e.resolved || e.Tags == nil {
		return
	}
	ft := e.Tags
	e.defIDs = make([]int32, len(ft.Defs))
	e.defSame = make([]int32, len(ft.Defs))
	builtin := isBuiltinDecl(ft.Path)
	for i, d := range ft.Defs {
		e.defIDs[i] = -1
		// Local helpers are not edges of the map, nor are Go's predeclared
		// identifiers: every file uses them, none depends on builtin.go.
		if !d.Local && !builtin {
			e.defIDs[i] = t.id(d.Name)
		}
	}
	if len(ft.Defs) <= 64 {
		for i, a := range e.defIDs {
			for _, b := range e.defIDs {
				if a >= 0 && a == b {
					e.defSame[i]++
				}
			}
		}
	} else {
		cnt := map[int32]int32{}
		for _, id := range e.defIDs {
			cnt[id]++
		}
		for i, id := range e.defIDs {
			e.defSame[i] = cnt[id]
		}
	}
	e.refIDs = make([]int32, len(ft.Refs))
	for i, r := range ft.Refs {
		e.refIDs[i] = t.id(graphName(ft.Language, &r))
	}
	e.facts = computeFacts(ft, e.defIDs, e.defSame)
	e.resolved = true
}

func (m *Map) currentGraph() *graph {
	m.mu.RLock()
	g := m.graph
	gen := m.gen
	m.mu.RUnlock()
	if g != nil && g.gen == gen {
		return g
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.graph != nil && m.graph.gen == m.gen {
		return m.graph
	}
	m.graph = m.buildGraphLocked()
	m.rankCache = nil
	return m.graph
}

func (m *Map) buildGraphLocked() *graph {
	st := &m.syms
	if st.ids == nil {
		st.ids = map[string]int32{}
	}
	g := &graph{gen: m.gen, fileIdx: map[string]int32{}, lower: &lowerPaths{}, flowIx: &flowIndex{}, scoreIx: &scoreIndex{}}
	entries := make([]*entry, 0, len(m.files))
	for _, e := range m.files {
		if e.Tags != nil {
			entries = append(entries, e)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Rel < entries[j].Rel })
	g.files = make([]string, len(entries))
	g.tags = make([]*FileTags, len(entries))
	g.defIdent = make([][]int32, len(entries))
	g.defSame = make([][]int32, len(entries))
	g.facts = make([]*fileFacts, len(entries))
	for i, e := range entries {
		st.resolve(e)
		if e.facts == nil { // resolved ids kept from an earlier version of the file (sameShape)
			e.facts = computeFacts(e.Tags, e.defIDs, e.defSame)
		}
		g.files[i] = e.Rel
		g.tags[i] = e.Tags
		g.fileIdx[e.Rel] = int32(i)
		g.defIdent[i], g.defSame[i] = e.defIDs, e.defSame
		g.facts[i] = e.facts
	}
	has := func(rel string) bool { _, ok := g.fileIdx[rel]; return ok }
	for i, e := range entries {
		if len(e.defIDs) > 0 && twinOf(e.Rel, has) {
			none := make([]int32, len(e.defIDs))
			for j := range none {
				none[j] = -1
			}
			g.defIdent[i] = none
			g.facts[i] = computeFacts(e.Tags, none, e.defSame)
		}
		g.numDefs += g.facts[i].scored
	}
	n := len(st.names)
	g.idents = st.names[:n:n]
	// Names an export list mentions: the package's declared API.
	g.declared = make([]bool, n)
	for _, e := range entries {
		for _, r := range e.Tags.Refs {
			if r.Export {
				if id, ok := st.ids[r.Name]; ok {
					g.declared[id] = true
				}
			}
		}
	}

	// Definers, as CSR by counting (each file once per name).
	last := make([]int32, n)
	for i := range last {
		last[i] = -1
	}
	g.defStart = make([]int32, n+1)
	total := 0
	for fi, ids := range g.defIdent {
		for _, id := range ids {
			if id >= 0 && last[id] != int32(fi) {
				last[id] = int32(fi)
				g.defStart[id+1]++
				total++
			}
		}
	}
	for i := 0; i < n; i++ {
		if g.defStart[i+1] > 0 {
			g.defined = append(g.defined, int32(i))
		}
		g.defStart[i+1] += g.defStart[i]
	}
	g.defFile = make([]int32, total)
	fill := make([]int32, n)
	copy(fill, g.defStart[:n])
	for i := range last {
		last[i] = -1
	}
	for fi, ids := range g.defIdent {
		for _, id := range ids {
			if id >= 0 && last[id] != int32(fi) {
				last[id] = int32(fi)
				g.defFile[fill[id]] = int32(fi)
				fill[id]++
			}
		}
	}

	g.resolveNames(st, m.rootName())

	// Edges: references to names some file defines.
	refFiles := make([]int32, n)
	for _, e := range entries {
		for _, id := range e.refIDs {
			refFiles[id]++
		}
	}
	g.refFiles = refFiles
	st.live = 0
	for id := 0; id < n; id++ {
		if refFiles[id] > 0 || g.defStart[id+1] > g.defStart[id] {
			st.live++
		}
	}
	weight := make([]float64, n)
	damp := make([]float64, n)
	for id := 0; id < n; id++ {
		if d := g.defStart[id+1] - g.defStart[id]; d > 0 {
			damp[id] = commonFactor(int(d)) * ubiquityFactor(int(refFiles[id]), len(entries))
			weight[id] = st.static[id] * damp[id]
		}
	}
	edges := 0
	for _, e := range entries {
		edges += len(e.refIDs)
	}
	g.slot = make([]int32, n)
	for i := range g.slot {
		g.slot[i] = -1
	}
	g.slotStart = []int32{0}
	for _, id := range g.defined {
		if refFiles[id] > 0 {
			g.slot[id] = int32(g.referenced)
			g.referenced++
			g.slotFile = append(g.slotFile, g.definers(id)...)
			g.slotStart = append(g.slotStart, int32(len(g.slotFile)))
		}
	}
	k := int32(g.referenced)
	for _, id := range g.defined {
		if g.slot[id] < 0 {
			g.slot[id] = k
			k++
		}
	}
	g.edgeStart = make([]int32, len(entries)+1)
	g.edgeSlot = make([]int32, 0, edges)
	g.edgeW = make([]float64, 0, edges)
	g.edgeB = make([]float64, 0, edges)
	own := make([]int32, n) // own[id] == fi+1: file fi defines id
	for fi, e := range entries {
		g.edgeStart[fi] = int32(len(g.edgeSlot))
		for _, id := range g.defIdent[fi] {
			if id >= 0 {
				own[id] = int32(fi) + 1
			}
		}
		for i, id := range e.refIDs {
			if weight[id] == 0 {
				continue
			}
			g.edgeSlot = append(g.edgeSlot, g.slot[id]) // weight > 0: id has definers
			w := math.Sqrt(float64(e.Tags.Refs[i].Count)) * weight[id]
			if e.Tags.Refs[i].Export {
				// An export list names exactly what it means: no
				// guessing by the name's length or shape.
				w = math.Sqrt(float64(e.Tags.Refs[i].Count)) * damp[id]
			}
			if own[id] == int32(fi)+1 {
				w *= selfRefFactor
			}
			g.edgeW = append(g.edgeW, w)
			g.edgeB = append(g.edgeB, w/damp[id])
		}
	}
	g.edgeStart[len(entries)] = int32(len(g.edgeSlot))
	return g
}

// resolveNames gives the qualified and bare reference names their
// definers, chosen among the definers of the plain name:
//
//   - a qualified name ("context.Context", from tags.go: a Go file's
//     pkg.Name where pkg is one of its imports) leads to the definitions of
//     Name in a directory named pkg that are not methods, so a use of
//     context.Context reaches package context's Context and not every
//     method named Context (nor net/http's CrossOriginProtection.Handler
//     for http.Handler). With
//     no such directory (the package is outside the workspace) the name
//     has no definers and no edge. The workspace root's directory counts by
//     the root's own name.
//   - a bare name (graphName) leads to the files with a definition of the
//     name that is not a member (isMember).
func (g *graph) resolveNames(st *symtab, rootName string) {
	n := len(g.idents)
	// Files with a non-member definition of each name, as CSR by counting
	// (each file once per name), like the definers.
	pStart := make([]int32, n+1)
	last := make([]int32, n)
	each := func(fn func(fi, id int32)) {
		for i := range last {
			last[i] = -1
		}
		for fi, ids := range g.defIdent {
			t := g.tags[fi]
			for di, id := range ids {
				if id >= 0 && last[id] != int32(fi) && !isMember(t.Language, &t.Defs[di]) {
					last[id] = int32(fi)
					fn(int32(fi), id)
				}
			}
		}
	}
	each(func(_, id int32) { pStart[id+1]++ })
	for i := 0; i < n; i++ {
		pStart[i+1] += pStart[i]
	}
	pFile := make([]int32, pStart[n])
	fill := slices.Clone(pStart[:n])
	each(func(fi, id int32) { pFile[fill[id]] = fi; fill[id]++ })
	lists := map[int32][]int32{}
	var quals [][2]int32 // (plain ident, qualified or bare ident resolved to some of its definers)
	for id := 0; id < n; id++ {
		name := g.idents[id]
		if strings.HasPrefix(name, bareMark) {
			base, ok := st.ids[name[len(bareMark):]]
			if !ok || int(base) >= n {
				lists[int32(id)] = nil
				continue
			}
			l := pFile[pStart[base]:pStart[base+1]]
			lists[int32(id)] = l
			if len(l) > 0 {
				quals = append(quals, [2]int32{base, int32(id)})
			}
			continue
		}
		dot := strings.LastIndexByte(name, '.')
		if dot <= 0 {
			continue
		}
		base, ok := st.ids[name[dot+1:]]
		if !ok || int(base) >= n {
			continue
		}
		qual := name[:dot]
		var l []int32
		// pkg.Name is never a method: only the name's non-member definers.
		for _, fi := range pFile[pStart[base]:pStart[base+1]] {
			p := g.files[fi]
			dir := rootName
			if i := strings.LastIndexByte(p, '/'); i >= 0 {
				dir = p[:i]
				dir = dir[strings.LastIndexByte(dir, '/')+1:]
			}
			if dir == qual {
				l = append(l, fi)
			}
		}
		if len(l) > 0 {
			lists[int32(id)] = l
			quals = append(quals, [2]int32{base, int32(id)})
		}
	}
	if len(quals) > 0 {
		// CSR by counting, each base's idents in ascending order.
		g.qualStart = make([]int32, n+1)
		for _, p := range quals {
			g.qualStart[p[0]+1]++
		}
		for i := 0; i < n; i++ {
			g.qualStart[i+1] += g.qualStart[i]
		}
		g.qualList = make([]int32, len(quals))
		fill := slices.Clone(g.qualStart[:n])
		for _, p := range quals {
			g.qualList[fill[p[0]]] = p[1]
			fill[p[0]]++
		}
	}
	if len(lists) == 0 {
		return
	}
	start := make([]int32, n+1)
	files := make([]int32, 0, len(g.defFile)+len(lists))
	g.defined = g.defined[:0]
	for id := 0; id < n; id++ {
		l, ok := lists[int32(id)]
		if !ok {
			l = g.defFile[g.defStart[id]:g.defStart[id+1]]
		}
		files = append(files, l...)
		start[id+1] = int32(len(files))
		if len(l) > 0 {
			g.defined = append(g.defined, int32(id))
		}
	}
	g.defStart, g.defFile = start, files
}

// ubiquityFactor lowers names used by more than 5% of the files (string,
// error, Errorf): past that share, the weight falls in proportion.
func ubiquityFactor(refFiles, files int) float64 {
	limit := float64(files) * ubiquityShare
	if limit < 5 || float64(refFiles) <= limit {
		return 1
	}
	return limit / float64(refFiles)
}

// commonFactor lowers names defined in many files: 1/(1+log2 n).
func commonFactor(definers int) float64 {
	if definers <= 1 {
		return 1
	}
	return 1 / (1 + math.Log2(float64(definers)))
}

// identWeight is the static part of w(r, i); see the package comment on ranking.
func identWeight(name string, definers int) float64 {
	w := 1.0
	n := len([]rune(name))
	switch {
	case n >= 8 && hasWordBoundary(name):
		w *= specificBoost
	case n <= 3:
		w *= shortPenalty
	}
	if strings.HasPrefix(name, "_") {
		w *= privatePenalty
	}
	return w * commonFactor(definers)
}

func hasWordBoundary(s string) bool {
	prevLower := false
	for _, r := range s {
		if r == '_' || r == '-' {
			return true
		}
		if unicode.IsUpper(r) && prevLower {
			return true
		}
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	return false
}

// ranking is the result of one personalized PageRank.
type ranking struct {
	key        string
	fileRank   []float64
	n          int // definitions ranked
	iterations int

	mu   sync.Mutex
	defs []rankedDef        // the best, in order
	tail []rankedDef        // the rest, unsorted until someone needs them
	more func() []rankedDef // or: every definition scored again, unsorted (nil when defs holds all)
}

// rankedPrefix is how many definitions are sorted eagerly: far more than
// an 8k-token map shows. Larger budgets sort the rest on demand.
var rankedPrefix = 4096 // a variable for the tests

// get returns the first k ranked definitions (fewer when there are fewer).
func (r *ranking) get(k int) []rankedDef {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k > len(r.defs) && len(r.tail) > 0 {
		slices.SortFunc(r.tail, cmpRanked)
		all := make([]rankedDef, 0, len(r.defs)+len(r.tail))
		r.defs = append(append(all, r.defs...), r.tail...)
		r.tail = nil
	}
	if k > len(r.defs) && r.more != nil {
		all := r.more()
		slices.SortFunc(all, cmpRanked)
		r.defs, r.more = all, nil
	}
	if k > len(r.defs) {
		k = len(r.defs)
	}
	return r.defs[:k:k]
}

// cmpRanked orders by score, descending, then by file and definition.
func cmpRanked(a, b rankedDef) int {
	switch {
	case a.score > b.score:
		return -1
	case a.score < b.score:
		return 1
	case a.file != b.file:
		return int(a.file - b.file)
	}
	return int(a.def - b.def)
}

// splitTop returns the k best of all, sorted, and the rest unsorted, both
// in all's array. It runs over every definition of the repository for
// each new focus, so it selects by the scores' bits rather than by
// comparisons: a histogram of the scores' top bits finds the bucket the
// k-th best falls in; the definitions in higher buckets are all kept, and
// only that bucket's are ordered to pick the rest.
func splitTop(all []rankedDef, k int) (top, rest []rankedDef) {
	if len(all) <= k {
		slices.SortFunc(all, cmpRanked)
		return all, nil
	}
	if k <= 0 {
		return nil, all
	}
	hp := histPool.Get().(*[1 << scoreBucketBits]int32)
	defer histPool.Put(hp)
	hist := hp[:]
	clear(hist)
	for i := range all {
		hist[scoreBucket(all[i].score)]++
	}
	// The bucket of the k-th best: the k best are the higher buckets'
	// (above of them) and the best k-above of this one's.
	b, above := len(hist)-1, 0
	for ; b > 0 && above+int(hist[b]) < k; b-- {
		above += int(hist[b])
	}
	hi, mid := 0, above
	for i := range all {
		if scoreBucket(all[i].score) > b {
			all[hi], all[i] = all[i], all[hi]
			hi++
		}
	}
	for i := hi; i < len(all); i++ {
		if scoreBucket(all[i].score) == b {
			all[mid], all[i] = all[i], all[mid]
			mid++
		}
	}
	slices.SortFunc(all[hi:mid], cmpRanked)
	slices.SortFunc(all[:k], cmpRanked)
	return all[:k:k], all[k:]
}

var histPool = sync.Pool{New: func() any { return new([1 << scoreBucketBits]int32) }}

// scoreBucketBits is how many of a score's top bits (as an ordered key)
// make its bucket: the sign, the exponent and 4 bits of the mantissa, 16
// buckets an octave.
const scoreBucketBits = 16

// scoreBucket maps a score to its bucket, in score order: equal scores
// (0 and -0 too) share one, and a higher bucket holds only higher scores.
func scoreBucket(s float64) int {
	if s == 0 {
		s = 0 // -0 orders with +0
	}
	u := math.Float64bits(s)
	if u>>63 != 0 {
		u = ^u // negative: larger magnitude orders lower
	} else {
		u |= 1 << 63
	}
	return int(u >> (64 - scoreBucketBits))
}

type rankedDef struct {
	file  int32
	def   int32
	score float64
}

// rank returns the ranking for focus, cached per focus until the map changes.
func (m *Map) rank(focus Focus) (*graph, *ranking) {
	g := m.currentGraph()
	key := focus.key()
	m.mu.RLock()
	if m.graph == g {
		for _, r := range m.rankCache {
			if r.key == key {
				m.mu.RUnlock()
				return g, r
			}
		}
	}
	m.mu.RUnlock()
	m.mu.RLock()
	var ids []int32
	for _, n := range focus.Identifiers {
		for _, k := range []string{n, bareMark + n} {
			if id, ok := m.syms.ids[k]; ok && int(id) < len(g.idents) {
				ids = append(ids, id)
			}
		}
	}
	m.mu.RUnlock()
	r := g.rank(focus, ids)
	r.key = key
	m.mu.Lock()
	if m.graph == g {
		m.rankCache = append(m.rankCache, r)
		if len(m.rankCache) > 8 {
			m.rankCache = m.rankCache[1:]
		}
	}
	m.mu.Unlock()
	return g, r
}

func (g *graph) rank(focus Focus, focusIdents []int32) *ranking {
	if len(g.tags) == 0 {
		return &ranking{}
	}
	f := g.flows(focus, focusIdents)
	out := &ranking{fileRank: f.pr, iterations: f.iterations}
	// Every definition is scored in a buffer kept between rankings; the
	// ranking keeps the best. The rest are scored again (the same scores,
	// from the same inputs) if a budget ever needs them.
	buf := scoredPool.Get().(*[]rankedDef)
	all := g.scoreInto((*buf)[:0], focus, f.pr, f.mass, f.focusIdent)
	out.n = len(all)
	top, _ := splitTop(all, rankedPrefix)
	out.defs = slices.Clone(top)
	*buf = all[:0]
	scoredPool.Put(buf)
	if out.n > len(out.defs) {
		fc := Focus{Files: slices.Clone(focus.Files), Related: slices.Clone(focus.Related),
			Identifiers: slices.Clone(focus.Identifiers), Mentioned: slices.Clone(focus.Mentioned), Known: slices.Clone(focus.Known)}
		out.more = func() []rankedDef { return g.score(fc, f.pr, f.mass, f.focusIdent) }
	}
	return out
}

var scoredPool = sync.Pool{New: func() any { return new([]rankedDef) }}

// flowResult is a personalized PageRank's outcome: the files' ranks and
// the flow along each name in the last step.
type flowResult struct {
	pr         []float64 // per file
	mass       []float64 // per referenced slot (graph.slot < graph.referenced)
	focusIdent []bool    // per ident: a focus identifier or mentioned name
	iterations int
}

// flowIndex is what every personalized PageRank of a graph shares, made
// once per graph on its first ranking: the edges turned around (each
// referenced slot's in-edges, in file order, which is the order a push
// over the files adds them in, so each name's mass is the same sum to the
// last bit), and each file's out-weight and leak with no focus factor (a
// focus changes only the files with an edge to a focus name).
//
// The iteration runs in flat loops, with few branches that depend on the
// data (a loop per name mispredicted its exit once or twice a name): the
// names with one in-edge (most of them) in one loop, the others each
// summing its in-edges, then each name's share (its mass over its
// definers) and the shares added to the definers in slot order (pairSlot),
// the order in which a push per name added them.
type flowIndex struct {
	once sync.Once
	// In-edges of referenced slot k: inFile/inW[inStart[k]:inStart[k+1]].
	inStart    []int32
	inFile     []int32
	inW        []float64 // graph.edgeW
	outW, leak []float64 // per file, with no focus
	// The slots with exactly one in-edge, and that edge; with two and
	// three (their edges at inStart); the others.
	oneSlot, oneFile []int32
	oneW             []float64
	two, three, many []int32
	// Per referenced slot: 1/definers where that is exact (a power of two:
	// then x·(1/d) is x/d to the bit), else 0 and the slot is in divide.
	perDefiner []float64
	divide     []int32
	definers   []float64 // per referenced slot: how many files define it
	pairSlot   []int32   // per entry of graph.slotFile of a referenced slot: that slot
}

func (g *graph) flowIndex() *flowIndex {
	x := g.flowIx
	x.once.Do(func() {
		nf := len(g.tags)
		x.inStart = make([]int32, g.referenced+1)
		for _, k := range g.edgeSlot {
			x.inStart[k+1]++
		}
		for k := 0; k < g.referenced; k++ {
			x.inStart[k+1] += x.inStart[k]
		}
		x.inFile = make([]int32, len(g.edgeSlot))
		x.inW = make([]float64, len(g.edgeSlot))
		fill := slices.Clone(x.inStart[:g.referenced])
		x.outW = make([]float64, nf)
		x.leak = make([]float64, nf)
		for f := 0; f < nf; f++ {
			s, b := 0.0, 0.0
			for e := g.edgeStart[f]; e < g.edgeStart[f+1]; e++ {
				k := g.edgeSlot[e]
				x.inFile[fill[k]], x.inW[fill[k]] = int32(f), g.edgeW[e]
				fill[k]++
				s += g.edgeW[e]
				b += g.edgeB[e]
			}
			x.outW[f] = b
			if b > 0 {
				x.leak[f] = 1 - s/b
			}
		}
		x.definers = make([]float64, g.referenced)
		x.perDefiner = make([]float64, g.referenced)
		x.pairSlot = make([]int32, g.slotStart[g.referenced])
		for k := 0; k < g.referenced; k++ {
			lo, hi := x.inStart[k], x.inStart[k+1]
			if hi-lo == 1 {
				x.oneSlot = append(x.oneSlot, int32(k))
				x.oneFile = append(x.oneFile, x.inFile[lo])
				x.oneW = append(x.oneW, x.inW[lo])
			} else if hi-lo == 2 {
				x.two = append(x.two, int32(k))
			} else if hi-lo == 3 {
				x.three = append(x.three, int32(k))
			} else {
				x.many = append(x.many, int32(k))
			}
			n := g.slotStart[k+1] - g.slotStart[k]
			x.definers[k] = float64(n)
			if n&(n-1) == 0 {
				x.perDefiner[k] = 1 / float64(n)
			} else {
				x.divide = append(x.divide, int32(k))
			}
			for j := g.slotStart[k]; j < g.slotStart[k+1]; j++ {
				x.pairSlot[j] = int32(k)
			}
		}
	})
	return x
}

// flowScratch holds a ranking's working arrays between rankings (a new
// focus allocated about 0.7 MB of them on the Go tree).
type flowScratch struct {
	p, next, scale, share, outW, leak []float64
	focusSlot, redone, matched        []bool
}

var flowPool = sync.Pool{New: func() any { return new(flowScratch) }}

// floats returns *b resized to n and zeroed.
func (*flowScratch) floats(b *[]float64, n int) []float64 {
	if cap(*b) < n {
		*b = make([]float64, n)
	}
	*b = (*b)[:n]
	clear(*b)
	return *b
}

// bools returns *b resized to n and all false.
func (*flowScratch) bools(b *[]bool, n int) []bool {
	if cap(*b) < n {
		*b = make([]bool, n)
	}
	*b = (*b)[:n]
	clear(*b)
	return *b
}

// words are the focus's mentioned words, trimmed of quotes and
// punctuation and lowercased, of three letters or more: matched against
// defined names regardless of case.
func (focus Focus) words() []string {
	var words []string
	for _, w := range focus.Mentioned {
		w = strings.ToLower(strings.Trim(w, " \t\n`'\"()[]{},.;:?!"))
		if len(w) >= 3 {
			words = append(words, w)
		}
	}
	return words
}

// flows runs the personalized PageRank for focus (len(g.tags) > 0).
func (g *graph) flows(focus Focus, focusIdents []int32) flowResult {
	nf := len(g.tags)
	// Focus names: exact identifiers, and mentioned words matched case-insensitively.
	focusIdent := make([]bool, len(g.idents))
	var focusIDs []int32
	mark := func(id int32) {
		if !focusIdent[id] {
			focusIdent[id] = true
			focusIDs = append(focusIDs, id)
		}
	}
	for _, id := range focusIdents {
		if g.defStart[id+1] > g.defStart[id] {
			mark(id)
		}
	}
	words := focus.words()
	var lower *lowerPaths
	if len(words) > 0 {
		// The defined names equal to a word but for case (the same set a
		// pass over every name finds: the order is made below).
		lower = g.lowerFiles()
		for _, w := range words {
			for _, id := range lower.byName[foldKey(w)] {
				if name := strings.TrimPrefix(g.idents[id], bareMark); len(name) == len(w) && strings.EqualFold(name, w) {
					mark(id)
				}
			}
		}
	}
	sort.Slice(focusIDs, func(i, j int) bool { return focusIDs[i] < focusIDs[j] })

	// Personalization.
	sc := flowPool.Get().(*flowScratch)
	defer flowPool.Put(sc)
	p := sc.floats(&sc.p, nf)
	for _, f := range focus.Files {
		if i, ok := g.fileIdx[f]; ok {
			p[i] += 1
		}
	}
	for _, f := range focus.Related {
		if i, ok := g.fileIdx[f]; ok {
			p[i] += 0.5
		}
	}
	if len(words) > 0 {
		// Each file whose base name or path is a word, or whose path
		// contains a word with a slash, once.
		matched := sc.bools(&sc.matched, nf)
		for _, w := range words {
			for _, i := range lower.byBase[w] {
				matched[i] = true
			}
			for _, i := range lower.byPath[w] {
				matched[i] = true
			}
			if strings.Contains(w, "/") {
				for i, lf := range lower.paths {
					if strings.Contains(lf, w) {
						matched[i] = true
					}
				}
			}
		}
		for i, m := range matched {
			if m {
				p[i] += 0.5
			}
		}
	}
	for _, id := range focusIDs {
		d := g.definers(id)
		for _, fi := range d {
			p[fi] += 0.25 / float64(len(d))
		}
	}
	sum := 0.0
	for _, v := range p {
		sum += v
	}
	if sum == 0 {
		// No focus: every file, and once more for each name its export
		// lists name (an index file, Python's __all__): the package's
		// users enter through what it declares it offers.
		for i := range p {
			p[i] = 1 + float64(g.facts[i].exports)
			sum += p[i]
		}
	}
	for i := range p {
		p[i] /= sum
	}

	// Out-weights with the focus factor. They are normalized by the weights
	// before the common and ubiquitous factors, so what those factors take
	// away is not followed: that share of the file's rank restarts at the
	// personalization, like a dangling node's (leak). Only the files with
	// an edge to a focus name differ from the unfocused ones (flowIndex).
	x := g.flowIndex()
	focusSlot := sc.bools(&sc.focusSlot, len(g.defined))
	for _, id := range focusIDs {
		focusSlot[g.slot[id]] = true // focus idents have definers
	}
	outW := sc.floats(&sc.outW, nf)
	copy(outW, x.outW)
	leak := sc.floats(&sc.leak, nf)
	copy(leak, x.leak)
	redone := sc.bools(&sc.redone, nf)
	for _, id := range focusIDs {
		k := g.slot[id]
		if int(k) >= g.referenced {
			continue // nothing refers to it: no edge
		}
		for _, f := range x.inFile[x.inStart[k]:x.inStart[k+1]] {
			if redone[f] {
				continue
			}
			redone[f] = true
			s, b := 0.0, 0.0
			for e := g.edgeStart[f]; e < g.edgeStart[f+1]; e++ {
				w, wb := g.edgeW[e], g.edgeB[e]
				if focusSlot[g.edgeSlot[e]] {
					w *= focusBoost
					wb *= focusBoost
				}
				s += w
				b += wb
			}
			outW[f] = b
			leak[f] = 0
			if b > 0 {
				leak[f] = 1 - s/b
			}
		}
	}

	// Always start from p (not from an earlier solution): the result must
	// not depend on which focus was ranked before.
	pr := append([]float64(nil), p...)
	next := sc.floats(&sc.next, nf)
	mass := make([]float64, g.referenced) // per referenced slot: no flow reaches the others
	scale := sc.floats(&sc.scale, nf)
	// flow sends each file's rank along its edges (mass, per name) and, when
	// next is not nil, each name's mass on to its definers (next). It pulls
	// each name's mass from its in-edges (flowIndex), in the order a push
	// over the files would add them: the same sums, bit for bit, with the
	// writes in order and the reads in the small per-file array.
	// The focus slots that receive flow, ascending.
	var boosted []int32
	for _, id := range focusIDs {
		if k := g.slot[id]; int(k) < g.referenced {
			boosted = append(boosted, k)
		}
	}
	slices.Sort(boosted)
	share := sc.floats(&sc.share, g.referenced)
	pairs := g.slotFile[:g.slotStart[g.referenced]]
	flow := func(pr, next []float64) (dangling float64) {
		for f := 0; f < nf; f++ {
			if outW[f] == 0 {
				dangling += pr[f]
				scale[f] = 0 // its edges (if any weigh nothing) add nothing
				continue
			}
			dangling += pr[f] * leak[f]
			scale[f] = pr[f] / outW[f]
		}
		// Each name's mass: the sum over its in-edges in order (0 + x is
		// x: one in-edge needs no sum), written as the loop below writes it
		// (where the compiler fuses a multiply and an add, it fuses the
		// same ones).
		oneFile, oneW := x.oneFile, x.oneW[:len(x.oneFile)]
		for i, k := range x.oneSlot[:len(oneFile)] {
			mass[k] = scale[oneFile[i]] * oneW[i]
		}
		for _, k := range x.two {
			lo := x.inStart[k]
			in, w := x.inFile[lo:lo+2], x.inW[lo:lo+2]
			mv := scale[in[0]] * w[0]
			mv += scale[in[1]] * w[1]
			mass[k] = mv
		}
		for _, k := range x.three {
			lo := x.inStart[k]
			in, w := x.inFile[lo:lo+3], x.inW[lo:lo+3]
			mv := scale[in[0]] * w[0]
			mv += scale[in[1]] * w[1]
			mv += scale[in[2]] * w[2]
			mass[k] = mv
		}
		for _, k := range x.many {
			lo, hi := x.inStart[k], x.inStart[k+1]
			in, w := x.inFile[lo:hi], x.inW[lo:hi:hi]
			mv := 0.0
			for i, f := range in {
				mv += scale[f] * w[i]
			}
			mass[k] = mv
		}
		for _, k := range boosted {
			lo, hi := x.inStart[k], x.inStart[k+1]
			in, w := x.inFile[lo:hi], x.inW[lo:hi:hi]
			mv := 0.0
			for i, f := range in {
				mv += scale[f] * (w[i] * focusBoost)
			}
			mass[k] = mv
		}
		if next == nil {
			return dangling
		}
		// Each name's mass split among its definers, added in slot order
		// (a zero share adds nothing: next holds no -0).
		perDefiner := x.perDefiner[:len(mass)]
		for k, mv := range mass {
			share[k] = mv * perDefiner[k]
		}
		for _, k := range x.divide {
			share[k] = mass[k] / x.definers[k]
		}
		pairSlot := x.pairSlot[:len(pairs)]
		for j, fi := range pairs {
			next[fi] += share[pairSlot[j]]
		}
		return dangling
	}
	it := 0
	for ; it < maxIterations; it++ {
		clear(next)
		dangling := flow(pr, next)
		diff := 0.0
		for i := range next {
			next[i] = damping*(next[i]+dangling*p[i]) + (1-damping)*p[i]
			diff += math.Abs(next[i] - pr[i])
		}
		pr, next = next, pr
		if diff < tolerance {
			break
		}
	}
	// The flow of the final ranks: definitions are scored by it.
	flow(pr, nil)
	sc.next = next // the other buffer: pr is the caller's
	return flowResult{pr: pr, mass: mass, focusIdent: focusIdent, iterations: it}
}

// score scores every definition the map may show from the final ranks of
// the files (pr) and the flow along each name (mass); see the comment on
// ranking. The static facts of each file and definition (fileFacts) are
// computed when the file is parsed; this pass is arithmetic per definition.
func (g *graph) score(focus Focus, pr, mass []float64, focusIdent []bool) []rankedDef {
	return g.scoreInto(make([]rankedDef, 0, g.numDefs), focus, pr, mass, focusIdent)
}

// scoreInto is score appending to out.
func (g *graph) scoreInto(out []rankedDef, focus Focus, pr, mass []float64, focusIdent []bool) []rankedDef {
	nf := len(g.tags)
	known := make([]bool, nf)
	for _, f := range focus.Known {
		if i, ok := g.fileIdx[f]; ok {
			known[i] = true
		}
	}
	testFocus := false
	for _, f := range focus.Files {
		testFocus = testFocus || isTestFile(f)
	}
	unfocused := len(focus.Files)+len(focus.Related)+len(focus.Identifiers)+len(focus.Mentioned) == 0
	// With no focus, a package's API is nearest the root: each directory
	// level below the shallowest file with definitions counts nestFactor
	// times less (net/http's root files before httptest/ and internal/).
	minDepth := math.MaxInt
	if unfocused {
		for fi, t := range g.tags {
			if len(t.Defs) > 0 {
				minDepth = min(minDepth, g.facts[fi].depth)
			}
		}
	}
	x := g.scoreIndex()
	for fi, t := range g.tags {
		if len(t.Defs) == 0 || known[fi] {
			continue // the prompt holds this file already
		}
		base := pr[fi] * baselineShare / float64(len(t.Defs))
		facts := g.facts[fi]
		fileFactor := 1.0
		if facts.fixture {
			fileFactor = fixturePenalty
		}
		if !testFocus && facts.test {
			fileFactor *= testPenalty
		}
		if unfocused && facts.internal {
			fileFactor *= internalFactor
		}
		if unfocused && facts.experimental {
			fileFactor *= fixturePenalty
		}
		if unfocused {
			fileFactor *= math.Pow(nestFactor, float64(facts.depth-minDepth))
		}
		for _, d := range x.defs[x.fileStart[fi]:x.fileStart[fi+1]] {
			// (x/1 is x: most names have one definer and one kept
			// definition in the file, and a division costs.)
			flowIn := 0.0 // the mass of a name nothing refers to
			if d.slot >= 0 {
				flowIn = mass[d.slot]
				if d.definers != 1 {
					flowIn /= float64(d.definers)
				}
			}
			for _, q := range x.quals[d.qualLo:d.qualHi] {
				flowIn += mass[q.slot] / float64(q.definers)
			}
			if d.kept != 1 {
				flowIn /= float64(d.kept)
			}
			s := base + flowIn
			if focusIdent[d.id] {
				s *= defFocusBoost
			}
			if d.flags&factAPI != 0 {
				s *= apiBoost
				if unfocused && d.flags&scoreDeclared != 0 {
					s *= declaredBoost
				}
			}
			if unfocused {
				// How widely the name is used: a package's entry points are
				// used from many files, each with a small share of its rank.
				s *= 1 + math.Log2(1+float64(d.uses))
			}
			s *= fileFactor
			out = append(out, rankedDef{file: int32(fi), def: d.def, score: s})
		}
	}
	return out
}

// scoreIndex is what score needs of each definition it scores that no
// focus changes, in the order it scores them (by file, then definition):
// made once per graph, on its first ranking, so that scoring a new focus
// reads one array instead of looking up each name's slot, definers and
// qualified forms (a binary search per qualified form) every time.
type scoreIndex struct {
	once      sync.Once
	fileStart []int32 // file f's definitions are defs[fileStart[f]:fileStart[f+1]]
	defs      []scoreDef
	quals     []scoreQual
}

// scoreDef is one scored definition: the flow into it is the mass of its
// slot split among the name's definers, plus that of each qualified or
// bare form of the name that resolves to its file (quals[qualLo:qualHi],
// in qualifiedOf order).
type scoreDef struct {
	def, id        int32
	slot           int32 // -1: no file refers to the name (no mass)
	definers       int32
	qualLo, qualHi int32
	kept           int32 // defFacts.kept
	uses           int32 // files referring to the name or its forms that resolve here
	flags          uint8 // factAPI, scoreDeclared
}

type scoreQual struct{ slot, definers int32 }

// scoreDeclared marks API that an export list names (and is no member).
const scoreDeclared = 1 << 7

func (g *graph) scoreIndex() *scoreIndex {
	x := g.scoreIx
	x.once.Do(func() {
		x.fileStart = make([]int32, len(g.tags)+1)
		x.defs = make([]scoreDef, 0, g.numDefs)
		for fi := range g.tags {
			x.fileStart[fi] = int32(len(x.defs))
			facts := g.facts[fi]
			for di, id := range g.defIdent[fi] {
				if id < 0 {
					continue // local
				}
				df := facts.defs[di]
				if df.flags&factOverload != 0 {
					continue // one line per name: the first overload stands for the rest
				}
				member := df.flags&factMember != 0
				d := scoreDef{def: int32(di), id: id, slot: -1, definers: g.defStart[id+1] - g.defStart[id],
					kept: df.kept, uses: g.refFiles[id], flags: df.flags & factAPI}
				if k := g.slot[id]; int(k) < g.referenced {
					d.slot = k
				}
				if g.declared[id] && !member {
					d.flags |= scoreDeclared
				}
				d.qualLo = int32(len(x.quals))
				for _, q := range g.qualifiedOf(id) {
					if member {
						break // neither a bare nor a qualified name means a member
					}
					// Definers are in file order.
					if _, ok := slices.BinarySearch(g.definers(q), int32(fi)); ok {
						d.uses += g.refFiles[q]
						if k := g.slot[q]; int(k) < g.referenced {
							x.quals = append(x.quals, scoreQual{slot: k, definers: g.defStart[q+1] - g.defStart[q]})
						} // else its mass is zero: adding it changes nothing
					}
				}
				d.qualHi = int32(len(x.quals))
				x.defs = append(x.defs, d)
			}
		}
		x.fileStart[len(g.tags)] = int32(len(x.defs))
	})
	return x
}

// overload reports whether definition di repeats the name and scope of an
// earlier definition of its file (TypeScript overload signatures, Python
// property setters): the map shows the first.
func overload(t *FileTags, ids []int32, di int) bool {
	for j := 0; j < di; j++ {
		if ids[j] == ids[di] && t.Defs[j].Scope == t.Defs[di].Scope {
			return true
		}
	}
	return false
}

// rootName is the name of the workspace's root directory: the package name
// its top-level Go files usually have.
func (m *Map) rootName() string {
	return filepath.Base(m.ws.Root())
}
