package repomap

import (
	"cmp"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

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
	goroot := runtime.GOROOT()
	var files []string
	more, _ := filepath.Glob("testdata/tags/*.go")
	files = append(files, more...)
	more, _ = filepath.Glob("*.go")
	files = append(files, more...)
	dirs := []string{"net/http", "go/types", "encoding/json", "internal/types/testdata", "cmd/compile/internal/syntax"}
	if os.Getenv("CAIRN_QUALITY") != "" {
		dirs = []string{"."}
	}
	for _, d := range dirs {
		_ = filepath.WalkDir(filepath.Join(goroot, "src", d), func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".go") {
				files = append(files, p)
			}
			return nil
		})
	}
	mt := newMatcher()
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(l.lang)
	collect := func(run func(fn func(uint16, []capture)) error) [][]uint32 {
		var out [][]uint32
		if err := run(func(pattern uint16, cs []capture) {
			cs = slices.Clone(cs)
			slices.SortFunc(cs, func(a, b capture) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.start, b.start)) })
			rec := []uint32{uint32(pattern)}
			for _, c := range cs {
				rec = append(rec, c.id, c.start, c.end, c.startRow, c.endRow, c.endColumn)
			}
			out = append(out, rec)
		}); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(out, slices.Compare)
		return out
	}
	compared, matches := 0, 0
	for _, f := range files {
		content, err := os.ReadFile(f)
		if err != nil || len(content) > 1<<20 {
			continue
		}
		tree, err := p.ParseCtx(context.Background(), nil, content)
		if err != nil {
			t.Fatal(err)
		}
		root := tree.RootNode()
		walked := collect(func(fn func(uint16, []capture)) error { return w.run(mt, root, fn) })
		queried := collect(func(fn func(uint16, []capture)) error { return mt.run(l.query, root, fn) })
		if !slices.EqualFunc(walked, queried, slices.Equal) {
			i := firstDiff(walked, queried)
			var a, b []uint32
			if i < len(walked) {
				a = walked[i]
			}
			if i < len(queried) {
				b = queried[i]
			}
			t.Errorf("%s: walker %d matches, query %d; first difference at %d: walker %v, query %v", f, len(walked), len(queried), i, a, b)
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
			t.Errorf("%s: tags differ between the walker and the query", f)
		}
		tree.Close()
		compared++
		matches += len(walked)
	}
	if compared < 500 {
		t.Fatalf("only %d files compared", compared)
	}
	t.Logf("%d Go files, %d matches: the walker and the query agree", compared, matches)
}
