package repomap

import (
	"math"
	"slices"
	"testing"
)

// checkBounded ranks m under each focus in rounds (prune.go), forced on a
// tree of any size with a first round of 2k, and checks every definition's
// score against its file's bound and the k best against those of scoring
// every definition; and that the rounds left some files out.
func checkBounded(t *testing.T, m *Map, focuses []Focus) {
	t.Helper()
	defer func(n, r int) { pruneMinDefs, firstRound = n, r }(pruneMinDefs, firstRound)
	pruneMinDefs, firstRound = 0, 2
	g := m.currentGraph()
	x := g.scoreIndex()
	x.makeBounds(g)
	rounded, skipped := 0, 0
	for _, focus := range focuses {
		sf := g.scoreFocus(focus)
		bs := &boundScratch{inflow: make([]float64, len(g.tags))}
		inflow := bs.inflow
		f := g.flows(focus, m.focusIDs(g, focus), inflow)
		defer f.release()
		full := make([]float64, len(x.defs))
		g.scoreAll(full, &sf, x, f.pr, f.mass, f.focusIdent, nil, nil)
		for fi, tg := range g.tags {
			if sf.unfocused || sf.known[fi] || len(tg.Defs) == 0 { // (unfocused: never in rounds, no bound)
				continue
			}
			ub := x.fileBound(fi, sf.testFocus, f.pr, inflow)
			for i := x.fileStart[fi]; i < x.fileStart[fi+1]; i++ {
				if full[i] > ub {
					t.Fatalf("focus %+v: %s %s scores %v over its file's bound %v", focus, g.files[fi], tg.Defs[x.defs[i].def].Name(), full[i], ub)
				}
			}
		}
		n := x.scored(&sf)
		for _, k := range []int{500, 50, 7} {
			if !x.pruned(&sf, n, k) {
				continue
			}
			rounded++
			scores := make([]float64, len(x.defs))
			for i := range scores {
				scores[i] = math.NaN()
			}
			got := g.bestBounded(scores, &sf, x, f, k, make([]int32, 1<<scoreBucketBits), bs)
			want := sortedPrefix(g.appendRanked(nil, full, &sf, x, 0, nil), k)
			if !slices.Equal(got, want) {
				t.Errorf("focus %+v, k %d: the rounds' best differ from scoring every definition:\n got %v\nwant %v", focus, k, got, want)
			}
			for fi := range g.tags {
				if lo := x.fileStart[fi]; !sf.known[fi] && lo < x.fileStart[fi+1] && math.IsNaN(scores[lo]) {
					skipped++
					break
				}
			}
		}
	}
	if rounded == 0 || skipped == 0 {
		t.Errorf("%d rankings in rounds, %d of them leaving files out: the test checks nothing", rounded, skipped)
	}
}

// On real code the rounds pick what scoring every definition picks.
func TestBoundedRankingOnRealCode(t *testing.T) {
	if testing.Short() {
		t.Skip("parses net/http")
	}
	m := netHTTPMap(t)
	checkBounded(t, m, []Focus{
		{},
		{Files: []string{"server.go"}, Identifiers: []string{"Handler", "ServeHTTP", "ResponseWriter"}, Known: []string{"server.go"}},
		{Files: []string{"client_test.go"}, Mentioned: []string{"redirect", "cookies", "jar"}},
		{Related: []string{"transport.go"}, Mentioned: []string{"how", "does", "the", "transport", "reuse", "connections", "httptrace/"}},
		{Files: []string{"h2_bundle.go"}, Identifiers: []string{"http2Framer"}},
	})
}
