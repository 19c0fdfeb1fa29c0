package search

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
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
	// Copies are the other files, ranked below this one, whose content
	// is identical to this file's (a library copied into several
	// places): the same chunk there is not a hit of its own.
	Copies []string `json:"copies,omitempty"`
}

// String formats a hit as `path:line: text`.
func (h Hit) String() string { return fmt.Sprintf("%s:%d: %s", h.Path, h.Line, h.Text) }

// Result is the answer to one query.
type Result struct {
	Hits     []Hit    `json:"hits"`
	Total    uint64   `json:"total"`              // matching chunks (of a driven question, those with a driving term: drivingTerms)
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
	// PathPrefix, when set, is what the paths of this index are known by
	// outside it (a workspace folder's name in a multi-root workspace):
	// path: filters match PathPrefix + "/" + path, as the user sees it.
	PathPrefix string
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

// Ranking knobs (variables so the quality harness can explore them; the
// values were picked with TestRankingSweep on testdata/queries.txt, never on
// testdata/fresh.tsv). Body text must match (BM25); a match in the meta field
// (symbol, path words, doc comment and declaration line) adds boostMeta times
// its score. Then the first rerankDepth chunks are reranked: test files and
// testdata count for less unless the query is about tests (questions are
// usually about the implementation; a query about tests ranks the other files
// down, less so), so do declaration-only files (.d.ts,
// .pyi) and prose (README.md, CHANGELOG, .rst) unless the query asks for
// documentation, and a chunk gains a share of the score of the best other chunks of
// its file that matched (files about the question win over a lone chunk that
// happens to use its words).
//
// The pool is rerankDepth whatever the limit, so a result's top k is the
// prefix of a larger limit's (TestRankingIndependentOfLimit).
var (
	boostMeta  = 2.0
	testFactor = 0.4
	// codeFactor ranks non-test files down for a query about tests: milder
	// than testFactor, since such a question names the code under test too.
	codeFactor  = 0.7
	fileShare   = 0.3
	fileTop     = 5 // the other chunks of a file that lend it their score: its best ones, so a big file is not ahead for its size
	declFactor  = 0.5
	rerankDepth = 200
	maxPerFile  = 3 // hits from one file in a result, so one file cannot fill it
)

// BM25 length normalization compares a chunk's field length with the
// average. bleve computes that average from the term dictionaries of the
// segments the index happens to be split into (their sizes summed, so a term
// in ten segments counts ten times): the same tree indexed twice, or updated
// instead of rebuilt, scored differently. The search hands bleve fixed
// reference lengths instead (TestScoresIndependentOfSegments); with the
// live document count, BM25's idf stays exact. The values are in tokens
// (identifier parts and stems included) and were picked with
// TestRankingSweep like the knobs above.
var refLength = map[string]int{
	fBody:  1000,
	fMeta:  60,
	fSymKW: 1,
	fPath:  1,
	fLang:  1,
	fKind:  1,
}

// bm25Stats are the corpus statistics BM25 uses, independent of the
// segment layout.
func (ix *Index) bm25Stats() (*search.BM25Stats, error) {
	n, err := ix.idx.DocCount()
	if err != nil {
		return nil, fmt.Errorf("counting documents: %w", err)
	}
	st := &search.BM25Stats{DocCount: float64(n), FieldCardinality: map[string]int{}}
	for f, l := range refLength {
		st.FieldCardinality[f] = l * int(n)
	}
	return st, nil
}

// build turns a parsed query into a bleve query. With drive, a chunk must
// also have one of those terms of the words (drivingTerms). With
// bodyImplied, the caller requires a body term of the words itself (a
// compound identifier whole), so the clause that asks the body to match
// is left out: it scores nothing, and it read every term's postings a
// second time, for each chunk.
func (p *Parsed) build(ix *Index, checkPhrases bool, drive []string, bodyImplied bool) query.Query {
	var must []query.Query
	text := strings.Join(p.Words, " ")
	if len(drive) > 0 {
		var any []query.Query
		for _, d := range drive {
			any = append(any, requiredTerm(d))
		}
		must = append(must, bleve.NewDisjunctionQuery(any...))
	}
	if len(terms(text)) > 0 {
		body := bleve.NewMatchQuery(text)
		body.SetField(fBody)
		body.Analyzer = analyzerQuery
		meta := bleve.NewMatchQuery(text)
		meta.SetField(fMeta)
		meta.Analyzer = analyzerQuery
		meta.SetBoost(boostMeta)
		// body AND (body OR meta): the body must match, and the score is
		// body + meta (the required body clause scores nothing). A boolean
		// query with a "should" clause would say it more directly, but
		// bleve's BooleanSearcher loses should-matches when a conjunction
		// around it (filters) advances it: scores changed from run to run.
		either := bleve.NewDisjunctionQuery(body, meta)
		if len(drive) > 0 || bodyImplied && !keepImpliedClause {
			// The driving terms are body terms: a chunk with one has
			// the body match the required clause would ask for.
			must = append(must, either)
		} else {
			required := bleve.NewMatchQuery(text)
			required.SetField(fBody)
			required.Analyzer = analyzerQuery
			required.SetBoost(0)
			must = append(must, bleve.NewConjunctionQuery(either, required))
		}
	}
	for _, ph := range p.Phrases {
		if q := ix.newPhraseQuery(ph, checkPhrases); q != nil {
			must = append(must, q)
		}
	}
	for _, v := range p.Paths {
		must = append(must, pathFilter(v, p.PathPrefix))
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

// queryKind is which of a question's queries a search runs: all its
// compound wholes required, any of them, or the words alone (with their
// driving terms, if any). Without wholes the three are one.
type queryKind int

const (
	queryAll queryKind = iota
	querySome
	queryFull
)

// required returns the body terms kind requires, and whether every one
// (the wholes, all) or any (the driving terms; the wholes, some).
func (kind queryKind) required(drive, wholes []string) (need []string, every bool) {
	switch {
	case len(wholes) == 0:
		return drive, false
	case kind == queryAll:
		return wholes, true
	case kind == querySome && len(wholes) > 1:
		return wholes, false
	}
	return nil, false
}

// query returns the bleve query of kind; checked says whether phrases
// check their positions inside the search (else the caller checks them).
func (p *Parsed) query(ix *Index, checked bool, drive, wholes []string, kind queryKind) query.Query {
	if len(wholes) == 0 || kind == queryFull || kind == querySome && len(wholes) == 1 {
		return p.build(ix, checked, drive, false)
	}
	// A whole is a body term of the words: the chunks it finds have the
	// body match the words' required clause asks for.
	implied := p.build(ix, checked, drive, true)
	var any []query.Query
	for _, w := range wholes {
		any = append(any, requiredTerm(w))
	}
	if kind == querySome {
		return bleve.NewConjunctionQuery(implied, bleve.NewDisjunctionQuery(any...))
	}
	return bleve.NewConjunctionQuery(append([]query.Query{implied}, any...)...)
}

// keepImpliedClause keeps the body clause a required whole implies (the
// tests compare both).
var keepImpliedClause = false

// requiredTerm matches chunks whose body has term and adds nothing to
// their score: a condition, not a signal.
func requiredTerm(term string) query.Query {
	t := bleve.NewTermQuery(term)
	t.SetField(fBody)
	t.SetBoost(0)
	return t
}

// pathFilter matches paths containing v, or matching v as a glob when it has
// * or ?. Path matching is case-sensitive. With a prefix the filter applies
// to prefix + "/" + path; the index holds paths without it.
func pathFilter(v, prefix string) query.Query {
	v = strings.TrimPrefix(v, "./")
	// Each pattern matches a whole path (bleve's * and ? cross "/").
	var whole []string
	switch {
	case !strings.ContainsAny(v, "*?"):
		whole = []string{"*" + v + "*"}
	case strings.HasPrefix(v, "*"):
		whole = []string{v}
	default:
		// A glob matches the whole path, or a tail of it starting at a
		// directory boundary ("*.py", "net/http/*.go" anywhere below the root).
		whole = []string{v, "*/" + v}
	}
	if prefix != "" {
		whole = deriveWildcards(whole, prefix+"/")
	}
	var any []query.Query
	for _, w := range whole {
		if w == "" {
			continue // matches only the empty path
		}
		q := bleve.NewWildcardQuery(w) // bleve escapes regexp metacharacters
		q.SetField(fPath)
		any = append(any, q)
	}
	switch len(any) {
	case 0:
		return bleve.NewMatchNoneQuery()
	case 1:
		return any[0]
	}
	return bleve.NewDisjunctionQuery(any...)
}

// WildcardRegexp is a wildcard pattern of a path: or sym: filter (* any
// run of characters, "/" included; ? one character) as a regexp, unanchored.
func WildcardRegexp(pattern string) string {
	var b strings.Builder
	for _, r := range pattern {
		switch r {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String()
}

// deriveWildcards returns the wildcard patterns that match a string s
// exactly when one of pats matches prefix+s: each pattern with prefix
// consumed (Brzozowski's derivative, one rune at a time). A folder's
// index can then filter its own paths by patterns written over the
// workspace's.
func deriveWildcards(pats []string, prefix string) []string {
	cur := pats
	for _, c := range prefix {
		seen := map[string]bool{}
		var next []string
		var step func(p string)
		step = func(p string) {
			if p == "" {
				return
			}
			r, size := utf8.DecodeRuneInString(p)
			switch {
			case r == '*':
				// The star takes c and stays, or matches nothing here.
				if !seen[p] {
					seen[p] = true
					next = append(next, p)
				}
				step(p[size:])
			case r == '?' || r == c:
				if rest := p[size:]; !seen[rest] {
					seen[rest] = true
					next = append(next, rest)
				}
			}
		}
		for _, p := range cur {
			step(p)
		}
		cur = next
	}
	return cur
}

// Search runs a query and returns up to limit hits (DefaultLimit when limit
// <= 0), each with its best matching line; at most 3 hits come from one
// file. Errors wrapping ErrBadQuery are about the query text. While a
// reconcile runs the result is marked Partial.
func (ix *Index) Search(ctx context.Context, q string, limit int) (res *Result, err error) {
	p, err := ParseQuery(q)
	if err != nil {
		return nil, err
	}
	return ix.SearchParsed(ctx, p, limit)
}

// SearchParsed runs an already parsed query.
func (ix *Index) SearchParsed(ctx context.Context, p Parsed, limit int) (*Result, error) {
	return ix.search(ctx, p, limit)
}

func (ix *Index) search(ctx context.Context, p Parsed, limit int) (res *Result, err error) {
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
	wholes := p.compoundWholes()
	var drive []string
	if len(wholes) == 0 {
		// A compound identifier drives its search already (all, below).
		drive = ix.drivingTerms(ctx, p.Words, 4*uint64(rerankDepth+rerankDepth/4))
	}
	stats, err := ix.bm25Stats()
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	collect := rerankDepth + rerankDepth/4
	run := func(q query.Query, size int) (*bleve.SearchResult, error) {
		req := bleve.NewSearchRequestOptions(q, size, 0, false)
		req.PreSearchData = map[string]interface{}{search.BM25PreSearchDataKey: stats}
		return ix.idx.SearchInContext(ctx, req)
	}
	// With phrases, the search runs first without their position check,
	// on a larger pool, and checks positions in score order, which reads
	// far fewer chunks than checking every candidate inside the search;
	// when the pool cannot tell (too few pass, or a tie runs past it), the
	// search runs again with the check inside. Without phrases or
	// filters, a query that requires terms is read from the postings
	// directly (driven.go): the same hits and scores, in about half the
	// time.
	slots := p.phraseSlots()
	find := func(kind queryKind) (*bleve.SearchResult, error) {
		if need, every := kind.required(drive, wholes); len(need) > 0 && drivenDirect &&
			len(p.Phrases)+len(p.Paths)+len(p.Langs)+len(p.Syms) == 0 {
			hits, total, err := ix.drivenHits(ctx, strings.Join(p.Words, " "), need, every, stats, collect)
			if err == nil {
				drivenSearches.Add(1)
				return &bleve.SearchResult{Hits: hits, Total: total}, nil
			}
			if !errors.Is(err, errNotDriven) {
				return nil, err
			}
		}
		if len(slots) > 0 && phraseScan > 0 {
			sr, err := run(p.query(ix, false, drive, wholes, kind), phraseScan*collect)
			if err != nil {
				return nil, err
			}
			if ok := ix.checkPhrases(sr, slots, collect); ok {
				return sr, nil
			}
		}
		return run(p.query(ix, true, drive, wholes, kind), collect)
	}
	// A compound identifier (camelCase, snake_case) is looked for whole
	// first: when it occurs, only chunks containing it are ranked (cheap:
	// the rare whole term drives the search); when several occur but in
	// no chunk together, chunks with any of them are; when none occurs,
	// the parts match separately.
	findAll := func() (*bleve.SearchResult, error) {
		sr, err := find(queryAll)
		if err == nil && sr.Total == 0 && len(wholes) > 1 {
			sr, err = find(querySome)
		}
		if err == nil && sr.Total == 0 && len(wholes) > 0 {
			sr, err = find(queryFull)
		}
		return sr, err
	}
	sr, err := findAll()
	if err == nil && drive != nil && sr.Total < uint64(collect) {
		// The rare terms found fewer chunks than the pool holds: the
		// common ones decide the rest, as without them.
		drive = nil
		sr, err = findAll()
	}
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return ix.result(ctx, &p, sr, stats, limit)
}

// result makes the search's answer from bleve's hits: the pool, rescored
// with the question's expansions, reranked, copies folded, and each hit's
// best line.
func (ix *Index) result(ctx context.Context, p *Parsed, sr *bleve.SearchResult, stats *search.BM25Stats, limit int) (*Result, error) {
	res := &Result{Total: sr.Total, Partial: ix.indexing.Load(), Warnings: append([]string(nil), p.Warnings...)}
	if res.Partial {
		res.Warnings = append(res.Warnings, "the search index is still being built: results may be incomplete")
	}
	qt := queryTerms(p)
	files := map[string]*fileLines{}
	pooled := pool(sr.Hits)
	if len(p.Words) > 0 {
		if err := ix.expansionScores(ctx, pooled, ix.vocab.expand(p.Words), stats); err != nil {
			return nil, fmt.Errorf("search: scoring the question's expansions: %w", err)
		}
	}
	cands := ix.collapseCopies(rerank(pooled, aboutTests(p), aboutDocs(p)))
	if len(cands) > limit {
		cands = cands[:limit]
	}
	for _, hit := range cands {
		rel, start, end, sym := hit.Path, hit.StartLine, hit.EndLine, hit.Symbol
		fl, ok := files[rel]
		if !ok {
			fl = ix.lines.get(ix.ws.Abs(rel))
			files[rel] = fl
		}
		hit.Line, hit.Text = bestLine(fl, start, end, qt, p.Phrases, sym)
		res.Hits = append(res.Hits, hit)
	}
	return res, nil
}

// collapseCopies folds each hit whose file has the same content as a
// better-ranked hit's file, at the same lines, into that hit's Copies: a
// tree holding copies of a library would otherwise fill a result with one
// chunk.
func (ix *Index) collapseCopies(hits []Hit) []Hit {
	type chunkKey struct {
		hash       string
		start, end int
	}
	first := map[chunkKey]int{}
	out := hits[:0]
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, h := range hits {
		st, ok := ix.files[h.Path]
		if !ok || st.Hash == "" {
			out = append(out, h)
			continue
		}
		k := chunkKey{st.Hash, h.StartLine, h.EndLine}
		if i, dup := first[k]; dup {
			out[i].Copies = append(out[i].Copies, h.Path)
			continue
		}
		first[k] = len(out)
		out = append(out, h)
	}
	return out
}

// drivenDirect evaluates a driven question's search from the postings
// (driven.go) rather than through bleve's searchers; the tests compare
// both.
var drivenDirect = true

// drivenSearches counts the searches read from the postings (for the
// tests that compare both ways: that they compared some).
var drivenSearches atomic.Int64

// driveShare bounds the chunks a question's rarest words may match
// together, as a share of the index, for them to drive its search. A
// question in a user's words has common words ("start", "path", "process")
// whose postings span much of a large tree: a disjunction of every word
// reads them all, while BM25 ranks the chunks with the rare words first
// anyway. With the rarest words required (and the pool still full), the
// common ones only score the chunks those found. Set before measuring;
// the quality sets' figures held with it, and what it saves at 10× the Go
// tree is in docs/scale.md.
var driveShare = 0.02

// minDriveTerms is the fewest distinct terms a question needs before some
// of them drive the search: a short query is all signal.
const minDriveTerms = 4

// drivingTerms returns the rarest of the words' query terms whose body
// postings together hold at most driveShare of the chunks; nil when those
// would be all of them, or hold fewer than least chunks (the pool would
// not fill, and the search would run twice), or the words have too few
// terms.
func (ix *Index) drivingTerms(ctx context.Context, words []string, least uint64) []string {
	if driveShare <= 0 || len(words) == 0 {
		return nil
	}
	ts := queryTermsOf(strings.Join(words, " "))
	if len(ts) < minDriveTerms {
		return nil
	}
	adv, err := ix.idx.Advanced()
	if err != nil {
		return nil
	}
	r, err := adv.Reader()
	if err != nil {
		return nil
	}
	defer r.Close()
	n, err := r.DocCount()
	if err != nil || n == 0 {
		return nil
	}
	type termCount struct {
		term string
		n    uint64
	}
	counts := make([]termCount, 0, len(ts))
	for _, t := range ts {
		tfr, err := r.TermFieldReader(ctx, []byte(t), fBody, false, false, false)
		if err != nil {
			return nil
		}
		counts = append(counts, termCount{t, tfr.Count()})
		tfr.Close()
	}
	sort.Slice(counts, func(i, j int) bool {
		if counts[i].n != counts[j].n {
			return counts[i].n < counts[j].n
		}
		return counts[i].term < counts[j].term
	})
	budget := uint64(driveShare * float64(n))
	var sum uint64
	k := 0
	for k < len(counts) && sum+counts[k].n <= budget {
		sum += counts[k].n
		k++
	}
	if k == len(counts) || sum < least {
		return nil
	}
	out := make([]string, k)
	for i := range out {
		out[i] = counts[i].term
	}
	return out
}

// pool returns the first rerankDepth matches by score, ties broken by id,
// from the rerankDepth×1.25 that bleve collected. Bleve breaks ties by
// internal document number, which depends on the segment layout: when the
// ties at the cut may continue past what was collected, the tied score is
// left out entirely, so the pool is the same whatever the layout.
func pool(in search.DocumentMatchCollection) search.DocumentMatchCollection {
	sort.Slice(in, func(i, j int) bool {
		if in[i].Score != in[j].Score {
			return in[i].Score > in[j].Score
		}
		return in[i].ID < in[j].ID
	})
	if len(in) <= rerankDepth {
		return in
	}
	cut := in[rerankDepth-1].Score
	if in[len(in)-1].Score < cut || len(in) < rerankDepth+rerankDepth/4 {
		return in[:rerankDepth]
	}
	n := rerankDepth
	for n > 0 && in[n-1].Score == cut {
		n--
	}
	return in[:n]
}

// aboutTests reports whether the query asks about tests ("test", "tests",
// "testing", "tested", "_test", a path: filter naming them): then test files
// are not ranked down, the other files are (codeFactor).
func aboutTests(p *Parsed) bool {
	for _, w := range p.Words {
		for _, run := range identRuns(w) {
			parts := splitIdent([]byte(run), nil)
			for _, pt := range parts {
				switch strings.ToLower(run[pt[0]:pt[1]]) {
				case "test", "tests", "testing", "tested", "testdata", "spec", "specs", "fixture", "fixtures":
					return true
				}
			}
		}
	}
	for _, v := range p.Paths {
		if isTestPath(v) || strings.Contains(v, "test") {
			return true
		}
	}
	return false
}

// compoundWholes lists the lowercase whole forms of the plain words'
// identifiers that have several parts.
func (p *Parsed) compoundWholes() []string {
	var out []string
	var parts [][2]int
	for _, w := range p.Words {
		for _, run := range identRuns(w) {
			parts = splitIdent([]byte(run), parts[:0])
			words := 0 // alphabetic parts of two letters or more ("1h30m" is no identifier)
			for _, pt := range parts {
				if pt[1]-pt[0] >= 2 && !(run[pt[0]] >= '0' && run[pt[0]] <= '9') {
					words++
				}
			}
			if words > 1 {
				out = append(out, strings.ToLower(strings.Trim(run, "_")))
			}
		}
	}
	return out
}

func identRuns(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
}

// rerank decodes hits and applies the test-file factor (unless the query
// is about tests) and the file share, then keeps at most maxPerFile hits
// per file. Ties are broken by path and line, so the order does not depend on
// where documents sit in the index.
func rerank(in search.DocumentMatchCollection, tests, docs bool) []Hit {
	hits := make([]Hit, 0, len(in))
	for _, h := range in {
		rel, start, end, kind, sym, ok := parseID(h.ID)
		if !ok {
			continue
		}
		score := h.Score
		if !tests && isTestPath(rel) {
			score *= testFactor
		} else if tests && !isTestPath(rel) {
			score *= codeFactor
		}
		if isDeclarationFile(rel) || (!docs && isProse(rel)) {
			score *= declFactor
		}
		hits = append(hits, Hit{Path: rel, StartLine: start, EndLine: end, Kind: kind, Symbol: sym, Score: score, Line: start})
	}
	// The file share: each chunk gains fileShare × the scores of its file's
	// best fileTop other chunks in the pool.
	best := map[string][]float64{} // per file, its fileTop+1 best scores, descending
	for _, h := range hits {
		b := best[h.Path]
		i := sort.Search(len(b), func(i int) bool { return b[i] < h.Score })
		if i <= fileTop {
			b = append(b, 0)
			copy(b[i+1:], b[i:])
			b[i] = h.Score
			if len(b) > fileTop+1 {
				b = b[:fileTop+1]
			}
			best[h.Path] = b
		}
	}
	for i := range hits {
		h := &hits[i]
		b, others, n := best[h.Path], 0.0, 0
		self := false
		for _, v := range b {
			if !self && v == h.Score {
				self = true
				continue
			}
			if n < fileTop {
				others += v
				n++
			}
		}
		h.Score += fileShare * others
	}
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.StartLine < b.StartLine
	})
	count := map[string]int{}
	out := hits[:0]
	for _, h := range hits {
		if count[h.Path] < maxPerFile {
			count[h.Path]++
			out = append(out, h)
		}
	}
	return out
}

// aboutDocs reports whether the query asks for documentation.
func aboutDocs(p *Parsed) bool {
	for _, w := range p.Words {
		switch strings.ToLower(strings.Trim(w, ".,;:?!'\"()")) {
		case "readme", "doc", "docs", "documentation", "documented", "document", "changelog", "manual", "guide":
			return true
		}
	}
	for _, v := range p.Paths {
		if isProse(v) {
			return true
		}
	}
	return false
}

// isProse reports documentation files.
func isProse(rel string) bool {
	base := strings.ToLower(path.Base(rel))
	for _, ext := range []string{".md", ".markdown", ".rst", ".txt", ".adoc"} {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	return strings.HasPrefix(base, "readme") || strings.HasPrefix(base, "changelog")
}

// isDeclarationFile reports files that only declare what is implemented
// elsewhere: TypeScript declarations and Python stubs.
func isDeclarationFile(rel string) bool {
	return strings.HasSuffix(rel, ".d.ts") || strings.HasSuffix(rel, ".d.mts") || strings.HasSuffix(rel, ".d.cts") || strings.HasSuffix(rel, ".pyi")
}

func isTestPath(rel string) bool {
	return strings.HasSuffix(rel, "_test.go") || strings.Contains(rel, "testdata/") ||
		strings.Contains(rel, "/test/") || strings.HasPrefix(rel, "test/") ||
		strings.Contains(rel, ".test.") || strings.Contains(rel, ".spec.") || strings.HasPrefix(path.Base(rel), "test_") ||
		strings.Contains(rel, "__tests__/") || strings.HasPrefix(rel, "benchmarks/") || strings.Contains(rel, "/benchmarks/")
}

type qterms struct {
	set map[string]bool
}

func queryTerms(p *Parsed) qterms {
	qt := qterms{set: map[string]bool{}}
	for _, t := range queryTermsOf(strings.Join(p.Words, " ") + " " + strings.Join(p.Phrases, " ") + " " + strings.Join(p.Syms, " ")) {
		qt.set[t] = true
	}
	return qt
}

// bestLine picks the line of [start, end] that matches the query best: a
// phrase occurrence first, then the most distinct query terms, the symbol's
// declaration line breaking ties, then the earliest.
type fileLines struct {
	content []byte
	starts  []int
	size    int64
	mod     int64
}

// lineCache keeps the text and line starts of recently hit files, checked
// against size and mtime on every use (a stat), so hot files are not re-read
// and re-split on each query.
type lineCache struct {
	mu    sync.Mutex
	m     map[string]*fileLines
	bytes int
}

// lineCacheBytes bounds the cached files' text. Phrase checks read every
// candidate chunk's file (hundreds of files for a common phrase in the Go
// tree); 64 files made each such query re-read them all.
const lineCacheBytes = 16 << 20

func (c *lineCache) get(abs string) *fileLines {
	info, err := os.Stat(abs)
	if err != nil {
		return &fileLines{}
	}
	size, mod := info.Size(), info.ModTime().UnixNano()
	c.mu.Lock()
	fl, ok := c.m[abs]
	c.mu.Unlock()
	if ok && fl.size == size && fl.mod == mod {
		return fl
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return &fileLines{}
	}
	fl = &fileLines{content: b, starts: lineStarts(b), size: size, mod: mod}
	c.mu.Lock()
	if c.m == nil || c.bytes+len(b) > lineCacheBytes {
		c.m, c.bytes = map[string]*fileLines{}, 0 // crude, and enough: hits cluster
	}
	if old, ok := c.m[abs]; ok {
		c.bytes -= len(old.content)
	}
	c.m[abs] = fl
	c.bytes += len(b)
	c.mu.Unlock()
	return fl
}

func bestLine(fl *fileLines, start, end int, qt qterms, phrases []string, sym string) (int, string) {
	content, starts := fl.content, fl.starts
	if len(content) == 0 {
		return start, ""
	}
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
	terms := lineTerms{qt: qt}
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
		terms.seen, terms.found = terms.seen[:0], 0
		scanTokens(l, &terms)
		score += 10 * terms.found
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
	return bestN, clipLine(strings.TrimSpace(string(bestText)))
}

// lineTerms counts the distinct query terms among a line's tokens, as
// they are scanned: bestLine reads every line of every hit, and keeping
// the tokens of each was most of a search's garbage.
type lineTerms struct {
	qt    qterms
	seen  []string // the query terms found on the line so far
	found int
}

func (s *lineTerms) token(term []byte, _, _, _ int) {
	if !s.qt.set[string(term)] {
		return
	}
	for _, t := range s.seen {
		if t == string(term) {
			return
		}
	}
	s.seen = append(s.seen, string(term))
	s.found++
}

// maxLineText bounds Hit.Text (minified or generated lines).
const maxLineText = 240

func clipLine(s string) string {
	if len(s) <= maxLineText {
		return s
	}
	cut := maxLineText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
