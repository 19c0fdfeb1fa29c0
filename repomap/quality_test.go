package repomap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
	// Split is how the names divide into a dev half (tuned on) and a test
	// half (reported): "alternate" or "halves"; "" for the sets the ranking
	// was tuned on before issue 29 (all dev).
	Split string `json:"split"`
	Note  string `json:"note"`
}

// halves returns the dev and test halves of a set's names.
func (s coreSet) halves() (dev, test []string) {
	switch s.Split {
	case "alternate":
		for i, n := range s.Names {
			if i%2 == 0 {
				dev = append(dev, n)
			} else {
				test = append(test, n)
			}
		}
		return dev, test
	case "halves":
		h := len(s.Names) / 2
		return s.Names[:h], s.Names[h:]
	}
	return s.Names, nil
}

type coreFile struct {
	Sets []coreSet
	// HeldOut are names that must be present at 1k tokens.
	HeldOut []coreSet
}

func loadCoreAPI(t testing.TB) coreFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "coreapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f coreFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("coreapi.json: %v", err)
	}
	return f
}

// splitCorpora are the corpora whose sets were written for issue 29 and
// must carry a dev/test split.
var splitCorpora = map[string]bool{"java": true, "rust": true, "linux": true, "ruby": true}

func TestCoreAPISetWellFormed(t *testing.T) {
	langs := map[string]bool{}
	f := loadCoreAPI(t)
	for _, s := range f.Sets {
		if len(s.Names) < 20 {
			t.Errorf("%s/%s: %d names, want at least 20", s.Corpus, s.Dir, len(s.Names))
		}
		if splitCorpora[s.Corpus] && s.Split != "alternate" && s.Split != "halves" {
			t.Errorf("%s/%s: split %q, want alternate or halves", s.Corpus, s.Dir, s.Split)
		}
		if s.Split != "" && s.Split != "alternate" && s.Split != "halves" {
			t.Errorf("%s/%s: unknown split %q", s.Corpus, s.Dir, s.Split)
		}
		seen := map[string]bool{}
		for _, n := range s.Names {
			if seen[n] {
				t.Errorf("%s/%s: %s twice", s.Corpus, s.Dir, n)
			}
			seen[n] = true
		}
		langs[s.Corpus] = true
	}
	for _, c := range corpora.Names {
		if !langs[c] {
			t.Errorf("no set on corpus %s", c)
		}
	}
	if len(f.HeldOut) == 0 {
		t.Error("no held-out names")
	}
}

// qualityMaps holds one built map per corpus and directory, shared by the
// quality tests of one run.
var qualityMaps = map[string]*repomap.Map{}

func qualityMap(t *testing.T, corpus, dir string) *repomap.Map {
	t.Helper()
	key := corpus + "\x00" + dir
	if m, ok := qualityMaps[key]; ok {
		return m
	}
	root := filepath.Join(corpora.Root(t, corpus), filepath.FromSlash(dir))
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatalf("opening %s/%s: %v", corpus, dir, err)
	}
	m := repomap.New(ws, repomap.Options{})
	if _, err := m.Build(context.Background()); err != nil {
		t.Fatalf("building the map of %s/%s: %v", corpus, dir, err)
	}
	qualityMaps[key] = m
	return m
}

// defined returns every name (and Scope.Name) some file of the map defines.
func defined(m *repomap.Map) map[string]bool {
	out := map[string]bool{}
	m.Each(func(ft *repomap.FileTags) {
		for _, d := range ft.Defs {
			if d.Local {
				continue
			}
			out[d.Name()] = true
			if d.Scope() != "" {
				out[d.Scope()+"."+d.Name()] = true
			}
		}
	})
	return out
}

