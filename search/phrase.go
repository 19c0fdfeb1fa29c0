package search

import (
	"context"
	"sort"

	"github.com/blevesearch/bleve/v2"
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
	check bool       // check positions (else only the conjunction)
}

// newPhraseQuery analyzes text; nil when it has no terms. Without check,
// the query matches the phrase's terms anywhere in a chunk, with the
// phrase's scores: the caller checks positions (checkPhrases).
func (ix *Index) newPhraseQuery(text string, check bool) *phraseQuery {
	slots := phraseSlots(tokenize([]byte(text), nil))
	if len(slots) == 0 {
		return nil
	}
	return &phraseQuery{ix: ix, slots: slots, check: check}
}

// phraseSlots returns the analyzed slots of each phrase of p that has terms.
func (p *Parsed) phraseSlots() [][][]string {
	var out [][][]string
	for _, ph := range p.Phrases {
		if s := phraseSlots(tokenize([]byte(ph), nil)); len(s) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// phraseScan is how many times the usual pool a search with phrases
// collects before checking their positions (0: check inside the search).
var phraseScan = 4

// checkPhrases keeps, in score order (ties by id, as pool orders them),
// the hits of sr whose chunk holds every phrase, up to want. It reports
// false when that may differ from checking inside the search: bleve
// stopped collecting (more candidates exist) and fewer than want passed,
// or the last kept hit ties with the lowest collected score. Total
// becomes the number kept when every candidate was checked, and stays the
// number of candidates otherwise.
func (ix *Index) checkPhrases(sr *bleve.SearchResult, phrases [][][]string, want int) bool {
	hits := sr.Hits
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		return hits[i].ID < hits[j].ID
	})
	truncated := uint64(len(hits)) < sr.Total
	kept := hits[:0:0]
	var lastRel string
	var last *fileLines
	checked := 0
	for _, h := range hits {
		if len(kept) == want {
			break
		}
		checked++
		rel, start, end, _, _, ok := parseID(h.ID)
		if !ok {
			continue
		}
		if last == nil || rel != lastRel {
			lastRel, last = rel, ix.lines.get(ix.ws.Abs(rel))
		}
		if len(last.content) == 0 {
			continue
		}
		text := clip(lineText(last.content, last.starts, start, end))
		all := true
		for _, slots := range phrases {
			if !hasPhrase(text, slots) {
				all = false
				break
			}
		}
		if all {
			kept = append(kept, h)
		}
	}
	if truncated && (len(kept) < want || kept[len(kept)-1].Score == hits[len(hits)-1].Score) {
		return false
	}
	if checked == len(hits) && !truncated {
		sr.Total = uint64(len(kept))
	}
	sr.Hits = kept
	return true
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
	if !q.check {
		return conj, nil
	}
	// Candidates come in document order, a file's chunks together: the
	// file is looked up (stat, and read when the cache misses) once per
	// run of its chunks.
	var lastRel string
	var last *fileLines
	return searcher.NewFilteringSearcher(ctx, conj, func(_ *search.SearchContext, d *search.DocumentMatch) bool {
		id, err := r.ExternalID(d.IndexInternalID)
		if err != nil {
			return false
		}
		rel, start, end, _, _, ok := parseID(id)
		if !ok {
			return false
		}
		if last == nil || rel != lastRel {
			lastRel, last = rel, q.ix.lines.get(q.ix.ws.Abs(rel))
		}
		if len(last.content) == 0 {
			return false
		}
		return hasPhrase(clip(lineText(last.content, last.starts, start, end)), q.slots)
	}), nil
}

// hasPhrase reports whether text, analyzed as the index analyzes it, holds
// a term of slots[0] at some position p, one of slots[1] at p+1, and so on.
func hasPhrase(text []byte, slots [][]string) bool {
	if len(slots) > 64 {
		return hasPhraseLong(tokenize(text, nil), slots)
	}
	m := phraseMatcher{slots: slots, last: 1 << (len(slots) - 1)}
	for _, slot := range slots {
		for _, t := range slot {
			m.first[t[0]] = true
		}
	}
	scanTokens(text, &m)
	m.advance(-1)
	return m.found
}

// phraseMatcher runs the shift-and algorithm over the token stream: bit i of
// state says the phrase's first i+1 slots end at the current position.
type phraseMatcher struct {
	slots [][]string
	pos   int
	at    uint64 // slots a token at pos belongs to
	state uint64
	last  uint64
	found bool
	first [256]bool // first bytes of the slots' terms
}

func (m *phraseMatcher) stop() bool { return m.found }

// wantStem: a word's stem can only be a slot's term if it starts with the
// same byte (Porter stemming rewrites suffixes only; words under 4 bytes
// are not stemmed).
func (m *phraseMatcher) wantStem(w []byte) bool { return m.first[w[0]] }

func (m *phraseMatcher) token(term []byte, _, _, pos int) {
	if pos != m.pos {
		m.advance(pos)
	}
	for i, slot := range m.slots {
		for _, s := range slot {
			if string(term) == s {
				m.at |= 1 << i
				break
			}
		}
	}
}

// advance closes position m.pos and moves to pos (consecutive: the
// analysis numbers each identifier run one more than the last).
func (m *phraseMatcher) advance(pos int) {
	m.state = ((m.state << 1) | 1) & m.at
	if m.state&m.last != 0 {
		m.found = true
	}
	if pos != m.pos+1 { // (never: a gap ends any partial match)
		m.state = 0
	}
	m.at = 0
	m.pos = pos
}

// hasPhraseLong is hasPhrase for phrases of more than 64 positions.
func hasPhraseLong(ts []*analysis.Token, slots [][]string) bool {
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
