package redact

import (
	"math"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode/utf8"
)

// A matcher answers "does any of these regular expressions match t" for
// an allowlist. Go's regexp runs a large alternation (gitleaks' generic
// allowlist has about 40 branches) with its slowest engine on every
// candidate secret; here each top-level branch is its own small regexp,
// and a branch runs only when, for each of its required literal sets, one
// literal of the set occurs in t (all found in one Aho–Corasick pass).
type matcher struct {
	branches []*regexp.Regexp
	always   []int        // branches with no required literal
	need     []int        // branch -> number of literal sets it requires
	setOf    []int32      // literal-set id -> branch
	setMin   []int        // literal-set id -> length of its shortest literal
	lits     *acAutomaton // literal -> literal-set id
	// folded is the pseudo set id under which lits reports the two runes
	// that (?i) folds to ASCII letters (U+212A Kelvin sign: k, U+017F long
	// s: s). An ASCII literal pass cannot see "toKen" in them, so a
	// text holding one is matched by every branch in turn.
	folded int32
	whole  []*regexp.Regexp // the regexps as written: the tests' reference
	// none, when set, rules out in one pass the texts no regexp matches
	// anywhere (most candidate secrets), before the literal pass.
	none *possibleDFA
}

func newMatcher(exprs []string) (*matcher, error) {
	m := &matcher{}
	var pats []string
	var ids []int32
	for _, expr := range exprs {
		whole, err := regexp.Compile(expr)
		if err != nil {
			return nil, err
		}
		m.whole = append(m.whole, whole)
		re, err := syntax.Parse(expr, syntax.Perl)
		if err != nil {
			return nil, err
		}
		for _, b := range topBranches(re) {
			br, err := regexp.Compile(b.String())
			if err != nil {
				// Should not happen (String re-serializes a parsed
				// expression); fall back to the regexp as written.
				br = whole
			}
			bi := len(m.branches)
			m.branches = append(m.branches, br)
			sets := requiredSets(b)
			m.need = append(m.need, len(sets))
			if len(sets) == 0 {
				m.always = append(m.always, bi)
				continue
			}
			for _, set := range sets {
				id := int32(len(m.setOf))
				m.setOf = append(m.setOf, int32(bi))
				m.setMin = append(m.setMin, shortest(set))
				for _, l := range set {
					pats = append(pats, l)
					ids = append(ids, id)
				}
			}
		}
	}
	if len(pats) > 0 {
		m.folded = int32(len(m.setOf))
		pats = append(pats, "\u212a", "\u017f")
		ids = append(ids, m.folded, m.folded)
		m.lits = newACIDs(pats, ids, true)
	}
	// Each expression in its own group, so that its flags stay in it.
	any := make([]string, len(exprs))
	for i, e := range exprs {
		any[i] = "(?:" + e + ")"
	}
	m.none = newPossibleDFA(`(?s:.)*?(?:` + strings.Join(any, "|") + `)`)
	return m, nil
}

// match reports whether any regexp matches t.
func (m *matcher) match(t string) bool {
	if m == nil || m.none != nil && !m.none.possible(t) {
		return false
	}
	for _, bi := range m.always {
		if m.branches[bi].MatchString(t) {
			return true
		}
	}
	if m.lits == nil {
		return false
	}
	// Which literal sets were hit, and how many sets of each branch: on
	// the stack for the allowlists gitleaks has (at most a few hundred sets).
	var seenArr [512]bool
	var gotArr [256]int
	seen, got := seenArr[:0], gotArr[:0]
	if len(m.setOf) <= len(seenArr) && len(m.branches) <= len(gotArr) {
		seen, got = seenArr[:len(m.setOf)], gotArr[:len(m.branches)]
	} else {
		seen, got = make([]bool, len(m.setOf)), make([]int, len(m.branches))
	}
	found, folded := false, false
	m.lits.each(t, func(_ int, set int32) bool {
		if set == m.folded {
			folded = true
			return false
		}
		if seen[set] {
			return true
		}
		seen[set] = true
		bi := m.setOf[set]
		got[bi]++
		if got[bi] == m.need[bi] && m.branches[bi].MatchString(t) {
			found = true
			return false
		}
		return true
	})
	if folded {
		return m.anyBranch(t)
	}
	return found
}

