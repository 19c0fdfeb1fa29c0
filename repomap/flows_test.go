package repomap

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// naiveFlows is the personalized PageRank written as a plain push over
// every file's edges, each iteration (as flows was before its in-edges and
// unfocused out-weights were made once per graph): the oracle for flows,
// which must give the same ranks and masses bit for bit.
func (g *graph) naiveFlows(focus Focus, focusIdents []int32) flowResult {
	nf := len(g.tags)
	// Focus names: exact identifiers, and mentioned words matched case-insensitively.
	focusIdent := make([]bool, len(g.idents))
	var focusIDs []int32
	mark := func(id int32) {
		if !focusIdent[id] {
			focusIdent[id] = true
			focusIDs = append(focusIDs, id)
		}
	}
	for _, id := range focusIdents {
		if g.defStart[id+1] > g.defStart[id] {
			mark(id)
		}
	}
	words := focus.words()
	if len(words) > 0 {
		for _, id := range g.defined {
			name := strings.TrimPrefix(g.idents[id], bareMark)
			for _, w := range words {
				if len(name) == len(w) && strings.EqualFold(name, w) {
					mark(id)
					break
				}
			}
		}
	}
	sort.Slice(focusIDs, func(i, j int) bool { return focusIDs[i] < focusIDs[j] })

	// Personalization.
	p := make([]float64, nf)
	for _, f := range focus.Files {
		if i, ok := g.fileIdx[f]; ok {
			p[i] += 1
		}
	}
	for _, f := range focus.Related {
		if i, ok := g.fileIdx[f]; ok {
			p[i] += 0.5
		}
	}
	if len(words) > 0 {
		lower := g.lowerFiles()
		for i, lf := range lower.paths {
			base := lower.bases[i]
			for _, w := range words {
				if base == w || lf == w || (strings.Contains(w, "/") && strings.Contains(lf, w)) {
					p[i] += 0.5
					break
				}
			}
		}
	}
	for _, id := range focusIDs {
		d := g.definers(id)
		for _, fi := range d {
			p[fi] += 0.25 / float64(len(d))
		}
	}
	sum := 0.0
	for _, v := range p {
		sum += v
	}
	if sum == 0 {
		// No focus: every file, and once more for each name its export
		// lists name (an index file, Python's __all__): the package's
		// users enter through what it declares it offers.
		for i := range p {
			p[i] = 1 + float64(g.facts[i].exports)
			sum += p[i]
		}
	}
	for i := range p {
		p[i] /= sum
	}

	// Out-weights with the focus factor. They are normalized by the weights
	// before the common and ubiquitous factors, so what those factors take
	// away is not followed: that share of the file's rank restarts at the
	// personalization, like a dangling node's (leak).
	focusSlot := make([]bool, len(g.defined))
	for _, id := range focusIDs {
		focusSlot[g.slot[id]] = true // focus idents have definers
	}
	outW := make([]float64, nf)
	leak := make([]float64, nf)
	for f := 0; f < nf; f++ {
		s, b := 0.0, 0.0
		for e := g.edgeStart[f]; e < g.edgeStart[f+1]; e++ {
			w, wb := g.edgeW[e], g.edgeB[e]
			if focusSlot[g.edgeSlot[e]] {
				w *= focusBoost
				wb *= focusBoost
			}
			s += w
			b += wb
		}
		outW[f] = b
		if b > 0 {
			leak[f] = 1 - s/b
		}
	}

	// Always start from p (not from an earlier solution): the result must
	// not depend on which focus was ranked before.
	pr := append([]float64(nil), p...)
	next := make([]float64, nf)
	mass := make([]float64, len(g.defined)) // per slot
	// The edge weights with the focus factor, computed once: the flow below
	// runs once per iteration over every edge.
	edgeW := g.edgeW
	if len(focusIDs) > 0 {
		edgeW = make([]float64, len(g.edgeW))
		for e, w := range g.edgeW {
			if focusSlot[g.edgeSlot[e]] {
				w *= focusBoost
			}
			edgeW[e] = w
		}
	}
	flow := func(pr []float64) (dangling float64) {
		clear(mass[:g.referenced])
		for f := 0; f < nf; f++ {
			if outW[f] == 0 {
				dangling += pr[f]
				continue
			}
			dangling += pr[f] * leak[f]
			scale := pr[f] / outW[f]
			for e := g.edgeStart[f]; e < g.edgeStart[f+1]; e++ {
				mass[g.edgeSlot[e]] += scale * edgeW[e]
			}
		}
		return dangling
	}
	it := 0
	for ; it < maxIterations; it++ {
		dangling := flow(pr)
		clear(next)
		for k, mv := range mass[:g.referenced] {
			if mv == 0 {
				continue
			}
			d := g.slotFile[g.slotStart[k]:g.slotStart[k+1]]
			share := mv / float64(len(d))
			for _, fi := range d {
				next[fi] += share
			}
		}
		diff := 0.0
		for i := range next {
			next[i] = damping*(next[i]+dangling*p[i]) + (1-damping)*p[i]
			diff += math.Abs(next[i] - pr[i])
		}
		pr, next = next, pr
		if diff < tolerance {
			break
		}
	}
	// The flow of the final ranks: definitions are scored by it.
	flow(pr)
	return flowResult{pr: pr, mass: mass, focusIdent: focusIdent, iterations: it}
}

