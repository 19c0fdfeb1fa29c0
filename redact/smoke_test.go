package redact

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
)

// goSource reads the non-generated .go files of a GOROOT/src directory.
func goSource(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	root := filepath.Join(testenv.GOROOT(tb), "src", dir)
	files := map[string]string{}
	ents, err := os.ReadDir(root)
	if err != nil {
		tb.Fatalf("reading the Go source tree: %v", err)
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

// TestFalsePositivesGoSource runs the redactor over ordinary Go code that
// nobody here wrote (net/http, database/sql, encoding/json, os/exec and
// net/url, tests included) and checks what it masks: only passwords in the
// test URLs of net/http and net/url (http://user:password@dummy.faketld/),
// which a model does not need, and nothing from Cairn's broad rules.
func TestFalsePositivesGoSource(t *testing.T) {
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	perKind := map[string]int{}
	total := 0
	for _, dir := range []string{"net/http", "database/sql", "encoding/json", "os/exec", "net/url"} {
		files := goSource(t, dir)
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			src := files[n]
			_, fs := r.Redact(src)
			for _, f := range fs {
				total++
				perKind[f.Kind]++
				t.Logf("%s/%s:%d %s %q", dir, n, 1+strings.Count(src[:f.Start], "\n"), f.Kind, lineAround(src, f.Start, f.End))
			}
		}
	}
	t.Logf("findings per kind: %v", perKind)
	for kind, n := range perKind {
		if kind != "url-password" {
			t.Errorf("%d false positives of kind %s", n, kind)
		}
	}
	// net/http's test URLs alone hold 11 (see the log); a jump means a
	// rule started matching ordinary code.
	if total > 40 {
		t.Errorf("%d findings in ordinary code", total)
	}
}
