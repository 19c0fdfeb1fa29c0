package repomap

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/corpora"
	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/workspace"
)

// naiveScore is the definition scoring written plainly, every fact derived
// from the tags where it is used (as rank did before the facts were
// computed per parse): the oracle for graph.score.
func (g *graph) naiveScore(focus Focus, pr, mass []float64, focusIdent []bool) []rankedDef {
	nf := len(g.tags)
	known := make([]bool, nf)
	for _, f := range focus.Known {
		if i, ok := g.fileIdx[f]; ok {
			known[i] = true
		}
	}
	testFocus := false
	for _, f := range focus.Files {
		testFocus = testFocus || isTestFile(f)
	}
	unfocused := len(focus.Files)+len(focus.Related)+len(focus.Identifiers)+len(focus.Mentioned) == 0
	minDepth := math.MaxInt
	if unfocused {
		for _, t := range g.tags {
			if len(t.Defs) > 0 {
				minDepth = min(minDepth, strings.Count(t.Path, "/"))
			}
		}
	}
	var out []rankedDef
	for fi, t := range g.tags {
		if len(t.Defs) == 0 || known[fi] {
			continue
		}
		base := pr[fi] * baselineShare / float64(len(t.Defs))
		ids, same := g.defIdent[fi], g.defSame[fi]
		fileFactor := 1.0
		if isFixture(t.Path) || isBuiltinDecl(t.Path) {
			fileFactor = fixturePenalty
		}
		if !testFocus && isTestFile(t.Path) {
			fileFactor *= testPenalty
		}
		if unfocused && isGoInternal(t.Path) {
			fileFactor *= internalFactor
		}
		if unfocused && isExperimental(t) {
			fileFactor *= fixturePenalty
		}
		if unfocused {
			fileFactor *= math.Pow(nestFactor, float64(strings.Count(t.Path, "/")-minDepth))
		}
		for di, id := range ids {
			if id < 0 {
				continue
			}
			def := &t.Defs[di]
			if same[di] > 1 && overload(t, ids, di) {
				continue
			}
			member := isMember(t.Language, def)
			flowIn := mass[g.slot[id]] / float64(g.defStart[id+1]-g.defStart[id])
			uses := g.refFiles[id]
			for _, q := range g.qualifiedOf(id) {
				if member {
					continue
				}
				for _, f := range g.definers(q) {
					if f == int32(fi) {
						flowIn += mass[g.slot[q]] / float64(g.defStart[q+1]-g.defStart[q])
						uses += g.refFiles[q]
					}
				}
			}
			kept := same[di]
			if kept > 1 {
				kept = 0
				for j := range ids {
					if ids[j] == id && !overload(t, ids, j) {
						kept++
					}
				}
			}
			s := base + flowIn/float64(kept)
			if focusIdent[id] {
				s *= defFocusBoost
			}
			if isAPI(t.Language, def) {
				s *= apiBoost
				if unfocused && g.declared[id] && !member {
					s *= declaredBoost
				}
			}
			if unfocused {
				s *= 1 + math.Log2(1+float64(uses))
			}
			s *= fileFactor
			out = append(out, rankedDef{file: int32(fi), def: int32(di), score: s})
		}
	}
	slices.SortFunc(out, cmpRanked)
	return out
}

// checkScoring ranks m for each focus and compares the full ranking with
// naiveFlows and naiveScore's, bit for bit.
func checkScoring(t *testing.T, m *Map, focuses []Focus) {
	t.Helper()
	g := m.currentGraph()
	for _, f := range focuses {
		var ids []int32
		for _, n := range f.Identifiers {
			for _, k := range []string{n, bareMark + n} {
				if id, ok := m.syms.ids[k]; ok && int(id) < len(g.idents) {
					ids = append(ids, id)
				}
			}
		}
		checkFlows(t, g, f, ids)
		r := g.rank(f, ids)
		fl := g.naiveFlows(f, ids)
		want := g.naiveScore(f, fl.pr, fl.mass, fl.focusIdent)
		got := r.get(r.n)
		if len(want) < 100 {
			t.Fatalf("focus %+v: only %d definitions ranked", f, len(want))
		}
		if !slices.Equal(got, want) {
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Errorf("focus %+v: %d definitions (want %d); first difference at #%d: %+v, want %+v", f, len(got), len(want), i, got[i], want[i])
					break
				}
			}
			if len(got) != len(want) {
				t.Errorf("focus %+v: %d definitions, want %d", f, len(got), len(want))
			}
		}
	}
}

// The scoring from per-parse facts ranks a real tree exactly as the plain
// formula does, focused and not.
func TestScoreMatchesNaiveOnRealCode(t *testing.T) {
	if testing.Short() {
		t.Skip("parses net/http")
	}
	root := filepath.Join(testenv.GOROOT(t), "src", "net", "http")
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	m := New(ws, Options{})
	if _, err := m.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	focuses := []Focus{
		{},
		{Files: []string{"server.go"}, Identifiers: []string{"Handler", "ServeHTTP", "ResponseWriter"}, Known: []string{"server.go"}},
		{Files: []string{"client_test.go"}, Mentioned: []string{"redirect", "cookies", "jar"}},
		{Related: []string{"transport.go"}, Mentioned: []string{"how", "does", "the", "transport", "reuse", "connections"}},
	}
	checkScoring(t, m, focuses)
	// The rest of the ranking, past what is kept sorted, scored again on
	// demand: the same full order.
	defer func(n int) { rankedPrefix = n }(rankedPrefix)
	rankedPrefix = 500
	checkScoring(t, m, focuses)
}

// The same on the quality corpora (TypeScript and Python included).
func TestScoreMatchesNaiveOnCorpora(t *testing.T) {
	corpora.Enabled(t)
	for _, c := range []struct{ corpus, dir string }{{"rxjs", ""}, {"zod", ""}, {"python", "asyncio"}} {
		ws, err := workspace.Open(filepath.Join(corpora.Root(t, c.corpus), c.dir))
		if err != nil {
			t.Fatal(err)
		}
		m := New(ws, Options{})
		if _, err := m.Build(context.Background()); err != nil {
			t.Fatal(err)
		}
		checkScoring(t, m, []Focus{{}, {Mentioned: []string{"subscribe", "pipe", "parse", "event", "loop"}}})
	}
}
