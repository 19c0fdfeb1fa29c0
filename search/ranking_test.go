package search

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/repomap"
	"github.com/cairn-dev/cairn/workspace"
)

// The ranking tests run on real code: a few packages of the Go tree, copied
// so that the test can change files.

var rankingPackages = []string{"encoding/csv", "net/textproto", "bufio", "container/list"}

var rankingQueries = []string{
	"how is a quoted field read",
	"read a dot-encoded block of lines",
	"read MIME header lines",
	"scanner splits input into lines",
	"NewReader",
	"trim leading space from a field",
	"tests for the CSV reader", // about tests: test files are not ranked down
	`"extraneous or missing"`,
	"lang:go path:bufio buffer",
}

// RepomapDecls gives a test index the declarations the server gives it
// (codeindex hands over the repo map's tree-sitter parse). Exported for the
// external quality tests of this directory.
func RepomapDecls(rel, lang string, content []byte) []Decl {
	ft, err := repomap.ParseFile(rel, content)
	if err != nil {
		return nil
	}
	out := make([]Decl, 0, len(ft.Decls()))
	for _, d := range ft.Decls() {
		out = append(out, Decl{Symbol: d.Symbol, Kind: d.Kind, StartLine: d.StartLine, EndLine: d.EndLine})
	}
	return out
}

func goTreeCopy(t testing.TB) string {
	t.Helper()
	dst := t.TempDir()
	copyGoPackages(t, dst)
	return dst
}

