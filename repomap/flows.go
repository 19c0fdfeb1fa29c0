package repomap

import (
	"slices"
	"sync"
)

// flowResult is a personalized PageRank's outcome, sparse: the files with
// a rank, ascending, and the referenced slots with flow. A file or
// slot not listed has rank or flow 0.
type flowResult struct {
	files []int32   // files with a rank, ascending
	pr    []float64 // their ranks, summing to 1
	slots []int32   // referenced slots with flow
	mass  []float64 // their flow: the sum over their in-edges of the file's rank over its out-weight times the edge's weight
	// focusIDs are the focus idents (the focus identifiers and the
	// names the mentioned words match), ascending.
	focusIDs []int32
	// errBound bounds the L1 distance between pr and the exact personalized
	// PageRank: twice the rank the push left unpushed over the rank it
	// settled (see push).
	errBound float64
	pushes   int
}

// rankOf returns file fi's rank (files is ascending).
func (f *flowResult) rankOf(fi int32) float64 {
	if i, ok := slices.BinarySearch(f.files, fi); ok {
		return f.pr[i]
	}
	return 0
}

// dense returns the ranks per file and the flow per referenced slot as
// full arrays (for scoring every definition).
func (f *flowResult) dense(g *graph) (pr, mass []float64) {
	pr = make([]float64, len(g.tags))
	for i, fi := range f.files {
		pr[fi] = f.pr[i]
	}
	mass = make([]float64, g.referenced)
	for i, k := range f.slots {
		mass[k] = f.mass[i]
	}
	return pr, mass
}


// pushEpsilon is the local push's precision (see push): a file is pushed
// while its residual is at least pushEpsilon times one more than its
// edges, a name while at least pushEpsilon times its definers. A variable
// for the tests.
var pushEpsilon = 1e-7

// flows computes the personalized PageRank for focus (len(g.tags) > 0).
// A focus that selects no file (nothing it names is in the graph) walks
// from every file, as no focus does: that walk is made once per graph.
func (g *graph) flows(focus Focus, focusIdents []int32) flowResult {
	fn := g.focusNames(focus, focusIdents)
	files, weights := g.personalization(focus, fn)
	if len(files) == 0 {
		return g.globalFlows()
	}
	f := g.push(files, weights, fn.ids)
	f.focusIDs = fn.ids
	return f
}

// globalFlow is the walk with no focus, made once per graph.
type globalFlow struct {
	once sync.Once
	f    flowResult
}

// globalFlows returns the ranking with no focus: every file weighs 1, plus
// 1 for each name its export lists name and each Go example it holds.
func (g *graph) globalFlows() flowResult {
	x := g.global
	x.once.Do(func() {
		files := make([]int32, len(g.tags))
		weights := make([]float64, len(g.tags))
		sum := 0.0
		for i := range files {
			files[i] = int32(i)
			weights[i] = 1 + float64(g.facts[i].exports)
			sum += weights[i]
		}
		for i := range weights {
			weights[i] /= sum
		}
		x.f = g.push(files, weights, nil)
	})
	return x.f
}

// pushScratch holds a push's working arrays between rankings, so that a
// new focus neither allocates nor clears arrays the size of the graph:
// every entry is zero between pushes, and a push clears only what it
// touched. Each file's and slot's state is one record, read together.
type pushScratch struct {
	file         []pushFile // per file
	slot         []pushSlot // per referenced slot
	files, slots []int32    // touched, in touch order
	queue        []int32
}

type pushFile struct {
	est, res float64 // settled rank, residual
	outW     float64 // out-weight with the focus factor (fileOutSet)
	flag     uint8   // fileTouched, fileQueued, fileOutSet
}

type pushSlot struct {
	res  float64 // residual
	flow float64 // all the rank pushed into it
	flag uint8   // slotTouched, slotFocus
}

const (
	fileTouched = 1 << iota
	fileQueued
	fileOutSet
)

const (
	slotTouched = 1 << iota
	slotFocus
)

var pushPool = sync.Pool{New: func() any { return new(pushScratch) }}

// size makes the arrays hold nf files and ns slots (zeroed when grown).
func (sc *pushScratch) size(nf, ns int) {
	if cap(sc.file) < nf {
		sc.file = make([]pushFile, nf)
	}
	sc.file = sc.file[:nf]
	if cap(sc.slot) < ns {
		sc.slot = make([]pushSlot, ns)
	}
	sc.slot = sc.slot[:ns]
}

// reset clears what the push touched.
func (sc *pushScratch) reset() {
	for _, f := range sc.files {
		sc.file[f] = pushFile{}
	}
	for _, k := range sc.slots {
		sc.slot[k] = pushSlot{}
	}
	sc.files, sc.slots, sc.queue = sc.files[:0], sc.slots[:0], sc.queue[:0]
}

