package search

import (
	"unsafe"

	"github.com/blevesearch/bleve/v2/document"
	index "github.com/blevesearch/bleve_index_api"
)

// indexField is an indexed, unstored text field without term vectors that
// analyzes itself straight into term frequencies. bleve's TextField runs an
// analyzer into a token stream (a Token per token) and then counts the
// stream into a map; for the ~20 million tokens of a Go tree build that
// was a large share of the analysis CPU and of the garbage.
type indexField struct {
	name    string
	value   []byte
	keyword bool // one term, the value itself (path, lang, kind, symbol keys)
	length  int
	freqs   index.TokenFrequencies
	size    int // of the term frequencies, counted as they are made
}

var _ document.Field = (*indexField)(nil)

func newCodeField(name string, value []byte) *indexField {
	return &indexField{name: name, value: value}
}

func newKeywordField(name string, value []byte) *indexField {
	return &indexField{name: name, value: value, keyword: true}
}

func (f *indexField) Name() string                        { return f.name }
func (f *indexField) ArrayPositions() []uint64            { return nil }
func (f *indexField) Options() index.FieldIndexingOptions { return optText }
func (f *indexField) Value() []byte                       { return f.value }
func (f *indexField) NumPlainTextBytes() uint64           { return uint64(len(f.value)) }
func (f *indexField) EncodedFieldType() byte              { return 't' } // as a TextField
func (f *indexField) AnalyzedLength() int                 { return f.length }
func (f *indexField) AnalyzedTokenFrequencies() index.TokenFrequencies {
	return f.freqs
}

// Size estimates the field's memory, for bleve's batch accounting (which
// asks once per document; walking the frequencies here cost 2% of a build).
func (f *indexField) Size() int {
	return 64 + len(f.name) + len(f.value) + f.size
}

func (f *indexField) Analyze() {
	if f.keyword {
		tf := &index.TokenFreq{Term: f.value}
		tf.SetFrequency(1)
		f.freqs = index.TokenFrequencies{string(f.value): tf}
		f.length, f.size = 1, 48+2*len(f.value)
		return
	}
	expect := len(f.value)/12 + 4
	s := freqSink{freqs: make(index.TokenFrequencies, expect), expect: expect}
	scanTokens(f.value, &s)
	f.freqs, f.length, f.size = s.freqs, s.n, s.size
}

// freqSink counts tokens into term frequencies, as bleve's
// analysis.TokenFrequency does without term vectors. Each distinct term has
// a slot that also remembers its stem (see countingSink).
type freqSink struct {
	freqs index.TokenFrequencies
	slab  []freqSlot
	n     int
	size  int // bytes of the distinct terms, for Size
	last  *freqSlot
	fresh bool // last was new: the sink keeps its bytes
	// expect is the number of distinct terms the text is likely to have
	// (one per 12 bytes of code: 13 on the Go tree's net/, with parts
	// and stems), the size of the first slab.
	expect int
}

// freqSlot is a term's frequency (first, so a *TokenFreq in freqs leads
// back to its slot) and, once known, its stem's slot: 64 bytes, a cache
// line.
type freqSlot struct {
	tf   index.TokenFreq
	stem *freqSlot // nil: not stemmed yet; noStemSlot: the word is its stem
}

// noStemSlot marks a word whose stem is itself.
var noStemSlot = new(freqSlot)

var _ countingSink = (*freqSink)(nil)

func (s *freqSink) token(term []byte, _, _, _ int) { s.last = s.count(term) }

func (s *freqSink) kept() bool { return s.fresh }

func (s *freqSink) restem() bool {
	w := s.last
	if w.stem == nil {
		return false
	}
	if w.stem != noStemSlot {
		w.stem.tf.SetFrequency(w.stem.tf.Frequency() + 1)
		s.n++
	}
	return true
}

func (s *freqSink) stemmed(st []byte, _, _, _ int) {
	w := s.last
	if st == nil {
		w.stem = noStemSlot
		return
	}
	w.stem = s.count(st)
	s.last = w
}

func (s *freqSink) count(term []byte) *freqSlot {
	s.n++
	if tf, ok := s.freqs[string(term)]; ok {
		tf.SetFrequency(tf.Frequency() + 1)
		s.fresh = false
		return (*freqSlot)(unsafe.Pointer(tf))
	}
	if len(s.slab) == cap(s.slab) {
		s.slab = make([]freqSlot, 0, max(64, s.expect-len(s.freqs)))
	}
	s.slab = append(s.slab, freqSlot{tf: index.TokenFreq{Term: term}})
	slot := &s.slab[len(s.slab)-1]
	slot.tf.SetFrequency(1)
	// The key shares the term's bytes: scanTokens never writes a term's
	// bytes again once the sink keeps them (nor are cached stems written),
	// and a string key of its own was one allocation per distinct term of
	// every chunk (~10 million in a build of the Go tree).
	s.freqs[unsafe.String(unsafe.SliceData(term), len(term))] = &slot.tf
	s.size += 48 + 2*len(term)
	s.fresh = true
	return slot
}
