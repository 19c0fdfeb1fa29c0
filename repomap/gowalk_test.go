package repomap

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
)

// TestGoWalkerAgreesWithQuery checks the Go walker against the query it
// stands for, on code nobody here wrote: for every Go file of a few
// packages of the Go tree (all of it with CAIRN_QUALITY=1, syntax errors
// of its testdata included) and of this package's samples, the walker
// and tree-sitter's query cursor must give the same matches (as sets:
// the order differs, and extract does not depend on it) and the same tags.
func TestGoWalkerAgreesWithQuery(t *testing.T) {
	l := languages["go"]
	if err := l.load(); err != nil {
		t.Fatal(err)
	}
	w := l.walker
	if w == nil {
		t.Fatal("no Go walker: the query and the walker disagree on patterns or captures (see the log)")
	}
	files := goTestFiles("net/http", "go/types", "encoding/json", "internal/types/testdata", "cmd/compile/internal/syntax")
	mt := newMatcher()
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(l.lang)
	compared, matches := 0, 0
	for _, f := range files {
		content, err := os.ReadFile(f)
		if err != nil || len(content) > 1<<20 {
			continue
		}
		n, diff := compareGoWalker(t, l, w, mt, p, content)
		if diff != "" {
			t.Errorf("%s: %s", f, diff)
		}
		compared++
		matches += n
	}
	if compared < 500 {
		t.Fatalf("only %d files compared", compared)
	}
	t.Logf("%d Go files, %d matches: the walker and the query agree", compared, matches)
}

// compareGoWalker parses content as Go and compares the walker with the
// query cursor on it: the sets of matches, then the tags extracted from
// them. It returns the number of matches and a description of the first
// difference ("" when they agree).
func compareGoWalker(t testing.TB, l *language, w *goWalker, mt *matcher, p *sitter.Parser, content []byte) (int, string) {
	t.Helper()
	tree, err := p.ParseCtx(context.Background(), nil, content)
	if err != nil || tree == nil {
		p.Reset()
		return 0, "" // past the operation limit: the map skips such a file
	}
	defer tree.Close()
	root := tree.RootNode()
	walked := matchSet(t, func(fn func(uint16, []capture)) error { return w.run(mt, root, fn) })
	queried := matchSet(t, func(fn func(uint16, []capture)) error { return mt.run(l.query, root, fn) })
	if !slices.EqualFunc(walked, queried, slices.Equal) {
		i := firstDiff(walked, queried)
		var a, b []uint32
		if i < len(walked) {
			a = walked[i]
		}
		if i < len(queried) {
			b = queried[i]
		}
		return len(walked), fmt.Sprintf("walker %d matches, query %d; first difference at %d: walker %v, query %v", len(walked), len(queried), i, a, b)
	}
	var tagsWalked, tagsQueried FileTags
	if err := extract(l, mt, root, content, &tagsWalked); err != nil {
		t.Fatal(err)
	}
	l.walker = nil
	err = extract(l, mt, root, content, &tagsQueried)
	l.walker = w
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tagsWalked, tagsQueried) {
		return len(walked), "tags differ between the walker and the query"
	}
	return len(walked), ""
}

// FuzzGoWalkerAgreesWithQuery looks for Go sources, broken ones above all
// (error recovery makes trees no grammar rule describes), on which the
// walker and the query cursor disagree.
func FuzzGoWalkerAgreesWithQuery(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/tags/*.go")
	more, _ := filepath.Glob("*.go")
	for _, p := range append(seeds, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 8<<10 {
			b = b[:8<<10]
		}
		f.Add(b)
		f.Add(b[:len(b)/3])
	}
	f.Add([]byte("package p\nconst a, b /* c */, d = 1, 2, 3\nvar ( e, f int )\nfunc (r *T) M() { x.y(); z() }\n"))
	l := languages["go"]
	if err := l.load(); err != nil {
		f.Fatal(err)
	}
	w := l.walker
	if w == nil {
		f.Fatal("no Go walker")
	}
	mt := newMatcher()
	p := sitter.NewParser()
	p.SetLanguage(l.lang)
	p.SetOperationLimit(int(ParseTimeout / time.Microsecond)) // as parseFileHashed
	f.Fuzz(func(t *testing.T, content []byte) {
		if _, diff := compareGoWalker(t, l, w, mt, p, content); diff != "" {
			t.Fatalf("%s\n%s", diff, content)
		}
	})
}

// goTestFiles lists the Go files the agreement tests read: this package's
// samples and sources, and the Go files under dirs of the Go tree (all of
// the tree with CAIRN_QUALITY=1).
func goTestFiles(dirs ...string) []string {
	var files []string
	more, _ := filepath.Glob("testdata/tags/*.go")
	files = append(files, more...)
	more, _ = filepath.Glob("*.go")
	files = append(files, more...)
	if os.Getenv("CAIRN_QUALITY") != "" {
		dirs = []string{"."}
	}
	for _, d := range dirs {
		_ = filepath.WalkDir(filepath.Join(runtime.GOROOT(), "src", d), func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".go") {
				files = append(files, p)
			}
			return nil
		})
	}
	return files
}

// matchSet runs a source of matches and returns them as sorted records,
// each with its captures sorted by id and start: the order the query
// cursor, the walker and goSyntax deliver them in differs, and extract
// does not depend on it.
func matchSet(t testing.TB, run func(fn func(uint16, []capture)) error) [][]uint32 {
	t.Helper()
	var out [][]uint32
	if err := run(func(pattern uint16, cs []capture) {
		cs = slices.Clone(cs)
		slices.SortFunc(cs, func(a, b capture) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.start, b.start)) })
		out = append(out, matchRecord(pattern, cs))
	}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, slices.Compare)
	return out
}