// shownDefs returns the names of the definitions a rendered map shows (its
// "path:" headers and "line: signature" lines, looked up in the tags): each
// as Name, Scope.Name and path\x00Name (path\x00Scope.Name).
func shownDefs(m *repomap.Map, text string) map[string]bool {
	shown := map[string]bool{}
	var tags *repomap.FileTags
	path := ""
	for _, l := range strings.Split(text, "\n") {
		if strings.HasSuffix(l, ":") && mapLineNumbers(l) == nil {
			path = strings.TrimSuffix(l, ":")
			tags, _ = m.Tags(path)
			continue
		}
		if tags == nil {
			continue
		}
		for _, n := range mapLineNumbers(l) {
			for _, d := range tags.Defs {
				if int(d.NameLine) != n {
					continue
				}
				shown[d.Name()] = true
				shown[path+"\x00"+d.Name()] = true
				if d.Scope() != "" {
					shown[d.Scope()+"."+d.Name()] = true
					shown[path+"\x00"+d.Scope()+"."+d.Name()] = true
				}
			}
		}
	}
	return shown
}

// mapLineNumbers returns the line numbers a map's line shows: its own
// ("42: ...") and, on an overview's line of methods, each one after it
// (", 57: name()").
func mapLineNumbers(l string) []int {
	num, rest, ok := strings.Cut(strings.TrimSpace(l), ":")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return nil
	}
	out := []int{n}
	for _, part := range strings.Split(rest, ", ")[1:] {
		num, _, ok := strings.Cut(part, ":")
		if n, err := strconv.Atoi(num); ok && err == nil {
			out = append(out, n)
		}
	}
	return out
}

var coreBudgets = []int{512, 1024, 2048}

// coreFloor is the presence at 1k tokens the sets tuned on before issue 29
// must keep (all of them together): the figure measured when the ranking
// was last changed, less a margin.
const coreFloor = 0.84

// coreTestFloor is the presence at 1k tokens of the test halves of the
// issue 29 sets (all together), just below the figure measured.
const coreTestFloor = 0.75

// tally counts names present at each budget.
type tally struct {
	n     int
	found [3]int
}

func (c *tally) add(o tally) {
	c.n += o.n
	for i := range c.found {
		c.found[i] += o.found[i]
	}
}

func (c tally) String() string {
	if c.n == 0 {
		return fmt.Sprintf("%3d %s", 0, strings.Repeat("         -", 3))
	}
	s := fmt.Sprintf("%3d", c.n)
	for _, f := range c.found {
		s += fmt.Sprintf(" %3d (%3.0f%%)", f, 100*float64(f)/float64(c.n))
	}
	return s
}

func (c tally) at1k() float64 { return float64(c.found[1]) / float64(max(1, c.n)) }

