package repomap

import (
	"math"
	"slices"
	"sync"
)

// flowResult is a personalized PageRank's outcome: the files' ranks and
// the flow along each name in the last step.
type flowResult struct {
	pr         []float64 // per file
	mass       []float64 // per referenced slot (graph.slot < graph.referenced)
	focusIdent []bool    // per ident: a focus identifier or mentioned name
	iterations int
}

// flowIndex is what every personalized PageRank of a graph shares, made
// once per graph on its first ranking: the edges turned around (each
// referenced slot's in-edges, in file order, which is the order a push
// over the files adds them in, so each name's mass is the same sum to the
// last bit), and each file's out-weight and leak with no focus factor (a
// focus changes only the files with an edge to a focus name).
//
// The iteration runs in flat loops, with few branches that depend on the
// data (a loop per name would mispredict its exit at every name): the
// names with one in-edge (most of them) in one loop, the others each
// summing its in-edges, then each name's share (its mass over its
// definers) and the shares added to the definers in slot order (pairSlot),
// the order in which a push per name added them.
type flowIndex struct {
	once sync.Once
	// In-edges of referenced slot k: inFile/inW[inStart[k]:inStart[k+1]].
	inStart    []int32
	inFile     []int32
	inW        []float64 // graph.edgeW
	outW, leak []float64 // per file, with no focus
	// The slots with exactly one in-edge, and that edge; with two and
	// three (their edges at inStart); the others.
	oneSlot, oneFile []int32
	oneW             []float64
	two, three, many []int32
	// Per referenced slot: 1/definers where that is exact (a power of two:
	// then x·(1/d) is x/d to the bit), else 0 and the slot is in divide.
	perDefiner []float64
	divide     []int32
	definers   []float64 // per referenced slot: how many files define it
	pairSlot   []int32   // per entry of graph.slotFile of a referenced slot: that slot
}

// flowIndex returns the graph's flowIndex, made on the first call.
func (g *graph) flowIndex() *flowIndex {
	x := g.flowIx
	x.once.Do(func() {
		x.turnEdges(g)
		x.classifySlots(g)
	})
	return x
}

// turnEdges lists each referenced slot's in-edges in file order, and sets
// each file's out-weight and leak with no focus factor.
func (x *flowIndex) turnEdges(g *graph) {
	nf := len(g.tags)
	x.inStart = make([]int32, g.referenced+1)
	for _, k := range g.edgeSlot {
		x.inStart[k+1]++
	}
	for k := 0; k < g.referenced; k++ {
		x.inStart[k+1] += x.inStart[k]
	}
	x.inFile = make([]int32, len(g.edgeSlot))
	x.inW = make([]float64, len(g.edgeSlot))
	fill := slices.Clone(x.inStart[:g.referenced])
	x.outW = make([]float64, nf)
	x.leak = make([]float64, nf)
	for f := 0; f < nf; f++ {
		s, b := 0.0, 0.0
		for e := g.edgeStart[f]; e < g.edgeStart[f+1]; e++ {
			k := g.edgeSlot[e]
			x.inFile[fill[k]], x.inW[fill[k]] = int32(f), g.edgeW[e]
			fill[k]++
			s += g.edgeW[e]
			b += g.edgeB[e]
		}
		x.outW[f] = b
		if b > 0 {
			x.leak[f] = 1 - s/b
		}
	}
}

// classifySlots sorts the referenced slots by their number of in-edges
// and by whether their share is a product or a division, and maps each
// definer pair to its slot.
func (x *flowIndex) classifySlots(g *graph) {
	x.definers = make([]float64, g.referenced)
	x.perDefiner = make([]float64, g.referenced)
	x.pairSlot = make([]int32, g.slotStart[g.referenced])
	for k := 0; k < g.referenced; k++ {
		lo, hi := x.inStart[k], x.inStart[k+1]
		switch hi - lo {
		case 1:
			x.oneSlot = append(x.oneSlot, int32(k))
			x.oneFile = append(x.oneFile, x.inFile[lo])
			x.oneW = append(x.oneW, x.inW[lo])
		case 2:
			x.two = append(x.two, int32(k))
		case 3:
			x.three = append(x.three, int32(k))
		default:
			x.many = append(x.many, int32(k))
		}
		n := g.slotStart[k+1] - g.slotStart[k]
		x.definers[k] = float64(n)
		if n&(n-1) == 0 {
			x.perDefiner[k] = 1 / float64(n)
		} else {
			x.divide = append(x.divide, int32(k))
		}
		for j := g.slotStart[k]; j < g.slotStart[k+1]; j++ {
			x.pairSlot[j] = int32(k)
		}
	}
}

