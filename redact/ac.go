package redact

// acAutomaton is an Aho–Corasick automaton compiled to a DFA over byte
// classes: one pass over a text reports every occurrence of every pattern.
// It serves the rules' keyword prefilter, the allowlists' stopwords and
// literal prefilters, and the exact secret values, so that each of them
// costs one scan of the text however many patterns there are.
type acAutomaton struct {
	fold    bool // match ASCII letters case-insensitively
	class   [256]uint8
	nclass  int32
	delta   []int32   // state*nclass + class -> state, negated (^state) when it has output
	out     [][]int32 // state -> pattern ids ending here (via failure links too)
	lens    []int     // pattern id -> length in bytes
	nstates int
}

// newAC compiles patterns; pattern i gets id i. Empty patterns are ignored.
func newAC(patterns []string, fold bool) *acAutomaton {
	ids := make([]int32, len(patterns))
	for i := range ids {
		ids[i] = int32(i)
	}
	return newACIDs(patterns, ids, fold)
}

// newACIDs compiles patterns with caller-chosen ids (several patterns may
// share an id: "any keyword of rule 7").
func newACIDs(patterns []string, ids []int32, fold bool) *acAutomaton {
	a := &acAutomaton{fold: fold}
	norm := func(b byte) byte {
		if fold {
			return lowerASCII(b)
		}
		return b
	}
	// Byte classes: each byte used by a pattern has its own class; every
	// other byte shares class 0, which keeps the table small.
	for _, p := range patterns {
		for i := 0; i < len(p); i++ {
			b := norm(p[i])
			if a.class[b] == 0 {
				a.nclass++
				a.class[b] = uint8(a.nclass)
				if a.nclass == 255 {
					panic("redact: too many distinct bytes in patterns")
				}
			}
		}
	}
	if fold {
		for b := 'A'; b <= 'Z'; b++ {
			a.class[b] = a.class[b+('a'-'A')]
		}
	}
	a.nclass++
	type node struct {
		next map[uint8]int32
		out  []int32
	}
	nodes := []node{{next: map[uint8]int32{}}}
	maxID := int32(-1)
	for pi, p := range patterns {
		if p == "" {
			continue
		}
		s := int32(0)
		for i := 0; i < len(p); i++ {
			c := a.class[norm(p[i])]
			n, ok := nodes[s].next[c]
			if !ok {
				nodes = append(nodes, node{next: map[uint8]int32{}})
				n = int32(len(nodes) - 1)
				nodes[s].next[c] = n
			}
			s = n
		}
		nodes[s].out = appendUnique(nodes[s].out, ids[pi])
		maxID = max(maxID, ids[pi])
	}
	a.lens = make([]int, maxID+1)
	for pi, p := range patterns {
		if p != "" {
			a.lens[ids[pi]] = max(a.lens[ids[pi]], len(p))
		}
	}
	a.nstates = len(nodes)
	nc := int(a.nclass)
	a.delta = make([]int32, a.nstates*nc)
	a.out = make([][]int32, a.nstates)
	fail := make([]int32, a.nstates)
	queue := make([]int32, 0, a.nstates)
	for c := 1; c < nc; c++ {
		if n, ok := nodes[0].next[uint8(c)]; ok {
			a.delta[c] = n
			queue = append(queue, n)
		}
	}
	a.out[0] = nodes[0].out
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		a.out[s] = append(append([]int32(nil), nodes[s].out...), a.out[fail[s]]...)
		for c := 0; c < nc; c++ {
			n, ok := nodes[s].next[uint8(c)]
			if ok && c != 0 {
				a.delta[int(s)*nc+c] = n
				fail[n] = a.delta[int(fail[s])*nc+c]
				queue = append(queue, n)
			} else {
				a.delta[int(s)*nc+c] = a.delta[int(fail[s])*nc+c]
			}
		}
	}
	// Mark transitions into states with output, so that each tests one
	// table entry per byte.
	for i, t := range a.delta {
		if len(a.out[t]) > 0 {
			a.delta[i] = ^t
		}
	}
	return a
}

// each calls fn(end, id) for every occurrence, end being the index just
// past it, in text order; fn returns false to stop.
func (a *acAutomaton) each(s string, fn func(end int, id int32) bool) {
	if a == nil || a.nstates <= 1 {
		return
	}
	st := int32(0)
	nc := a.nclass
	delta, class, out := a.delta, &a.class, a.out
	for i := 0; i < len(s); i++ {
		st = delta[st*nc+int32(class[s[i]])]
		if st >= 0 {
			continue
		}
		st = ^st
		for _, id := range out[st] {
			if !fn(i+1, id) {
				return
			}
		}
	}
}

// containsAny reports whether any pattern occurs in s.
func (a *acAutomaton) containsAny(s string) bool {
	found := false
	a.each(s, func(int, int32) bool { found = true; return false })
	return found
}