func TestCoreAPIPresence(t *testing.T) {
	corpora.Enabled(t)
	var old, dev, test tally
	perLang := map[string]*[2]tally{}
	var langs []string
	var rows []string
	for _, s := range loadCoreAPI(t).Sets {
		m := qualityMap(t, s.Corpus, s.Dir)
		def := defined(m)
		for _, name := range s.Names {
			if !def[name] {
				// A tag gap (or a wrong name): counted as missing.
				t.Logf("%s/%s: no file's tags define %s", s.Corpus, s.Dir, name)
			}
		}
		devNames, testNames := s.halves()
		var sd, st tally
		sd.n, st.n = len(devNames), len(testNames)
		for i, budget := range coreBudgets {
			text, _ := m.Render(repomap.Focus{}, budget)
			shown := shownDefs(m, text)
			var missing []string
			for _, name := range devNames {
				if shown[name] {
					sd.found[i]++
				} else if budget == 1024 {
					missing = append(missing, name)
				}
			}
			for _, name := range testNames {
				if shown[name] {
					st.found[i]++
				}
			}
			if budget == 1024 {
				// Only the dev half's misses are shown: the test half is
				// not to be tuned on.
				t.Logf("%s/%s at 1k: dev names missing %v", s.Corpus, s.Dir, missing)
				if os.Getenv("CAIRN_QUALITY_SHOW") != "" {
					t.Logf("%s/%s map at 1k:\n%s", s.Corpus, s.Dir, text)
				}
			}
		}
		if s.Split == "" {
			old.add(sd)
			rows = append(rows, fmt.Sprintf("%-6s %-20s %-4s %s", s.Corpus, s.Dir, "all", sd))
			continue
		}
		dev.add(sd)
		test.add(st)
		if perLang[s.Corpus] == nil {
			perLang[s.Corpus] = new([2]tally)
			langs = append(langs, s.Corpus)
		}
		perLang[s.Corpus][0].add(sd)
		perLang[s.Corpus][1].add(st)
		rows = append(rows, fmt.Sprintf("%-6s %-20s %-4s %s", s.Corpus, s.Dir, "dev", sd), fmt.Sprintf("%-6s %-20s %-4s %s", s.Corpus, s.Dir, "test", st))
	}
	for _, l := range langs {
		rows = append(rows, fmt.Sprintf("%-6s %-20s %-4s %s", l, "", "dev", perLang[l][0]), fmt.Sprintf("%-6s %-20s %-4s %s", l, "", "test", perLang[l][1]))
	}
	rows = append(rows,
		fmt.Sprintf("%-6s %-20s %-4s %s", "before", "(sets tuned on)", "all", old),
		fmt.Sprintf("%-6s %-20s %-4s %s", "new", "", "dev", dev),
		fmt.Sprintf("%-6s %-20s %-4s %s", "new", "", "test", test))
	t.Logf("core API present in the unfocused map:\n%-6s %-20s %-4s %3s %10s %10s %10s\n%s", "corpus", "dir", "half", "n", "512", "1k", "2k", strings.Join(rows, "\n"))
	if got := old.at1k(); got < coreFloor {
		t.Errorf("core API presence at 1k tokens of the older sets %.3f, below the floor %.2f", got, coreFloor)
	}
	if got := test.at1k(); got < coreTestFloor {
		t.Errorf("core API presence at 1k tokens of the test halves %.3f, below the floor %.2f", got, coreTestFloor)
	}
}

// The held-out names (issue 29's symptom: net/http's entry points) in the
// unfocused map at 1k tokens: at least heldOutFloor of them, the count
// measured less none (Client.Do, a method reached by few references inside
// the package, comes in at about 3.8k).
func TestCoreAPIHeldOut(t *testing.T) {
	corpora.Enabled(t)
	found, total := 0, 0
	for _, s := range loadCoreAPI(t).HeldOut {
		m := qualityMap(t, s.Corpus, s.Dir)
		text, _ := m.Render(repomap.Focus{}, 1024)
		shown := shownDefs(m, text)
		for _, name := range s.Names {
			total++
			if shown[name] {
				found++
			} else {
				t.Logf("%s/%s: %s is not in the unfocused map at 1k tokens", s.Corpus, s.Dir, name)
			}
		}
	}
	t.Logf("held-out names in the unfocused map at 1k tokens: %d of %d", found, total)
	if found < heldOutFloor {
		t.Errorf("%d of %d held-out names at 1k tokens, want at least %d", found, total, heldOutFloor)
	}
}

const heldOutFloor = 5

// The focused-map recall set (testdata/focused.json): for a question about
// one file, the definitions in other files an answer needs, and whether the
// map focused on that file shows each.

type focusedNeed struct {
	File   string `json:"file"`
	Symbol string `json:"symbol"` // Name or Scope.Name
}

type focusedQuestion struct {
	ID       string        `json:"id"`
	Corpus   string        `json:"corpus"`
	Dir      string        `json:"dir"`
	File     string        `json:"file"`
	Split    string        `json:"split"`
	Question string        `json:"question"`
	Needs    []focusedNeed `json:"needs"`
}

func loadFocused(t testing.TB) []focusedQuestion {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "focused.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Questions []focusedQuestion }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("focused.json: %v", err)
	}
	return f.Questions
}

