package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
)

// Query limits.
const (
	DefaultLimit  = 10
	MaxLimit      = 200
	MaxQueryBytes = 4096 // longer queries are refused
	maxTerms      = 32   // plain words beyond this are dropped (with a warning)
)

// ErrBadQuery wraps every error about the query text itself (as opposed to
// the index), so a tool can hand it back to the model as data.
var ErrBadQuery = errors.New("bad search query")

// Hit is one search result: a chunk, and its best matching line.
type Hit struct {
	Path      string  `json:"path"`
	Line      int     `json:"line"` // 1-based: the best matching line in the chunk
	Text      string  `json:"text"` // that line, trimmed
	StartLine int     `json:"startLine"`
	EndLine   int     `json:"endLine"`
	Symbol    string  `json:"symbol,omitempty"`
	Kind      string  `json:"kind,omitempty"`
	Score     float64 `json:"score"`
}

// String formats a hit as `path:line: text`.
func (h Hit) String() string { return fmt.Sprintf("%s:%d: %s", h.Path, h.Line, h.Text) }

// Result is the answer to one query.
type Result struct {
	Hits     []Hit    `json:"hits"`
	Total    uint64   `json:"total"`              // matching chunks
	Partial  bool     `json:"partial,omitempty"`  // the index was still being built
	Warnings []string `json:"warnings,omitempty"` // e.g. an unbalanced quote read literally
}

// Parsed is a query broken into its parts.
type Parsed struct {
	Words    []string // plain words and identifiers
	Phrases  []string // quoted
	Paths    []string // path: filters (substring, or glob with * and ?)
	Langs    []string // lang: filters
	Syms     []string // sym: filters (exact symbol, case-insensitive; * globs)
	Warnings []string
}

var filterNames = map[string]bool{"path": true, "lang": true, "sym": true, "file": true}

// ParseQuery splits a query: plain words and identifiers, "quoted phrases",
// and path:, lang:, sym: filters (file: is path:). A filter value may be
// quoted. An unbalanced quote runs to the end of the query (with a warning);
// an unknown filter name is an error that says which names exist.
func ParseQuery(q string) (Parsed, error) {
	var p Parsed
	if len(q) > MaxQueryBytes {
		return p, fmt.Errorf("%w: query is %d bytes, the limit is %d", ErrBadQuery, len(q), MaxQueryBytes)
	}
	if strings.ContainsRune(q, 0) {
		return p, fmt.Errorf("%w: query contains a NUL byte", ErrBadQuery)
	}
	i := 0
	readQuoted := func() string { // at q[i] == '"'
		i++
		j := strings.IndexByte(q[i:], '"')
		var s string
		if j < 0 {
			s = q[i:]
			i = len(q)
			p.Warnings = append(p.Warnings, "unbalanced quote: the rest of the query was read as one phrase")
		} else {
			s = q[i : i+j]
			i += j + 1
		}
		return s
	}
	for i < len(q) {
		r := rune(q[i])
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			i++
			continue
		}
		if r == '"' {
			if s := strings.TrimSpace(readQuoted()); s != "" {
				p.Phrases = append(p.Phrases, s)
			}
			continue
		}
		// A bare token up to whitespace; it may be name:value.
		j := i
		for j < len(q) && !unicode.IsSpace(rune(q[j])) && q[j] != '"' {
			j++
		}
		tok := q[i:j]
		i = j
		if k := strings.IndexByte(tok, ':'); k > 0 && isFilterName(tok[:k]) {
			name := strings.ToLower(tok[:k])
			val := tok[k+1:]
			if strings.HasPrefix(val, "/") || strings.HasPrefix(val, ":") {
				p.Words = append(p.Words, tok) // "http://", "std::x": literal
				continue
			}
			if val == "" && i < len(q) && q[i] == '"' {
				val = readQuoted()
			}
			if !filterNames[name] {
				return p, fmt.Errorf("%w: unknown filter %q; the filters are path:, lang: and sym: (quote the text to search for it literally)", ErrBadQuery, name+":")
			}
			if val == "" {
				return p, fmt.Errorf("%w: filter %q needs a value, e.g. %s:foo", ErrBadQuery, name+":", name)
			}
			switch name {
			case "path", "file":
				p.Paths = append(p.Paths, val)
			case "lang":
				p.Langs = append(p.Langs, strings.ToLower(val))
			case "sym":
				p.Syms = append(p.Syms, val)
			}
			continue
		}
		p.Words = append(p.Words, tok)
	}
	if len(p.Words) > maxTerms {
		p.Warnings = append(p.Warnings, fmt.Sprintf("only the first %d words were used", maxTerms))
		p.Words = p.Words[:maxTerms]
	}
	if len(p.Words) == 0 && len(p.Phrases) == 0 && len(p.Paths) == 0 && len(p.Langs) == 0 && len(p.Syms) == 0 {
		return p, fmt.Errorf("%w: empty query", ErrBadQuery)
	}
	// Words or phrases with no searchable characters ("***", "()") cannot match.
	if len(p.Words)+len(p.Phrases) > 0 && len(terms(strings.Join(p.Words, " ")+" "+strings.Join(p.Phrases, " "))) == 0 &&
		len(p.Paths)+len(p.Langs)+len(p.Syms) == 0 {
		return p, fmt.Errorf("%w: the query has no letters or digits to search for", ErrBadQuery)
	}
	return p, nil
}

