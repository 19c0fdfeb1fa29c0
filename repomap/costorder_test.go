package repomap

import (
	"slices"
	"testing"
)

// TestOverviewTakesValuePerToken: an overview takes a method of a class
// it already shows (a few tokens on the class's line of methods) before
// a better-scored class of a file it does not show yet (the file's name
// and the class line), and a focused map keeps the ranking's order.
func TestOverviewTakesValuePerToken(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"store.py":          "class Store:\n    def get(self, key):\n        return key\n\n    def put(self, key):\n        return key\n",
		"other_package.py":  "class OtherPackageThing:\n    pass\n",
		"second_package.py": "class SecondPackageThing:\n    pass\n",
	})
	m := newMap(t, root, Options{})
	build(t, m)
	g := m.currentGraph()
	def := func(file, name string) rankedDef {
		fi := g.fileIdx[file]
		for j := range g.tags[fi].Defs {
			if g.tags[fi].Defs[j].Name() == name {
				return rankedDef{file: fi, def: int32(j)}
			}
		}
		t.Fatalf("%s defines no %s", file, name)
		return rankedDef{}
	}
	at := func(d rankedDef, score float64) rankedDef { d.score = score; return d }
	store, get, put := def("store.py", "Store"), def("store.py", "get"), def("store.py", "put")
	other, second := def("other_package.py", "OtherPackageThing"), def("second_package.py", "SecondPackageThing")
	ranked := []rankedDef{at(store, 10), at(other, 5), at(second, 4.5), at(get, 4), at(put, 1)}
	name := func(ds []rankedDef) []string {
		var out []string
		for _, d := range ds {
			out = append(out, g.tags[d.file].Defs[d.def].Name())
		}
		return out
	}
	r := &ranking{defs: ranked, n: len(ranked)}
	rd := &renderer{m: m, g: g, r: r, compact: true}
	rd.order = rd.overview(len(ranked)) // as Render makes it
	got := name(rd.ranked(len(ranked)))
	// get costs ~3 tokens (", 2: get(…)"), OtherPackageThing ~12 (its
	// file's line and its class line): 4/3^0.75 > 5/12^0.75. put's value
	// stays under the classes'.
	want := []string{"Store", "get", "OtherPackageThing", "SecondPackageThing", "put"}
	if !slices.Equal(got, want) {
		t.Errorf("overview order %v, want %v", got, want)
	}
	focused := &renderer{m: m, g: g, r: r}
	if got, want := name(focused.ranked(len(ranked))), name(ranked); !slices.Equal(got, want) {
		t.Errorf("focused order %v, want the ranking's %v", got, want)
	}
}
