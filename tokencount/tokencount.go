// Package tokencount counts tokens the way the context engine budgets them.
// Every package that fits text to a budget (the repo map, the context
// engine, tool output policies) counts through here, so a budget means the
// same thing everywhere.
//
// The count uses an offline BPE tokenizer with embedded vocabularies
// (github.com/tiktoken-go/tokenizer): o200k_base for OpenAI-style models and,
// as the closest public approximation, for Anthropic and local models too.
// Budgets keep a safety margin for the difference (see contextengine).
package tokencount

import (
	"hash/maphash"
	"sync"

	"github.com/tiktoken-go/tokenizer"
)

// Encoding names a BPE vocabulary.
type Encoding string

const (
	O200k  Encoding = "o200k_base"
	Cl100k Encoding = "cl100k_base"
)

var (
	mu     sync.Mutex
	codecs = map[Encoding]tokenizer.Codec{}
)

func codec(e Encoding) tokenizer.Codec {
	mu.Lock()
	defer mu.Unlock()
	if c, ok := codecs[e]; ok {
		return c
	}
	c, err := tokenizer.Get(tokenizer.Encoding(e))
	if err != nil {
		// The vocabularies are embedded, so this only fails for an unknown name.
		c, _ = tokenizer.Get(tokenizer.O200kBase)
	}
	codecs[e] = c
	return c
}

// Count returns the number of tokens in s under the default encoding.
func Count(s string) int { return CountWith(O200k, s) }

// CountWith counts s under encoding e.
func CountWith(e Encoding, s string) int {
	if s == "" {
		return 0
	}
	if len(s) < memoMinLen {
		return count(e, s)
	}
	key := memoKey{e, maphash.String(memoSeed, s), len(s)}
	if n, ok := memo.get(key); ok {
		return n
	}
	n := count(e, s)
	memo.put(key, n)
	return n
}

func count(e Encoding, s string) int {
	n, err := codec(e).Count(s)
	if err != nil {
		// Invalid UTF-8 and similar: fall back to a conservative estimate
		// (one token per 3 bytes) rather than failing the caller.
		return len(s)/3 + 1
	}
	return n
}

// The same texts are counted again and again: a context build counts the
// same map lines, enclosing symbols and file regions as the build before it,
// and BPE is the costliest step of a build after ranking. Counts of texts
// of at least memoMinLen bytes are remembered by a 64-bit hash of the text
// and its length (a collision, at 2^-64, would misjudge one item's size);
// the memo holds two generations of at most memoGen entries each, so it stays
// bounded (a few MB) and keeps what the last builds used.
const (
	memoMinLen = 64
	memoGen    = 1 << 15
)

var (
	memoSeed = maphash.MakeSeed()
	memo     = &countMemo{cur: map[memoKey]int{}}
)

type memoKey struct {
	enc  Encoding
	hash uint64
	n    int
}

type countMemo struct {
	mu        sync.Mutex
	cur, prev map[memoKey]int
}

func (m *countMemo) get(k memoKey) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.cur[k]; ok {
		return n, true
	}
	if n, ok := m.prev[k]; ok {
		m.putLocked(k, n) // still in use: carry it into this generation
		return n, true
	}
	return 0, false
}

func (m *countMemo) put(k memoKey, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.putLocked(k, n)
}

func (m *countMemo) putLocked(k memoKey, n int) {
	if len(m.cur) >= memoGen {
		m.prev, m.cur = m.cur, make(map[memoKey]int, memoGen/4)
	}
	m.cur[k] = n
}

// Truncate returns the longest prefix of s (cut at a line boundary when one
// is near) that fits in max tokens, and whether it was cut.
func Truncate(s string, max int) (string, bool) {
	if Count(s) <= max {
		return s, false
	}
	if max <= 0 {
		return "", true
	}
	// Binary search on byte length, then back off to a line end.
	lo, hi := 0, len(s)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if Count(s[:mid]) <= max {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	cut := s[:lo]
	for i := len(cut) - 1; i > len(cut)*3/4; i-- {
		if cut[i] == '\n' {
			return cut[:i+1], true
		}
	}
	return cut, true
}
