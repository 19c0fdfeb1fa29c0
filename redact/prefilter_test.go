package redact

import (
	"math/rand/v2"
	"regexp/syntax"
	"strings"
	"testing"
)

// TestMatcherAgreesWithRegexps: splitting allowlist alternations into
// branches behind a literal prefilter answers exactly as the regexps as
// written, on every line of real code and on the candidate secrets the
// rules produce.
func TestMatcherAgreesWithRegexps(t *testing.T) {
	rules, global, _, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	var lists []allowlist
	lists = append(lists, global...)
	for _, ru := range rules {
		lists = append(lists, ru.allow...)
	}
	// A sample of net/http's lines: every regexp runs on each, so the
	// whole package would take long under the race detector.
	var texts []string
	step := 7
	if raceEnabled {
		step = 60
	}
	i := 0
	for _, src := range goSource(t, "net/http") {
		for _, line := range strings.Split(src, "\n") {
			if i++; i%step == 0 {
				texts = append(texts, line)
			}
		}
	}
	for _, tc := range positiveCases(t) {
		texts = append(texts, tc.text, tc.secret)
	}
	texts = append(texts, "primary_key=abcdef123456", "keyVaultToStoreSecrets", "X-MS-Exchange-Organization-Auth",
		"FOO=\nBAR=\n", "io.jsonwebtoken:jjwt-api", "$API_KEY", "${SECRET}", "{{ .token }}", "true", "MONKEY", "monkey")
	checked := 0
	for _, a := range lists {
		if a.re == nil {
			continue
		}
		for _, s := range texts {
			want := false
			for _, re := range a.re.whole {
				if re.MatchString(s) {
					want = true
					break
				}
			}
			if got := a.re.match(s); got != want {
				t.Fatalf("matcher %v, regexps %v on %q (%v)", got, want, s, a.re.whole)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

func TestMaxMatchLen(t *testing.T) {
	for expr, want := range map[string]int{
		`abc`:                  3,
		`a{2,5}`:               5,
		`[a-z]{0,50}`:          50,
		`(?:ab|cde)x`:          4,
		`a*`:                   0,
		`\bAKIA[A-Z0-9]{16}\b`: 20,
		`é`:                    2,
		`(?i)k`:                3, // the Kelvin sign folds to k
	} {
		if got := maxMatchLen(expr); got != want {
			t.Errorf("maxMatchLen(%q) = %d, want %d", expr, got, want)
		}
	}
}

// TestMatchLineAgrees: a line allowlist that takes its literals from one
// pass over the whole text answers as its regexps do on the line itself,
// on long lines holding what the allowlists look for.
func TestMatchLineAgrees(t *testing.T) {
	rules, global, _, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	var lists []*matcher
	for _, ru := range rules {
		for _, a := range append(append([]allowlist(nil), global...), ru.allow...) {
			if a.target == "line" && a.re != nil {
				lists = append(lists, a.re)
			}
		}
	}
	if len(lists) == 0 {
		t.Fatal("no line allowlist")
	}
	var b strings.Builder
	for b.Len() < 64<<10 {
		switch rng.IntN(20) {
		case 0:
			b.WriteString("RUN --mount=type=secret,id=x ")
		case 1:
			b.WriteString("import { a, b } from 'x' ")
		case 2:
			b.WriteString("import {a} from \"y ")
		case 3:
			b.WriteString("\n")
		case 4:
			b.WriteString("--mount=type=\u017fecret, to\u212aen_url ")
		default:
			b.WriteString(randFrom(alnum+" =_-{},'\"", 1+rng.IntN(300)))
		}
	}
	s := b.String()
	hits := map[*matcher]*litHits{}
	agree, allowed, long := 0, 0, 0
	for i := 0; i < 3000; i++ {
		start := rng.IntN(len(s))
		end := min(len(s), start+rng.IntN(40))
		ls, le := lineBounds(s, start, end)
		l := &textLine{s: s, start: ls, end: le, hits: hits}
		if le-ls > shortLine {
			long++
		}
		for _, m := range lists {
			want := false
			for _, re := range m.whole {
				want = want || re.MatchString(s[ls:le])
			}
			if got := m.matchLine(l); got != want {
				t.Fatalf("matchLine %v, regexps %v on %q", got, want, s[ls:le])
			}
			agree++
			if want {
				allowed++
			}
		}
	}
	if allowed == 0 || allowed == agree || long < 1000 {
		t.Fatalf("weak sample: %d of %d lines allowed, %d of 3000 long", allowed, agree, long)
	}
}

// TestMatcherAgreesOnSamples: the same on texts drawn from the allowlist
// regexps themselves (most match), mutated (many nearly match) and
// embedded in noise, which real code rarely provides.
func TestMatcherAgreesOnSamples(t *testing.T) {
	rules, global, _, err := compiled()
	if err != nil {
		t.Fatal(err)
	}
	var lists []*matcher
	for _, a := range global {
		lists = append(lists, a.re)
	}
	for _, ru := range rules {
		for _, a := range ru.allow {
			if a.re != nil {
				lists = append(lists, a.re)
			}
		}
	}
	gen := rand.New(rand.NewPCG(5, 8))
	n := 40
	if raceEnabled {
		n = 8
	}
	checked, allowed := 0, 0
	for _, m := range lists {
		for _, re := range m.whole {
			parsed, err := syntax.Parse(re.String(), syntax.Perl)
			if err != nil {
				t.Fatal(err)
			}
			parsed = parsed.Simplify()
			for i := 0; i < n; i++ {
				s := sample(gen, parsed)
				switch gen.IntN(3) {
				case 0:
					s = mutate(gen, s)
				case 1:
					s = noise(gen, gen.IntN(4)) + s + noise(gen, gen.IntN(4))
				}
				want := false
				for _, w := range m.whole {
					want = want || w.MatchString(s)
				}
				if got := m.match(s); got != want {
					t.Fatalf("matcher %v, regexps %v on %q (%v)", got, want, s, m.whole)
				}
				checked++
				if want {
					allowed++
				}
			}
		}
	}
	if allowed < checked/10 || allowed == checked {
		t.Fatalf("weak sample: %d of %d allowed", allowed, checked)
	}
	t.Logf("%d texts, %d allowed", checked, allowed)
}
