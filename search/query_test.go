package search

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/workspace"
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

// TestDrivingTerms: the rarest of a question's terms drive its search while
// together they match at most driveShare of the chunks and at least the
// given number; a short question, or one whose terms are all rare, or
// whose rare terms would not fill the pool, is searched as a whole.
func TestDrivingTerms(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 60; i++ {
		extra := ""
		if i < 2 {
			extra += " zulu"
		}
		if i >= 10 && i < 13 {
			extra += " yankee"
		}
		writeFile(t, root, fmt.Sprintf("p%02d/f.go", i), fmt.Sprintf("package p%02d\n\n// alpha beta gamma%s\nvar x = %d\n", i, extra, i))
	}
	ix := reconciledIndex(t, root)
	defer func(s float64) { driveShare = s }(driveShare)
	driveShare = 0.2 // 12 of the 60 chunks
	rare := terms("zulu yankee")
	slices.Sort(rare)
	// Their postings hold 8 chunks: zulu 2, yankee 3 under the word and 3
	// under its stem.
	got := ix.drivingTerms(context.Background(), []string{"alpha", "zulu", "beta", "yankee", "gamma"}, 8)
	slices.Sort(got)
	if !slices.Equal(got, rare) {
		t.Errorf("driving terms %v, want the rare %v", got, rare)
	}
	if d := ix.drivingTerms(context.Background(), []string{"alpha", "zulu", "beta", "yankee", "gamma"}, 9); d != nil {
		t.Errorf("driving terms %v, want none: the rare terms' postings hold 8 chunks, fewer than the 9 asked for", d)
	}
	if d := ix.drivingTerms(context.Background(), []string{"alpha", "zulu"}, 1); d != nil {
		t.Errorf("driving terms %v of a two-word query, want none", d)
	}
	driveShare = 2
	if d := ix.drivingTerms(context.Background(), []string{"zulu", "yankee", "alpha", "beta"}, 1); d != nil {
		t.Errorf("driveShare 2: driving terms %v, want none (every term fits)", d)
	}
}

// TestDrivenSearchKeepsTheTop: a question whose rarest words drive its
// search returns the hits, in order and with the scores, of the same
// question searched whole, when its best chunks have a driving term.
func TestDrivenSearchKeepsTheTop(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 120; i++ {
		// Rare words repeated a different number of times in each file:
		// no two chunks score alike, so no tie straddles the pool's cut.
		extra := ""
		switch {
		case i%10 == 0:
			extra = strings.Repeat(" zulu", 1+i/10)
		case i%10 == 5:
			extra = strings.Repeat(" quark", 13+i/10)
		}
		writeFile(t, root, fmt.Sprintf("p%03d/f.go", i), fmt.Sprintf("package p%03d\n\n// alpha beta gamma delta%s\nvar x = %d\n", i, extra, i))
	}
	ix := reconciledIndex(t, root)
	defer func(s float64, d int) { driveShare, rerankDepth = s, d }(driveShare, rerankDepth)
	rerankDepth = 4 // a pool of 4 (5 collected): the 24 rare chunks fill it
	q := "alpha zulu beta quark gamma delta"
	driveShare = 0
	whole, err := ix.Search(context.Background(), q, 10)
	if err != nil {
		t.Fatal(err)
	}
	driveShare = 0.2 // 24 of the 120 chunks: zulu's 12 and quark's 12
	p, _ := ParseQuery(q)
	if d := ix.drivingTerms(context.Background(), p.Words, 4*uint64(rerankDepth+rerankDepth/4)); len(d) != 2 {
		t.Fatalf("driving terms %v, want zulu and quark", d)
	}
	driven, err := ix.Search(context.Background(), q, 10)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Total != 120 || driven.Total != 24 {
		t.Errorf("totals %d whole, %d driven: want 120 and 24", whole.Total, driven.Total)
	}
	if len(whole.Hits) == 0 || !slices.EqualFunc(whole.Hits, driven.Hits, func(a, b Hit) bool { return a.Path == b.Path && a.Score == b.Score }) {
		t.Errorf("driven hits differ from the whole question's:\n whole  %v\n driven %v", whole.Hits, driven.Hits)
	}
}

// reconciledIndex indexes the tree at root in a new state directory.
func reconciledIndex(t *testing.T, root string) *Index {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, ws, t.TempDir(), nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ix
}

// A query with compound identifiers requires their wholes, which are body
// terms: leaving out the body clause they imply keeps every hit and its
// score. (To rounding: bleve sums a disjunction's matches in the order its
// heap holds them, which the way a conjunction moves it decides.)
func TestImpliedBodyClauseKeepsScores(t *testing.T) {
	ix := rankingIndex(t, goTreeCopy(t), 0)
	defer func(k bool) { keepImpliedClause = k }(keepImpliedClause)
	scores := func(r *Result) map[string]float64 {
		m := map[string]float64{}
		for _, h := range r.Hits {
			m[fmt.Sprintf("%s:%d", h.Path, h.StartLine)] = h.Score
		}
		return m
	}
	for _, q := range []string{
		"ReadMIMEHeader", "ReadLine textproto", "how does ReadMIMEHeader canonicalize keys",
		"NewReader FieldsPerRecord", "ReadRune UnreadRune buffer", "PushBack MoveToFront list",
		"ErrFieldCount ParseError", "readContinuedLineSlice trim", "MIMEHeader CanonicalMIMEHeaderKey Get",
	} {
		keepImpliedClause = true
		want, err := ix.Search(context.Background(), q, 20)
		if err != nil {
			t.Fatal(err)
		}
		keepImpliedClause = false
		got, err := ix.Search(context.Background(), q, 20)
		if err != nil {
			t.Fatal(err)
		}
		ws, gs := scores(want), scores(got)
		same := len(ws) > 0 && len(ws) == len(gs) && want.Total == got.Total
		for k, w := range ws {
			if g, ok := gs[k]; !ok || math.Abs(g-w) > 1e-12*w {
				same = false
			}
		}
		if !same {
			t.Errorf("%q: without the implied clause %d of %d: %v, want %d of %d: %v", q, len(gs), got.Total, gs, len(ws), want.Total, ws)
		}
	}
}
