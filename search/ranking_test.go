package search

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/workspace"
)

// The ranking tests run on real code: a few packages of the Go tree, copied
// so that the test can change files.

var rankingPackages = []string{"encoding/json", "encoding/csv", "net/textproto", "bufio", "container/list"}

var rankingQueries = []string{
	"how is a quoted field read",
	"decode JSON into a struct",
	"read MIME header lines",
	"scanner splits input into lines",
	"Marshal",
	"json tag omitempty",
	"tests for the CSV reader", // about tests: test files are not ranked down
	`"invalid character"`,
	"lang:go path:bufio buffer",
}

func goTreeCopy(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Skipf("go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(out)), "src")
	dst := t.TempDir()
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
			t.Skipf("copying %s from the Go tree: %v", pkg, err)
		}
	}
	return dst
}

func rankingIndex(t testing.TB, root string, batch int) *Index {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Open(ws, Options{StateDir: t.TempDir(), BatchDocs: batch, Logger: slog.New(slog.NewTextHandler(ioDiscard{}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ix
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
	ix := rankingIndex(t, goTreeCopy(t), 0)
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

// The same tree indexed in one batch, in many small batches (many segments),
// and incrementally (half the files first, the rest by single-file updates,
// some files rewritten twice: deleted documents) ranks identically, scores
// included.
func TestScoresIndependentOfSegments(t *testing.T) {
	root := goTreeCopy(t)
	cold := rankingIndex(t, root, 0)
	small := rankingIndex(t, root, 7)

	// Incremental: hide every other file, reconcile, then bring them back
	// one by one with Update, and rewrite a few twice.
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := ws.Walk(workspace.WalkOptions{})
	hidden := map[string][]byte{}
	for i, f := range files {
		if i%2 == 1 {
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
		if i%5 == 0 {
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
	ix := rankingIndex(t, goTreeCopy(t), 0)
	top := func(q string) string {
		res, err := ix.Search(context.Background(), q, 5)
		if err != nil || len(res.Hits) == 0 {
			t.Fatalf("Search(%q): %v, %d hits", q, err, len(res.Hits))
		}
		return res.Hits[0].Path
	}
	if p := top("how is a quoted field read in a CSV record"); p != "encoding/csv/reader.go" {
		t.Errorf("implementation question: top file %s, want encoding/csv/reader.go", p)
	}
	if p := top("tests for reading quoted fields in the CSV reader"); !strings.HasSuffix(p, "_test.go") {
		t.Errorf("question about tests: top file %s, want a test file", p)
	}
	res, err := ix.SearchFiles(context.Background(), "decode JSON into a struct", 8)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, h := range res.Hits {
		if seen[h.Path] {
			t.Errorf("SearchFiles gave %s twice", h.Path)
		}
		seen[h.Path] = true
	}
	if len(res.Hits) < 5 {
		t.Errorf("SearchFiles gave %d files, want at least 5", len(res.Hits))
	}
}
