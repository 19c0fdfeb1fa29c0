package redact

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
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
// (ordinary code, tests included), whose only secret-looking strings are
// the made-up URL passwords of its tests (http://user:password@dummy.faketld/).
// redact/doc.go quotes the result: every finding is a url-password in a
// _test.go file; nothing in the library code itself is masked.
func TestFalsePositivesGoSource(t *testing.T) {
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
	var total int
	for _, n := range names {
		src := files[n]
		_, fs := r.Redact(src)
		for _, f := range fs {
			total++
			line := lineAround(src, f.Start, f.End)
			where := fmt.Sprintf("%s:%d", n, 1+strings.Count(src[:f.Start], "\n"))
			t.Logf("%s %s %q", where, f.Kind, line)
			if !strings.HasSuffix(n, "_test.go") {
				t.Errorf("%s: false positive in library code: %s %q", where, f.Kind, line)
			}
			if f.Kind != "url-password" || !strings.Contains(line, "://") || !strings.Contains(line, "@") {
				t.Errorf("%s: unexpected finding %s %q (only test URLs with a password are expected)", where, f.Kind, line)
			}
		}
	}
	if total == 0 {
		// net/http's tests have carried user:password URLs for years; none
		// found means the url-password rule no longer fires at all.
		t.Errorf("no findings in net/http: expected its test URLs with passwords")
	}
}