func copyGoPackages(t testing.TB, dst string) {
	t.Helper()
	src := filepath.Join(testenv.GOROOT(t), "src")
	for _, pkg := range rankingPackages {
		from := filepath.Join(src, filepath.FromSlash(pkg))
		err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(src, p)
			if d.IsDir() {
				if d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		if err != nil {
			t.Fatalf("copying %s from the Go tree: %v", pkg, err)
		}
	}
}

func rankingIndex(t testing.TB, root string, batch int) *Index {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(ws, Options{StateDir: t.TempDir(), BatchDocs: batch, DeclsFunc: RepomapDecls, Logger: slog.New(slog.NewTextHandler(ioDiscard{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ix
}

// sharedRanking is one cold index of a copy of rankingPackages, shared by
// the tests that only query it (indexing is the slow part under -race).
var sharedRanking = struct {
	sync.Mutex
	root string
	ix   *Index
}{}

func sharedRankingIndex(t testing.TB) (*Index, string) {
	t.Helper()
	sharedRanking.Lock()
	defer sharedRanking.Unlock()
	if sharedRanking.ix == nil {
		root, err := os.MkdirTemp("", "cairn-ranking-")
		if err != nil {
			t.Fatal(err)
		}
		copyGoPackages(t, root)
		ws, err := workspace.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := Open(ws, Options{StateDir: filepath.Join(root, ".cairn-state"), DeclsFunc: RepomapDecls, Logger: slog.New(slog.NewTextHandler(ioDiscard{}, nil))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Reconcile(context.Background()); err != nil {
			t.Fatal(err)
		}
		sharedRanking.root, sharedRanking.ix = root, ix
	}
	return sharedRanking.ix, sharedRanking.root
}

func hitsOf(t testing.TB, ix *Index, q string, limit int) []string {
	t.Helper()
	res, err := ix.Search(context.Background(), q, limit)
	if err != nil {
		t.Fatalf("Search(%q): %v", q, err)
	}
	var out []string
	for _, h := range res.Hits {
		out = append(out, fmt.Sprintf("%s:%d-%d %.9f", h.Path, h.StartLine, h.EndLine, h.Score))
	}
	return out
}

// The result for limit k is the first k hits of the result for 2k: the
// rerank pool does not depend on the limit.
func TestRankingIndependentOfLimit(t *testing.T) {
	ix, _ := sharedRankingIndex(t)
	for _, q := range rankingQueries {
		big := hitsOf(t, ix, q, 40)
		for _, k := range []int{1, 3, 5, 10, 20} {
			small := hitsOf(t, ix, q, k)
			n := min(2*k, len(big))
			if len(small) > n || !reflect.DeepEqual(small, big[:len(small)]) {
				t.Errorf("%q: limit %d gave %v\nnot a prefix of limit %d: %v", q, k, small, 2*k, big[:n])
			}
			if len(small) < min(k, len(big)) {
				t.Errorf("%q: limit %d gave %d hits, limit 40 gave %d", q, k, len(small), len(big))
			}
		}
	}
}

// The same tree indexed in one batch, in batches of 40 chunks (many segments),
// and incrementally (3/4 of the files first, the rest by single-file updates,
// some files rewritten twice: deleted documents) ranks identically, scores
// included.
func TestScoresIndependentOfSegments(t *testing.T) {
	cold, _ := sharedRankingIndex(t)
	root := goTreeCopy(t)
	small := rankingIndex(t, root, 40)

	// Incremental: hide every other file, reconcile, then bring them back
	// one by one with Update, and rewrite a few twice.
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := ws.Walk(workspace.WalkOptions{})
	hidden := map[string][]byte{}
	for i, f := range files {
		if i%4 == 1 {
			b, err := os.ReadFile(f.Abs)
			if err != nil {
				t.Fatal(err)
			}
			hidden[f.Rel] = b
			os.Remove(f.Abs)
		}
	}
	inc := rankingIndex(t, root, 0)
	for i, f := range files {
		if b, ok := hidden[f.Rel]; ok {
			if err := os.WriteFile(f.Abs, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := inc.Update(f.Rel); err != nil {
				t.Fatal(err)
			}
		}
		if i%10 == 0 {
			if err := inc.IndexFile(f.Rel, []byte("package gone\n"), "go", nil); err != nil {
				t.Fatal(err)
			}
			if err := inc.Update(f.Rel); err != nil {
				t.Fatal(err)
			}
		}
	}
	if a, b, c := cold.Stats().Docs, small.Stats().Docs, inc.Stats().Docs; a != b || a != c {
		t.Fatalf("document counts differ: cold %d, small batches %d, incremental %d", a, b, c)
	}
	for _, q := range rankingQueries {
		want := hitsOf(t, cold, q, 20)
		if len(want) == 0 {
			t.Errorf("%q: no hits", q)
		}
		if got := hitsOf(t, small, q, 20); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: small batches ranked\n%v\ncold build ranked\n%v", q, got, want)
		}
		if got := hitsOf(t, inc, q, 20); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: incremental ranked\n%v\ncold build ranked\n%v", q, got, want)
		}
	}
}

// Implementation over tests, unless the question is about tests; grouping
// by file gives one hit per file.
func TestRankingTestsAndFiles(t *testing.T) {
	ix, _ := sharedRankingIndex(t)
	top := func(q string) string {
		res, err := ix.Search(context.Background(), q, 5)
		if err != nil || len(res.Hits) == 0 {
			t.Fatalf("Search(%q): %v, %d hits", q, err, len(res.Hits))
		}
		return res.Hits[0].Path
	}
	if p := top("how is a quoted field read in a CSV record"); !strings.HasPrefix(p, "encoding/csv/") || strings.HasSuffix(p, "_test.go") {
		t.Errorf("implementation question: top file %s, want encoding/csv's implementation", p)
	}
	if p := top("tests for reading quoted fields in the CSV reader"); !strings.HasSuffix(p, "_test.go") {
		t.Errorf("question about tests: top file %s, want a test file", p)
	}
	res, err := ix.Search(context.Background(), "read lines from a buffered reader", 24)
	if err != nil {
		t.Fatal(err)
	}
	// Search keeps at most 3 hits per file, so 24 hits span at least 8 files
	// (the grouping `cairn search --files` relies on, codeindex.BestPerFile).
	perFile := map[string]int{}
	for _, h := range res.Hits {
		perFile[h.Path]++
		if perFile[h.Path] > 3 {
			t.Errorf("%s has %d hits of 24, want at most 3", h.Path, perFile[h.Path])
		}
	}
	if len(res.Hits) == 24 && len(perFile) < 8 {
		t.Errorf("24 hits in %d files, want at least 8", len(perFile))
	}
}

// Words as people write them meet identifiers as code spells them:
// "copied" and CopyHeader share copy's stem, "headers" meets
// header_values' part, a camelCase whole meets its parts.
func TestAnalysisMatchesHowPeopleDescribeCode(t *testing.T) {
	termsOf := func(s string, query bool) map[string]bool {
		out := map[string]bool{}
		for _, tk := range (codeAnalyzer{query: query}).Analyze([]byte(s)) {
			out[string(tk.Term)] = true
		}
		return out
	}
	for _, c := range []struct{ question, code string }{
		{"how are headers copied", "func CopyHeader(dst, src Header)"},
		{"copy the values", "copied_values = dict(header_values)"},
		{"parse a request", "func parseHTTPRequest(b []byte)"},
		{"allocate a buffer", "buf := allocBuffer(n)"},
	} {
		q, code := termsOf(c.question, true), termsOf(c.code, false)
		shared := 0
		for term := range q {
			if code[term] {
				shared++
			}
		}
		if shared < 2 {
			t.Errorf("%q and %q share %d terms (query %v, code %v), want at least 2", c.question, c.code, shared, q, code)
		}
	}
}
