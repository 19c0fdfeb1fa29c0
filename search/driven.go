package search

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/scorer"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// A driven question's search, read straight from the postings.
//
// A question with no phrase or filter whose rarest words drive its search
// (drivingTerms), or whose compound identifiers are looked for whole
// (compoundWholes), is a query of this shape:
//
//	conjunction(
//	    the required terms in the body, boost 0: all of them (the wholes),
//	        or any (a disjunction: the driving terms; the wholes when no
//	        chunk holds them all),
//	    disjunction(match(words, body), match(words, meta, boostMeta)))
//
// bleve evaluates it by advancing every term's iterator, through three
// levels of disjunction and a conjunction, to each chunk the required
// terms find: at 10× the Go tree a question's 26 iterators to 26,500
// candidates, most of the search's time in the searchers' bookkeeping
// rather than in the postings. drivenHits advances each term's iterator
// to the sorted candidates itself (or reads a short list whole) and
// computes every score as bleve does: its BM25 term score (idf, the
// square root of the frequency, the length from the norm), its query
// norm over the whole query, each disjunction's coordination, and each
// sum in the order bleve adds it (the order its searchers sort into by
// count). The hits and their scores are bleve's to the bit
// (TestDrivenHitsMatchBleve), and so is the pool made from them.

// errNotDriven says the query has a shape drivenHits does not evaluate
// (the caller runs it through bleve).
var errNotDriven = errors.New("not a driven query")

// drivenTerm is one (field, term) of the question: its postings, read
// once, give every clause on it (a repeated token makes several) its
// score.
type drivenTerm struct {
	term, field string
	count       uint64 // chunks holding it: the idf's, and its searcher's place in a sort
	boost       float64
	idf         float64
	avgLen      float64 // the field's average length, as bleve's BM25 rounds it
	weight      float64 // the clause's query weight: boost · idf · query norm
}

// advanceRatio: a term with more postings than this many times the
// candidates is advanced to each candidate rather than read whole (the
// nine heaviest searches at 10× the Go tree took the least time from
// 0.5 down: docs/scale.md).
var advanceRatio = 0.5

// drivenScratch holds a search's per-candidate arrays between searches.
type drivenScratch struct {
	cands   []uint64
	scores  []float64 // per term column, per candidate
	hit     []bool    // the same
	total   []float64 // per candidate
	matched []int32   // the candidates that match
	sel     []float64 // best's
}

// maxDrivenCells bounds a driven search's per-term, per-candidate arrays
// (9 bytes a cell): past it the query goes to bleve, which keeps no such
// arrays. At 10× the Go tree the heaviest question needs 26 × 26,500.
var maxDrivenCells = 1 << 21 // a variable for the tests

var drivenPool = sync.Pool{New: func() any { return new(drivenScratch) }}