func TestFocusedMapSetWellFormed(t *testing.T) {
	ids := map[string]bool{}
	perCorpus := map[string]int{}
	for _, q := range loadFocused(t) {
		if q.ID == "" || ids[q.ID] {
			t.Errorf("question id %q empty or duplicate", q.ID)
		}
		ids[q.ID] = true
		perCorpus[q.Corpus]++
		if q.Split != "dev" && q.Split != "test" {
			t.Errorf("%s: split %q, want dev or test", q.ID, q.Split)
		}
		if q.File == "" || strings.TrimSpace(q.Question) == "" || len(q.Needs) == 0 {
			t.Errorf("%s: incomplete question", q.ID)
		}
		for _, n := range q.Needs {
			if n.File == q.File {
				t.Errorf("%s: need %s is in the question's own file (only cross-file needs count)", q.ID, n.Symbol)
			}
		}
	}
	for c := range splitCorpora {
		if perCorpus[c] < 2 {
			t.Errorf("corpus %s: %d questions, want at least 2", c, perCorpus[c])
		}
	}
}

// focusedFloor is the recall at 1k tokens of the test half (all corpora),
// just below the figure measured.
const focusedFloor = 0.78

func TestFocusedMapRecall(t *testing.T) {
	corpora.Enabled(t)
	per := map[string]*[3]int{} // "corpus split" -> needs found at each budget
	needs := map[string]int{}
	var keys []string
	for _, q := range loadFocused(t) {
		m := qualityMap(t, q.Corpus, q.Dir)
		ft, ok := m.Tags(q.File)
		if !ok || ft == nil {
			t.Errorf("%s: %s/%s has no tags for %s", q.ID, q.Corpus, q.Dir, q.File)
			continue
		}
		for _, n := range q.Needs {
			if !fileDefines(m, n) {
				t.Logf("%s: the tags of %s do not define %s", q.ID, n.File, n.Symbol)
			}
		}
		k := q.Corpus + " " + q.Split
		if per[k] == nil {
			per[k] = new([3]int)
			keys = append(keys, k)
		}
		needs[k] += len(q.Needs)
		for i, budget := range coreBudgets {
			text, _ := m.Render(repomap.Focus{Files: []string{q.File}}, budget)
			shown := shownDefs(m, text)
			var missing []string
			for _, n := range q.Needs {
				if shown[n.File+"\x00"+n.Symbol] {
					per[k][i]++
				} else {
					missing = append(missing, n.File+" "+n.Symbol)
				}
			}
			if budget == 1024 && q.Split == "dev" {
				t.Logf("%s at 1k: missing %v", q.ID, missing)
			}
		}
	}
	sort.Strings(keys)
	var rows []string
	var all [2][3]int
	var allN [2]int
	for _, k := range keys {
		row := fmt.Sprintf("%-12s %3d", k, needs[k])
		h := 0
		if strings.HasSuffix(k, " test") {
			h = 1
		}
		allN[h] += needs[k]
		for i, f := range per[k] {
			row += fmt.Sprintf(" %3d (%3.0f%%)", f, 100*float64(f)/float64(needs[k]))
			all[h][i] += f
		}
		rows = append(rows, row)
	}
	for h, name := range []string{"all dev", "all test"} {
		row := fmt.Sprintf("%-12s %3d", name, allN[h])
		for _, f := range all[h] {
			row += fmt.Sprintf(" %3d (%3.0f%%)", f, 100*float64(f)/float64(max(1, allN[h])))
		}
		rows = append(rows, row)
	}
	t.Logf("cross-file needs shown by the map focused on the question's file:\n%-12s %3s %10s %10s %10s\n%s", "corpus half", "n", "512", "1k", "2k", strings.Join(rows, "\n"))
	if got := float64(all[1][1]) / float64(max(1, allN[1])); got < focusedFloor {
		t.Errorf("focused-map recall at 1k tokens of the test half %.3f, below the floor %.2f", got, focusedFloor)
	}
}

// fileDefines says whether need's file defines its symbol.
func fileDefines(m *repomap.Map, n focusedNeed) bool {
	ft, ok := m.Tags(n.File)
	if !ok || ft == nil {
		return false
	}
	for _, d := range ft.Defs {
		if !d.Local && (d.Name() == n.Symbol || d.Scope()+"."+d.Name() == n.Symbol) {
			return true
		}
	}
	return false
}
