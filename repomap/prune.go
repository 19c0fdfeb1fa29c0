package repomap

import (
	"math"
	"slices"
	"sync"
)

// A focused ranking needs the best rankedPrefix definitions, and in a
// large tree most of the others cannot be among them: at 10× the Go tree a
// new focus scored 1.07 million definitions to keep 4,096. Each file has
// a bound on its definitions' scores that costs a pass over the names it
// defines (the flow into the file), so bestBounded scores the files in
// the order of their bounds, in two rounds, and stops where no file left
// can hold one of the best:
//
//  1. the files with the highest bounds holding firstRound × k definitions;
//  2. then, if the k-th best so far falls below them, every file whose
//     bound reaches the k-th best so far (it only rises as more are scored).
//
// A file left out has a bound below the k-th best, so none of its
// definitions is among the k best or ties with one: the k best and their
// order are those of scoring every definition (checkReference compares
// them with the reference ranking, with rounds forced on small trees).
//
// The bound: a definition's score is (base + flowIn) · defFactor ·
// fileFactor (scorePart). flowIn is the mass of each of its name's slots
// (its name and the qualified forms resolving to its file) over that
// slot's definers and the file's same-named definitions (kept); every one
// of those slots is a slot the file defines, so flowIn is at most the sum
// of the shares of the file's slots (the flow into the file, inflow) times
// the largest ratio of a slot's definers to what the definition divides
// by (flowRatio: 1 but for Java abstract methods, which divide by fewer).
// defFactor is at most defFocusBoost, times apiBoost when the file has
// API; fileFactor is the file's own (setBounds keeps both per file).
// Scores and bounds are compared by the buckets of their bits
// (scoreBucket), with a little slack for rounding: the bound adds in
// another order than the score.

// pruneMinDefs is how many definitions a focused ranking must have to be
// scored in rounds: at the Go tree's size (107,000) scoring all of them
// costs ~2 ms, too little for the rounds' bounds to pay off. (A variable
// for the tests, which round small trees.)
var pruneMinDefs = 1 << 18

// firstRound is how many times k definitions the first round scores:
// at 10× the Go tree, 16 × 4,096 put the first round's k-th best within
// 0.76–0.95 of the final one on six focuses, and the two rounds of eight
// focuses scored 126,000–231,000 of 1.07 million definitions (a variable
// for the tests).
var firstRound = 16

// boundSlack makes up for the rounding of the bound's sum.
const boundSlack = 1e-9

// fileSet is the files whose bound buckets are in [lo, hi); a nil
// *fileSet is every file.
type fileSet struct {
	bucket []int32 // per file; -1: not scored (known, or no definitions)
	lo, hi int32
}

func (s *fileSet) has(fi int) bool {
	if s == nil {
		return true
	}
	b := s.bucket[fi]
	return b >= s.lo && b < s.hi
}

// boundScratch holds a ranking's per-file bounds between rankings.
type boundScratch struct {
	inflow []float64
	bucket []int32
}

var boundPool = sync.Pool{New: func() any { return new(boundScratch) }}

// pruned reports whether a ranking for sf scores in rounds.
func (x *scoreIndex) pruned(sf *scoreFocus, n, k int) bool {
	return !sf.unfocused && n >= pruneMinDefs && n > firstRound*k
}

// bestBounded returns the k best of the definitions of the files sf does
// not know, as bestScored does, scoring only the files whose bound can
// reach them (see above). bs.inflow is each file's flow from f's walk.
func (g *graph) bestBounded(scores []float64, sf *scoreFocus, x *scoreIndex, f flowResult, k int, hist []int32, bs *boundScratch) []rankedDef {
	x.makeBounds(g)
	nf := len(g.tags)
	bs.bucket = slices.Grow(bs.bucket[:0], nf)[:nf]
	files := histPool.Get().(*[1 << scoreBucketBits]int32) // definitions per bound bucket
	clear(files[:])
	for fi := range g.tags {
		lo, hi := x.fileStart[fi], x.fileStart[fi+1]
		if lo == hi || sf.known[fi] {
			bs.bucket[fi] = -1
			continue
		}
		b := scoreBucket(x.fileBound(fi, sf.testFocus, f.pr, bs.inflow))
		bs.bucket[fi] = int32(b)
		files[b] += hi - lo
	}
	b1, _ := kthBucket(files[:], firstRound*k)
	histPool.Put(files)
	all := int32(1 << scoreBucketBits)
	g.scoreAll(scores, sf, x, f.pr, f.mass, f.focusIdent, hist, &fileSet{bs.bucket, int32(b1), all})
	from := int32(b1)
	if bk, _ := kthBucket(hist, k); int32(bk) < from {
		// The files left whose bound reaches the k-th best so far.
		g.scoreAll(scores, sf, x, f.pr, f.mass, f.focusIdent, hist, &fileSet{bs.bucket, int32(bk), from})
		from = int32(bk)
	}
	b, n := kthBucket(hist, k)
	return sortedPrefix(g.appendRanked(make([]rankedDef, 0, n), scores, sf, x, b, &fileSet{bs.bucket, from, all}), k)
}

