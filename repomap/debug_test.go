package repomap

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/corpora"
	"github.com/cairn-dev/cairn/workspace"
)

func TestDebugCoreRanks(t *testing.T) {
	corpora.Enabled(t)
	b, _ := os.ReadFile("testdata/coreapi.json")
	var f struct {
		Sets []struct {
			Corpus, Dir string
			Names       []string
		}
	}
	json.Unmarshal(b, &f)
	only := os.Getenv("DBG_CORPUS")
	for _, s := range f.Sets {
		if only != "" && only != s.Corpus+"/"+s.Dir {
			continue
		}
		ws, _ := workspace.Open(filepath.Join(corpora.Root(t, s.Corpus), s.Dir))
		m := New(ws, Options{})
		m.Build(context.Background())
		g, r := m.rank(Focus{})
		all := r.get(r.n)
		want := map[string]bool{}
		for _, n := range s.Names {
			want[n] = true
		}
		out := fmt.Sprintf("== %s/%s (%d defs)\n", s.Corpus, s.Dir, len(all))
		first := map[string]bool{}
		top, _ := m.Render(Focus{}, 1024)
		_ = top
		for i, d := range all {
			t := g.tags[d.file]
			def := &t.Defs[d.def]
			id := g.defIdent[d.file][d.def]
			if i < 60 || (want[def.Name] && !first[def.Name]) {
				mark := " "
				if want[def.Name] {
					mark = "*"
					first[def.Name] = true
				}
				out += fmt.Sprintf("%s %4d %.5f %-40s %-14s uses=%d decl=%v pr=%.5f defs=%d  %s\n", mark, i, d.score*1000, t.Path, def.Name, g.refFiles[id], g.declared[id], r.fileRank[d.file]*1000, len(t.Defs), def.Scope)
			}
		}
		for i, d := range all {
			t := g.tags[d.file]
			def := &t.Defs[d.def]
			id := g.defIdent[d.file][d.def]
			if os.Getenv("DBG_NAMES") != "" && (","+os.Getenv("DBG_NAMES")+",") != "" && containsName(os.Getenv("DBG_NAMES"), def.Name) {
				qs := ""
				for _, q := range g.qualifiedOf(id) {
					qs += fmt.Sprintf(" %q(refs=%d,defs=%d)", g.idents[q], g.refFiles[q], len(g.definers(q)))
				}
				out += fmt.Sprintf("# %4d %.5f %-40s %-14s kind=%s scope=%s refs=%d defs=%d quals=%s\n", i, d.score*1000, t.Path, def.Name, def.Kind, def.Scope, g.refFiles[id], len(g.definers(id)), qs)
			}
		}
		fmt.Print(out)
	}
}

func containsName(list, n string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == n {
			return true
		}
	}
	return false
}
