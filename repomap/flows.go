package repomap

import (
	"math"
	"slices"
	"sync"
)

// flowResult is a personalized PageRank's outcome: the files' ranks and
// the flow along each name in the last step. Its arrays are the scratch's
// (sc), until release gives them back for the next ranking: at 10× the
// Go tree they were ~1 MB allocated per new question.
type flowResult struct {
	pr         []float64 // per file
	mass       []float64 // per referenced slot (graph.slot < graph.referenced)
	focusIdent []bool    // per ident: a focus identifier or mentioned name
	iterations int
	sc         *flowScratch
}

// release gives f's arrays back; f must not be used after.
func (f *flowResult) release() {
	if f.sc != nil {
		flowPool.Put(f.sc)
		*f = flowResult{}
	}
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
// summing its in-edges, each with its share (its mass over its definers);
// then each file sums the shares of the names it defines in slot order
// (fileSlots), the order in which a push per name added them.
type flowIndex struct {
	once sync.Once
	// In-edges of referenced slot k: inFile/inW[inStart[k]:inStart[k+1]].
	inStart    []int32
	inFile     []int32
	inW        []float64 // graph.edgeW
	outW, leak []float64 // per file, with no focus
	outSum     []float64 // per file: its edges' weights summed (leak's numerator)
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
	// The referenced slots file f defines, ascending:
	// fileSlots[fileSlotStart[f]:fileSlotStart[f+1]].
	fileSlotStart, fileSlots []int32
	// gatherParts is how many parts gather splits each class of slots
	// into (gatherChunk).
	gatherParts int
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
	x.outSum = make([]float64, nf)
	x.leak = make([]float64, nf)
	for f := 0; f < nf; f++ {
		s, b := 0.0, 0.0
		for e := g.edgeStart[f]; e < g.edgeStart[f+1]; e++ {
			k := g.edgeSlot[e]
			x.inFile[fill[k]], x.inW[fill[k]] = int32(f), g.edgeW[e]
			fill[k]++
			s += g.edgeW[e]
			b += g.edgeW[e] / g.slotDamp[k]
		}
		x.outW[f], x.outSum[f] = b, s
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
	}
	// The definer pairs turned around, by file; within a file in slot
	// order (a counting sort, stable).
	x.fileSlotStart = make([]int32, len(g.tags)+1)
	pairs := g.slotFile[:g.slotStart[g.referenced]]
	for _, f := range pairs {
		x.fileSlotStart[f+1]++
	}
	for f := range g.tags {
		x.fileSlotStart[f+1] += x.fileSlotStart[f]
	}
	x.fileSlots = make([]int32, len(pairs))
	fill := slices.Clone(x.fileSlotStart[:len(g.tags)])
	for k := 0; k < g.referenced; k++ {
		for _, f := range g.slotFile[g.slotStart[k]:g.slotStart[k+1]] {
			x.fileSlots[fill[f]] = int32(k)
			fill[f]++
		}
	}
	x.gatherParts = min(64, max(1, len(x.inFile)/gatherChunk))
}

// flowScratch holds a ranking's working arrays between rankings, so that
// a new focus does not allocate them again.
type flowScratch struct {
	p, pr, next, scale, share, outW, leak, mass, sum []float64
	redone, matched, ident                           []bool
	slots, files                                     []int32 // outWeights's
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

// flows runs the personalized PageRank for focus (len(g.tags) > 0), and
// sets each file's inflow (fileInflow) when inflow is not nil. The caller
// releases the result.
func (g *graph) flows(focus Focus, focusIdents []int32, inflow []float64) flowResult {
	sc := flowPool.Get().(*flowScratch)
	fn := g.focusNames(sc, focus, focusIdents)
	p := g.personalization(sc, focus, fn)
	w := g.newWalk(sc, p, fn.ids)
	pr, it := w.iterate(sc)
	if inflow != nil {
		w.x.fileInflow(inflow, w.share)
	}
	return flowResult{pr: pr, mass: w.mass, focusIdent: fn.ident, iterations: it, sc: sc}
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
}

// newWalk prepares the walk that restarts at p and follows the edges to
// the focus idents focusIDs focusBoost times more.
func (g *graph) newWalk(sc *flowScratch, p []float64, focusIDs []int32) *walk {
	x := g.flowIndex()
	w := &walk{g: g, x: x, p: p}
	w.outW, w.leak = g.outWeights(sc, x, focusIDs)
	w.mass = sc.floats(&sc.mass, g.referenced)
	w.scale = sc.floats(&sc.scale, len(g.tags))
	for _, id := range focusIDs {
		if k := g.slot[id]; int(k) < g.referenced {
			w.boosted = append(w.boosted, k)
		}
	}
	slices.Sort(w.boosted)
	w.share = sc.floats(&sc.share, g.referenced)
	return w
}

// outWeights returns each file's out-weight and leak with the focus
// factor, in sc's buffers. They are normalized by the weights before the
// common and ubiquitous factors, so what those factors take away is not
// followed: that share of the file's rank restarts at the
// personalization, like a dangling node's (leak). Only the files with an
// edge to a focus name differ from the unfocused ones (flowIndex), and
// only by those edges' extra weight: it is added from the focus names'
// in-edges, not by summing each such file's edges again (a common focus
// name is referred to by tens of thousands of files at 10× the Go tree,
// each with hundreds of edges). The sums are in focus slot order, then
// file order: the same on any number of cores.
func (g *graph) outWeights(sc *flowScratch, x *flowIndex, focusIDs []int32) (outW, leak []float64) {
	nf := len(g.tags)
	outW = sc.floats(&sc.outW, nf)
	copy(outW, x.outW)
	leak = sc.floats(&sc.leak, nf)
	copy(leak, x.leak)
	slots := sc.slots[:0]
	for _, id := range focusIDs {
		if k := g.slot[id]; int(k) < g.referenced { // else nothing refers to it: no edge
			slots = append(slots, k)
		}
	}
	slices.Sort(slots)
	slots = slices.Compact(slots)
	sc.slots = slots
	if len(slots) == 0 {
		return outW, leak
	}
	sum := sc.floats(&sc.sum, nf) // the redone files' weights summed, with the factor
	redone, files := sc.bools(&sc.redone, nf), sc.files[:0]
	for _, k := range slots {
		damp := g.slotDamp[k]
		for i := x.inStart[k]; i < x.inStart[k+1]; i++ {
			f, extra := x.inFile[i], x.inW[i]*(focusBoost-1)
			if !redone[f] {
				redone[f] = true
				files = append(files, f)
				sum[f] = x.outSum[f]
			}
			sum[f] += extra
			outW[f] += extra / damp
		}
	}
	for _, f := range files {
		if outW[f] > 0 {
			leak[f] = 1 - sum[f]/outW[f]
		}
	}
	sc.files = files[:0]
	return outW, leak
}

// iterate runs the power iteration from the personalization until the
// ranks change by less than tolerance (or maxIterations), then sets the
// flow of the final ranks (mass): definitions are scored by it. It returns
// the ranks and the index of the last iteration.
//
// A step is two loops that each run on every core: gather, per name, and
// step, per file. The sums over files (the rank that restarts, the change)
// are summed per part of fileChunk files and then in part order, so the
// result is the same on any number of cores.
func (w *walk) iterate(sc *flowScratch) ([]float64, int) {
	p := w.p
	// Always start from p (not from an earlier solution): the result must
	// not depend on which focus was ranked before.
	pr := append(sc.pr[:0], p...)
	next := sc.floats(&sc.next, len(p))
	parts := fileParts(len(p))
	diffs, dangs := make([]float64, parts), make([]float64, parts)
	inParallel(parts, len(pr), func(_, c int) { dangs[c] = w.spread(pr, c) })
	dangling := sumParts(dangs)
	it := 0
	for ; it < maxIterations; it++ {
		w.gather()
		inParallel(parts, len(pr), func(_, c int) { diffs[c], dangs[c] = w.step(pr, next, dangling, c) })
		pr, next = next, pr
		dangling = sumParts(dangs)
		if sumParts(diffs) < tolerance {
			break
		}
	}
	sc.pr, sc.next = pr, next // which buffer holds the result
	w.gather()                // scale holds the final ranks over their out-weights
	return pr, it
}

// sumParts sums per-part sums in part order.
func sumParts(s []float64) float64 {
	t := 0.0
	for _, v := range s {
		t += v
	}
	return t
}

// fileRange returns the files of part c: [lo, hi).
func (w *walk) fileRange(c int) (lo, hi int) {
	return fileChunkRange(len(w.scale), c)
}

// spread sets the scale of part c's files, their rank over their
// out-weight, and returns the part's rank that restarts at the
// personalization: that of files with no edges and the leak of the others.
func (w *walk) spread(pr []float64, c int) (dangling float64) {
	lo, hi := w.fileRange(c)
	for f := lo; f < hi; f++ {
		dangling += w.spreadFile(f, pr[f])
	}
	return dangling
}

// spreadFile sets file f's scale for rank r and returns its rank that
// restarts.
func (w *walk) spreadFile(f int, r float64) float64 {
	if w.outW[f] == 0 {
		w.scale[f] = 0 // its edges (if any weigh nothing) add nothing
		return r
	}
	w.scale[f] = r / w.outW[f]
	return r * w.leak[f]
}

// step sets the next rank of part c's files: the shares of the names each
// defines, added in slot order (the order in which a push per name adds
// them, so each sum is the same to the bit), with the restart; then their
// scale for the next gather. It returns the part's change of rank and its
// rank that restarts.
func (w *walk) step(pr, next []float64, dangling float64, c int) (diff, restart float64) {
	x, share, p := w.x, w.share, w.p
	lo, hi := w.fileRange(c)
	for f := lo; f < hi; f++ {
		s := 0.0
		for _, k := range x.fileSlots[x.fileSlotStart[f]:x.fileSlotStart[f+1]] {
			s += share[k]
		}
		n := damping*(s+dangling*p[f]) + (1-damping)*p[f]
		diff += math.Abs(n - pr[f])
		next[f] = n
		restart += w.spreadFile(f, n)
	}
	return diff, restart
}

// gather sets each name's mass, the sum over its in-edges of the files'
// scale times the edge weight, and its share, the mass over its definers.
// It pulls each name's mass from its in-edges (flowIndex), in the order a
// push over the files would add them: the same sums, bit for bit, with
// the writes in order and the reads in the small per-file array. (0 + x is
// x: one in-edge needs no sum.) Each sum is written as the loop over many
// in-edges writes it, so that where a compiler fuses a multiply and an
// add, it fuses the same ones. The names are split into parts that run on
// every core; no sum crosses a part.
func (wk *walk) gather() {
	x := wk.x
	inParallel(x.gatherParts, len(wk.scale), func(_, c int) { wk.gatherPart(c) })
	// The shares that are a division (perDefiner 0: gatherPart set them
	// to 0): most of them in a tree of many copies, whose names have ten
	// definers.
	inParallel(x.gatherParts, len(wk.scale), func(_, c int) {
		lo, hi := partRange(len(x.divide), x.gatherParts, c)
		for _, k := range x.divide[lo:hi] {
			wk.share[k] = wk.mass[k] / x.definers[k]
		}
	})
	for _, k := range wk.boosted {
		lo, hi := x.inStart[k], x.inStart[k+1]
		in, w := x.inFile[lo:hi], x.inW[lo:hi:hi]
		mv := 0.0
		for i, f := range in {
			mv += wk.scale[f] * (w[i] * focusBoost)
		}
		wk.mass[k] = mv
		wk.setShare(k)
	}
}

// setShare sets slot k's share from its mass. (x·(1/d) is x/d to the bit
// where perDefiner is set.)
func (wk *walk) setShare(k int32) {
	if pd := wk.x.perDefiner[k]; pd != 0 {
		wk.share[k] = wk.mass[k] * pd
	} else {
		wk.share[k] = wk.mass[k] / wk.x.definers[k]
	}
}

// gatherPart gathers part c of each class of slots (flowIndex), and sets
// each one's share as mass · perDefiner (0 where the share is a division,
// which gather sets after).
func (wk *walk) gatherPart(c int) {
	x, scale, mass, share := wk.x, wk.scale, wk.mass, wk.share
	parts := x.gatherParts
	pd := x.perDefiner[:len(mass)]
	lo, hi := partRange(len(x.oneSlot), parts, c)
	oneFile, oneW := x.oneFile[lo:hi], x.oneW[lo:hi]
	for i, k := range x.oneSlot[lo:hi] {
		mv := scale[oneFile[i]] * oneW[i]
		mass[k] = mv
		share[k] = mv * pd[k]
	}
	lo, hi = partRange(len(x.two), parts, c)
	for _, k := range x.two[lo:hi] {
		lo := x.inStart[k]
		in, w := x.inFile[lo:lo+2], x.inW[lo:lo+2]
		mv := scale[in[0]] * w[0]
		mv += scale[in[1]] * w[1]
		mass[k] = mv
		share[k] = mv * pd[k]
	}
	lo, hi = partRange(len(x.three), parts, c)
	for _, k := range x.three[lo:hi] {
		lo := x.inStart[k]
		in, w := x.inFile[lo:lo+3], x.inW[lo:lo+3]
		mv := scale[in[0]] * w[0]
		mv += scale[in[1]] * w[1]
		mv += scale[in[2]] * w[2]
		mass[k] = mv
		share[k] = mv * pd[k]
	}
	lo, hi = partRange(len(x.many), parts, c)
	for _, k := range x.many[lo:hi] {
		lo, hi := x.inStart[k], x.inStart[k+1]
		in, w := x.inFile[lo:hi], x.inW[lo:hi:hi]
		mv := 0.0
		for i, f := range in {
			mv += scale[f] * w[i]
		}
		mass[k] = mv
		share[k] = mv * pd[k]
	}
}