// makeBounds sets the files' static bound factors once (setBounds).
func (x *scoreIndex) makeBounds(g *graph) {
	x.boundsOnce.Do(func() { x.setBounds(g, g.flowIndex()) })
}

// fileBound is the bound on the scores of file fi's definitions: the
// base and the flow's bound times the factors' (makeBounds first), for a
// focus whose files are tests or not.
func (x *scoreIndex) fileBound(fi int, testFocus bool, pr, inflow []float64) float64 {
	f := x.factorBound
	if testFocus {
		f = x.factorBoundTest
	}
	return (pr[fi]*x.baseShare[fi] + x.flowRatio[fi]*inflow[fi]) * f[fi] * (1 + boundSlack)
}

// fileInflow sets inflow[f] to the flow into file f: the sum of the
// shares of the slots it defines (share, per slot, from a walk's final
// gather).
func (x *flowIndex) fileInflow(inflow, share []float64) {
	nf := len(x.fileSlotStart) - 1
	inParallel(fileParts(nf), nf, func(_, c int) {
		lo, hi := fileChunkRange(nf, c)
		for f := lo; f < hi; f++ {
			s := 0.0
			for _, k := range x.fileSlots[x.fileSlotStart[f]:x.fileSlotStart[f+1]] {
				s += share[k]
			}
			inflow[f] = s
		}
	})
}

// setBounds sets each file's static bound factors (see above), read as
// flat arrays (a file's tags and facts are behind pointers, one cache
// miss each): its share of its file's rank (baseShare, as scorePart
// splits it); the largest ratio of a slot's definers to what one of its
// definitions divides that slot's mass by (flowRatio); and the most
// defFactor and fileFactor can multiply by in a focused ranking, whose
// files are not tests (factorBound) or are (factorBoundTest).
func (x *scoreIndex) setBounds(g *graph, fx *flowIndex) {
	nf := len(x.fileStart) - 1
	x.baseShare = make([]float64, nf)
	x.flowRatio = make([]float64, nf)
	x.factorBound = make([]float64, nf)
	x.factorBoundTest = make([]float64, nf)
	for fi := 0; fi < nf; fi++ {
		if x.fileStart[fi] == x.fileStart[fi+1] {
			continue
		}
		ratio, api := 0.0, false
		for i := x.fileStart[fi]; i < x.fileStart[fi+1]; i++ {
			d := &x.defs[i]
			api = api || d.flags&factAPI != 0
			if d.kept < 1 {
				ratio = math.Inf(1) // (never: a definition keeps itself)
				continue
			}
			if d.slot >= 0 {
				ratio = max(ratio, fx.definers[d.slot]/(float64(d.definers)*float64(d.kept)))
			}
			for _, q := range x.quals[d.qualLo:d.qualHi] {
				ratio = max(ratio, fx.definers[q.slot]/(float64(q.definers)*float64(d.kept)))
			}
		}
		x.baseShare[fi] = baselineShare / float64(len(g.tags[fi].Defs))
		x.flowRatio[fi] = ratio
		factor := defFocusBoost
		if api {
			factor *= apiBoost
		}
		x.factorBoundTest[fi] = factor * (&scoreFocus{testFocus: true}).fileFactor(g.facts[fi])
		x.factorBound[fi] = factor * (&scoreFocus{}).fileFactor(g.facts[fi])
	}
}
