package redact

import "regexp/syntax"

// maxLen returns the longest match, in bytes, re can produce, or -1 when
// it is unbounded.
func maxLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpNoMatch, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			if r < 0x80 {
				n++
			} else {
				n += 4
			}
		}
		return n
	case syntax.OpCharClass:
		if len(re.Rune) > 0 && re.Rune[len(re.Rune)-1] >= 0x80 {
			return 4
		}
		return 1
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return 4
	case syntax.OpCapture, syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		if maxLen(re.Sub[0]) == 0 {
			return 0
		}
		return -1
	case syntax.OpRepeat:
		c := maxLen(re.Sub[0])
		if c == 0 {
			return 0
		}
		if re.Max < 0 || c < 0 {
			return -1
		}
		return re.Max * c
	case syntax.OpConcat:
		n := 0
		for _, s := range re.Sub {
			c := maxLen(s)
			if c < 0 {
				return -1
			}
			n += c
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, s := range re.Sub {
			c := maxLen(s)
			if c < 0 {
				return -1
			}
			n = max(n, c)
		}
		return n
	}
	return -1
}