// drivenHits returns the size best chunks of the query for the words in
// text that requires the terms need in the body (every one of them, or
// any), by score, then by index order (as bleve's collector keeps them),
// and how many chunks match. errNotDriven means the query is not one it
// evaluates.
func (ix *Index) drivenHits(ctx context.Context, text string, need []string, every bool, stats *search.BM25Stats, size int) (search.DocumentMatchCollection, uint64, error) {
	an := ix.idx.Mapping().AnalyzerNamed(analyzerQuery)
	if an == nil || len(need) == 0 || stats == nil || stats.DocCount <= 0 {
		return nil, 0, errNotDriven
	}
	var tokens []string
	for _, t := range an.Analyze([]byte(text)) {
		tokens = append(tokens, string(t.Term))
	}
	// bleve turns a disjunction of more clauses than this into a heap,
	// whose order of summation is not the searchers' sorted order.
	if len(tokens) == 0 || len(tokens) > searcher.DisjunctionHeapTakeover || !every && len(need) > searcher.DisjunctionHeapTakeover {
		return nil, 0, errNotDriven
	}
	adv, err := ix.idx.Advanced()
	if err != nil {
		return nil, 0, fmt.Errorf("opening the index: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, 0, fmt.Errorf("opening an index reader: %w", err)
	}
	defer r.Close()
	q, err := newDrivenQuery(ctx, r, tokens, stats)
	if err != nil {
		return nil, 0, err
	}
	defer q.close()

	sc := drivenPool.Get().(*drivenScratch)
	defer drivenPool.Put(sc)
	cands, err := candidates(ctx, r, need, every, sc.cands[:0])
	sc.cands = cands
	if err != nil {
		return nil, 0, err
	}
	if len(q.cols)*len(cands) > maxDrivenCells {
		return nil, 0, errNotDriven
	}
	if err := q.scoreColumns(ctx, cands, sc); err != nil {
		return nil, 0, err
	}
	matched := q.combine(len(cands), sc)
	total := uint64(len(matched))
	matched = best(matched, sc.total, size, &sc.sel)
	out := make(search.DocumentMatchCollection, 0, len(matched))
	for _, i := range matched {
		iid := index.IndexInternalID(binary.BigEndian.AppendUint64(nil, cands[i]))
		id, err := r.ExternalID(iid)
		if err != nil {
			return nil, 0, fmt.Errorf("reading a hit's id: %w", err)
		}
		out = append(out, &search.DocumentMatch{ID: id, IndexInternalID: iid, Score: sc.total[i]})
	}
	return out, total, nil
}

// drivenQuery is the scored half of a driven query: its distinct
// (field, term) columns, each with its open postings, and each match
// query's clauses as columns in the order bleve's disjunction sorts them.
type drivenQuery struct {
	cols       []drivenTerm
	readers    []index.TermFieldReader // per column
	body, meta []int                   // clauses, one per token (repeats included)
}

// newDrivenQuery opens the columns of the words' tokens in body and meta
// and sets each clause's query weight as bleve would for the whole query.
func newDrivenQuery(ctx context.Context, r index.IndexReader, tokens []string, stats *search.BM25Stats) (*drivenQuery, error) {
	docTotal := uint64(stats.DocCount)
	avgLen := func(field string) float64 {
		card, ok := stats.FieldCardinality[field]
		if !ok || docTotal == 0 {
			return 0
		}
		return math.Ceil(float64(card) / float64(docTotal))
	}
	bodyLen, metaLen := avgLen(fBody), avgLen(fMeta)
	if bodyLen <= 0 || metaLen <= 0 {
		return nil, errNotDriven // bleve would score by tf-idf
	}
	q := &drivenQuery{}
	colOf := map[[2]string]int{}
	// clauses returns a match query's clauses in field: a body clause's
	// boost is 1, a meta clause's boostMeta.
	clauses := func(field string) ([]int, error) {
		ord := make([]int, len(tokens))
		for i, term := range tokens {
			k := [2]string{field, term}
			c, ok := colOf[k]
			if !ok {
				tfr, err := r.TermFieldReader(ctx, []byte(term), field, true, true, false)
				if err != nil {
					return nil, fmt.Errorf("reading the postings of %q: %w", term, err)
				}
				q.readers = append(q.readers, tfr)
				n := tfr.Count()
				t := drivenTerm{term: term, field: field, count: n, boost: 1, avgLen: bodyLen,
					idf: math.Log(1 + (float64(docTotal)-float64(n)+0.5)/(float64(n)+0.5))}
				if field == fMeta {
					t.boost, t.avgLen = boostMeta, metaLen
				}
				q.cols = append(q.cols, t)
				c = len(q.cols) - 1
				colOf[k] = c
			}
			ord[i] = c
		}
		sortLikeBleve(ord, func(c int) uint64 { return q.cols[c].count })
		return ord, nil
	}
	var err error
	if q.body, err = clauses(fBody); err == nil {
		q.meta, err = clauses(fMeta)
	}
	if err != nil {
		q.close()
		return nil, err
	}
	// The query norm: 1/√(the sum of the squared clause weights), each
	// disjunction summing its searchers' in their sorted order. The
	// required terms weigh 0, and 0 + x is x, so the conjunction's sum is
	// the words' two; two summands add up the same in either order.
	weight := func(ord []int) float64 {
		var w float64
		for _, c := range ord {
			s := q.cols[c].boost * q.cols[c].idf
			w += s * s
		}
		return w
	}
	queryNorm := 1.0 / math.Sqrt(weight(q.body)+weight(q.meta))
	for c := range q.cols {
		q.cols[c].weight = q.cols[c].boost * q.cols[c].idf * queryNorm
	}
	return q, nil
}

func (q *drivenQuery) close() {
	for _, tfr := range q.readers {
		_ = tfr.Close()
	}
}

// scoreColumns sets each column's score in each candidate holding it
// (sc.scores and sc.hit, column after column).
func (q *drivenQuery) scoreColumns(ctx context.Context, cands []uint64, sc *drivenScratch) error {
	n := len(cands)
	sc.scores = slices.Grow(sc.scores[:0], len(q.cols)*n)[:len(q.cols)*n]
	sc.hit = slices.Grow(sc.hit[:0], len(q.cols)*n)[:len(q.cols)*n]
	clear(sc.hit)
	for c := range q.cols {
		if err := scoreColumn(ctx, q.readers[c], &q.cols[c], cands, sc.scores[c*n:(c+1)*n], sc.hit[c*n:(c+1)*n]); err != nil {
			return err
		}
	}
	return nil
}

// combine sets each of the n candidates' score (sc.total) and returns
// those that match, in index order: each match query's sum over its
// clauses that hold, in their sorted order, times their share of its
// clauses; then the two summed, times their share of two. (The
// conjunction adds the required terms' 0s before or after: x + 0 is x
// either way.)
func (q *drivenQuery) combine(n int, sc *drivenScratch) []int32 {
	sc.total = slices.Grow(sc.total[:0], n)[:n]
	disj := func(ord []int, i int) (float64, bool) {
		var sum float64
		m := 0
		for _, c := range ord {
			if sc.hit[c*n+i] {
				sum += sc.scores[c*n+i]
				m++
			}
		}
		if m == 0 {
			return 0, false
		}
		return sum * (float64(m) / float64(len(ord))), true
	}
	matched := sc.matched[:0]
	for i := range n {
		var sum float64
		k := 0
		for _, ord := range [2][]int{q.body, q.meta} {
			if s, ok := disj(ord, i); ok {
				sum += s
				k++
			}
		}
		if k == 0 {
			continue // no word in body or meta: the conjunction fails
		}
		sc.total[i] = sum * (float64(k) / 2)
		matched = append(matched, int32(i))
	}
	sc.matched = matched
	return matched
}

// best returns the k best of the candidates in matched by score, then
// by index order (as bleve's collector keeps them), sorted. Most of a
// driven search's 26,500 matches at 10× the Go tree are not among its
// 250: the k-th best score is found first (quickselect over a copy), and
// only the matches that reach it are sorted.
func best(matched []int32, score []float64, k int, buf *[]float64) []int32 {
	if len(matched) > k && k > 0 {
		vs := slices.Grow((*buf)[:0], len(matched))[:len(matched)]
		*buf = vs
		for j, i := range matched {
			vs[j] = score[i]
		}
		kth := nthLargest(vs, k-1)
		out := matched[:0]
		for _, i := range matched {
			if score[i] >= kth {
				out = append(out, i)
			}
		}
		matched = out
	}
	slices.SortFunc(matched, func(a, b int32) int {
		switch sa, sb := score[a], score[b]; {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return int(a - b)
	})
	return matched[:min(k, len(matched))]
}

// nthLargest returns the value that would be at index n of vs sorted in
// descending order (0 ≤ n < len(vs)), reordering vs. The scores are
// finite.
func nthLargest(vs []float64, n int) float64 {
	lo, hi := 0, len(vs)-1
	for lo < hi {
		p := vs[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for vs[i] > p {
				i++
			}
			for vs[j] < p {
				j--
			}
			if i <= j {
				vs[i], vs[j] = vs[j], vs[i]
				i++
				j--
			}
		}
		switch {
		case n <= j:
			hi = j
		case n >= i:
			lo = i
		default:
			return vs[n]
		}
	}
	return vs[n]
}

// sortLikeBleve orders a disjunction's clauses as bleve's searchers sort
// themselves (sort.Sort by count, ascending): the same comparisons on the
// same starting order give the same permutation, ties included.
func sortLikeBleve(ord []int, count func(int) uint64) {
	sort.Sort(byCount{ord, count})
}

type byCount struct {
	ord   []int
	count func(int) uint64
}

func (b byCount) Len() int           { return len(b.ord) }
func (b byCount) Less(i, j int) bool { return b.count(b.ord[i]) < b.count(b.ord[j]) }
func (b byCount) Swap(i, j int)      { b.ord[i], b.ord[j] = b.ord[j], b.ord[i] }

// candidates returns the chunks holding every term of need in the body
// (or any, when not every), in index order, appended to out.
func candidates(ctx context.Context, r index.IndexReader, need []string, every bool, out []uint64) ([]uint64, error) {
	var tfd index.TermFieldDoc
	need = slices.Compact(slices.Sorted(slices.Values(need)))
	for _, d := range need {
		tfr, err := r.TermFieldReader(ctx, []byte(d), fBody, false, false, false)
		if err != nil {
			return out, fmt.Errorf("reading the postings of %q: %w", d, err)
		}
		for i := 0; ; i++ {
			if i&4095 == 0 && ctx.Err() != nil {
				_ = tfr.Close()
				return out, ctx.Err()
			}
			got, err := tfr.Next(tfd.Reset())
			if err != nil {
				_ = tfr.Close()
				return out, fmt.Errorf("reading the postings of %q: %w", d, err)
			}
			if got == nil {
				break
			}
			out = append(out, binary.BigEndian.Uint64(got.ID))
		}
		_ = tfr.Close()
	}
	slices.Sort(out)
	if !every || len(need) == 1 {
		return slices.Compact(out), nil
	}
	// A chunk is in each term's postings once: it holds them all when it
	// is listed len(need) times.
	kept := out[:0]
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j] == out[i] {
			j++
		}
		if j-i == len(need) {
			kept = append(kept, out[i])
		}
		i = j
	}
	return kept, nil
}

