package redact

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// goSource reads the non-generated .go files of a GOROOT/src directory.
func goSource(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	root := filepath.Join(runtime.GOROOT(), "src", dir)
	files := map[string]string{}
	ents, err := os.ReadDir(root)
	if err != nil {
		tb.Skipf("no Go source tree: %v", err)
	}
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, e.Name()))
		if err != nil {
			tb.Fatal(err)
		}
		files[e.Name()] = string(b)
	}
	return files
}

// TestFalsePositivesGoSource runs the redactor over $GOROOT/src/net/http
// (ordinary code, tests included) and lists what it masks. It is a smoke
// test for false positives, skipped unless CAIRN_REDACT_SMOKE=1.
func TestFalsePositivesGoSource(t *testing.T) {
	if os.Getenv("CAIRN_REDACT_SMOKE") == "" {
		t.Skip("set CAIRN_REDACT_SMOKE=1 to run the false-positive smoke test")
	}
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	files := goSource(t, "net/http")
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var bytes, total int
	start := time.Now()
	for _, n := range names {
		src := files[n]
		bytes += len(src)
		_, fs := r.Redact(src)
		for _, f := range fs {
			total++
			t.Logf("%s:%d %s %q", n, 1+strings.Count(src[:f.Start], "\n"), f.Kind, lineAround(src, f.Start, f.End))
		}
	}
	el := time.Since(start)
	t.Logf("%d files, %d bytes, %d findings, %.1f MB/s", len(names), bytes, total, float64(bytes)/1e6/el.Seconds())
}
