package repomap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/corpora"
	"github.com/cairn-dev/cairn/repomap"
	"github.com/cairn-dev/cairn/workspace"
)

// The map quality set (testdata/coreapi.json): for packages nobody here
// wrote, the names of their core API, and whether the unfocused map of the
// package shows a definition of each at 512, 1k and 2k tokens. Runs with
// CAIRN_QUALITY=1 (scripts/test.sh):
//
//	CAIRN_QUALITY=1 go test -run TestCoreAPIPresence -v ./repomap

type coreSet struct {
	Corpus string   `json:"corpus"`
	Dir    string   `json:"dir"`
	Names  []string `json:"names"`
}

func loadCoreAPI(t testing.TB) []coreSet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "coreapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Sets []coreSet }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("coreapi.json: %v", err)
	}
	return f.Sets
}

func TestCoreAPISetWellFormed(t *testing.T) {
	langs := map[string]bool{}
	for _, s := range loadCoreAPI(t) {
		if len(s.Names) < 20 {
			t.Errorf("%s/%s: %d names, want at least 20", s.Corpus, s.Dir, len(s.Names))
		}
		langs[s.Corpus] = true
	}
	for _, c := range corpora.Names {
		if !langs[c] {
			t.Errorf("no set on corpus %s", c)
		}
	}
}

// shownDefs returns the names of the definitions a rendered map shows (its
// "path:" headers and "line: signature" lines, looked up in the tags).
func shownDefs(m *repomap.Map, text string) map[string]bool {
	shown := map[string]bool{}
	var tags *repomap.FileTags
	for _, l := range strings.Split(text, "\n") {
		if strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") {
			tags, _ = m.Tags(strings.TrimSuffix(l, ":"))
			continue
		}
		num, _, ok := strings.Cut(strings.TrimSpace(l), ":")
		n, err := strconv.Atoi(num)
		if !ok || err != nil || tags == nil {
			continue
		}
		for _, d := range tags.Defs {
			if d.NameLine == n {
				shown[d.Name] = true
			}
		}
	}
	return shown
}

var coreBudgets = []int{512, 1024, 2048}

// coreFloor is the presence at 1k tokens the set must keep (all sets
// together): the figure measured when the ranking was last changed, less a
// margin.
const coreFloor = 0.56

func TestCoreAPIPresence(t *testing.T) {
	corpora.Enabled(t)
	var found [3]int
	total := 0
	var rows []string
	for _, s := range loadCoreAPI(t) {
		root := filepath.Join(corpora.Root(t, s.Corpus), filepath.FromSlash(s.Dir))
		ws, err := workspace.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		m := repomap.New(ws, repomap.Options{})
		if _, err := m.Build(context.Background()); err != nil {
			t.Fatal(err)
		}
		row := fmt.Sprintf("%-8s %-14s %3d", s.Corpus, s.Dir, len(s.Names))
		for i, budget := range coreBudgets {
			text, _ := m.Render(repomap.Focus{}, budget)
			shown := shownDefs(m, text)
			n := 0
			var missing []string
			for _, name := range s.Names {
				if shown[name] {
					n++
				} else {
					missing = append(missing, name)
				}
			}
			found[i] += n
			row += fmt.Sprintf(" %3d (%3.0f%%)", n, 100*float64(n)/float64(len(s.Names)))
			if budget == 1024 {
				t.Logf("%s/%s at 1k: missing %v", s.Corpus, s.Dir, missing)
			}
			if budget == 1024 && os.Getenv("CAIRN_QUALITY_SHOW") != "" {
				t.Logf("%s/%s map at 1k:\n%s", s.Corpus, s.Dir, text)
			}
		}
		total += len(s.Names)
		rows = append(rows, row)
	}
	if total == 0 {
		return
	}
	row := fmt.Sprintf("%-8s %-14s %3d", "all", "", total)
	for i := range coreBudgets {
		row += fmt.Sprintf(" %3d (%3.0f%%)", found[i], 100*float64(found[i])/float64(total))
	}
	rows = append(rows, row)
	t.Logf("core API present in the unfocused map:\n%-8s %-14s %3s %10s %10s %10s\n%s", "corpus", "dir", "n", "512", "1k", "2k", strings.Join(rows, "\n"))
	if got := float64(found[1]) / float64(total); got < coreFloor {
		t.Errorf("core API presence at 1k tokens %.3f, below the floor %.2f", got, coreFloor)
	}
}
