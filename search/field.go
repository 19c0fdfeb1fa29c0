package search

import (
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

// Size estimates the field's memory, for bleve's batch accounting.
func (f *indexField) Size() int {
	n := 64 + len(f.name) + len(f.value)
	for k, tf := range f.freqs {
		n += 48 + len(k) + len(tf.Term)
	}
	return n
}

func (f *indexField) Analyze() {
	if f.keyword {
		tf := &index.TokenFreq{Term: f.value}
		tf.SetFrequency(1)
		f.freqs = index.TokenFrequencies{string(f.value): tf}
		f.length = 1
		return
	}
	s := freqSink{freqs: make(index.TokenFrequencies, len(f.value)/16+4)}
	scanTokens(f.value, &s)
	f.freqs, f.length = s.freqs, s.n
}

// freqSink counts tokens into term frequencies, as bleve's
// analysis.TokenFrequency does without term vectors.
type freqSink struct {
	freqs index.TokenFrequencies
	slab  []index.TokenFreq
	n     int
}

func (s *freqSink) token(term []byte, _, _, _ int) {
	s.n++
	if tf, ok := s.freqs[string(term)]; ok {
		tf.SetFrequency(tf.Frequency() + 1)
		return
	}
	if len(s.slab) == cap(s.slab) {
		s.slab = make([]index.TokenFreq, 0, 64)
	}
	s.slab = append(s.slab, index.TokenFreq{Term: term})
	tf := &s.slab[len(s.slab)-1]
	tf.SetFrequency(1)
	s.freqs[string(term)] = tf
}