// checkFlows compares flows with naiveFlows for focus, bit for bit.
func checkFlows(t *testing.T, g *graph, f Focus, ids []int32) {
	t.Helper()
	got, want := g.flows(f, ids), g.naiveFlows(f, ids)
	if got.iterations != want.iterations {
		t.Errorf("focus %+v: %d iterations, want %d", f, got.iterations, want.iterations)
	}
	for i := range want.pr {
		if math.Float64bits(got.pr[i]) != math.Float64bits(want.pr[i]) {
			t.Errorf("focus %+v: rank of %s = %v, want %v", f, g.files[i], got.pr[i], want.pr[i])
			break
		}
	}
	if len(got.mass) != g.referenced {
		t.Fatalf("focus %+v: mass of %d slots, want the %d referenced", f, len(got.mass), g.referenced)
	}
	for k := range want.mass {
		if k >= g.referenced {
			if want.mass[k] != 0 {
				t.Errorf("focus %+v: mass %v reached unreferenced slot %d", f, want.mass[k], k)
			}
			continue
		}
		if math.Float64bits(got.mass[k]) != math.Float64bits(want.mass[k]) {
			t.Errorf("focus %+v: mass of slot %d = %v, want %v", f, k, got.mass[k], want.mass[k])
			break
		}
	}
	if !slices.Equal(got.focusIdent, want.focusIdent) {
		t.Errorf("focus %+v: focus identifiers differ", f)
	}
}

// splitTop selects by the scores' bits: scores over many octaves, some in
// one bucket but not equal, zeros of both signs and negatives give the
// same top and full order as sorting everything.
func TestSplitTopBuckets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var all []rankedDef
	for i := 0; i < 20000; i++ {
		s := math.Exp(-40 * r.Float64())
		switch i % 10 {
		case 0:
			s = 0
		case 1:
			s = math.Copysign(0, -1)
		case 2:
			s = -s
		case 3:
			s = math.Nextafter(0.5, 1) + float64(i%3)*1e-16
		}
		all = append(all, rankedDef{file: int32(r.IntN(50)), def: int32(i), score: s})
	}
	want := append([]rankedDef(nil), all...)
	slices.SortFunc(want, cmpRanked)
	for _, k := range []int{1, 100, 1999, 2000, 2001, 4096, 15000, 17000, 19999} {
		top, rest := splitTop(append([]rankedDef(nil), all...), k)
		if !slices.Equal(top, want[:k]) {
			t.Errorf("k=%d: top differs", k)
		}
		rest = slices.Clone(rest)
		slices.SortFunc(rest, cmpRanked)
		if !slices.Equal(rest, want[k:]) {
			t.Errorf("k=%d: rest differs", k)
		}
	}
}