// flowScratch holds a ranking's working arrays between rankings, so that
// a new focus does not allocate them again.
type flowScratch struct {
	p, next, scale, share, outW, leak []float64
	focusSlot, redone, matched        []bool
}

var flowPool = sync.Pool{New: func() any { return new(flowScratch) }}

// floats returns *b resized to n and zeroed.
func (*flowScratch) floats(b *[]float64, n int) []float64 {
	if cap(*b) < n {
		*b = make([]float64, n)
	}
	*b = (*b)[:n]
	clear(*b)
	return *b
}

// bools returns *b resized to n and all false.
func (*flowScratch) bools(b *[]bool, n int) []bool {
	if cap(*b) < n {
		*b = make([]bool, n)
	}
	*b = (*b)[:n]
	clear(*b)
	return *b
}

// flows runs the personalized PageRank for focus (len(g.tags) > 0).
func (g *graph) flows(focus Focus, focusIdents []int32) flowResult {
	sc := flowPool.Get().(*flowScratch)
	defer flowPool.Put(sc)
	fn := g.focusNames(focus, focusIdents)
	p := g.personalization(sc, focus, fn)
	w := g.newWalk(sc, p, fn.ids)
	pr, it := w.iterate(sc)
	// The flow of the final ranks: definitions are scored by it.
	w.flow(pr, nil)
	return flowResult{pr: pr, mass: w.mass, focusIdent: fn.ident, iterations: it}
}

// walk is the state of one personalized PageRank.
type walk struct {
	g          *graph
	x          *flowIndex
	p          []float64 // the personalization
	outW, leak []float64 // per file, with the focus factor
	scale      []float64 // per file: its rank over its out-weight, this step
	mass       []float64 // per referenced slot: no flow reaches the others
	share      []float64 // per referenced slot: its mass over its definers
	boosted    []int32   // the focus slots that receive flow, ascending
	pairs      []int32   // the definers of the referenced slots, in slot order
}

// newWalk prepares the walk that restarts at p and follows the edges to
// the focus idents focusIDs focusBoost times more.
func (g *graph) newWalk(sc *flowScratch, p []float64, focusIDs []int32) *walk {
	x := g.flowIndex()
	w := &walk{g: g, x: x, p: p}
	w.outW, w.leak = g.outWeights(sc, x, focusIDs)
	w.mass = make([]float64, g.referenced)
	w.scale = sc.floats(&sc.scale, len(g.tags))
	for _, id := range focusIDs {
		if k := g.slot[id]; int(k) < g.referenced {
			w.boosted = append(w.boosted, k)
		}
	}
	slices.Sort(w.boosted)
	w.share = sc.floats(&sc.share, g.referenced)
	w.pairs = g.slotFile[:g.slotStart[g.referenced]]
	return w
}

// outWeights returns each file's out-weight and leak with the focus
// factor, in sc's buffers. They are normalized by the weights before the
// common and ubiquitous factors, so what those factors take away is not
// followed: that share of the file's rank restarts at the
// personalization, like a dangling node's (leak). Only the files with an
// edge to a focus name differ from the unfocused ones (flowIndex).
func (g *graph) outWeights(sc *flowScratch, x *flowIndex, focusIDs []int32) (outW, leak []float64) {
	nf := len(g.tags)
	focusSlot := sc.bools(&sc.focusSlot, len(g.defined))
	for _, id := range focusIDs {
		focusSlot[g.slot[id]] = true // focus idents have definers
	}
	outW = sc.floats(&sc.outW, nf)
	copy(outW, x.outW)
	leak = sc.floats(&sc.leak, nf)
	copy(leak, x.leak)
	redone := sc.bools(&sc.redone, nf)
	for _, id := range focusIDs {
		k := g.slot[id]
		if int(k) >= g.referenced {
			continue // nothing refers to it: no edge
		}
		for _, f := range x.inFile[x.inStart[k]:x.inStart[k+1]] {
			if !redone[f] {
				redone[f] = true
				outW[f], leak[f] = g.focusedOutWeight(f, focusSlot)
			}
		}
	}
	return outW, leak
}

