package redact

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxMatchLen returns an upper bound, in bytes, on the length of any match
// of the regular expression expr, or 0 when matches are unbounded (a star
// or plus) or expr does not parse. The window and piece logic in find
// relies on it being an upper bound, never an estimate.
func maxMatchLen(expr string) int {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0
	}
	n := maxLenOf(re.Simplify())
	if n < 0 {
		return 0
	}
	return n
}

// maxLenOf returns the bound for re, or -1 when unbounded.
func maxLenOf(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpNoMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			l := max(utf8.RuneLen(r), 1)
			if re.Flags&syntax.FoldCase != 0 {
				// A case fold may be longer: k matches the Kelvin sign.
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					l = max(l, utf8.RuneLen(f))
				}
			}
			n += l
		}
		return n
	case syntax.OpCharClass:
		hi := rune(0)
		for i := 1; i < len(re.Rune); i += 2 {
			hi = max(hi, re.Rune[i])
		}
		return utf8.RuneLen(min(hi, utf8.MaxRune))
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return utf8.UTFMax
	case syntax.OpCapture:
		return maxLenOf(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpQuest:
		return maxLenOf(re.Sub[0])
	case syntax.OpRepeat:
		if re.Max < 0 {
			return -1
		}
		n := maxLenOf(re.Sub[0])
		if n < 0 {
			return -1
		}
		return n * re.Max
	case syntax.OpConcat:
		total := 0
		for _, sub := range re.Sub {
			n := maxLenOf(sub)
			if n < 0 {
				return -1
			}
			total += n
		}
		return total
	case syntax.OpAlternate:
		best := 0
		for _, sub := range re.Sub {
			n := maxLenOf(sub)
			if n < 0 {
				return -1
			}
			best = max(best, n)
		}
		return best
	}
	return -1
}

// splitLead recognizes a regexp that begins with a lazy, bounded repeat of
// a character class, as gitleaks' generic rules do (`[\w.-]{0,50}?` before
// their keywords). Such a prefix only decides where a match starts: the
// leftmost start is the furthest back, within the bound, that the class
// reaches from where the rest matches. Go's regexp pays for it at every
// position of the text, so the rule scans with the rest (scan) and puts
// the start back afterwards (extendLead). ok is false for other shapes.
func splitLead(expr string) (scan string, class []rune, n int, ok bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil || re.Op != syntax.OpConcat || len(re.Sub) < 2 {
		return "", nil, 0, false
	}
	lead := re.Sub[0]
	if lead.Op != syntax.OpRepeat || lead.Min != 0 || lead.Max <= 0 ||
		lead.Flags&syntax.NonGreedy == 0 || lead.Sub[0].Op != syntax.OpCharClass {
		return "", nil, 0, false
	}
	rest := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: re.Sub[1:]}
	return rest.String(), lead.Sub[0].Rune, lead.Max, true
}

// extendLead moves a match start back over at most ru.leadMax runes of
// ru.leadClass.
func (ru *rule) extendLead(s string, start int) int {
	for k := 0; k < ru.leadMax && start > 0; k++ {
		c, size := utf8.DecodeLastRuneInString(s[:start])
		if !inClass(ru.leadClass, c) {
			break
		}
		start -= size
	}
	return start
}

func inClass(ranges []rune, c rune) bool {
	for i := 0; i+1 < len(ranges); i += 2 {
		if ranges[i] <= c && c <= ranges[i+1] {
			return true
		}
	}
	return false
}

