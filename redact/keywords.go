package redact

import (
	"strings"
	"unicode/utf8"
)

// keywordIndex is an Aho–Corasick automaton over ASCII-lowercased bytes,
// compiled to a DFA over byte classes. It answers "which rules have at
// least one keyword in this text" in one pass, which is gitleaks' own
// prefilter: a rule's regex only runs when one of its keywords occurs.
type keywordIndex struct {
	class   [256]uint8
	nclass  int
	delta   []int32   // state*nclass + class -> state
	out     [][]int32 // state -> rule indexes (including via failure links)
	nstates int
}

func newKeywordIndex(rules []*rule) *keywordIndex {
	ki := &keywordIndex{}
	// Byte classes: every byte that appears in a keyword gets its own
	// class; all others share class 0.
	for _, r := range rules {
		for _, k := range r.keywords {
			for i := 0; i < len(k); i++ {
				b := lowerASCII(k[i])
				if ki.class[b] == 0 {
					ki.nclass++
					ki.class[b] = uint8(ki.nclass)
				}
			}
		}
	}
	ki.nclass++
	// Trie.
	type node struct {
		next map[uint8]int32
		out  []int32
	}
	nodes := []node{{next: map[uint8]int32{}}}
	for ri, r := range rules {
		for _, k := range r.keywords {
			if k == "" {
				continue
			}
			s := int32(0)
			for i := 0; i < len(k); i++ {
				c := ki.class[lowerASCII(k[i])]
				n, ok := nodes[s].next[c]
				if !ok {
					nodes = append(nodes, node{next: map[uint8]int32{}})
					n = int32(len(nodes) - 1)
					nodes[s].next[c] = n
				}
				s = n
			}
			nodes[s].out = appendUnique(nodes[s].out, int32(ri))
		}
	}
	ki.nstates = len(nodes)
	ki.delta = make([]int32, ki.nstates*ki.nclass)
	ki.out = make([][]int32, ki.nstates)
	fail := make([]int32, ki.nstates)
	// BFS to fill failure links and the full transition table.
	queue := make([]int32, 0, ki.nstates)
	for c := 0; c < ki.nclass; c++ {
		if n, ok := nodes[0].next[uint8(c)]; ok && c != 0 {
			ki.delta[c] = n
			fail[n] = 0
			queue = append(queue, n)
		}
	}
	ki.out[0] = nodes[0].out
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		ki.out[s] = append(append([]int32(nil), nodes[s].out...), ki.out[fail[s]]...)
		for c := 0; c < ki.nclass; c++ {
			n, ok := nodes[s].next[uint8(c)]
			if ok && c != 0 {
				ki.delta[int(s)*ki.nclass+c] = n
				fail[n] = ki.delta[int(fail[s])*ki.nclass+c]
				queue = append(queue, n)
			} else {
				ki.delta[int(s)*ki.nclass+c] = ki.delta[int(fail[s])*ki.nclass+c]
			}
		}
	}
	return ki
}

// Windows around keyword hits: a rule's regex runs only on the lines
// around each occurrence of one of its keywords (the line before, the line
// of the hit and the line after, each side capped), not on the whole text.
// Secrets are line-local; the exception is a PEM block, whose rule gets a
// long forward reach (rule.after).
const (
	windowBefore = 4 << 10
	windowAfter  = 16 << 10
)

// windows returns, for every rule with a keyword in s, the merged byte
// ranges [start, end) of s to scan. Rules without hits get nil.
func (ki *keywordIndex) windows(s string, rules []*rule) [][]window {
	out := make([][]window, len(rules))
	st := int32(0)
	nc := int32(ki.nclass)
	// Newline look-ups are memoized: hit positions only grow, so each
	// memo moves forward monotonically and the scan stays linear.
	var nl1, nl2 nlMemo
	for i := 0; i < len(s); i++ {
		st = ki.delta[st*nc+int32(ki.class[lowerASCII(s[i])])]
		if len(ki.out[st]) == 0 {
			continue
		}
		// End of the line after the hit's line.
		lineEnd := len(s)
		if a := nl1.next(s, i+1); a < len(s) {
			lineEnd = nl2.next(s, a+1)
			if lineEnd < len(s) {
				lineEnd++
			}
		}
		for _, ri := range ki.out[st] {
			ws := out[ri]
			r := rules[ri]
			var end int
			if r.after > 0 {
				end = runeStart(s, min(len(s), i+1+r.after))
			} else {
				end = min(lineEnd, runeStart(s, min(len(s), i+1+windowAfter)))
			}
			if n := len(ws); n > 0 && i < ws[n-1].end {
				ws[n-1].end = max(ws[n-1].end, end)
				continue
			}
			w := window{lineBack(s, i, windowBefore), end}
			if n := len(ws); n > 0 && w.start <= ws[n-1].end {
				ws[n-1].end = max(ws[n-1].end, w.end)
			} else {
				ws = append(ws, w)
			}
			out[ri] = ws
		}
	}
	return out
}

// nlMemo answers "index of the first newline at or after p" for
// nondecreasing p, scanning each byte at most once.
type nlMemo struct {
	from, at int // the answer for queries in [from, at] is at
	ok       bool
}

func (m *nlMemo) next(s string, p int) int {
	if m.ok && p >= m.from && p <= m.at {
		return m.at
	}
	j := strings.IndexByte(s[min(p, len(s)):], '\n')
	at := len(s)
	if j >= 0 {
		at = p + j
	}
	m.from, m.at, m.ok = p, at, true
	return at
}

type window struct{ start, end int }

// lineBack returns the start of the line before the one holding s[i],
// at most limit bytes back (then at a rune start).
func lineBack(s string, i, limit int) int {
	lo := max(0, i-limit)
	p := i
	for k := 0; k < 2; k++ {
		j := strings.LastIndexByte(s[lo:p], '\n')
		if j < 0 {
			return runeStart(s, lo)
		}
		p = lo + j
	}
	return p + 1
}

func runeStart(s string, i int) int {
	for k := 0; k < utf8.UTFMax && i > 0 && i < len(s) && !utf8.RuneStart(s[i]); k++ {
		i--
	}
	return i
}

func lowerASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + ('a' - 'A')
	}
	return b
}

func appendUnique(s []int32, v int32) []int32 {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}
