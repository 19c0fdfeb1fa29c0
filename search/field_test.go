package search

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/document"
)

// TestFieldAsTextField checks that indexField analyzes to what bleve's
// TextField with the code analyzer gives: the same length and term
// frequencies (the fixture always; every file of $CAIRN_BENCH_CORPUS when
// set).
func TestFieldAsTextField(t *testing.T) {
	_, root := fixture(t)
	dirs := []string{root}
	if d := os.Getenv("CAIRN_BENCH_CORPUS"); d != "" {
		dirs = append(dirs, d)
	}
	inputs := [][]byte{nil, []byte(""), []byte("__"), []byte("parseHTTPRequest frames frames Ünïcode_wörd x2y"),
		[]byte("a_b_c HTTPServer2Go base64 " + string(make([]byte, 200))),
		// repeated words and parts between new ones: the counting sink
		// reuses the bytes of terms it had and stems each word once
		[]byte("fooBar fooBar barBaz foo_bar FooBar frames frames framed barBaz qux fooBar")}
	check := func(name string, b []byte) {
		t.Helper()
		f := newCodeField(fBody, b)
		f.Analyze()
		tf := document.NewTextFieldCustom(fBody, nil, b, optText, codeAnalyzer{})
		tf.Analyze()
		want := tf.AnalyzedTokenFrequencies()
		if f.AnalyzedLength() != tf.AnalyzedLength() || len(f.freqs) != len(want) {
			t.Fatalf("%s: length %d, TextField %d; terms %d, TextField %d", name, f.AnalyzedLength(), tf.AnalyzedLength(), len(f.freqs), len(want))
		}
		for k, v := range want {
			g := f.freqs[k]
			if g == nil || g.Frequency() != v.Frequency() || string(g.Term) != string(v.Term) {
				t.Fatalf("%s: term %q: %v, TextField %v", name, k, g, v)
			}
		}
		kw := newKeywordField(fPath, b)
		kw.Analyze()
		ktf := document.NewTextFieldCustom(fPath, nil, b, optText, keywordAnalyzerForTest(t))
		ktf.Analyze()
		if kw.AnalyzedLength() != ktf.AnalyzedLength() || len(kw.freqs) != len(ktf.AnalyzedTokenFrequencies()) || kw.freqs[string(b)] == nil {
			t.Fatalf("%s: keyword field differs", name)
		}
		for _, sh := range []*indexField{newSharedKeyword(b).field(fPath), kindField(fKind, string(b))} {
			sh.Analyze()
			if sh.AnalyzedLength() != kw.AnalyzedLength() || len(sh.freqs) != len(kw.freqs) || sh.freqs[string(b)] == nil ||
				string(sh.freqs[string(b)].Term) != string(b) || sh.freqs[string(b)].Frequency() != 1 || sh.Size() != kw.Size() {
				t.Fatalf("%s: shared keyword field differs from the field's own", name)
			}
		}
		// The next check's analysis takes this one's map.
		recycleFields([]*document.Document{{Fields: []document.Field{f}}})
		if f.freqs != nil {
			t.Fatalf("%s: recycled field keeps its map", name)
		}
	}
	for i, b := range inputs {
		check("input "+string(rune('0'+i)), b)
	}
	files := 0
	for _, dir := range dirs {
		filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || info.Size() > 1<<20 {
				return nil
			}
			b, err := os.ReadFile(p)
			if err == nil {
				check(p, b)
				files++
			}
			return nil
		})
	}
	if files == 0 {
		t.Fatal("no files checked")
	}
}

func keywordAnalyzerForTest(t *testing.T) analysis.Analyzer {
	t.Helper()
	a := newMapping().AnalyzerNamed(keyword.Name)
	if a == nil {
		t.Fatal("no keyword analyzer")
	}
	return a
}