// anyBranch runs every branch that has literals on t.
func (m *matcher) anyBranch(t string) bool {
	for bi, br := range m.branches {
		if m.need[bi] > 0 && br.MatchString(t) {
			return true
		}
	}
	return false
}

// A textLine is the line around a match (lineAround) as offsets into the
// whole text. A match on a line of hostile text (a 1 MiB line of keywords)
// has up to 8 KiB of line around it, and there are thousands: a line
// allowlist finds its literals once in the whole text (litHits, per Redact
// call) instead of once per match in its line.
type textLine struct {
	s          string
	start, end int
	hits       map[*matcher]*litHits
}

// litHits holds, for each literal set of a matcher, the end offsets of its
// literals' occurrences in a text, in order.
type litHits struct{ ends [][]int32 }

// shortLine is the line length up to which the literals are looked for in
// the line itself.
const shortLine = 512

// matchLine is match(l.s[l.start:l.end]).
func (m *matcher) matchLine(l *textLine) bool {
	t := l.s[l.start:l.end]
	if m == nil || len(t) <= shortLine || l.hits == nil || len(l.s) > math.MaxInt32 {
		return m.match(t)
	}
	for _, bi := range m.always {
		if m.branches[bi].MatchString(t) {
			return true
		}
	}
	if m.lits == nil {
		return false
	}
	h := l.hits[m]
	if h == nil {
		h = &litHits{ends: make([][]int32, len(m.setOf)+1)}
		m.lits.each(l.s, func(end int, set int32) bool {
			h.ends[set] = append(h.ends[set], int32(end))
			return true
		})
		l.hits[m] = h
	}
	var gotArr [256]int
	var got []int
	if len(m.branches) <= len(gotArr) {
		got = gotArr[:len(m.branches)]
	} else {
		got = make([]int, len(m.branches))
	}
	if ends := h.ends[m.folded]; len(ends) > 0 {
		i := sort.Search(len(ends), func(i int) bool { return int(ends[i]) >= l.start+2 })
		if i < len(ends) && int(ends[i]) <= l.end {
			return m.match(t) // a rune that folds to a literal's letter
		}
	}
	for set, ends := range h.ends[:len(m.setOf)] {
		// A literal of the set may lie in the line if one ends in it no
		// sooner than the set's shortest literal allows; the branch's
		// regexp decides.
		lo := l.start + m.setMin[set]
		i := sort.Search(len(ends), func(i int) bool { return int(ends[i]) >= lo })
		if i == len(ends) || int(ends[i]) > l.end {
			continue
		}
		bi := m.setOf[set]
		if got[bi]++; got[bi] == m.need[bi] && m.branches[bi].MatchString(t) {
			return true
		}
	}
	return false
}

// topBranches splits an unanchored alternation at the top (looking through
// captures) into its branches; anything else is one branch.
func topBranches(re *syntax.Regexp) []*syntax.Regexp {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpAlternate {
		return []*syntax.Regexp{re}
	}
	var out []*syntax.Regexp
	for _, sub := range re.Sub {
		out = append(out, topBranches(sub)...)
	}
	return out
}

// requiredSets returns literal sets, lower-cased, such that every match of
// re contains (ASCII case-insensitively) a literal of each set; none when
// nothing is known. Literals with non-ASCII bytes are not used: their case
// folds are not ASCII.
func requiredSets(re *syntax.Regexp) [][]string {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if s == "" {
			return nil
		}
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return nil
			}
		}
		return [][]string{{strings.ToLower(s)}}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredSets(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil
		}
		return requiredSets(re.Sub[0])
	case syntax.OpConcat:
		var all [][]string
		for _, sub := range re.Sub {
			all = append(all, requiredSets(sub)...)
		}
		return all
	case syntax.OpAlternate:
		// One set: for each branch, its most selective set (the one whose
		// shortest literal is longest).
		var union []string
		for _, sub := range re.Sub {
			best := mostSelective(requiredSets(sub))
			if best == nil {
				return nil
			}
			union = append(union, best...)
		}
		return [][]string{union}
	}
	return nil
}

func mostSelective(sets [][]string) []string {
	var best []string
	bestLen := 0
	for _, set := range sets {
		if l := shortest(set); l > bestLen {
			best, bestLen = set, l
		}
	}
	return best
}

func shortest(set []string) int {
	n := -1
	for _, s := range set {
		if n < 0 || len(s) < n {
			n = len(s)
		}
	}
	return n
}
