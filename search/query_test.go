package search

import (
	"regexp"
	"testing"
)

// wildcardMatches is bleve's wildcard semantics on a whole string.
func wildcardMatches(pat, s string) bool {
	return regexp.MustCompile("^" + WildcardRegexp(pat) + "$").MatchString(s)
}

// TestDeriveWildcards: the derived patterns match a path exactly when an
// original pattern matches the prefix and that path together.
func TestDeriveWildcards(t *testing.T) {
	pats := [][]string{
		{"*billing/inv*"}, {"*ing/inv/inv*"}, {"*billing*"}, {"*inv*"}, {"*pkg*"},
		{"billing/*.go", "*/billing/*.go"}, {"*/inv/*.go"}, {"*.go"}, {"b?lling/*"},
		{"billing/"}, {"*g/*/*"}, {"föö/*"}, {"*"},
	}
	paths := []string{"inv/invoice.go", "pkg/tax.go", "billing/x.go", "a/inv/b.go", "x", "invoice.go", "ö"}
	for _, prefix := range []string{"billing/", "föö/", "a/b/"} {
		for _, ps := range pats {
			derived := deriveWildcards(ps, prefix)
			for _, p := range paths {
				want := false
				for _, w := range ps {
					want = want || wildcardMatches(w, prefix+p)
				}
				got := false
				for _, d := range derived {
					got = got || wildcardMatches(d, p)
				}
				if got != want {
					t.Errorf("prefix %q, patterns %q → %q: %q matches %v, want %v", prefix, ps, derived, p, got, want)
				}
			}
		}
	}
}