// prepareScan sets what find needs beyond a rule's regexp: the scanning
// regexp and the bound on match length.
func prepareScan(ru *rule) {
	ru.scan = ru.re
	expr := ru.re.String()
	if ru.after == 0 && ru.before == 0 {
		ru.maxLen = maxMatchLen(expr)
	}
	if scan, class, n, ok := splitLead(expr); ok {
		if re, err := regexp.Compile(scan); err == nil && re.NumSubexp() == ru.re.NumSubexp() {
			ru.scan, ru.leadClass, ru.leadMax = re, class, n
		}
	}
	// A rule whose matches start with one of a few literals is tried,
	// anchored, only where one occurs, instead of at every position.
	if re, err := syntax.Parse(ru.scan.String(), syntax.Perl); err == nil {
		if lits, wordStart, ok := startLiterals(re); ok {
			anchored := `^(?:` + ru.scan.String() + `)`
			if a, err := regexp.Compile(anchored); err == nil && a.NumSubexp() == ru.scan.NumSubexp() {
				ru.anchored, ru.starts, ru.wordStart = a, newAC(lits, true), wordStart
				ru.possible = newPossibleDFA(anchored)
			}
		}
	}
	// Pieces as large as Go's backtracking engine takes for this program
	// (it works on inputs up to 256 Kibit / program length), less the
	// overlap; the overlap covers a whole match when matches are bounded.
	ru.overlap = maxMatchLen(ru.scan.String())
	if ru.overlap == 0 {
		ru.overlap = unboundedOverlap
	}
	ru.piece = 512
	if n := progLen(ru.scan.String()); n > 0 {
		if fit := backtrackBits/n - ru.overlap; fit >= 128 {
			ru.piece = fit
		}
	}
}

// backtrackBits is Go's regexp limit for its backtracking engine
// (maxBacktrackVector in regexp/backtrack.go).
const backtrackBits = 256 * 1024

// unboundedOverlap is how far past a piece a rule with unbounded matches
// reads; a match that reaches it is matched again from its start.
const unboundedOverlap = 256

func progLen(expr string) int {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return 0
	}
	p, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 0
	}
	return len(p.Inst)
}

// startLiterals returns the literals one of which every match of re
// starts with (prefixLiterals), also for an expression that begins with
// \b followed by such literals, all starting with a word character: then
// wordStart is set, and \b holds at a literal's place exactly when the
// byte before it is not a word character (Go's \b is ASCII-only).
func startLiterals(re *syntax.Regexp) (lits []string, wordStart, ok bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op == syntax.OpConcat && len(re.Sub) > 1 && re.Sub[0].Op == syntax.OpWordBoundary {
		rest := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags, Sub: re.Sub[1:]}
		lits, ok := prefixLiterals(rest)
		if !ok {
			return nil, false, false
		}
		for _, l := range lits {
			if !isWordByte(l[0]) {
				return nil, false, false
			}
		}
		return lits, true, true
	}
	lits, ok = prefixLiterals(re)
	return lits, false, ok
}

// prefixLiterals returns literals, lower-cased, one of which every match
// of re starts with (with their foldVariants where re folds case); ok is
// false when that is not known (an assertion or a class first, an optional
// first element, a non-ASCII literal).
func prefixLiterals(re *syntax.Regexp) (set []string, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				return nil, false
			}
		}
		if s == "" {
			return nil, false
		}
		if re.Flags&syntax.FoldCase != 0 {
			return foldVariants(strings.ToLower(s)), true
		}
		return []string{strings.ToLower(s)}, true
	case syntax.OpCapture, syntax.OpPlus:
		return prefixLiterals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min < 1 {
			return nil, false
		}
		return prefixLiterals(re.Sub[0])
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return nil, false
		}
		return prefixLiterals(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			s, ok := prefixLiterals(sub)
			if !ok {
				return nil, false
			}
			set = append(set, s...)
		}
		return set, true
	}
	return nil, false
}

// foldVariants returns lit (lower-case ASCII) and its spellings with the
// two runes that case-fold to ASCII letters: U+212A (Kelvin sign) for k
// and U+017F (long s) for s. Go's (?i) matches them, and the literal
// passes (Aho–Corasick, folding ASCII only) must find them too. Literals
// here have at most a few k and s.
func foldVariants(lit string) []string {
	out := []string{""}
	for i := 0; i < len(lit); i++ {
		alt := ""
		switch lit[i] {
		case 'k':
			alt = "\u212a"
		case 's':
			alt = "\u017f"
		}
		n := len(out)
		for j := 0; j < n; j++ {
			if alt != "" {
				out = append(out, out[j]+alt)
			}
			out[j] += lit[i : i+1]
		}
	}
	return out
}