// scoreColumn sets t's score in each candidate holding it, as bleve's
// term scorer computes it, and marks those candidates. Its iterator is
// advanced to each candidate, or, when it holds fewer than advanceRatio
// times the candidates, read whole (scorch converts every posting it
// returns, so reading costs more per posting than skipping).
func scoreColumn(ctx context.Context, tfr index.TermFieldReader, t *drivenTerm, cands []uint64, scores []float64, hit []bool) error {
	var tfd index.TermFieldDoc
	advance := float64(tfr.Count()) > advanceRatio*float64(len(cands))
	var id [8]byte
	i := 0
	for k := 0; i < len(cands); k++ {
		if k&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		var got *index.TermFieldDoc
		var err error
		if advance {
			binary.BigEndian.PutUint64(id[:], cands[i])
			got, err = tfr.Advance(id[:], tfd.Reset())
		} else {
			got, err = tfr.Next(tfd.Reset())
		}
		if err != nil {
			return fmt.Errorf("reading the postings of %q: %w", t.term, err)
		}
		if got == nil {
			return nil
		}
		d := binary.BigEndian.Uint64(got.ID)
		for i < len(cands) && cands[i] < d {
			i++
		}
		if i < len(cands) && cands[i] == d {
			hit[i], scores[i] = true, t.docScore(got.Freq, got.Norm)
			i++
		}
	}
	return nil
}

// docScore is bleve's BM25 term score of a chunk (scorer.TermQueryScorer),
// written as it writes it, times the clause's query weight.
func (t *drivenTerm) docScore(freq uint64, norm float64) float64 {
	var tf float64
	if freq < scorer.MaxSqrtCache {
		tf = scorer.SqrtCache[int(freq)]
	} else {
		tf = math.Sqrt(float64(freq))
	}
	fieldLength := 1 / (norm * norm)
	score := t.idf * (tf * search.BM25_k1) /
		(tf + search.BM25_k1*(1-search.BM25_b+(search.BM25_b*fieldLength/t.avgLen)))
	if t.weight != 1.0 {
		score = score * t.weight
	}
	return score
}
