package contextengine

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/internal/benchlat"
	"github.com/cairn-dev/cairn/internal/corpora"
	"github.com/cairn-dev/cairn/internal/gcroom"
	"github.com/cairn-dev/cairn/tokencount"
	"github.com/cairn-dev/cairn/workspace"
)

// The quality evaluation and the benchmarks run only when
// CAIRN_QUALITY_CORPUS=1 (see quality.sh and README.md):
//
//	CAIRN_QUALITY_CORPUS=1 go test -run TestQuality -v ./contextengine
//
// Corpora: "go" is $(go env GOROOT)/src, used in place; "python" is a copy
// of the standard library's email package; "ts" is a copy of ajv's lib/
// (TypeScript sources). CAIRN_QUALITY_WORKDIR keeps the copies and the
// index state between runs (else a temporary directory).

type qualityNeed struct {
	File   string `json:"file"`
	Symbol string `json:"symbol"` // Name, or Scope.Name for a method
}

type qualityQuestion struct {
	ID       string        `json:"id"`
	Corpus   string        `json:"corpus"`
	File     string        `json:"file"`
	Lines    [2]int        `json:"lines"`
	Question string        `json:"question"`
	Needs    []qualityNeed `json:"needs"`
	// Set is "tuning" (the ranking was tuned on it) or "held-out".
	Set string `json:"set"`
}

type qualitySet struct {
	Note      string            `json:"note"`
	Corpora   map[string]string `json:"corpora"` // name -> where it comes from
	Questions []qualityQuestion `json:"questions"`
}

func loadQualitySet(t testing.TB) qualitySet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "quality.json"))
	if err != nil {
		t.Fatal(err)
	}
	var qs qualitySet
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatalf("testdata/quality.json: %v", err)
	}
	return qs
}

// TestQualitySetWellFormed runs by default: the question file parses and
// every question names a corpus, a file, a range and at least one need.
func TestQualitySetWellFormed(t *testing.T) {
	qs := loadQualitySet(t)
	if len(qs.Questions) < 30 {
		t.Errorf("%d questions, want at least 30", len(qs.Questions))
	}
	ids := map[string]bool{}
	corpora := map[string]int{}
	for _, q := range qs.Questions {
		if q.ID == "" || ids[q.ID] {
			t.Errorf("question id %q empty or duplicate", q.ID)
		}
		ids[q.ID] = true
		corpora[q.Corpus]++
		if _, ok := qs.Corpora[q.Corpus]; !ok {
			t.Errorf("%s: unknown corpus %q", q.ID, q.Corpus)
		}
		if q.Set != "tuning" && q.Set != "held-out" {
			t.Errorf("%s: set %q, want tuning or held-out", q.ID, q.Set)
		}
		if q.File == "" || q.Lines[0] < 1 || q.Lines[1] < q.Lines[0] || strings.TrimSpace(q.Question) == "" || len(q.Needs) == 0 {
			t.Errorf("%s: incomplete question", q.ID)
		}
		for _, n := range q.Needs {
			if n.File == q.File {
				t.Errorf("%s: need %s is in the selection's own file (only cross-file needs count)", q.ID, n.Symbol)
			}
		}
	}
	for _, c := range []string{"go", "python", "ts"} {
		if corpora[c] == 0 {
			t.Errorf("no question on corpus %q", c)
		}
	}
}

type qualityCorpus struct {
	ws *workspace.Workspace
	ix *codeindex.Local
}

var (
	corpusMu    sync.Mutex
	corpusCache = map[string]*qualityCorpus{}
)

func qualityEnabled(t testing.TB) {
	if os.Getenv("CAIRN_QUALITY_CORPUS") == "" && os.Getenv("CAIRN_QUALITY") == "" {
		t.Skip("set CAIRN_QUALITY_CORPUS=1 to run the context quality evaluation and benchmarks (see contextengine/quality.sh)")
	}
}

