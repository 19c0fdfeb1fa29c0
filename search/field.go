package search

import (
	"sync"
	"sync/atomic"
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
	// The slot blocks its terms were carved from (a code field's): block,
	// then more when they did not fit in one.
	block *slotBlock
	more  []*slotBlock
}

// sharedKeyword is a keyword field's analysis made once for a value that
// many documents carry (a file's path and language for each of its
// chunks, a chunk kind): bleve and zap only read a field's frequencies, so
// one map serves them all, where each chunk's own was ~15% of a build's
// analysis garbage.
type sharedKeyword struct {
	value []byte
	freqs index.TokenFrequencies
	size  int
}

func newSharedKeyword(value []byte) *sharedKeyword {
	freqs, size := keywordFreqs(value)
	return &sharedKeyword{value: value, freqs: freqs, size: size}
}

// keywordFreqs is a keyword field's analysis (the value itself, once) and
// its size for Size.
func keywordFreqs(value []byte) (index.TokenFrequencies, int) {
	tf := &index.TokenFreq{Term: value}
	tf.SetFrequency(1)
	return index.TokenFrequencies{string(value): tf}, 48 + 2*len(value)
}

// field is a document's field of the shared analysis.
func (k *sharedKeyword) field(name string) *indexField {
	return &indexField{name: name, value: k.value, keyword: true, length: 1, freqs: k.freqs, size: k.size}
}

// kindKeywords holds the shared analyses of chunk kinds (a few dozen
// names; past maxKindKeywords a kind gets its own).
var kindKeywords sync.Map // string → *sharedKeyword

const maxKindKeywords = 256

var kindKeywordCount atomic.Int32 // approximate, for the bound

func kindField(name, kind string) *indexField {
	if k, ok := kindKeywords.Load(kind); ok {
		return k.(*sharedKeyword).field(name)
	}
	k := newSharedKeyword([]byte(kind))
	if kindKeywordCount.Load() < maxKindKeywords {
		kindKeywordCount.Add(1)
		if prev, loaded := kindKeywords.LoadOrStore(kind, k); loaded {
			k = prev.(*sharedKeyword)
		}
	}
	return k.field(name)
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
	if f.freqs != nil { // shared, analyzed once
		return
	}
	if f.keyword {
		f.freqs, f.size = keywordFreqs(f.value)
		f.length = 1
		return
	}
	// The distinct terms a text likely has: one per 12 bytes of code (13
	// on the Go tree's net/, with parts and stems).
	expect := len(f.value)/12 + 4
	freqs, _ := f.maps().Get().(index.TokenFrequencies)
	if freqs == nil {
		freqs = make(index.TokenFrequencies, expect)
	}
	s := freqSink{freqs: freqs, field: f}
	s.block, _ = openBlocks.Get().(*slotBlock)
	scanTokens(f.value, &s)
	if b := s.block; b != nil {
		if b.n < len(b.slots) {
			openBlocks.Put(b)
		} else {
			b.seal()
		}
	}
	f.freqs, f.length, f.size = s.freqs, s.n, s.size
}

// freqMaps hold code fields' frequency maps, emptied, once the batch that
// carried them has been written (recycleFields): they were a tenth of a
// build's garbage. Bodies and the shorter meta fields keep apart, so a
// map is reused at about the size it grew to.
var freqMaps [2]sync.Pool

// maxRecycledTerms bounds the maps kept for reuse: a map never shrinks,
// and one chunk of an unusual file should not make every later one
// iterate a large table.
const maxRecycledTerms = 2048

func (f *indexField) maps() *sync.Pool {
	if f.name == fBody {
		return &freqMaps[0]
	}
	return &freqMaps[1]
}

// recycleFields empties the code fields' maps of docs, which a written
// batch carried, for the next batch's analysis, and gives back their term
// slots. (bleve and zap keep nothing of a document once its batch is
// applied: the segment copies what it needs.) The fields are not to be
// read again.
func recycleFields(docs []*document.Document) {
	for _, d := range docs {
		for _, fld := range d.Fields {
			f, ok := fld.(*indexField)
			if !ok || f.keyword || f.freqs == nil {
				continue
			}
			m := f.freqs
			f.freqs = nil
			if len(m) <= maxRecycledTerms {
				clear(m)
				f.maps().Put(m)
			}
			f.block.release()
			for _, b := range f.more {
				b.release()
			}
			f.block, f.more = nil, nil
		}
	}
}

// slotBlock is where term slots are carved from: the fields analyzed one
// after another on a P share blocks, so a field takes the slots it uses
// and no more. (Each field's own slab, sized by a guess, was a quarter of
// a build's garbage: a short field took 64 slots for its ten words.) A
// block is emptied and used again once it is full and every field carved
// from it has been recycled (their batch written); a block of fields that
// never are (a single file's update) is left to the collector.
type slotBlock struct {
	slots [slotBlockLen]freqSlot
	n     int // slots carved
	// state is twice the fields holding slots of the block that have not
	// been recycled, plus one once the block is full (no field takes
	// slots from it again). At 1 it is free.
	state atomic.Int64
}

// slotBlockLen fills a 32 KiB size class with the block's header.
const slotBlockLen = 511

// openBlocks hold the blocks fields are being carved from, one a P as a
// rule; freeBlocks the emptied ones.
var openBlocks, freeBlocks sync.Pool

func newSlotBlock() *slotBlock {
	if b, ok := freeBlocks.Get().(*slotBlock); ok {
		return b
	}
	return new(slotBlock)
}

// hold counts a field that takes slots from b.
func (b *slotBlock) hold() { b.state.Add(2) }

// seal marks b full; it is free at once when no field holds it.
func (b *slotBlock) seal() {
	if b.state.Add(1) == 1 {
		b.free()
	}
}

// release drops a field's hold; b is free when it was the last one and b
// is full.
func (b *slotBlock) release() {
	if b != nil && b.state.Add(-2) == 1 {
		b.free()
	}
}

func (b *slotBlock) free() {
	clear(b.slots[:b.n])
	b.n = 0
	b.state.Store(0)
	freeBlocks.Put(b)
}

// freqSink counts tokens into term frequencies, as bleve's
// analysis.TokenFrequency does without term vectors. Each distinct term has
// a slot that also remembers its stem (see countingSink).
type freqSink struct {
	freqs index.TokenFrequencies
	n     int
	size  int         // bytes of the distinct terms, for Size
	field *indexField // the field analyzed, which holds the blocks it takes slots from
	block *slotBlock  // where new terms' slots come from (nil: none yet)
	held  *slotBlock  // the last block the field took a hold of
	last  *freqSlot
	fresh bool // last was new: the sink keeps its bytes
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
	b := s.block
	if b == nil || b.n == len(b.slots) {
		if b != nil {
			b.seal()
		}
		b = newSlotBlock()
		s.block = b
	}
	if s.held != b {
		b.hold()
		if f := s.field; f.block == nil {
			f.block = b
		} else {
			f.more = append(f.more, b)
		}
		s.held = b
	}
	slot := &b.slots[b.n]
	b.n++
	slot.tf.Term = term
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
