package contextengine

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"testing"
)

// A scope made of identifier bytes is a whole word of a text exactly when
// it is one of the text's identifier runs: identRuns answers as
// containsWord does.
func TestIdentRunsMatchContainsWord(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pick := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 2000 {
		text := pick("ab_1 .(\n\xc3\xa9", r.IntN(40))
		runs := identRuns(text)
		for range 20 {
			w := pick("ab_1", 1+r.IntN(3))
			if got, want := runs[w], containsWord(text, w); got != want {
				t.Fatalf("text %q, word %q: identRuns says %v, containsWord %v", text, w, got, want)
			}
		}
	}
}

// spanOf reads locations as the pattern it replaced did.
func TestSpanOfMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^(.+?):(\d+)-(\d+)`)
	r := rand.New(rand.NewPCG(5, 6))
	locs := []string{"a.go:12-40", "a.go:12-40 Name", "dir/a:b.go:3-4", ":1-2", "a:1-", "a:-2", "a:1-2:3-4", "a\n:1-2", "x:1-2\n",
		"a.go:12-40 (query)", "a.go around 3-4", "é:1-2", "a:99999999999999999999-1", ""}
	for range 20000 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = "a:-19\n é."[r.IntN(10)]
		}
		locs = append(locs, string(b))
	}
	for _, loc := range locs {
		rel, start, end, ok := spanOf(loc)
		m := re.FindStringSubmatch(loc)
		if ok != (m != nil) {
			t.Fatalf("%q: ok %v, pattern matches %v", loc, ok, m != nil)
		}
		if m == nil {
			continue
		}
		ws, _ := strconv.Atoi(m[2])
		we, _ := strconv.Atoi(m[3])
		if rel != m[1] || start != ws || end != we {
			t.Fatalf("%q: %q %d-%d, pattern %q %d-%d", loc, rel, start, end, m[1], ws, we)
		}
	}
}
