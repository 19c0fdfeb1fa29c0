package search

import (
	"context"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
)

// Phrases without positions in the index. The body field keeps no term
// vectors: positions and offsets were two thirds of the index and a good
// part of a build's segment building and merging. A quoted phrase is
// matched as bleve's own phrase searcher does it, a conjunction over the
// phrase's positions (each the disjunction of the terms the analyzer put
// there: whole identifier, part, stem), so the candidates and their scores
// are the same; the positions are then checked on the chunk's text,
// re-read from the file and tokenized by the same analyzer.

// phraseQuery is a bleve query for one analyzed phrase in the body field.
type phraseQuery struct {
	ix    *Index
	slots [][]string // the terms at each consecutive position
}

// newPhraseQuery analyzes text; nil when it has no terms.
func (ix *Index) newPhraseQuery(text string) *phraseQuery {
	slots := phraseSlots(tokenize([]byte(text), nil))
	if len(slots) == 0 {
		return nil
	}
	return &phraseQuery{ix: ix, slots: slots}
}

// phraseSlots groups tokens by position, from the first.
func phraseSlots(ts []*analysis.Token) [][]string {
	if len(ts) == 0 {
		return nil
	}
	first, last := ts[0].Position, ts[0].Position
	for _, t := range ts {
		first = min(first, t.Position)
		last = max(last, t.Position)
	}
	slots := make([][]string, last-first+1)
	for _, t := range ts {
		i := t.Position - first
		term := string(t.Term)
		dup := false
		for _, s := range slots[i] {
			dup = dup || s == term
		}
		if !dup {
			slots[i] = append(slots[i], term)
		}
	}
	return slots
}

func (q *phraseQuery) Searcher(ctx context.Context, r index.IndexReader, _ mapping.IndexMapping, opts search.SearcherOptions) (search.Searcher, error) {
	var must []search.Searcher
	closeAll := func() {
		for _, s := range must {
			_ = s.Close()
		}
	}
	for _, slot := range q.slots {
		var ts []search.Searcher
		for _, term := range slot {
			s, err := searcher.NewTermSearcher(ctx, r, term, fBody, 1, opts)
			if err != nil {
				for _, s := range ts {
					_ = s.Close()
				}
				closeAll()
				return nil, err
			}
			ts = append(ts, s)
		}
		if len(ts) == 1 {
			must = append(must, ts[0])
			continue
		}
		d, err := searcher.NewDisjunctionSearcher(ctx, r, ts, 1, opts)
		if err != nil {
			for _, s := range ts {
				_ = s.Close()
			}
			closeAll()
			return nil, err
		}
		must = append(must, d)
	}
	conj, err := searcher.NewConjunctionSearcher(ctx, r, must, opts)
	if err != nil {
		closeAll()
		return nil, err
	}
	var toks []*analysis.Token
	return searcher.NewFilteringSearcher(ctx, conj, func(_ *search.SearchContext, d *search.DocumentMatch) bool {
		id, err := r.ExternalID(d.IndexInternalID)
		if err != nil {
			return false
		}
		rel, start, end, _, _, ok := parseID(id)
		if !ok {
			return false
		}
		fl := q.ix.lines.get(q.ix.ws.Abs(rel))
		if len(fl.content) == 0 {
			return false
		}
		toks = tokenize(clip(lineText(fl.content, fl.starts, start, end)), toks[:0])
		return hasPhrase(toks, q.slots)
	}), nil
}

// hasPhrase reports whether the tokens hold a term of slots[0] at some
// position p, one of slots[1] at p+1, and so on.
func hasPhrase(ts []*analysis.Token, slots [][]string) bool {
	if len(ts) == 0 {
		return false
	}
	maxPos := ts[len(ts)-1].Position // positions never decrease
	// at[i] marks the positions holding a term of slot i.
	at := make([][]bool, len(slots))
	for i := range at {
		at[i] = make([]bool, maxPos+1)
	}
	for _, t := range ts {
		for i, slot := range slots {
			for _, s := range slot {
				if string(t.Term) == s {
					at[i][t.Position] = true
				}
			}
		}
	}
	for p := 0; p+len(slots)-1 <= maxPos; p++ {
		ok := true
		for i := range slots {
			if !at[i][p+i] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}