// TestRecycledMapsStartEmpty: a map that a written batch's field gave back
// holds none of its terms when the next field's analysis takes it.
func TestRecycledMapsStartEmpty(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // the pool keeps what it holds
	reused := 0
	for range 20 {
		old := newCodeField(fBody, []byte("alpha beta gamma delta epsilon"))
		old.Analyze()
		m := old.freqs
		recycleFields([]*document.Document{{Fields: []document.Field{old}}})
		f := newCodeField(fBody, []byte("zeta"))
		f.Analyze()
		if reflect.ValueOf(f.freqs).UnsafePointer() == reflect.ValueOf(m).UnsafePointer() {
			reused++
		}
		if len(f.freqs) != 1 || f.freqs["zeta"] == nil || f.freqs["zeta"].Frequency() != 1 {
			t.Fatalf("analysis into a recycled map: %v, want only zeta once", f.freqs)
		}
	}
	if reused == 0 {
		t.Error("no map was reused")
	}
}

// A slot block is emptied for reuse only once it is full and no field
// holds it: not while a field still reads its slots, not while it is
// still being carved from.
func TestSlotBlockFreedWhenFullAndReleased(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // the pool keeps what it holds
	b := new(slotBlock)
	b.hold()
	b.hold()
	b.slots[0].tf.Term = []byte("x")
	b.n = len(b.slots)
	b.release()
	b.seal()
	if b.n == 0 {
		t.Fatal("a full block was emptied while a field held it")
	}
	b.release()
	if b.n != 0 || b.slots[0].tf.Term != nil || b.state.Load() != 0 {
		t.Fatalf("a full block no field holds was not emptied: n=%d state=%d", b.n, b.state.Load())
	}
	c := new(slotBlock)
	c.hold()
	c.n = 3
	c.release()
	if c.n != 3 {
		t.Fatal("a block still being carved from was emptied")
	}
	c.seal()
	if c.n != 0 {
		t.Fatal("a block sealed with no holder was not emptied")
	}
}

// distinctWords returns n distinct lowercase words.
func distinctWords(prefix string, n int) []byte {
	var b []byte
	for i := range n {
		b = append(b, prefix...)
		for j := i; ; j /= 26 {
			b = append(b, byte('a'+j%26))
			if j < 26 {
				break
			}
		}
		b = append(b, ' ')
	}
	return b
}

// A field whose terms span blocks holds each; recycling a field sharing
// a block with another leaves the other's terms as they were, and a
// field's blocks are emptied when it is recycled.
func TestRecycledSlotsLeaveOtherFieldsAlone(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for openBlocks.Get() != nil { // blocks other tests' fields still hold
	}
	small := newCodeField(fBody, distinctWords("qq", 40))
	small.Analyze()
	text := distinctWords("zz", 3*slotBlockLen)
	large := newCodeField(fBody, text)
	large.Analyze()
	if large.block == nil || len(large.more) < 2 {
		t.Fatalf("a field of %d distinct terms holds %d blocks, want 3 or more", 3*slotBlockLen, 1+len(large.more))
	}
	first := large.block
	recycleFields([]*document.Document{{Fields: []document.Field{small}}})
	tf := document.NewTextFieldCustom(fBody, nil, text, optText, codeAnalyzer{})
	tf.Analyze()
	for k, v := range tf.AnalyzedTokenFrequencies() {
		if g := large.freqs[k]; g == nil || string(g.Term) != k || g.Frequency() != v.Frequency() {
			t.Fatalf("after another field was recycled, term %q reads %v, want %v", k, g, v)
		}
	}
	if first.n == 0 {
		t.Fatal("a block the large field holds was emptied")
	}
	recycleFields([]*document.Document{{Fields: []document.Field{large}}})
	if first.n != 0 {
		t.Fatalf("the large field's first block (full) was not emptied when it was recycled: n=%d state=%d", first.n, first.state.Load())
	}
	if large.block != nil || large.more != nil || large.freqs != nil {
		t.Fatal("a recycled field keeps its blocks or map")
	}
}