// push computes the personalized PageRank restarting at the files with the
// weights (summing to 1), following the edges to the focus slots
// focusBoost times more, by local push (forward push): instead of
// iterating over the whole graph until the ranks settle, it moves rank
// only where some is waiting, so a focus costs what its neighbourhood
// holds, not what the tree holds.
//
// The walk it solves: from a file, stop there with probability
// 1-damping, else follow one of its edges in proportion to its weight,
// into the name and on to one of the name's definers; the part of the
// out-weight the common and ubiquitous factors removed (the leak) and a
// file with no edges restart at the personalization. A file's rank is the
// share of the walk's time it holds, which is the share of the walks from
// the personalization that stop at it among those that stop anywhere
// before they restart: the restarting walks only repeat the same
// distribution. So the push follows the walks from the personalization,
// drops those that restart, and normalizes what settled.
//
// Each file and name holds a residual: rank that arrived and has not
// moved on. Pushing a file settles 1-damping of its residual on it and
// sends the rest along its edges into the names' residuals; pushing a name
// splits its residual evenly among its definers. A file is pushed while
// its residual is at least pushEpsilon·(1+edges), a name while at least
// pushEpsilon·definers, so each push moves at least pushEpsilon per unit
// of work and the work is bounded by the rank there is to move, not by the
// graph. What is left unpushed (residual) would have settled somewhere:
// the settled ranks are within it of the exact walk's (the L1 bound
// errBound, after normalizing).
//
// A name's flow (the sum over its in-edges of the file's rank over its
// out-weight times the edge's weight) is what the pushes sent into it,
// times (1-damping)/damping: each push of a file settles 1-damping of its
// residual and sends damping of it along the edges, in proportion.
func (g *graph) push(files []int32, weights []float64, focusIDs []int32) flowResult {
	sc := pushPool.Get().(*pushScratch)
	defer pushPool.Put(sc)
	sc.size(len(g.tags), g.referenced)
	defer sc.reset()
	for _, id := range focusIDs {
		if k := g.slot[id]; int(k) < g.referenced {
			sc.touchSlot(k)
			sc.slot[k].flag |= slotFocus
		}
	}
	eps := pushEpsilon
	for i, f := range files {
		sc.add(g, f, weights[i], eps)
	}
	pushes := 0
	for head := 0; head < len(sc.queue); head++ {
		if head >= 1<<12 && 2*head >= len(sc.queue) {
			// Drop the pushed part of the queue.
			n := copy(sc.queue, sc.queue[head:])
			sc.queue, head = sc.queue[:n], 0
		}
		u := sc.queue[head]
		fu := &sc.file[u]
		fu.flag &^= fileQueued
		r := fu.res
		fu.res = 0
		fu.est += (1 - damping) * r
		pushes++
		b := sc.outWeight(g, u)
		if b == 0 {
			continue // no edges: the walk restarts
		}
		c := damping * r / b
		for e := g.edgeStart[u]; e < g.edgeStart[u+1]; e++ {
			k := g.edgeSlot[e]
			sk := &sc.slot[k]
			w := g.edgeW[e]
			if sk.flag&slotFocus != 0 {
				w *= focusBoost
			}
			if sk.flag&slotTouched == 0 {
				sk.flag |= slotTouched
				sc.slots = append(sc.slots, k)
			}
			sk.res += c * w
			sk.flow += c * w
			lo, hi := g.slotStart[k], g.slotStart[k+1]
			if nr := sk.res; nr >= eps*float64(hi-lo) {
				sk.res = 0
				share := nr / float64(hi-lo)
				for _, f := range g.slotFile[lo:hi] {
					sc.add(g, f, share, eps)
				}
			}
		}
	}
	return sc.result(pushes)
}

// add adds v to file f's residual and queues f when that reaches its
// threshold.
func (sc *pushScratch) add(g *graph, f int32, v, eps float64) {
	sf := &sc.file[f]
	if sf.flag&fileTouched == 0 {
		sf.flag |= fileTouched
		sc.files = append(sc.files, f)
	}
	sf.res += v
	if sf.flag&fileQueued == 0 && sf.res >= eps*float64(1+g.edgeStart[f+1]-g.edgeStart[f]) {
		sf.flag |= fileQueued
		sc.queue = append(sc.queue, f)
	}
}

func (sc *pushScratch) touchSlot(k int32) {
	if sc.slot[k].flag&slotTouched == 0 {
		sc.slot[k].flag |= slotTouched
		sc.slots = append(sc.slots, k)
	}
}

// outWeight returns file u's out-weight with the focus factor: its edges'
// weights before the common and ubiquitous factors, so that what those
// factors take away is not followed (the leak restarts the walk).
func (sc *pushScratch) outWeight(g *graph, u int32) float64 {
	fu := &sc.file[u]
	if fu.flag&fileOutSet != 0 {
		return fu.outW
	}
	b := 0.0
	for e := g.edgeStart[u]; e < g.edgeStart[u+1]; e++ {
		wb := g.edgeB[e]
		if sc.slot[g.edgeSlot[e]].flag&slotFocus != 0 {
			wb *= focusBoost
		}
		b += wb
	}
	fu.outW = b
	fu.flag |= fileOutSet
	return b
}

// result normalizes the settled ranks and the names' flows.
func (sc *pushScratch) result(pushes int) flowResult {
	var out flowResult
	out.pushes = pushes
	settled, left := 0.0, 0.0
	for _, f := range sc.files {
		left += sc.file[f].res
		if sc.file[f].est > 0 {
			out.files = append(out.files, f)
			settled += sc.file[f].est
		}
	}
	for _, k := range sc.slots {
		left += sc.slot[k].res
		if sc.slot[k].flow > 0 {
			out.slots = append(out.slots, k)
		}
	}
	if settled == 0 {
		return out
	}
	out.errBound = 2 * left / settled
	slices.Sort(out.files)
	out.pr = make([]float64, len(out.files))
	for i, f := range out.files {
		out.pr[i] = sc.file[f].est / settled
	}
	out.mass = make([]float64, len(out.slots))
	toMass := (1 - damping) / damping / settled
	for i, k := range out.slots {
		out.mass[i] = sc.slot[k].flow * toMass
	}
	return out
}
