package repomap

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/cairn-dev/cairn/workspace"
)

func TestZZDump(t *testing.T) {
	root := os.Getenv("ZZ_ROOT")
	if root == "" {
		t.Skip()
	}
	ws, _ := workspace.Open(root)
	m := New(ws, Options{})
	m.Build(context.Background())
	g, r := m.rank(Focus{})
	defs := r.get(r.n)
	want := map[string]bool{}
	for _, n := range []string{"TreeMap", "LinkedList", "TreeSet", "PriorityQueue", "HashMap", "ArrayList", "Observable", "Spliterator", "Locale", "SortedSet", "NoSuchElementException"} {
		want[n] = true
	}
	sc := g.scoreIndex()
	_ = sc
	for i, x := range defs {
		d := g.tags[x.file].Defs[x.def]
		if i < 40 || (want[d.Name] && d.Depth == 0) {
			fmt.Printf("%4d %.3g %s %s %s doc=%d dep=%v\n", i, x.score, g.tags[x.file].Path, d.Kind, d.Name, d.docLines, d.Deprecated)
		}
		if i > 3000 {
			break
		}
	}
}
