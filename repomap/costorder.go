package repomap

import (
	"container/heap"
	"math"
)

// tokenCostExp damps the cost in an overview's value per token: each
// definition is taken by score / tokens^tokenCostExp. At 1 a method on
// the line of methods of a class already shown (~3 tokens) would need a
// quarter of the score of a new file's class line (~12 tokens with the
// file's name); at 0 the cost is ignored. 0.75 was chosen on the dev half
// and the older sets (repomap/README.md, round 7).
const tokenCostExp = 0.75

// ranked returns the first k definitions in the order the renderer takes
// them: the ranking's, or in an overview the first of them by value per
// token (byValuePerToken) followed by the rest in rank order.
func (rd *renderer) ranked(k int) []rankedDef {
	if !rd.compact {
		return rd.r.get(k)
	}
	if k <= len(rd.order) {
		return rd.order[:k:k]
	}
	all := rd.r.get(k)
	out := make([]rankedDef, 0, len(all))
	out = append(out, rd.order...)
	return append(out, all[len(rd.order):]...)
}

// overviewReach is how many times the definitions a budget holds in rank
// order byValuePerToken reorders: a method's entry on a line of methods
// (~3 tokens) has the value per token of a class line with its file's
// name (~12) at under a third of its score, so what it pulls in lies
// in the first few times the budget's definitions (2, 4 and 8 give the
// same core-API figures).
const overviewReach = 4

// overview returns the ranking's first overviewReach times fit
// definitions (fit: how many fit the budget in rank order; at most
// rankedPrefix) by value per token, kept on the ranking for the next
// Render with the same reach (a few budgets are asked for; the order of n
// definitions is not a prefix of the order of more).
func (rd *renderer) overview(fit int) []rankedDef {
	n := min(rankedPrefix, rd.r.n, overviewReach*max(fit, 16))
	r := rd.r
	r.mu.Lock()
	o, ok := r.overviews[n]
	r.mu.Unlock()
	if ok {
		return o
	}
	o = rd.byValuePerToken(r.get(n))
	r.mu.Lock()
	if r.overviews == nil || len(r.overviews) >= 8 {
		r.overviews = map[int][]rankedDef{}
	}
	r.overviews[n] = o
	r.mu.Unlock()
	return o
}

// byValuePerToken orders defs (in rank order) greedily by score per
// token of what each adds to the map given those taken before it: a new
// file's name line, the enclosing class line if not shown yet, and its
// own line or, for a method in an overview, its entry on a line of
// methods. An overview fitted to a budget is a knapsack; taking the best
// score per token first fits more of a package's API in it than taking
// the best score first (a class's methods beside one more class line).
func (rd *renderer) byValuePerToken(defs []rankedDef) []rankedDef {
	costs := make([]lineCost, len(defs))
	byFile := map[int32][]int{}
	byLine := map[lineKey][]int{} // the defs whose cost counts the line
	for i, x := range defs {
		c := rd.lineCostOf(x)
		if c.hasCtx {
			byLine[c.ctx] = append(byLine[c.ctx], i)
		}
		byLine[c.own] = append(byLine[c.own], i)
		byFile[x.file] = append(byFile[x.file], i)
		costs[i] = c
	}
	files := map[int32]bool{}
	lines := map[lineKey]bool{}
	value := func(i int) float64 {
		return defs[i].score / math.Pow(float64(max(costs[i].given(files, lines), 1)), tokenCostExp)
	}
	h := make(valueHeap, len(defs))
	cur := make([]float64, len(defs)) // each def's current value; heap entries with another are stale
	for i := range defs {
		cur[i] = value(i)
		h[i] = valued{cur[i], i}
	}
	heap.Init(&h)
	taken := make([]bool, len(defs))
	out := make([]rankedDef, 0, len(defs))
	revalue := func(is []int) {
		for _, j := range is {
			if v := value(j); !taken[j] && v != cur[j] {
				cur[j] = v
				heap.Push(&h, valued{v, j})
			}
		}
	}
	for h.Len() > 0 {
		e := heap.Pop(&h).(valued)
		if taken[e.i] || e.v != cur[e.i] {
			continue
		}
		taken[e.i] = true
		out = append(out, defs[e.i])
		c := &costs[e.i]
		newFile, newCtx, newOwn := !files[c.file], c.hasCtx && !lines[c.ctx], !lines[c.own]
		c.take(files, lines)
		// What the taken lines make cheaper.
		if newCtx {
			revalue(byLine[c.ctx])
		}
		if newOwn {
			revalue(byLine[c.own])
		}
		if newFile {
			revalue(byFile[c.file])
		}
	}
	return out
}

type valued struct {
	v float64
	i int
}

// valueHeap is a max-heap of values, ties to the better-ranked (lower i).
type valueHeap []valued

func (h valueHeap) Len() int { return len(h) }
func (h valueHeap) Less(a, b int) bool {
	if h[a].v != h[b].v {
		return h[a].v > h[b].v
	}
	return h[a].i < h[b].i
}
func (h valueHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *valueHeap) Push(x any)   { *h = append(*h, x.(valued)) }
func (h *valueHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