// focusedOutWeight returns file f's out-weight and leak with the edges to
// the focus slots weighing focusBoost times more.
func (g *graph) focusedOutWeight(f int32, focusSlot []bool) (b, leak float64) {
	s := 0.0
	for e := g.edgeStart[f]; e < g.edgeStart[f+1]; e++ {
		w, wb := g.edgeW[e], g.edgeB[e]
		if focusSlot[g.edgeSlot[e]] {
			w *= focusBoost
			wb *= focusBoost
		}
		s += w
		b += wb
	}
	if b > 0 {
		leak = 1 - s/b
	}
	return b, leak
}

// iterate runs the power iteration from the personalization until the
// ranks change by less than tolerance (or maxIterations). It returns the
// ranks and the index of the last iteration.
func (w *walk) iterate(sc *flowScratch) ([]float64, int) {
	p := w.p
	// Always start from p (not from an earlier solution): the result must
	// not depend on which focus was ranked before.
	pr := append([]float64(nil), p...)
	next := sc.floats(&sc.next, len(p))
	it := 0
	for ; it < maxIterations; it++ {
		clear(next)
		dangling := w.flow(pr, next)
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
	sc.next = next // the other buffer: pr is the caller's
	return pr, it
}

// flow sends each file's rank along its edges (mass, per name) and, when
// next is not nil, each name's mass on to its definers (next). It returns
// the rank that restarts at the personalization: that of files with no
// edges and the leak of the others.
func (w *walk) flow(pr, next []float64) (dangling float64) {
	dangling = w.spread(pr)
	w.gather()
	if next != nil {
		w.distribute(next)
	}
	return dangling
}

// spread sets each file's scale, its rank over its out-weight, and
// returns the dangling rank.
func (w *walk) spread(pr []float64) (dangling float64) {
	for f := range w.scale {
		if w.outW[f] == 0 {
			dangling += pr[f]
			w.scale[f] = 0 // its edges (if any weigh nothing) add nothing
			continue
		}
		dangling += pr[f] * w.leak[f]
		w.scale[f] = pr[f] / w.outW[f]
	}
	return dangling
}

// gather sets each name's mass: the sum over its in-edges of the files'
// scale times the edge weight. It pulls each name's mass from its in-edges
// (flowIndex), in the order a push over the files would add them: the
// same sums, bit for bit, with the writes in order and the reads in the
// small per-file array. (0 + x is x: one in-edge needs no sum.) Each sum
// is written as the loop over many in-edges writes it, so that where a
// compiler fuses a multiply and an add, it fuses the same ones.
func (wk *walk) gather() {
	x, scale, mass := wk.x, wk.scale, wk.mass
	oneFile, oneW := x.oneFile, x.oneW[:len(x.oneFile)]
	for i, k := range x.oneSlot[:len(oneFile)] {
		mass[k] = scale[oneFile[i]] * oneW[i]
	}
	for _, k := range x.two {
		lo := x.inStart[k]
		in, w := x.inFile[lo:lo+2], x.inW[lo:lo+2]
		mv := scale[in[0]] * w[0]
		mv += scale[in[1]] * w[1]
		mass[k] = mv
	}
	for _, k := range x.three {
		lo := x.inStart[k]
		in, w := x.inFile[lo:lo+3], x.inW[lo:lo+3]
		mv := scale[in[0]] * w[0]
		mv += scale[in[1]] * w[1]
		mv += scale[in[2]] * w[2]
		mass[k] = mv
	}
	for _, k := range x.many {
		lo, hi := x.inStart[k], x.inStart[k+1]
		in, w := x.inFile[lo:hi], x.inW[lo:hi:hi]
		mv := 0.0
		for i, f := range in {
			mv += scale[f] * w[i]
		}
		mass[k] = mv
	}
	for _, k := range wk.boosted {
		lo, hi := x.inStart[k], x.inStart[k+1]
		in, w := x.inFile[lo:hi], x.inW[lo:hi:hi]
		mv := 0.0
		for i, f := range in {
			mv += scale[f] * (w[i] * focusBoost)
		}
		mass[k] = mv
	}
}

// distribute adds each name's mass, split among its definers, to next, in
// slot order (a zero share adds nothing: next holds no -0).
func (w *walk) distribute(next []float64) {
	x, share, mass := w.x, w.share, w.mass
	perDefiner := x.perDefiner[:len(mass)]
	for k, mv := range mass {
		share[k] = mv * perDefiner[k]
	}
	for _, k := range x.divide {
		share[k] = mass[k] / x.definers[k]
	}
	pairSlot := x.pairSlot[:len(w.pairs)]
	for j, fi := range w.pairs {
		next[fi] += share[pairSlot[j]]
	}
}