func qualityWorkdir(t testing.TB) string {
	if d := os.Getenv("CAIRN_QUALITY_WORKDIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	corpusMu.Lock()
	defer corpusMu.Unlock()
	if d, ok := corpusCache["<workdir>"]; ok {
		return d.ws.Root()
	}
	d, err := os.MkdirTemp("", "cairn-quality-")
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := workspace.Open(d)
	corpusCache["<workdir>"] = &qualityCorpus{ws: ws}
	return ws.Root()
}

// corpusRoot returns the directory of a corpus, copying it into the
// workdir first when it is not used in place.
func corpusRoot(t testing.TB, name, work string) string {
	switch name {
	case "go":
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join(strings.TrimSpace(string(out)), "src")
	case "python", "rxjs":
		return corpora.Root(t, name)
	case "ts":
		src := filepath.Join(corpora.Root(t, "ajv"), "lib")
		return copyTree(t, src, filepath.Join(work, "ts", "lib"), func(rel string) bool {
			return strings.HasSuffix(rel, ".ts")
		}, filepath.Join(work, "ts"))
	}
	t.Fatalf("unknown corpus %q", name)
	return ""
}

func copyTree(t testing.TB, src, dst string, keep func(string) bool, root string) string {
	if _, err := os.Stat(filepath.Join(dst, ".copied")); err == nil {
		return root
	}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !keep(rel) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, ".copied"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// openCorpus opens (once per process) a corpus's workspace and warm indexes.
func openCorpus(t testing.TB, name string) *qualityCorpus {
	work := qualityWorkdir(t)
	corpusMu.Lock()
	defer corpusMu.Unlock()
	if c, ok := corpusCache[name]; ok {
		return c
	}
	root := corpusRoot(t, name, work)
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := codeindex.Open(ws, codeindex.Options{StateDir: filepath.Join(work, "state-"+name), NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	if err := ix.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("corpus %s: %s; %+v; %v", name, root, ix.Stats(), time.Since(start).Round(time.Millisecond))
	c := &qualityCorpus{ws: ws, ix: ix}
	corpusCache[name] = c
	return c
}

// defLines finds the definition a need names in the map's tags.
func defLines(ix codeindex.Index, n qualityNeed) (codeindex.Symbol, bool) {
	defs, ok := ix.FileSymbols(n.File)
	if !ok {
		return codeindex.Symbol{}, false
	}
	name, scope := n.Symbol, ""
	if i := strings.LastIndexByte(n.Symbol, '.'); i > 0 {
		scope, name = n.Symbol[:i], n.Symbol[i+1:]
	}
	for _, d := range defs {
		if d.Name() == name && (scope == "" || d.Scope() == scope) && !d.Local {
			return d, true
		}
	}
	return codeindex.Symbol{}, false
}

// promptPiece is one included block of file lines: a path and its text.
type promptPiece struct {
	path string
	text string
	cut  bool // a definition cut to its first lines
}

// covered says whether a definition is in the prompt: some included piece
// from its file holds its numbered signature line and the lines after it
// (up to 5 more, within the definition).
func covered(pieces []promptPiece, fileLines []string, path string, d codeindex.Symbol) (found, cut bool) {
	from, to := d.NameLine, min(d.EndLine, d.NameLine+5)
	if from < 1 || from > len(fileLines) {
		return false, false
	}
	var want []string
	for l := from; l <= to && l <= len(fileLines); l++ {
		want = append(want, numbered(fileLines, l, l))
	}
	for _, p := range pieces {
		if p.path != path {
			continue
		}
		ok := true
		for _, w := range want {
			if !strings.Contains(p.text, w) {
				ok = false
				break
			}
		}
		if ok && !p.cut {
			return true, false
		}
		if ok {
			found, cut = true, true
		}
	}
	return found, cut
}

// wholeBody says whether one included piece that is not cut holds every
// line of the definition, from its first line to its last.
func wholeBody(pieces []promptPiece, fileLines []string, path string, d codeindex.Symbol) bool {
	for _, p := range pieces {
		if p.path != path || p.cut {
			continue
		}
		ok := true
		for l := d.Line; l <= d.EndLine && l <= len(fileLines); l++ {
			if !strings.Contains(p.text, numbered(fileLines, l, l)) && !strings.Contains(p.text, markedLine(fileLines, l)) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// markedLine is line l as mergeOverlaps shows a selected line.
func markedLine(lines []string, l int) string {
	return strings.Replace(numbered(lines, l, l), "\t", "›", 1)
}

// piecesOf lists the included items that carry file lines, by path (the
// path is the Location up to the first ':').
func piecesOf(items []*Item) []promptPiece {
	var out []promptPiece
	for _, it := range items {
		if !it.Included || it.Text == "" {
			continue
		}
		switch it.Source {
		case SourceQuestion, SourceInstructions, SourceRepoMap, SourceDiagnostics, SourceRecentEdits, SourceProject:
			continue
		}
		i := strings.IndexByte(it.Location, ':')
		if i <= 0 {
			continue
		}
		out = append(out, promptPiece{path: it.Location[:i], text: it.Text, cut: strings.Contains(it.Reason, "cut to")})
	}
	return out
}

func fileLinesOf(t testing.TB, ws *workspace.Workspace, rel string) []string {
	b, err := os.ReadFile(ws.Abs(rel))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

func qualityRequest(c *qualityCorpus, q qualityQuestion, text string, window int) Request {
	return Request{
		Question: q.Question, File: q.File, FileText: text,
		Selection: &Selection{StartLine: q.Lines[0], EndLine: q.Lines[1]},
		WS:        c.ws, Index: c.ix,
		ContextWindow: window, MaxOutput: 512, ToolSchemas: 0,
	}
}

// baseline is the naive context: the question, the selection, the whole
// current file (cut to the lines nearest the selection when it does not
// fit), then the top search hits for the question's words, in that order,
// in the same budget.
func baseline(t testing.TB, c *qualityCorpus, q qualityQuestion, lines []string, window int) []*Item {
	avail := NewBudget(window, 512, 0).Available - tokencount.Count(SystemPrompt)
	var items []*Item
	used := 0
	add := func(it *Item) bool {
		it.Tokens = tokencount.Count(it.Text)
		if used+it.Tokens > avail {
			return false
		}
		it.Included = true
		used += it.Tokens
		items = append(items, it)
		return true
	}
	add(&Item{Source: SourceQuestion, Location: "user", Text: "## Question\n" + q.Question + "\n"})
	s, e := q.Lines[0], min(q.Lines[1], len(lines))
	add(&Item{Source: SourceSelection, Location: fmt.Sprintf("%s:%d-%d", q.File, s, e), Text: numbered(lines, s, e)})
	// The whole file, or the largest window around the selection that fits.
	for lo, hi := 1, len(lines); ; {
		if add(&Item{Source: SourceWindow, Location: fmt.Sprintf("%s:%d-%d", q.File, lo, hi), Text: numbered(lines, lo, hi)}) {
			break
		}
		if lo == s && hi == e {
			break
		}
		// Shrink by 10% on each side that still has room.
		span := hi - lo
		step := max(1, span/20)
		lo, hi = min(s, lo+step), max(e, hi-step)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The question's words as plain text (a "word:" would read as a filter).
	bq, err := codeindex.ParseQuery(strings.NewReplacer(":", " ", `"`, " ").Replace(q.Question))
	var res *codeindex.SearchResult
	if err == nil {
		res, err = c.ix.Search(ctx, bq, 10)
	}
	if err != nil {
		t.Logf("%s: baseline search: %v", q.ID, err)
		return items
	}
	for _, h := range res.Hits {
		from, to := h.StartLine, h.EndLine
		if to == 0 {
			from, to = max(1, h.Line-10), h.Line+20
		}
		to = min(to, from+79)
		text, ok := snippet(newWSFiles(c.ws), h.Path, from, to)
		if !ok {
			continue
		}
		add(&Item{Source: SourceSearch, Location: fmt.Sprintf("%s:%d-%d", h.Path, from, to), Text: text})
	}
	return items
}

type qualityResult struct {
	id          string
	corpus      string
	set         string
	needs       int
	ours, naive map[int]int // window -> needs covered
	oursCut     map[int]int // of ours, covered only by a definition cut to its head
	oursWhole   map[int]int // of ours, present with the whole body (every line)
	missed      map[int][]string
	buildTime   map[int]time.Duration
}

var qualityWindows = []int{4096, 8192, 16384}

func TestQuality(t *testing.T) {
	qualityEnabled(t)
	qs := loadQualitySet(t)
	var results []qualityResult
	for _, q := range qs.Questions {
		c := openCorpus(t, q.Corpus)
		lines := fileLinesOf(t, c.ws, q.File)
		text := strings.Join(lines, "")
		r := qualityResult{id: q.ID, corpus: q.Corpus, set: q.Set, needs: len(q.Needs), ours: map[int]int{}, naive: map[int]int{}, oursCut: map[int]int{}, oursWhole: map[int]int{},
			missed: map[int][]string{}, buildTime: map[int]time.Duration{}}
		type resolved struct {
			n     qualityNeed
			d     codeindex.Symbol
			lines []string
		}
		var needs []resolved
		for _, n := range q.Needs {
			d, ok := defLines(c.ix, n)
			if !ok {
				t.Errorf("%s: need %s %s not found in the repo map", q.ID, n.File, n.Symbol)
				continue
			}
			needs = append(needs, resolved{n, d, fileLinesOf(t, c.ws, n.File)})
		}
		for _, w := range qualityWindows {
			start := time.Now()
			b, err := Build(qualityRequest(c, q, text, w))
			r.buildTime[w] = time.Since(start)
			if err != nil {
				t.Fatalf("%s: %v", q.ID, err)
			}
			ours := piecesOf(b.Report.Items)
			naive := piecesOf(baseline(t, c, q, lines, w))
			for _, n := range needs {
				if ok, cut := covered(ours, n.lines, n.n.File, n.d); ok {
					r.ours[w]++
					if wholeBody(ours, n.lines, n.n.File, n.d) {
						r.oursWhole[w]++
					}
					if cut {
						r.oursCut[w]++
					}
				} else {
					r.missed[w] = append(r.missed[w], n.n.File+" "+n.n.Symbol)
				}
				if ok, _ := covered(naive, n.lines, n.n.File, n.d); ok {
					r.naive[w]++
				}
			}
			if os.Getenv("CAIRN_QUALITY_REPORT") == q.ID {
				t.Logf("%s at %d:\n%s", q.ID, w, b.Report.Markdown())
			}
		}
		results = append(results, r)
	}
	// Per question, then the table.
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n%-10s %-6s %5s", "question", "corpus", "needs")
	for _, w := range qualityWindows {
		fmt.Fprintf(&sb, " %7s", fmt.Sprintf("%dk", w/1024))
	}
	for _, w := range qualityWindows {
		fmt.Fprintf(&sb, " %7s", fmt.Sprintf("naive%dk", w/1024))
	}
	sb.WriteString("  missed at 8k\n")
	for _, r := range results {
		fmt.Fprintf(&sb, "%-10s %-6s %5d", r.id, r.corpus, r.needs)
		for _, w := range qualityWindows {
			fmt.Fprintf(&sb, " %7d", r.ours[w])
		}
		for _, w := range qualityWindows {
			fmt.Fprintf(&sb, " %7d", r.naive[w])
		}
		fmt.Fprintf(&sb, "  %s\n", strings.Join(r.missed[8192], ", "))
	}
	t.Log(sb.String())

	sets := []string{"go", "python", "ts", "rxjs", "tuning", "held-out", "all"}
	var tb strings.Builder
	tb.WriteString("\n| corpus / set | questions | needed definitions |")
	for _, w := range qualityWindows {
		fmt.Fprintf(&tb, " ours %dk |", w/1024)
	}
	for _, w := range qualityWindows {
		fmt.Fprintf(&tb, " naive %dk |", w/1024)
	}
	for _, w := range qualityWindows {
		fmt.Fprintf(&tb, " whole %dk |", w/1024)
	}
	tb.WriteString("\n|---|---:|---:|" + strings.Repeat("---:|", 3*len(qualityWindows)) + "\n")
	for _, cname := range sets {
		nq, needs := 0, 0
		ours, naive, cut, whole := map[int]int{}, map[int]int{}, map[int]int{}, map[int]int{}
		for _, r := range results {
			if cname != "all" && r.corpus != cname && r.set != cname {
				continue
			}
			nq++
			needs += r.needs
			for _, w := range qualityWindows {
				ours[w] += r.ours[w]
				naive[w] += r.naive[w]
				cut[w] += r.oursCut[w]
				whole[w] += r.oursWhole[w]
			}
		}
		if nq == 0 {
			continue
		}
		fmt.Fprintf(&tb, "| %s | %d | %d |", cname, nq, needs)
		for _, w := range qualityWindows {
			fmt.Fprintf(&tb, " %.1f%%", 100*float64(ours[w])/float64(needs))
			if cut[w] > 0 {
				fmt.Fprintf(&tb, " (%d cut)", cut[w])
			}
			tb.WriteString(" |")
		}
		for _, w := range qualityWindows {
			fmt.Fprintf(&tb, " %.1f%% |", 100*float64(naive[w])/float64(needs))
		}
		for _, w := range qualityWindows {
			fmt.Fprintf(&tb, " %.1f%% |", 100*float64(whole[w])/float64(needs))
		}
		tb.WriteString("\n")
	}
	var times []time.Duration
	for _, r := range results {
		for _, d := range r.buildTime {
			times = append(times, d)
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	if len(times) > 0 {
		fmt.Fprintf(&tb, "\nbuild time over %d builds (cold caches included): p50 %v, max %v; GOMAXPROCS %d\n",
			len(times), times[len(times)/2].Round(time.Microsecond), times[len(times)-1].Round(time.Microsecond), runtime.GOMAXPROCS(0))
	}
	t.Log(tb.String())
	if out := os.Getenv("CAIRN_QUALITY_OUT"); out != "" {
		_ = os.WriteFile(out, []byte(sb.String()+tb.String()), 0o644)
	}
	// Floors: definition recall of every question together, per window.
	needs, got := 0, map[int]int{}
	for _, r := range results {
		needs += r.needs
		for _, w := range qualityWindows {
			got[w] += r.ours[w]
		}
	}
	for w, floor := range qualityFloors {
		if needs > 0 && float64(got[w])/float64(needs) < floor {
			t.Errorf("definition recall at %dk is %.3f, below the floor %.2f", w/1024, float64(got[w])/float64(needs), floor)
		}
	}
}

// qualityFloors are the definition recalls TestQuality must keep, per
// window: the figures when the set was last grown, less a margin.
var qualityFloors = map[int]float64{4096: 0.90, 8192: 0.95, 16384: 0.95}

// BenchmarkBuild measures context builds on the Go tree with warm indexes
// at an 8k window, reporting p50 and p99: "new-question" cycles over the Go
// questions back to back (each build ranks the repo map for a new focus,
// as a new question does); "new-question-paced" does the same with what
// the agent does between a build and the next, which is at least one
// wait on the model: gcroom.Idle, the collection a server runs then if
// one is near (waited for here, as a model's answer outlasts it);
// "rebuild" repeats one question (the retry after a "context too long",
// the ranking cached). worst-p50 is the slowest question's median
// (benchlat.AddFor).
func BenchmarkBuild(b *testing.B) {
	c, ps := warmGoQuestions(b)
	run := func(b *testing.B, pick func(i int) preparedQuestion, paced bool) {
		b.ResetTimer()
		lat := benchlat.Start(b.N)
		for i := 0; i < b.N; i++ {
			p := pick(i)
			start := time.Now()
			var err error
			// Labelled by question, so a CPU profile splits by it
			// (pprof -tagfocus q=go-21); goroutines a build starts inherit it.
			pprof.Do(context.Background(), pprof.Labels("q", p.q.ID), func(context.Context) {
				_, err = Build(qualityRequest(c, p.q, p.text, 8192))
			})
			if err != nil {
				b.Fatal(err)
			}
			lat.AddFor(p.q.ID, time.Since(start))
			if paced {
				<-gcroom.Idle()
			}
		}
		b.StopTimer()
		lat.Report(b)
	}
	next := func(i int) preparedQuestion { return ps[i%len(ps)] }
	b.Run("new-question", func(b *testing.B) { run(b, next, false) })
	b.Run("new-question-paced", func(b *testing.B) { run(b, next, true) })
	b.Run("rebuild", func(b *testing.B) { run(b, func(i int) preparedQuestion { return ps[0] }, false) })
}

// openBenchCorpus opens the Go corpus, or $CAIRN_BENCH_CORPUS, and returns
// the path prefix of the Go tree's files in it.
func openBenchCorpus(b *testing.B) (*qualityCorpus, string) {
	root := os.Getenv("CAIRN_BENCH_CORPUS")
	if root == "" {
		return openCorpus(b, "go"), ""
	}
	prefix := ""
	if _, err := os.Stat(filepath.Join(root, "go", "ast", "ast.go")); err != nil {
		ents, err := os.ReadDir(root)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range ents {
			if _, err := os.Stat(filepath.Join(root, e.Name(), "go", "ast", "ast.go")); err == nil && e.IsDir() {
				prefix = e.Name() + "/"
				break
			}
		}
		if prefix == "" {
			b.Fatalf("no copy of the Go tree in %s", root)
		}
	}
	ws, err := workspace.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	state := os.Getenv("CAIRN_BENCH_STATE")
	if state == "" {
		state = b.TempDir()
	}
	ix, err := codeindex.Open(ws, codeindex.Options{StateDir: state, NoWatch: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ix.Close() })
	start := time.Now()
	if err := ix.Reconcile(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Logf("corpus %s: %+v; %v", root, ix.Stats(), time.Since(start).Round(time.Millisecond))
	return &qualityCorpus{ws: ws, ix: ix}, prefix
}

// preparedQuestion is a quality question with its file's text.
type preparedQuestion struct {
	q    qualityQuestion
	text string
}

// warmGoQuestions opens the Go corpus and builds each Go question's
// context once at 8k, warming the line caches and the search index's
// segments before a benchmark times anything.
//
// With CAIRN_BENCH_CORPUS set (a tree holding copies of the Go tree side by
// side, as docs/scale.md measures), the questions are asked of the first
// copy inside it, the index kept in CAIRN_BENCH_STATE (or a temp dir).
func warmGoQuestions(b *testing.B) (*qualityCorpus, []preparedQuestion) {
	qualityEnabled(b)
	b.Cleanup(gcroom.Follow()) // as in cairn serve, which owns its runtime
	qs := loadQualitySet(b)
	c, prefix := openBenchCorpus(b)
	var ps []preparedQuestion
	// A question ID to profile alone. (Its repo map's ranking is then
	// cached after the first build: "new-question" is a rebuild.)
	only := os.Getenv("CAIRN_BENCH_ONLY")
	for _, q := range qs.Questions {
		if q.Corpus == "go" && (only == "" || q.ID == only) {
			q.File = prefix + q.File
			ps = append(ps, preparedQuestion{q, strings.Join(fileLinesOf(b, c.ws, q.File), "")})
		}
	}
	for _, p := range ps {
		if _, err := Build(qualityRequest(c, p.q, p.text, 8192)); err != nil {
			b.Fatal(err)
		}
	}
	if len(ps) == 0 {
		b.Fatalf("no Go question (CAIRN_BENCH_ONLY=%q)", only)
	}
	return c, ps
}

// BenchmarkCalleePass measures what the callee pass adds to a build: the
// Go questions at an 8k window, new questions each time, with the pass on
// and off in alternate rounds over the questions (so both see the same
// questions and the same load). It reports the p50 and p99 of each and the
// mean difference per build.
func BenchmarkCalleePass(b *testing.B) {
	c, ps := warmGoQuestions(b)
	defer func() { calleePass = true }()
	var on, off []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := ps[i%len(ps)]
		calleePass = (i/len(ps))%2 == 0
		start := time.Now()
		if _, err := Build(qualityRequest(c, p.q, p.text, 8192)); err != nil {
			b.Fatal(err)
		}
		if d := time.Since(start); calleePass {
			on = append(on, d)
		} else {
			off = append(off, d)
		}
	}
	b.StopTimer()
	if len(on) == 0 || len(off) == 0 {
		return
	}
	mean := func(ds []time.Duration) float64 {
		var t time.Duration
		for _, d := range ds {
			t += d
		}
		return float64(t.Microseconds()) / 1000 / float64(len(ds))
	}
	pct := func(ds []time.Duration, q int) float64 {
		ds = append([]time.Duration(nil), ds...)
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return float64(ds[min(len(ds)-1, len(ds)*q/100)].Microseconds()) / 1000
	}
	b.ReportMetric(pct(on, 50), "p50-ms-on")
	b.ReportMetric(pct(off, 50), "p50-ms-off")
	b.ReportMetric(pct(on, 99), "p99-ms-on")
	b.ReportMetric(pct(off, 99), "p99-ms-off")
	b.ReportMetric(mean(on)-mean(off), "added-ms/build")
}

// BenchmarkTokenCount measures tokencount.Count on Go source.
func BenchmarkTokenCount(b *testing.B) {
	qualityEnabled(b)
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "src", "net", "http", "server.go"))
	if err != nil {
		b.Fatal(err)
	}
	text := string(src)
	n := tokencount.Count(text)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tokencount.Count(text)
	}
	b.StopTimer()
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// TestQualityUnderARoot asks the Go questions of a Go tree one folder
// below the workspace's root, as when the Go repository is opened at its
// root (src/) or several trees sit side by side: what the questions need
// is found as at the root, or imports that name paths below the root are
// not followed. With CAIRN_QUALITY=1 it copies the tree's Go files to
// <workdir>/under/go1; CAIRN_QUALITY_ROOT names a folder holding a copy
// as go1/ instead (`cp -al $(go env GOROOT)/src <dir>/go1`, more copies
// beside it if wanted), CAIRN_QUALITY_ROOT_STATE where its index is kept.
func TestQualityUnderARoot(t *testing.T) {
	const prefix = "go1/"
	root := os.Getenv("CAIRN_QUALITY_ROOT")
	state := os.Getenv("CAIRN_QUALITY_ROOT_STATE")
	if root == "" {
		qualityEnabled(t)
		work := qualityWorkdir(t)
		under := filepath.Join(work, "under")
		root = copyTree(t, corpusRoot(t, "go", work), filepath.Join(under, prefix), func(rel string) bool {
			return strings.HasSuffix(rel, ".go") || rel == "go.mod"
		}, under)
		if state == "" {
			state = filepath.Join(work, "state-under")
		}
	}
	if state == "" {
		state = t.TempDir()
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := codeindex.Open(ws, codeindex.Options{StateDir: state, NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := &qualityCorpus{ws: ws, ix: ix}
	needs, got := 0, map[int]int{}
	var missed []string
	for _, q := range loadQualitySet(t).Questions {
		if q.Corpus != "go" {
			continue
		}
		q.File = prefix + q.File
		text := strings.Join(fileLinesOf(t, ws, q.File), "")
		for _, w := range qualityWindows {
			b, err := Build(qualityRequest(c, q, text, w))
			if err != nil {
				t.Fatal(err)
			}
			pieces := piecesOf(b.Report.Items)
			for _, n := range q.Needs {
				n.File = prefix + n.File
				d, ok := defLines(ix, n)
				if !ok {
					t.Fatalf("%s: need %s %s not in the repo map", q.ID, n.File, n.Symbol)
				}
				if w == qualityWindows[0] {
					needs++
				}
				if ok, _ := covered(pieces, fileLinesOf(t, ws, n.File), n.File, d); ok {
					got[w]++
				} else {
					missed = append(missed, fmt.Sprintf("%s at %dk: %s", q.ID, w/1024, n.Symbol))
				}
			}
		}
	}
	t.Logf("Go questions asked of %s in %s: definitions found at 4k / 8k / 16k: %d / %d / %d of %d; missed: %v",
		prefix, root, got[4096], got[8192], got[16384], needs, missed)
	for w, floor := range qualityFloors {
		if float64(got[w]) < floor*float64(needs) {
			t.Errorf("definition recall at %dk under a root is %d of %d, below the floor %.2f", w/1024, got[w], needs, floor)
		}
	}
}
