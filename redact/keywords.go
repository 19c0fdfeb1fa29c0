package redact

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// keywordIndex answers "which rules have a keyword in this text, and
// where" in one pass, which is gitleaks' own prefilter: a rule's regex only
// runs near an occurrence of one of its keywords.
type keywordIndex struct{ ac *acAutomaton }

func newKeywordIndex(rules []*rule) *keywordIndex {
	var pats []string
	var ids []int32
	for ri, r := range rules {
		for _, k := range r.keywords {
			// Spelled with a Kelvin sign or a long s too: a (?i) rule
			// matches them where its keyword is so spelled.
			for _, v := range foldVariants(k) {
				pats = append(pats, v)
				ids = append(ids, int32(ri))
			}
		}
	}
	return &keywordIndex{ac: newACIDs(pats, ids, true)}
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

// windows sets out[i], for every rule i with a keyword in s, to the merged
// byte ranges [start, end) of s to scan; out has a nil entry per rule. A
// rule whose matches have a bounded length (rule.maxLen) only needs the
// bytes within that length of the keyword: a storm of keywords on one
// long line then costs a few hundred bytes per hit, not the whole line.
func (ki *keywordIndex) windows(s string, rules []*rule, out [][]window) {
	// Newline look-ups are memoized: hit positions only grow, so each
	// memo moves forward monotonically and the scan stays linear.
	var nl1, nl2 nlMemo
	var back lineTracker
	ki.ac.each(s, func(hitEnd int, ri int32) bool {
		i := hitEnd - 1
		r := rules[ri]
		var start, end int
		switch {
		case r.after > 0:
			start, end = back.lineBack(s, i, windowBefore), runeStart(s, min(len(s), hitEnd+r.after))
		case r.before > 0:
			start, end = lineBack(s, max(0, i-r.before), windowBefore), lineEndAfter(s, i, &nl1, &nl2)
		default:
			start = back.lineBack(s, i, windowBefore)
			end = min(lineEndAfter(s, i, &nl1, &nl2), runeStart(s, min(len(s), hitEnd+windowAfter)))
			if r.maxLen > 0 {
				start = max(start, wordStart(s, hitEnd-r.maxLen))
				end = min(end, runeStart(s, min(len(s), hitEnd+r.maxLen)))
			}
		}
		ws := out[ri]
		if n := len(ws); n > 0 && start <= ws[n-1].end {
			ws[n-1].end = max(ws[n-1].end, end)
		} else {
			ws = append(ws, window{start, end})
		}
		out[ri] = ws
		return true
	})
}

// windowsPool holds find's per-rule tables: a context build redacts
// hundreds of texts, and each needed one entry per rule (a few hundred).
var windowsPool = sync.Pool{New: func() any { return new([][]window) }}

// lineEndAfter returns the end (past the newline) of the line after the
// one holding s[i].
func lineEndAfter(s string, i int, nl1, nl2 *nlMemo) int {
	a := nl1.next(s, i+1)
	if a >= len(s) {
		return len(s)
	}
	e := nl2.next(s, a+1)
	if e < len(s) {
		e++
	}
	return e
}

// wordStart moves i back to the start of the word it falls in (at most 64
// bytes), so that a window never starts where \b would hold falsely.
func wordStart(s string, i int) int {
	if i <= 0 {
		return 0
	}
	for k := 0; k < 64 && i > 0 && isWordByte(s[i-1]) && isWordByte(s[i]); k++ {
		i--
	}
	return runeStart(s, i)
}

func isWordByte(b byte) bool {
	return b == '_' || ('0' <= b && b <= '9') || ('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z')
}

// lineTracker answers lineBack for nondecreasing positions, remembering
// the last two newlines seen, so that a long line full of keyword hits is
// not searched backwards once per hit.
type lineTracker struct {
	pos      int // newlines before pos have been seen
	nl1, nl2 int // the last and the one before (-1: none); valid when init
	init     bool
}

func (t *lineTracker) lineBack(s string, i, limit int) int {
	if !t.init {
		t.nl1, t.nl2, t.init = -1, -1, true
	}
	for t.pos < i {
		j := strings.IndexByte(s[t.pos:i], '\n')
		if j < 0 {
			t.pos = i
			break
		}
		t.nl2, t.nl1 = t.nl1, t.pos+j
		t.pos += j + 1
	}
	lo := max(0, i-limit)
	if t.nl2 >= lo {
		return t.nl2 + 1
	}
	return runeStart(s, lo)
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
