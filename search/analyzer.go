package search

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	porterstemmer "github.com/blevesearch/go-porterstemmer"
)

// The code-aware analysis. One pass over the text finds identifier-like runs
// (letters, digits, underscore). Each run is emitted whole, case-folded; when
// it has several parts (camelCase, PascalCase, snake_case, letter/digit
// boundaries) the parts follow, the first sharing the whole token's position
// and each next part one position further, so a phrase query over parts
// ("parse http request") and one over the whole identifier both line up.
// Parts and single words also get their Porter stem at the same position when
// it differs ("frames" → "frame", "parsing" → "pars"), so natural-language
// questions meet identifiers. Everything else (punctuation, operators) is a
// separator.

const (
	analyzerIndex = "cairn_code"
	analyzerQuery = "cairn_code_query"
	maxTokenBytes = 128 // longer runs (base64 blobs, minified code) are dropped
)

// codeTokenizer implements analysis.Tokenizer.
type codeTokenizer struct{}

func (codeTokenizer) Tokenize(input []byte) analysis.TokenStream {
	return tokenize(input, nil)
}

// tokenize appends the tokens of input to out (positions start at 1).
func tokenize(input []byte, out analysis.TokenStream) analysis.TokenStream {
	pos := 0
	var parts [][2]int
	i := 0
	for i < len(input) {
		c := input[i]
		if c < utf8.RuneSelf {
			if !isIdentByte(c) {
				i++
				continue
			}
		} else {
			r, sz := utf8.DecodeRune(input[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				i += sz
				continue
			}
		}
		// A run starts at i.
		start := i
		ascii := true
		for i < len(input) {
			c := input[i]
			if c < utf8.RuneSelf {
				if !isIdentByte(c) {
					break
				}
				i++
				continue
			}
			r, sz := utf8.DecodeRune(input[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				break
			}
			ascii = false
			i += sz
		}
		end := i
		if end-start > maxTokenBytes {
			continue
		}
		word := input[start:end]
		// Trim leading/trailing underscores for the whole token ("__init__").
		ws, we := start, end
		for ws < we && input[ws] == '_' {
			ws++
		}
		for we > ws && input[we-1] == '_' {
			we--
		}
		if ws == we {
			continue
		}
		word = input[ws:we]
		pos++
		whole := lower(word, ascii)
		out = append(out, &analysis.Token{Term: whole, Start: ws, End: we, Position: pos, Type: analysis.AlphaNumeric})
		if ascii {
			parts = splitIdent(word, parts[:0])
		} else {
			parts = append(parts[:0], [2]int{0, len(word)})
		}
		if len(parts) <= 1 {
			if st := stem(whole); st != nil {
				out = append(out, &analysis.Token{Term: st, Start: ws, End: we, Position: pos, Type: analysis.AlphaNumeric})
			}
			continue
		}
		for k, p := range parts {
			if k > 0 {
				pos++
			}
			t := lower(word[p[0]:p[1]], true)
			out = append(out, &analysis.Token{Term: t, Start: ws + p[0], End: ws + p[1], Position: pos, Type: analysis.AlphaNumeric})
			if st := stem(t); st != nil {
				out = append(out, &analysis.Token{Term: st, Start: ws + p[0], End: ws + p[1], Position: pos, Type: analysis.AlphaNumeric})
			}
		}
	}
	return out
}

func isIdentByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func lower(b []byte, ascii bool) []byte {
	if !ascii {
		return []byte(string(bytesToLowerRunes(b)))
	}
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

func bytesToLowerRunes(b []byte) []rune {
	rs := []rune(string(b))
	for i, r := range rs {
		rs[i] = unicode.ToLower(r)
	}
	return rs
}

// splitIdent splits an ASCII identifier into parts at underscores, at
// lower→Upper changes, before the last capital of an acronym followed by a
// lowercase letter (HTTPRequest → HTTP, Request) and at letter/digit changes.
func splitIdent(w []byte, parts [][2]int) [][2]int {
	class := func(c byte) int {
		switch {
		case c >= 'a' && c <= 'z':
			return 1
		case c >= 'A' && c <= 'Z':
			return 2
		case c >= '0' && c <= '9':
			return 3
		}
		return 0 // underscore
	}
	start := -1
	for i := 0; i < len(w); i++ {
		c := class(w[i])
		if c == 0 {
			if start >= 0 {
				parts = append(parts, [2]int{start, i})
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		p := class(w[i-1])
		boundary := false
		switch {
		case p == 1 && c == 2: // aB
			boundary = true
		case p == 2 && c == 2 && i+1 < len(w) && class(w[i+1]) == 1: // ABc: split before B
			boundary = true
		case (p == 3) != (c == 3): // letter/digit
			boundary = true
		}
		if boundary {
			parts = append(parts, [2]int{start, i})
			start = i
		}
	}
	if start >= 0 {
		parts = append(parts, [2]int{start, len(w)})
	}
	return parts
}

var stemCache sync.Map // string → []byte (nil when the stem is the word)

var noStem = []byte{}

// stem returns the Porter stem of a lowercase ASCII word when it differs from
// the word, else nil. Digits and short words are left alone.
func stem(w []byte) []byte {
	if len(w) < 4 || len(w) > 24 {
		return nil
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return nil
		}
	}
	if v, ok := stemCache.Load(string(w)); ok {
		b := v.([]byte)
		if len(b) == 0 {
			return nil
		}
		return b
	}
	rs := porterstemmer.StemWithoutLowerCasing([]rune(string(w)))
	s := string(rs)
	if s == string(w) {
		stemCache.Store(string(w), noStem)
		return nil
	}
	b := []byte(s)
	stemCache.Store(string(w), b)
	return b
}

// stopFilter drops, at query time only, words too common in English questions
// or in code to say anything (their posting lists are long and slow too).
// When every token of a query is a stop word the query keeps them all.
type stopFilter struct{}

func (stopFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	out := in[:0:0]
	for _, t := range in {
		if !stopWords[string(t.Term)] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return in
	}
	return out
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{
		// English question words and glue.
		"a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from", "how",
		"i", "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was",
		"what", "when", "where", "which", "who", "why", "with", "we", "you", "there", "their", "them",
		"find", "code", "implemented", "implement", "implementation", "defined", "handled", "located",
		"done", "happens", "get", "gets", "golang", "function", "func", "s",
		// Code keywords and ubiquitous identifiers.
		"return", "if", "else", "nil", "err", "var", "const", "package", "import", "true", "false",
	} {
		m[w] = true
	}
	return m
}()

// codeAnalyzer is analysis.Analyzer without the generic filter chain.
type codeAnalyzer struct{ query bool }

func (a codeAnalyzer) Analyze(input []byte) analysis.TokenStream {
	ts := tokenize(input, nil)
	if a.query {
		ts = stopFilter{}.Filter(ts)
	}
	return ts
}

// terms returns the distinct index terms of s (for line scoring).
func terms(s string) []string {
	ts := tokenize([]byte(s), nil)
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[string(t.Term)] {
			seen[string(t.Term)] = true
			out = append(out, string(t.Term))
		}
	}
	return out
}
