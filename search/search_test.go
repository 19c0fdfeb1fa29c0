package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/workspace"
)

func TestSplitIdent(t *testing.T) {
	cases := map[string][]string{
		"parseHTTPRequest":   {"parsehttprequest", "parse", "http", "request"},
		"snake_case_name":    {"snake_case_name", "snake", "case", "name"},
		"HTTP2SettingsFrame": {"http2settingsframe", "http", "2", "settings", "frame"},
		"simple":             {"simple"},
		"__init__":           {"init"},
	}
	for in, want := range cases {
		ts := tokenize([]byte(in), nil)
		var plain []string
		for i, tk := range ts {
			if i > 0 && tk.Position == ts[i-1].Position && bytes.Equal(stem(ts[i-1].Term), tk.Term) {
				continue // a stem
			}
			plain = append(plain, string(tk.Term))
		}
		if !reflect.DeepEqual(plain, want) {
			t.Errorf("tokenize(%q) = %v, want %v", in, plain, want)
		}
	}
}

func TestTokenPositionsAndStems(t *testing.T) {
	ts := tokenize([]byte("parseHTTPRequest frames"), nil)
	type tp struct {
		term string
		pos  int
	}
	var got []tp
	for _, tk := range ts {
		got = append(got, tp{string(tk.Term), tk.Position})
	}
	want := []tp{{"parsehttprequest", 1}, {"parse", 1}, {"pars", 1}, {"http", 2}, {"request", 3}, {"frames", 4}, {"frame", 4}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestChunkFile(t *testing.T) {
	src := "package p\n\nimport \"fmt\"\n\n// Hello greets.\n// Twice.\nfunc Hello() {\n\tfmt.Println(\"hi\")\n}\n\ntype T struct {\n\tA int\n}\n"
	ds := []Decl{{Symbol: "Hello", Kind: "func", StartLine: 7, EndLine: 9}, {Symbol: "T", Kind: "type", StartLine: 11, EndLine: 13}}
	cs := chunkFile([]byte(src), ds)
	var got []string
	for _, c := range cs {
		got = append(got, fmt.Sprintf("%d-%d %s %s", c.Start, c.End, c.Kind, c.Symbol))
	}
	wantC := []string{"1-3 text ", "5-9 func Hello", "11-13 type T"}
	if !reflect.DeepEqual(got, wantC) {
		t.Fatalf("chunks = %v, want %v", got, wantC)
	}
	// Windows without declarations: overlapping, covering every line.
	var b strings.Builder
	for i := 1; i <= 130; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	cs = chunkFile([]byte(b.String()), nil)
	if len(cs) != 3 || cs[0].Start != 1 || cs[0].End != 60 || cs[1].Start != 51 || cs[2].End != 130 {
		var got []string
		for _, c := range cs {
			got = append(got, fmt.Sprintf("%d-%d", c.Start, c.End))
		}
		t.Fatalf("windows = %v", got)
	}
}

// fixture writes a small workspace.
func fixture(t testing.TB) (*workspace.Workspace, string) {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"net/http/request.go": `package http

// parseHTTPRequest reads and parses an incoming request from b.
func parseHTTPRequest(b []byte) (*Request, error) {
	line := firstLine(b)
	return parseRequestLine(line)
}

// Request is an HTTP request.
type Request struct {
	Method string
	URL    string
}
`,
		"net/http/server.go": `package http

// ServeHTTP dispatches the request to the handler.
func (mux *ServeMux) ServeHTTP(w ResponseWriter, r *Request) {
	h := mux.handler(r)
	h.ServeHTTP(w, r)
}

func listenAndServe(addr string) error {
	return nil
}
`,
		"net/http2/frame.go": `package http2

// parseSettingsFrame parses a SETTINGS frame payload.
func parseSettingsFrame(p []byte) (*SettingsFrame, error) {
	if len(p)%6 != 0 {
		return nil, errSettingsLength
	}
	return &SettingsFrame{p: p}, nil
}
`,
		"scripts/build_tool.py": `import os

def compute_checksum(path):
    """Return the checksum of the file at path."""
    with open(path, "rb") as f:
        return hash(f.read())

class BuildRunner:
    def run(self):
        return compute_checksum("x")
`,
		"docs/notes.txt": "Some notes about the garbage collector.\nThe write barrier is described here.\n",
		".gitignore":     "ignored/\n",
		"ignored/secret.go": `package ignored

func ShouldNotBeFound() {}
`,
		"bin/blob.dat": "abc\x00def ShouldNotBeFoundBinary",
	}
	for rel, content := range files {
		writeFile(t, root, rel, content)
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws, root
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func openIndex(t testing.TB, ws *workspace.Workspace, state string, logBuf *bytes.Buffer) *Index {
	t.Helper()
	opts := Options{StateDir: state, DeclsFunc: treeSitterDecls}
	if logBuf != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logBuf, nil))
	} else {
		opts.Logger = slog.New(slog.NewTextHandler(ioDiscard{}, nil))
	}
	ix, err := Open(ws, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

type ioDiscard struct{}

func (ioDiscard) Write(p []byte) (int, error) { return len(p), nil }

func mustSearch(t *testing.T, ix *Index, q string) []Hit {
	t.Helper()
	res, err := ix.Search(context.Background(), q, 10)
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	return res.Hits
}

func TestSearchBasics(t *testing.T) {
	ws, _ := fixture(t)
	ix := openIndex(t, ws, t.TempDir(), nil)
	st, err := ix.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 6 || st.Skipped["ignored"] != 1 || st.Skipped["binary"] != 1 { // .gitignore itself is text
		t.Errorf("reconcile stats = %+v", st)
	}
	cases := []struct {
		q        string
		wantPath string
		wantLine int
		wantSym  string
	}{
		{"parseHTTPRequest", "net/http/request.go", 4, "parseHTTPRequest"},
		{"parse http request", "net/http/request.go", 4, "parseHTTPRequest"},
		{"PARSEHTTPREQUEST", "net/http/request.go", 4, "parseHTTPRequest"},
		{"ServeHTTP", "net/http/server.go", 4, "ServeMux.ServeHTTP"},
		{`"settings frame"`, "net/http2/frame.go", 3, "parseSettingsFrame"},
		{"where are settings frames parsed", "net/http2/frame.go", 4, "parseSettingsFrame"},
		{"compute_checksum", "scripts/build_tool.py", 3, "compute_checksum"},
		{"checksum", "scripts/build_tool.py", 3, "compute_checksum"},
		{"write barrier", "docs/notes.txt", 2, ""},
		{"sym:servehttp", "net/http/server.go", 4, "ServeMux.ServeHTTP"},
		{"lang:python run", "scripts/build_tool.py", 9, "BuildRunner"},
		{"path:http2 parse", "net/http2/frame.go", 4, "parseSettingsFrame"},
		{"path:*.py checksum", "scripts/build_tool.py", 3, "compute_checksum"},
		{`errSettingsLength`, "net/http2/frame.go", 6, "parseSettingsFrame"},
	}
	for _, c := range cases {
		hits := mustSearch(t, ix, c.q)
		if len(hits) == 0 {
			t.Errorf("%q: no hits", c.q)
			continue
		}
		h := hits[0]
		if h.Path != c.wantPath || h.Line != c.wantLine || h.Symbol != c.wantSym {
			t.Errorf("%q: top hit %s (sym %q), want %s:%d (sym %q)", c.q, h, h.Symbol, c.wantPath, c.wantLine, c.wantSym)
		}
		if !strings.HasPrefix(h.String(), fmt.Sprintf("%s:%d: ", h.Path, h.Line)) {
			t.Errorf("bad format %q", h.String())
		}
	}
	for _, q := range []string{"ShouldNotBeFound", "ShouldNotBeFoundBinary"} {
		if hits := mustSearch(t, ix, q); hasPath(hits, "ignored/secret.go") || hasPath(hits, "bin/blob.dat") {
			t.Errorf("%q found %v in ignored/binary files", q, hits)
		}
	}
	// Phrase order matters.
	if hits := mustSearch(t, ix, `"frame settings"`); len(hits) != 0 {
		t.Errorf(`"frame settings" matched %v`, hits)
	}
	// Filters exclude.
	if hits := mustSearch(t, ix, "lang:go checksum"); len(hits) != 0 {
		t.Errorf("lang:go checksum matched %v", hits)
	}
}

func TestBadQueries(t *testing.T) {
	ws, _ := fixture(t)
	ix := openIndex(t, ws, t.TempDir(), nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	bad := []string{"", "   ", "foo:bar", "path:", strings.Repeat("x", 10<<10), "***", "a\x00b"}
	for _, q := range bad {
		_, err := ix.Search(context.Background(), q, 5)
		if !errors.Is(err, ErrBadQuery) {
			t.Errorf("Search(%.40q) err = %v, want ErrBadQuery", q, err)
		}
	}
	// Literal searches that must not fail.
	literal := []string{`"unbalanced quote`, `parse(.*)[`, `a|b+?{}^$\`, `http://example.com`, `std::vector`,
		`sym:"ServeHTTP"`, `path:"net/http"`, `"" ServeHTTP`, `sym:serve* lang:go`, strings.Repeat("word ", 500)[:2000],
		`+-&&||!(){}[]^"~*?:\/`}
	for _, q := range literal {
		res, err := ix.Search(context.Background(), q, 5)
		if err != nil && !errors.Is(err, ErrBadQuery) {
			t.Errorf("Search(%.40q): %v", q, err)
		}
		_ = res
	}
	res, err := ix.Search(context.Background(), `"settings frame`, 5)
	if err != nil || len(res.Hits) == 0 || len(res.Warnings) == 0 {
		t.Errorf("unbalanced quote: %+v %v", res, err)
	}
}

func TestUpdateRemoveAndReconcile(t *testing.T) {
	ws, root := fixture(t)
	state := t.TempDir()
	ix := openIndex(t, ws, state, nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Single-file update.
	writeFile(t, root, "net/http/server.go", "package http\n\nfunc brandNewHandlerName() {}\n")
	if err := ix.Update("net/http/server.go"); err != nil {
		t.Fatal(err)
	}
	if hits := mustSearch(t, ix, "brandNewHandlerName"); len(hits) != 1 || hits[0].Line != 3 {
		t.Errorf("after update: %v", hits)
	}
	if hits := mustSearch(t, ix, "listenAndServe"); len(hits) != 0 && hits[0].Symbol == "listenAndServe" {
		t.Errorf("old content still found: %v", hits)
	}
	// IndexFile with caller-supplied declarations.
	err := ix.IndexFile("docs/notes.txt", []byte("alpha\nbeta gamma\ndelta\n"), "", []Decl{{Symbol: "Greek", Kind: "section", StartLine: 2, EndLine: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if hits := mustSearch(t, ix, "sym:greek"); len(hits) != 1 || hits[0].StartLine != 2 || hits[0].Kind != "section" {
		t.Errorf("IndexFile decls: %v", hits)
	}
	// Removal.
	os.Remove(filepath.Join(root, "net/http2/frame.go"))
	if err := ix.Update("net/http2/frame.go"); err != nil {
		t.Fatal(err)
	}
	if hits := mustSearch(t, ix, "parseSettingsFrame"); hasPath(hits, "net/http2/frame.go") {
		t.Errorf("removed file still found: %v", hits)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// Changes while closed: reconcile on reopen finds them.
	writeFile(t, root, "added/new.go", "package added\n\nfunc freshlyAddedFunction() {}\n")
	os.Remove(filepath.Join(root, "scripts/build_tool.py"))
	writeFile(t, root, "net/http/request.go", "package http\n\nfunc changedWhileClosed() {}\n")
	future := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(root, "net/http/request.go"), future, future)
	ix2 := openIndex(t, ws, state, nil)
	if ix2.Recovered() != "" {
		t.Fatalf("unexpected recovery: %s", ix2.Recovered())
	}
	var mu sync.Mutex
	var phases []string
	ix2.opts.Progress = func(p Progress) { mu.Lock(); phases = append(phases, p.Phase); mu.Unlock() }
	st, err := ix2.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 1 || st.Removed != 1 || st.Changed != 1 {
		t.Errorf("reconcile stats %+v", st)
	}
	mu.Lock()
	if len(phases) < 3 || phases[0] != "scanning" || phases[len(phases)-1] != "done" {
		t.Errorf("progress phases %v", phases)
	}
	mu.Unlock()
	for q, want := range map[string]string{"freshlyAddedFunction": "freshlyAddedFunction", "compute_checksum": "", "changedWhileClosed": "changedWhileClosed",
		"parseHTTPRequest": "", "brandNewHandlerName": "brandNewHandlerName"} {
		if got := topSym(mustSearch(t, ix2, q)); got != want {
			t.Errorf("after reopen %q: top symbol %q, want %q", q, got, want)
		}
	}
	// A touch without content change does not re-index.
	os.Chtimes(filepath.Join(root, "added/new.go"), future, future)
	st, err = ix2.Reconcile(context.Background())
	if err != nil || st.Touched != 1 || st.Changed != 0 || st.Skipped["binary"] != 1 {
		t.Errorf("touch: %+v %v", st, err)
	}
}

func TestCorruptIndexRecovered(t *testing.T) {
	ws, _ := fixture(t)
	state := t.TempDir()
	ix := openIndex(t, ws, state, nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	// Truncate every segment file.
	n := 0
	filepath.WalkDir(filepath.Join(state, "search", "index"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".zap") {
			info, _ := d.Info()
			os.Truncate(p, info.Size()/2)
			n++
		}
		return nil
	})
	if n == 0 {
		t.Fatal("no segment files found")
	}
	var logs bytes.Buffer
	ix2 := openIndex(t, ws, state, &logs)
	if ix2.Recovered() == "" || !strings.Contains(logs.String(), "moved aside") {
		t.Fatalf("corruption not detected; recovered=%q logs=%s", ix2.Recovered(), logs.String())
	}
	if _, err := ix2.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if hits := mustSearch(t, ix2, "parseHTTPRequest"); len(hits) == 0 {
		t.Error("rebuilt index finds nothing")
	}
}

func TestVersionMismatchRecovered(t *testing.T) {
	ws, _ := fixture(t)
	state := t.TempDir()
	ix := openIndex(t, ws, state, nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	b := ix.idx.NewBatch()
	b.SetInternal([]byte(versionKey), []byte("0"))
	if err := ix.batch(b); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	var logs bytes.Buffer
	ix2 := openIndex(t, ws, state, &logs)
	if !strings.Contains(ix2.Recovered(), "version") || !strings.Contains(logs.String(), "rebuilding") {
		t.Fatalf("version mismatch not detected: %q %s", ix2.Recovered(), logs.String())
	}
	ix2.Start(context.Background())
	if err := ix2.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if hits := mustSearch(t, ix2, "ServeHTTP"); len(hits) == 0 {
		t.Error("rebuilt index finds nothing")
	}
	// Garbage in place of the index directory.
	ix2.Close()
	idxDir := filepath.Join(state, "search", "index")
	os.RemoveAll(idxDir)
	os.MkdirAll(idxDir, 0o755)
	os.WriteFile(filepath.Join(idxDir, "index_meta.json"), []byte("{not json"), 0o644)
	logs.Reset()
	ix3 := openIndex(t, ws, state, &logs)
	if ix3.Recovered() == "" {
		t.Fatal("garbage index not detected")
	}
}

func TestConcurrentQueriesWhileIndexing(t *testing.T) {
	ws, root := fixture(t)
	for i := 0; i < 60; i++ {
		writeFile(t, root, fmt.Sprintf("gen/f%03d.go", i), fmt.Sprintf("package gen\n\n// Generated%d does things.\nfunc Generated%d() int {\n\treturn %d\n}\n", i, i, i))
	}
	ix, err := Open(ws, Options{StateDir: t.TempDir(), BatchDocs: 7, DeclsFunc: treeSitterDecls, Logger: slog.New(slog.NewTextHandler(ioDiscard{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	ix.Start(ctx)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				qs := []string{"Generated7", "parse http request", `"settings frame"`, "path:gen lang:go does"}
				if _, err := ix.Search(ctx, qs[(g+i)%len(qs)], 5); err != nil {
					t.Errorf("search during indexing: %v", err)
					return
				}
			}
		}(g)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 10; i++ {
			writeFile(t, root, "gen/f001.go", fmt.Sprintf("package gen\n\nfunc Rewritten%d() {}\n", i))
			if err := ix.Update("gen/f001.go"); err != nil {
				t.Errorf("update: %v", err)
			}
		}
	}()
	wg.Wait()
	if err := ix.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if got := topSym(mustSearch(t, ix, "Rewritten9")); got != "Rewritten9" {
		t.Errorf("last update lost: %q", got)
	}
	if hits := mustSearch(t, ix, "sym:Generated1"); len(hits) != 0 {
		t.Errorf("stale reconcile overwrote an update: %v", hits)
	}
	if got := topSym(mustSearch(t, ix, "Generated59")); got != "Generated59" {
		t.Errorf("Generated59: %q", got)
	}
}

func hasPath(hits []Hit, p string) bool {
	for _, h := range hits {
		if h.Path == p {
			return true
		}
	}
	return false
}

// topSym is the symbol of the first hit when that hit matched the query as a
// whole identifier ("" when there are no hits or the top one is a window).
func topSym(hits []Hit) string {
	if len(hits) == 0 {
		return ""
	}
	return hits[0].Symbol
}

func TestSecondOpenIsBusy(t *testing.T) {
	ws, _ := fixture(t)
	state := t.TempDir()
	ix := openIndex(t, ws, state, nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	ix = openIndex(t, ws, state, nil) // reopen: an existing index
	// The second Open must fail rather than wait for the lock: a minute is
	// far beyond any lock timeout, and no bound on how long it took.
	opened := make(chan error, 1)
	go func() {
		_, err := Open(ws, Options{StateDir: state, Logger: slog.New(slog.NewTextHandler(ioDiscard{}, nil))})
		opened <- err
	}()
	select {
	case err := <-opened:
		if !errors.Is(err, ErrIndexBusy) {
			t.Fatalf("second Open: %v, want ErrIndexBusy", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("second Open waits for the first index to close")
	}
	if hits := mustSearch(t, ix, "parseHTTPRequest"); len(hits) == 0 {
		t.Error("the first index was disturbed")
	}
}

// Every reconcile leaves a bounded number of segments, so a short-lived
// process (the command line) does not leave later queries dozens to
// search: each reconcile here persists at least one new segment.
func TestReconcileLeavesBoundedSegments(t *testing.T) {
	ws, root := fixture(t)
	state := t.TempDir()
	ix, err := Open(ws, Options{StateDir: state, DeclsFunc: treeSitterDecls, Logger: slog.New(slog.NewTextHandler(ioDiscard{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for i := 0; i < 3*MaxSegments; i++ {
		writeFile(t, root, fmt.Sprintf("gen/f%02d.go", i), fmt.Sprintf("package gen\n\n// F%d is number %d.\nfunc F%d() int { return %d }\n", i, i, i, i))
		if _, err := ix.Reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
		most = max(most, ix.Segments())
	}
	if most > MaxSegments || most == 0 {
		t.Errorf("up to %d segments after a reconcile, want 1..%d", most, MaxSegments)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix = openIndex(t, ws, state, nil)
	if n := ix.Segments(); n > MaxSegments || n == 0 {
		t.Errorf("%d segments after reopening, want 1..%d", n, MaxSegments)
	}
	if hits := mustSearch(t, ix, "F17"); len(hits) == 0 || hits[0].Path != "gen/f17.go" {
		t.Errorf("after the merges: %+v", hits)
	}
}

// TestCompoundsApartRankChunksWithEither: when a query's compound
// identifiers occur in the tree but in no chunk together, the chunks with
// any of them are ranked, not every chunk sharing a common word with the
// question (which also made such questions the slowest to search).
func TestCompoundsApartRankChunksWithEither(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "enc/read.go", "package enc\n\n// readValue reads the next value.\nfunc readValue(b []byte) int { return len(b) }\n")
	writeFile(t, root, "enc/state.go", "package enc\n\ntype decodeState struct{ data []byte }\n\nfunc (d *decodeState) init(b []byte) { d.data = b }\n")
	common := "package other\n\n// value bytes buffered read decode state init value bytes buffered\nfunc Value(read, decode, state []byte) (bytes, buffered int) { return len(read) + len(decode), len(state) }\n"
	writeFile(t, root, "other/common.go", common)
	ix := reconciledIndex(t, root)
	hits := mustSearch(t, ix, "after readValue how do decodeState init and unmarshal turn the buffered bytes into v")
	if !hasPath(hits, "enc/read.go") || !hasPath(hits, "enc/state.go") {
		t.Errorf("hits %v: want both files with a compound", hits)
	}
	if hasPath(hits, "other/common.go") {
		t.Errorf("hits %v: other/common.go has neither compound", hits)
	}
	// Both together in one chunk: only that chunk.
	writeFile(t, root, "enc/both.go", "package enc\n\nfunc readValueInto(d *decodeState) { _ = readValue; d.init(nil) }\n")
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	hits = mustSearch(t, ix, "readValue decodeState")
	if len(hits) != 1 || hits[0].Path != "enc/both.go" {
		t.Errorf("hits %v: want only enc/both.go", hits)
	}
	// Neither anywhere: the parts match.
	if hits := mustSearch(t, ix, "readState decodeValue"); !hasPath(hits, "other/common.go") {
		t.Errorf("hits %v: the parts should match other/common.go", hits)
	}
}

// TestManifestSaveDoesNotHoldUpdates: while a manifest save waits for the
// persister to write its batches (a stalled disk), a file's update goes
// through and is searchable; the save finishes once its batches are on
// disk, and not before.
func TestManifestSaveDoesNotHoldUpdates(t *testing.T) {
	ws, root := fixture(t)
	ix := openIndex(t, ws, t.TempDir(), nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	stalled := ix.persist.issue() // a batch the persister has not written
	saved := make(chan error, 1)
	go func() { saved <- ix.saveManifest() }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ix.persist.mu.Lock()
		waiting := ix.persist.waiters > 0
		ix.persist.mu.Unlock()
		if waiting {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the manifest save never waited for the stalled batch")
		}
		time.Sleep(time.Millisecond)
	}
	writeFile(t, root, "net/http/late.go", "package http\n\nfunc WrittenWhileTheManifestWaits() {}\n")
	if err := ix.Update("net/http/late.go"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-saved:
		t.Fatalf("the manifest was saved (%v) before its batch was on disk, or the update waited for it", err)
	default:
	}
	if hits := mustSearch(t, ix, "WrittenWhileTheManifestWaits"); !hasPath(hits, "net/http/late.go") {
		t.Errorf("the update is not searchable while the save waits: %v", hits)
	}
	ix.persist.done(stalled)
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
}

// Identical files (a library copied into several services) give one hit that names the copies;
// a file that differs stays a hit of its own.
func TestIdenticalCopiesFoldIntoOneHit(t *testing.T) {
	root := t.TempDir()
	lib := "package ratelimit\n\n// TokenBucketRefill adds tokens at the configured rate.\nfunc TokenBucketRefill(b *Bucket) { b.tokens += b.rate }\n"
	writeFile(t, root, "lib/ratelimit/bucket.go", lib)
	writeFile(t, root, "services/a/ratelimit/bucket.go", lib)
	writeFile(t, root, "services/b/ratelimit/bucket.go", lib)
	writeFile(t, root, "fork/ratelimit/bucket.go", strings.Replace(lib, "b.rate", "2*b.rate", 1))
	hits := mustSearch(t, reconciledIndex(t, root), "TokenBucketRefill")
	var paths []string
	var copies [][]string
	for _, h := range hits {
		paths = append(paths, h.Path)
		copies = append(copies, h.Copies)
	}
	if len(hits) != 2 {
		t.Fatalf("hits %v (copies %v), want one for the three identical files and one for the fork", paths, copies)
	}
	for _, h := range hits {
		switch h.Path {
		case "fork/ratelimit/bucket.go":
			if len(h.Copies) != 0 {
				t.Errorf("the fork's hit lists copies %v", h.Copies)
			}
		default:
			got := append([]string{h.Path}, h.Copies...)
			slices.Sort(got)
			want := []string{"lib/ratelimit/bucket.go", "services/a/ratelimit/bucket.go", "services/b/ratelimit/bucket.go"}
			if !slices.Equal(got, want) {
				t.Errorf("hit %s with copies %v, want the three identical files %v", h.Path, h.Copies, want)
			}
		}
	}
}

// TestLargeReconcileHalvesBatches: from halfBatchesFrom files a reconcile
// commits batches of half Options.BatchDocs chunks, and indexes and finds
// what one of full batches does.
func TestLargeReconcileHalvesBatches(t *testing.T) {
	old := halfBatchesFrom
	halfBatchesFrom = 1
	defer func() { halfBatchesFrom = old }()
	ws, root := fixture(t)
	ix := openIndex(t, ws, t.TempDir(), nil)
	if got, want := ix.batchDocs(1), ix.opts.BatchDocs/2; got != want || want < 1 {
		t.Fatalf("a batch of a %d-file reconcile holds %d chunks, want %d", 1, got, want)
	}
	if got := ix.batchDocs(0); got != ix.opts.BatchDocs {
		t.Fatalf("below the bound a batch holds %d chunks, want %d", got, ix.opts.BatchDocs)
	}
	reconcileTwiceAndFind(t, ix, root)
}

// reconcileTwiceAndFind reconciles the fixture at root, adds a file,
// reconciles again, and checks that a name of each reconcile is found
// first in its file.
func reconcileTwiceAndFind(t *testing.T, ix *Index, root string) {
	t.Helper()
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "gen/added.go", "package gen\n\n// AddedLater is indexed by a second reconcile.\nfunc AddedLater() {}\n")
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	for q, path := range map[string]string{"parseHTTPRequest": "net/http/request.go", "AddedLater": "gen/added.go"} {
		if hits := mustSearch(t, ix, q); len(hits) == 0 || hits[0].Path != path {
			t.Errorf("%s: %+v, want %s first", q, hits, path)
		}
	}
}
