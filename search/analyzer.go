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

// tokenSink receives the tokens of scanTokens in order. The terms are
// slices of a slab scanTokens allocates per call: they stay valid.
type tokenSink interface {
	token(term []byte, start, end, pos int)
}

// countingSink is implemented by sinks that count the terms of a text (the
// index's fields). Such a sink remembers per distinct term whether it kept
// the term's bytes and what the term's stem was, so scanTokens stems a word
// once per text rather than once per occurrence, and reuses the bytes of a
// lowercased term the sink already had.
type countingSink interface {
	tokenSink
	// kept reports whether the sink holds on to the bytes of the term it
	// was last given (false: it had the term already).
	kept() bool
	// restem counts the stem of the word just given again when the sink
	// knows it from an earlier occurrence (true); else the caller stems
	// the word and calls stemmed.
	restem() bool
	// stemmed records st (nil: none) as the stem of the word just given,
	// counting it as a token.
	stemmed(st []byte, start, end, pos int)
}

// scanControl is implemented by sinks that may stop the scan early or
// need the stems of some words only (the phrase check).
type scanControl interface {
	stop() bool
	wantStem(w []byte) bool
}

// tokenize appends the tokens of input to out (positions start at 1).
// Tokens and their terms come from slabs, not one allocation each.
func tokenize(input []byte, out analysis.TokenStream) analysis.TokenStream {
	s := streamSink{out: out}
	scanTokens(input, &s)
	return s.out
}

// streamSink collects a bleve token stream (queries, phrase checks, tests).
type streamSink struct {
	out  analysis.TokenStream
	slab []analysis.Token
}

func (s *streamSink) token(term []byte, start, end, pos int) {
	if len(s.slab) == cap(s.slab) {
		n := 64
		if len(s.out) > 64 {
			n = 256
		}
		s.slab = make([]analysis.Token, 0, n)
	}
	s.slab = append(s.slab, analysis.Token{Term: term, Start: start, End: end, Position: pos, Type: analysis.AlphaNumeric})
	s.out = append(s.out, &s.slab[len(s.slab)-1])
}

// scanTokens is the analysis: it hands each token of input to sink.
func scanTokens(input []byte, sink tokenSink) {
	pos := 0
	var partsBuf [16][2]int
	parts := partsBuf[:0]
	counter, _ := sink.(countingSink)
	// Lowercased terms go to a slab; handed-out terms are never written
	// again. A counting sink keeps only its new terms, about half the
	// input's bytes; other sinks keep every token.
	slab := len(input) + len(input)/2
	if counter != nil {
		slab = len(input)/2 + 64
	}
	terms := make([]byte, 0, slab)
	lowerTerm := func(b []byte) []byte {
		if cap(terms)-len(terms) < len(b) {
			terms = make([]byte, 0, max(4096, slab/4)+len(b))
		}
		k := len(terms)
		for _, c := range b {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			terms = append(terms, c)
		}
		return terms[k:len(terms):len(terms)]
	}
	ctl, _ := sink.(scanControl)
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
		if ctl != nil && ctl.stop() {
			return
		}
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
		word := input[ws:we]
		pos++
		var whole []byte
		mark := len(terms)
		if ascii {
			whole = lowerTerm(word)
		} else {
			whole = lower(word, false)
		}
		sink.token(whole, ws, we, pos)
		kept := counter == nil || counter.kept()
		if ascii {
			parts = splitIdent(word, parts[:0])
		} else {
			parts = append(parts[:0], [2]int{0, len(word)})
		}
		if len(parts) <= 1 {
			if ctl == nil || ctl.wantStem(whole) {
				emitStem(sink, counter, whole, ws, we, pos)
			}
		} else {
			for k, p := range parts {
				if k > 0 {
					pos++
				}
				t := whole[p[0]:p[1]:p[1]] // whole is the lowercase word: parts are its slices
				sink.token(t, ws+p[0], ws+p[1], pos)
				kept = kept || counter.kept()
				if ctl == nil || ctl.wantStem(t) {
					emitStem(sink, counter, t, ws+p[0], ws+p[1], pos)
				}
			}
		}
		if !kept && ascii && len(terms) == mark+len(whole) {
			terms = terms[:mark] // nothing holds the word or its parts
		}
	}
}

