package tokencount

import (
	"fmt"
	"strings"
	"testing"
)

func TestCountKnownTexts(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"func main() {}", 4},
	} {
		if got := Count(tc.text); got != tc.want {
			t.Errorf("Count(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// The memo returns what counting gives, for texts above and below its
// threshold, before and after a generation turns over.
func TestMemoAgreesWithCounting(t *testing.T) {
	texts := []string{
		"x := 1",
		strings.Repeat("func (s *Server) ServeHTTP(w ResponseWriter, r *Request) {}\\n", 3),
		strings.Repeat("長い日本語のテキスト。", 20),
		"\xff\xfe not utf-8 " + strings.Repeat("y", 80),
	}
	for round := 0; round < 3; round++ {
		for _, s := range texts {
			if got, want := Count(s), count(O200k, s); got != want {
				t.Fatalf("round %d: Count(%.20q…) = %d, counting gives %d", round, s, got, want)
			}
		}
		// Push a generation's worth of other texts through the memo.
		for i := 0; i < memoGen+10; i++ {
			memo.put(memoKey{O200k, uint64(i), -1}, i)
		}
	}
	if len(memo.cur) > memoGen || len(memo.prev) > memoGen {
		t.Fatalf("memo grew past its bound: %d + %d entries", len(memo.cur), len(memo.prev))
	}
}

// Encodings are remembered apart: the same text counts differently.
func TestMemoKeepsEncodingsApart(t *testing.T) {
	s := strings.Repeat("the quick brown fox jumps over the lazy dog; ", 4)
	o, c := CountWith(O200k, s), CountWith(Cl100k, s)
	if o != count(O200k, s) || c != count(Cl100k, s) {
		t.Fatalf("memo mixed encodings: o200k %d (want %d), cl100k %d (want %d)", o, count(O200k, s), c, count(Cl100k, s))
	}
}

func BenchmarkCountRepeated(b *testing.B) {
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = fmt.Sprintf("func handler%d(w http.ResponseWriter, r *http.Request) { w.WriteHeader(%d) }\n", i, 200+i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Count(texts[i%len(texts)])
	}
}