func isFilterName(s string) bool {
	if len(s) > 12 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// Boosts: a symbol name match outweighs body text, a path component match
// helps a little, an exact phrase of the plain words more.
const (
	boostSym    = 4.0
	boostPath   = 1.5
	boostPhrase = 2.0
)

// build turns a parsed query into a bleve query.
func (p *Parsed) build() query.Query {
	var must []query.Query
	text := strings.Join(p.Words, " ")
	if len(terms(text)) > 0 {
		body := bleve.NewMatchQuery(text)
		body.SetField(fBody)
		body.Analyzer = analyzerQuery
		sym := bleve.NewMatchQuery(text)
		sym.SetField(fSym)
		sym.Analyzer = analyzerQuery
		sym.SetBoost(boostSym)
		pt := bleve.NewMatchQuery(text)
		pt.SetField(fPathTok)
		pt.Analyzer = analyzerQuery
		pt.SetBoost(boostPath)
		should := []query.Query{body, sym, pt}
		if n := len(p.Words); n >= 2 && n <= 6 {
			ph := bleve.NewMatchPhraseQuery(text)
			ph.SetField(fBody)
			ph.Analyzer = analyzerIndex
			ph.SetBoost(boostPhrase)
			should = append(should, ph)
		}
		must = append(must, bleve.NewDisjunctionQuery(should...))
	}
	for _, ph := range p.Phrases {
		if len(terms(ph)) == 0 {
			continue
		}
		q := bleve.NewMatchPhraseQuery(ph)
		q.SetField(fBody)
		q.Analyzer = analyzerIndex
		must = append(must, q)
	}
	for _, v := range p.Paths {
		must = append(must, pathFilter(v))
	}
	if len(p.Langs) > 0 {
		var any []query.Query
		for _, l := range p.Langs {
			t := bleve.NewTermQuery(l)
			t.SetField(fLang)
			any = append(any, t)
		}
		must = append(must, bleve.NewDisjunctionQuery(any...))
	}
	for _, s := range p.Syms {
		s = strings.ToLower(s)
		if strings.ContainsAny(s, "*?") {
			w := bleve.NewWildcardQuery(s)
			w.SetField(fSymKW)
			must = append(must, w)
			continue
		}
		t := bleve.NewTermQuery(s)
		t.SetField(fSymKW)
		must = append(must, t)
	}
	if len(must) == 1 {
		return must[0]
	}
	return bleve.NewConjunctionQuery(must...)
}

// pathFilter matches paths containing v, or matching v as a glob when it has
// * or ?. Path matching is case-sensitive.
func pathFilter(v string) query.Query {
	v = strings.TrimPrefix(v, "./")
	pat := v
	if !strings.ContainsAny(v, "*?") {
		pat = "*" + v + "*"
	} else if !strings.HasPrefix(v, "*") && !strings.HasPrefix(v, "/") {
		// A glob is anchored at a path component start.
		pat = v
	}
	w := bleve.NewWildcardQuery(pat)
	w.SetField(fPath)
	if strings.ContainsAny(v, "*?") && !strings.HasPrefix(v, "*") {
		// also match below any directory: "*/" + glob
		w2 := bleve.NewWildcardQuery("*/" + v)
		w2.SetField(fPath)
		return bleve.NewDisjunctionQuery(w, w2)
	}
	return w
}

// Search runs a query and returns up to limit hits (DefaultLimit when limit
// <= 0), each with its best matching line. Errors wrapping ErrBadQuery are
// about the query text. While a reconcile runs the result is marked Partial.
func (ix *Index) Search(ctx context.Context, q string, limit int) (res *Result, err error) {
	p, err := ParseQuery(q)
	if err != nil {
		return nil, err
	}
	return ix.SearchParsed(ctx, p, limit)
}

// SearchParsed runs an already parsed query.
func (ix *Index) SearchParsed(ctx context.Context, p Parsed, limit int) (res *Result, err error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	if limit > MaxLimit {
		limit = MaxLimit
	}
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("search: index failure while searching (%v); delete the state directory's search folder to rebuild", r)
			ix.log.Error("search: panic while searching", "panic", r)
		}
	}()
	bq := p.build()
	req := bleve.NewSearchRequestOptions(bq, limit, 0, false)
	sr, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	res = &Result{Total: sr.Total, Partial: ix.indexing.Load(), Warnings: p.Warnings}
	qt := queryTerms(&p)
	files := map[string][]byte{}
	for _, h := range sr.Hits {
		rel, start, end, kind, sym, ok := parseID(h.ID)
		if !ok {
			continue
		}
		hit := Hit{Path: rel, StartLine: start, EndLine: end, Kind: kind, Symbol: sym, Score: h.Score, Line: start}
		content, ok := files[rel]
		if !ok {
			content, _ = os.ReadFile(ix.ws.Abs(rel))
			files[rel] = content
		}
		hit.Line, hit.Text = bestLine(content, start, end, qt, p.Phrases, sym)
		res.Hits = append(res.Hits, hit)
	}
	return res, nil
}