// emitStem gives sink the stem of word w, if it has one: looked up once per
// distinct word of the text when the sink counts terms.
func emitStem(sink tokenSink, counter countingSink, w []byte, start, end, pos int) {
	if counter != nil {
		if !counter.restem() {
			counter.stemmed(stem(w), start, end, pos)
		}
		return
	}
	if st := stem(w); st != nil {
		sink.token(st, start, end, pos)
	}
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

// stemCache maps a word to its stem (noStem when the stem is the word). A
// map under a read lock: looking a []byte up in it allocates nothing (a
// sync.Map's any key did, once per token).
var stemCache = struct {
	sync.RWMutex
	m map[string][]byte
}{m: map[string][]byte{}}

const stemCacheMax = 1 << 20 // words; beyond, stems are computed each time

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
	stemCache.RLock()
	b, ok := stemCache.m[string(w)]
	stemCache.RUnlock()
	if ok {
		if len(b) == 0 {
			return nil
		}
		return b
	}
	rs := porterstemmer.StemWithoutLowerCasing([]rune(string(w)))
	s := string(rs)
	b = noStem
	if s != string(w) {
		b = []byte(s)
	}
	stemCache.Lock()
	if len(stemCache.m) < stemCacheMax {
		stemCache.m[string(w)] = b
	}
	stemCache.Unlock()
	if len(b) == 0 {
		return nil
	}
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
	// Single letters and digits ("HTTP/2" → http, 2): everywhere in code.
	for c := 'a'; c <= 'z'; c++ {
		m[string(c)] = true
	}
	for c := '0'; c <= '9'; c++ {
		m[string(c)] = true
	}
	return m
}()

// codeAnalyzer is analysis.Analyzer without the generic filter chain.
type codeAnalyzer struct{ query bool }

func (a codeAnalyzer) Analyze(input []byte) analysis.TokenStream {
	ts := tokenize(input, nil)
	if a.query {
		ts = stopFilter{}.Filter(ts)
		ts = expand(ts)
	}
	return ts
}

// abbreviations maps words of a natural-language question to the short forms
// code spells them with, added at query time at the word's position
// ("environment variable" also looks for env, "directory" for dir).
var abbreviations = func() map[string][]string {
	m := map[string][]string{}
	add := func(abbr string, words ...string) {
		for _, w := range words {
			m[w] = append(m[w], abbr)
		}
	}
	add("env", "environment", "environ")
	add("dir", "directory", "directories", "folder", "folders")
	add("args", "arguments", "argument")
	add("cmd", "command", "commands")
	add("conn", "connection", "connections")
	add("ctx", "context")
	add("buf", "buffer", "buffers", "buffered")
	add("msg", "message", "messages")
	add("req", "request", "requests")
	add("resp", "response", "responses")
	add("exec", "execute", "executes", "execution", "subprocess", "executable")
	add("proc", "process", "processes")
	add("addr", "address", "addresses")
	add("alloc", "allocate", "allocates", "allocation", "allocator")
	add("gc", "garbage")
	add("str", "string", "strings")
	add("num", "number", "numbers")
	add("len", "length")
	add("cap", "capacity")
	add("src", "source")
	add("dst", "destination")
	add("tmp", "temporary")
	add("cfg", "configuration")
	add("config", "configuration")
	add("fn", "function", "callback")
	add("auth", "authentication", "authorization")
	add("cert", "certificate", "certificates")
	add("db", "database")
	add("pkg", "package", "packages")
	add("mem", "memory")
	add("sig", "signal", "signals")
	add("val", "value", "values")
	add("init", "initialize", "initialise", "initialization")
	add("info", "information")
	add("stat", "statistics")
	add("sync", "synchronize", "synchronization")
	add("rand", "random", "randomly")
	add("hdr", "header", "headers")
	add("err", "error", "errors")
	add("lookup", "look", "find")
	add("cmp", "compare", "comparison")
	add("del", "delete")
	add("idx", "index")
	add("impl", "implementation")
	add("iter", "iterate", "iterator")
	add("max", "maximum")
	add("min", "minimum")
	add("param", "parameter", "parameters")
	add("ptr", "pointer", "pointers")
	add("prev", "previous")
	add("ref", "reference")
	add("repr", "representation")
	add("spec", "specification")
	add("tls", "ssl")
	add("tx", "transaction")
	add("var", "variable", "variables")
	add("goroutine", "thread", "threads")
	add("mutex", "lock")
	return m
}()

func expand(ts analysis.TokenStream) analysis.TokenStream {
	n := len(ts)
	for i := 0; i < n; i++ {
		t := ts[i]
		for _, a := range abbreviations[string(t.Term)] {
			ts = append(ts, &analysis.Token{Term: []byte(a), Start: t.Start, End: t.End, Position: t.Position, Type: t.Type})
		}
	}
	return ts
}

// queryTermsOf returns the distinct terms a query's text searches for
// (the query analysis: stop words dropped, abbreviations added), in order.
func queryTermsOf(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range (codeAnalyzer{query: true}).Analyze([]byte(s)) {
		if k := string(t.Term); !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
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
