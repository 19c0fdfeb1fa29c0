package redact

import (
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestDFAPossible: the DFA in front of each anchored rule never rejects a
// place where the rule's regexp matches, and the regexp run on the input
// cut where the DFA bounds the matches finds what it finds on the whole. Texts are drawn from each rule's
// own expression (so that many match), mutated (so that many nearly
// match), cut at random lengths (as scanAnchored cuts them), and the
// hostile inputs of the benchmarks are tried at every start literal.
func TestDFAPossible(t *testing.T) {
	r := newTest(t)
	gen := rand.New(rand.NewPCG(3, 5))
	n, size := 60, 16<<10
	if testing.Short() || raceEnabled {
		n, size = 20, 2<<10
	}
	checked, matched, rejected := 0, 0, 0
	check := func(ru *rule, s string) {
		checked++
		want := ru.anchored.MatchString(s)
		got := ru.possible.possible(s)
		if want {
			matched++
		}
		if !got {
			rejected++
		}
		if want && !got {
			t.Errorf("%s: DFA rejects %q, which the regexp matches", ru.id, s)
		}
		// The regexp run on the input cut where the DFA bounds the
		// matches finds the same match.
		if a, b := ru.anchoredAt(s, 0, len(s)), ru.anchored.FindStringSubmatchIndex(s); !slices.Equal(a, b) {
			t.Errorf("%s: on %q the cut input gives %v, the whole %v", ru.id, s, a, b)
		}
	}
	for _, ru := range r.rules {
		if ru.anchored == nil {
			continue
		}
		if ru.possible == nil {
			t.Errorf("%s: anchored rule without a DFA", ru.id)
			continue
		}
		re, err := syntax.Parse(ru.scan.String(), syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		re = re.Simplify()
		for i := 0; i < n; i++ {
			s := sample(gen, re)
			if gen.IntN(2) == 0 {
				s = mutate(gen, s)
			}
			s += noise(gen, gen.IntN(8))
			check(ru, s)
			if len(s) > 0 {
				check(ru, s[:gen.IntN(len(s))])
			}
		}
	}
	// The samples must exercise both answers.
	if matched < checked/10 || rejected < checked/10 {
		t.Errorf("weak sample: %d texts, %d matched, %d rejected", checked, matched, rejected)
	}
	t.Logf("samples: %d texts, %d matched by the regexp, %d rejected by the DFA", checked, matched, rejected)
	checked, matched, rejected = 0, 0, 0
	for name, in := range hostileInputs(size) {
		for _, ru := range r.rules {
			if ru.anchored == nil {
				continue
			}
			ru.starts.each(in, func(end int, id int32) bool {
				p := end - ru.starts.lens[id]
				check(ru, in[p:min(len(in), p+ru.overlap)])
				return !t.Failed()
			})
		}
		if t.Failed() {
			t.Fatalf("input %s", name)
		}
	}
	t.Logf("hostile places: %d, %d matched by the regexp, %d rejected by the DFA", checked, matched, rejected)
}

// FuzzDFAPossible checks the DFA of every anchored rule on arbitrary text,
// at every position.
func FuzzDFAPossible(f *testing.F) {
	for i, tc := range positiveCases(f) {
		if raceEnabled && (i%6 != 0 || len(tc.text) > 200) {
			continue // every rule at every position: slow under -race
		}
		f.Add(tc.text)
	}
	f.Add("api_key = 'ſſſſſſſſſſſſ' password=\xff\xfe KEY-----\n")
	r := newTest(f)
	f.Fuzz(func(t *testing.T, s string) {
		for _, ru := range r.rules {
			if ru.possible == nil {
				continue
			}
			for p := 0; p < len(s); p++ {
				in := s[p:min(len(s), p+ru.overlap)]
				if ru.anchored.MatchString(in) && !ru.possible.possible(in) {
					t.Fatalf("%s: DFA rejects %q, which the regexp matches", ru.id, in)
				}
				if a, b := ru.anchoredAt(in, 0, len(in)), ru.anchored.FindStringSubmatchIndex(in); !slices.Equal(a, b) {
					t.Fatalf("%s: on %q the cut input gives %v, the whole %v", ru.id, in, a, b)
				}
			}
		}
	})
}

// sample returns a random string matched by re (assertions ignored, so
// some are not matched, which the test wants too).
func sample(gen *rand.Rand, re *syntax.Regexp) string {
	var b strings.Builder
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		switch re.Op {
		case syntax.OpLiteral:
			for _, c := range re.Rune {
				if re.Flags&syntax.FoldCase != 0 && gen.IntN(2) == 0 {
					c = otherCase(c)
				}
				b.WriteRune(c)
			}
		case syntax.OpCharClass:
			if len(re.Rune) == 0 {
				return
			}
			k := gen.IntN(len(re.Rune) / 2)
			lo, hi := re.Rune[2*k], re.Rune[2*k+1]
			if hi-lo > 200 {
				hi = lo + 200
			}
			b.WriteRune(lo + rune(gen.IntN(int(hi-lo)+1)))
		case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
			b.WriteByte(byte(' ' + gen.IntN(95)))
		case syntax.OpCapture:
			walk(re.Sub[0])
		case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
			lo, hi := 0, 1
			switch re.Op {
			case syntax.OpStar:
				hi = 12
			case syntax.OpPlus:
				lo, hi = 1, 12
			case syntax.OpRepeat:
				lo, hi = re.Min, re.Max
				if hi < 0 || hi > lo+12 {
					hi = lo + 12
				}
			}
			for k := lo + gen.IntN(hi-lo+1); k > 0; k-- {
				walk(re.Sub[0])
			}
		case syntax.OpConcat:
			for _, sub := range re.Sub {
				walk(sub)
			}
		case syntax.OpAlternate:
			walk(re.Sub[gen.IntN(len(re.Sub))])
		}
	}
	walk(re)
	return b.String()
}

func otherCase(c rune) rune {
	switch {
	case 'a' <= c && c <= 'z':
		return c - 'a' + 'A'
	case 'A' <= c && c <= 'Z':
		if c == 'K' {
			return '\u212a' // Kelvin sign: (?i)k matches it
		}
		return c - 'A' + 'a'
	case c == 's':
		return '\u017f' // long s
	}
	return c
}

// noiseRunes are the characters the rules' shapes turn on: blanks,
// quotes, operators, escapes, value characters, and runes whose case
// folds are ASCII letters, besides invalid UTF-8.
var noiseRunes = []string{" ", "\t", "\n", "\r", "'", "\"", "`", "=", ":", ">", ",", "|", "?", ";",
	"\\", "n", "-", ".", "_", "/", "+", "a", "Z", "k", "9", "ſ", "\u212a", "é", "\xff", "<", "@", "-----", "KEY"}

func noise(gen *rand.Rand, n int) string {
	var b strings.Builder
	for ; n > 0; n-- {
		b.WriteString(noiseRunes[gen.IntN(len(noiseRunes))])
	}
	return b.String()
}

// mutate inserts, deletes or replaces a few characters of s.
func mutate(gen *rand.Rand, s string) string {
	for k := 1 + gen.IntN(3); k > 0; k-- {
		i := 0
		if len(s) > 0 {
			i = gen.IntN(len(s) + 1)
		}
		j := i
		if gen.IntN(2) == 0 && i < len(s) {
			_, size := utf8.DecodeRuneInString(s[i:])
			j = i + size
		}
		s = s[:i] + noise(gen, gen.IntN(3)) + s[j:]
	}
	return s
}

// TestDFAFull: a DFA that may keep no more states answers "maybe" (and
// no bound), so the regexp decides, and the scan still finds what it
// finds with room to spare.
func TestDFAFull(t *testing.T) {
	expr := `^(?:(?i)(?:key|token)[ \t\w.-]{0,20}[=:][ \t]*([\w.=-]{10,150}))`
	roomy, full := newPossibleDFA(expr), newPossibleDFA(expr)
	full.limit = len(full.states) // the start state only
	texts := []string{"key = abcdefghijkl", "token:0123456789", "keyboard", "key", "", "token=short"}
	for _, s := range texts {
		if got := full.possible(s); s != "" && !got {
			t.Errorf("full DFA rejects %q", s)
		}
		if b := full.bound(s); s != "" && b != len(s) {
			t.Errorf("full DFA bounds %q at %d", s, b)
		}
	}
	// With room, it tells them apart.
	if roomy.possible("keyboard") || !roomy.possible("key = abcdefghijkl") {
		t.Error("DFA with room does not tell a match from a miss")
	}
	if len(full.states) != 1 {
		t.Errorf("full DFA grew to %d states", len(full.states))
	}
}