type qterms struct {
	set map[string]bool
}

func queryTerms(p *Parsed) qterms {
	qt := qterms{set: map[string]bool{}}
	text := strings.Join(p.Words, " ") + " " + strings.Join(p.Phrases, " ") + " " + strings.Join(p.Syms, " ")
	ts := codeAnalyzer{query: true}.Analyze([]byte(text))
	for _, t := range ts {
		qt.set[string(t.Term)] = true
	}
	return qt
}

// bestLine picks the line of [start, end] that matches the query best: a
// phrase occurrence first, then the most distinct query terms, the symbol's
// declaration line breaking ties, then the earliest.
func bestLine(content []byte, start, end int, qt qterms, phrases []string, sym string) (int, string) {
	if len(content) == 0 {
		return start, ""
	}
	starts := lineStarts(content)
	if start > len(starts) {
		return start, ""
	}
	if end > len(starts) {
		end = len(starts)
	}
	lowPhrases := make([][]byte, 0, len(phrases))
	for _, ph := range phrases {
		lowPhrases = append(lowPhrases, bytes.ToLower([]byte(ph)))
	}
	symName := sym
	if k := strings.LastIndexByte(sym, '.'); k >= 0 {
		symName = sym[k+1:]
	}
	bestN, bestScore := start, -1
	var bestText []byte
	first := -1
	for n := start; n <= end; n++ {
		l := bytes.TrimRight(lineText(content, starts, n, n), "\r\n")
		if first < 0 && len(bytes.TrimSpace(l)) > 0 && !isCommentLine(l) {
			first = n
		}
		score := 0
		if len(lowPhrases) > 0 {
			ll := bytes.ToLower(l)
			for _, ph := range lowPhrases {
				if bytes.Contains(ll, ph) {
					score += 100
				}
			}
		}
		seen := map[string]bool{}
		for _, t := range tokenize(l, nil) {
			s := string(t.Term)
			if qt.set[s] && !seen[s] {
				seen[s] = true
				score += 10
			}
		}
		if score > 0 && symName != "" && bytes.Contains(l, []byte(symName)) && !isCommentLine(l) {
			score += 5
		}
		if score > bestScore {
			bestN, bestScore, bestText = n, score, l
		}
	}
	if bestScore <= 0 && first > 0 { // nothing on any line (filter-only query)
		bestN = first
		bestText = bytes.TrimRight(lineText(content, starts, first, first), "\r\n")
	}
	return bestN, strings.TrimSpace(string(bestText))
}
