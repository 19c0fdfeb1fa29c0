package redact

import (
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
