package search

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/workspace"
)

// TestChunkDocs: the documentation chunking leaves in the body reaches the
// chunks' Heads (the meta field): a Python module docstring and def
// docstrings, a file's header comment without its licence, the summary of
// nested members' doc comments.
func TestChunkDocs(t *testing.T) {
	py := `"""Queues that coordinate producers and consumers."""

import collections


class Gate:
    """A gate lets a bounded number of holders through at once."""

    def enter(self):
        """Wait until a place is free, then take it."""
        pass
`
	cs := chunkFile([]byte(py), treeSitterDecls("q.py", "python", []byte(py)))
	head := string(allHeads(cs))
	for _, want := range []string{"coordinate producers and consumers", "bounded number of holders", "Wait until a place is free"} {
		if !strings.Contains(head, want) {
			t.Errorf("python: Heads lack %q:\n%s", want, head)
		}
	}
	goSrc := `// Copyright 2009 The Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package gate admits a bounded number of holders.
package gate

import "sync"

// Enter blocks until a place is free.
func Enter(m *sync.Mutex) {}
`
	cs = chunkFile([]byte(goSrc), treeSitterDecls("gate.go", "go", []byte(goSrc)))
	if len(cs) < 2 || cs[0].Kind != "text" {
		t.Fatalf("go: chunks %+v", cs)
	}
	if h := string(cs[0].Head); !strings.Contains(h, "Package gate admits") || strings.Contains(h, "Copyright") || strings.Contains(h, "BSD") {
		t.Errorf("go: header Head %q: want the package doc without the licence", h)
	}
	// A large class is windowed; each window names the members it starts
	// with their doc's summary, not the whole doc.
	var java strings.Builder
	java.WriteString("/**\n * A table of entries.\n */\npublic class Table {\n")
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&java, "    /**\n     * Summary of member %d.\n     * Second line.\n     * Third line.\n     * Fourth line, left out.\n     */\n    public void m%d() {\n    }\n\n", i, i)
	}
	java.WriteString("}\n")
	src := []byte(java.String())
	cs = chunkFile(src, treeSitterDecls("Table.java", "java", src))
	if string(src) != java.String() {
		t.Fatalf("java: chunking wrote into the file's content")
	}
	for _, c := range cs {
		if !strings.Contains(java.String(), string(c.Text)) {
			t.Fatalf("java: chunk %d-%d's text is not the file's", c.Start, c.End)
		}
	}
	head = string(allHeads(cs))
	if !strings.Contains(head, "Summary of member 39.") || !strings.Contains(head, "public void m39()") {
		t.Errorf("java: the last member's summary is missing from the Heads")
	}
	if strings.Contains(head, "Fourth line") {
		t.Errorf("java: a nested doc's fourth line reached a Head")
	}
	// Members without a doc (or with tags only) add nothing: their
	// signatures' words are the body's, and in the meta field they
	// would score as the chunk's names.
	ts := `/**
 * Collects the problems found while validating.
 */
export class Report {
  constructor(problems) { this.problems = problems; }
  get message() { return this.problems.join("; "); }
  /**
   * @deprecated Use size instead.
   */
  count(message) { return this.problems.length; }
  /**
   * Whether no problem was found.
   */
  get isEmpty() { return this.problems.length === 0; }
}
`
	cs = chunkFile([]byte(ts), treeSitterDecls("report.js", "javascript", []byte(ts)))
	head = string(allHeads(cs))
	if !strings.Contains(head, "Whether no problem was found.") || !strings.Contains(head, "get isEmpty()") {
		t.Errorf("javascript: the documented member is missing from the Heads:\n%s", head)
	}
	for _, unwanted := range []string{"message", "count(", "@deprecated", "constructor"} {
		if strings.Contains(head, unwanted) {
			t.Errorf("javascript: %q reached a Head:\n%s", unwanted, head)
		}
	}
}

func allHeads(cs []chunk) []byte {
	var b []byte
	for _, c := range cs {
		b = append(b, c.Head...)
	}
	return b
}

// vocabFixture writes n Go files whose documented functions pair the doc
// words "admits" and "holders" with the name part "gate", and one file
// that uses the part without those words.
func vocabFixture(t *testing.T, root string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		writeFile(t, root, fmt.Sprintf("p%d/g.go", i), fmt.Sprintf(`package p%d

// OpenGate%d admits a bounded number of holders at once.
func OpenGate%d() {}

// Other%d parses numbers.
func Other%d() {}
`, i, i, i, i, i))
	}
	writeFile(t, root, "z/z.go", "package z\n\n// Reads holders of tickets from a file.\nfunc ReadTickets() {}\n\n// Describes a gate.\nfunc gateDoc() {}\n")
	for i := 0; i < 16; i++ { // other documented code, so a part's share of all files is small
		writeFile(t, root, fmt.Sprintf("f%d/f.go", i), fmt.Sprintf("package f%d\n\n// Parse%d reads numbers.\nfunc Parse%d() {}\n", i, i, i))
	}
}

// TestVocabExpansion: a question's words expand to the name parts they
// document across the workspace, the counts follow updates and removals,
// and the vocabulary survives a reopen through the manifest.
func TestVocabExpansion(t *testing.T) {
	root := t.TempDir()
	vocabFixture(t, root, 4)
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	ix := openIndex(t, ws, state, nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	q := []string{"what", "admits", "holders"}
	has := func(ix *Index, term string) bool {
		for _, e := range ix.vocab.expand(q) {
			if e.term == term {
				return e.weight > 0
			}
		}
		return false
	}
	if !has(ix, "gate") {
		t.Fatalf("expand(%v) = %v, want gate", q, ix.vocab.expand(q))
	}
	for _, e := range ix.vocab.expand(q) {
		if e.term == "admit" || e.term == "holder" {
			t.Errorf("expand(%v) = %v: a question's own word came back", q, ix.vocab.expand(q))
		}
	}
	// The question finds z.go's gateDoc ahead of nothing it lacked:
	// expansions only rescore what the words matched, so the hits keep
	// their order without them when no chunk has the part.
	hits := mustSearch(t, ix, "admits holders")
	if len(hits) == 0 || !strings.HasPrefix(hits[0].Path, "p") {
		t.Errorf("hits %v: want a documented OpenGate first", hits)
	}
	// Below expandMinFiles files the pair no longer counts.
	for i := 1; i < 4; i++ {
		if err := ix.IndexFile(fmt.Sprintf("p%d/g.go", i), []byte(fmt.Sprintf("package p%d\n", i)), "go", nil); err != nil {
			t.Fatal(err)
		}
	}
	if has(ix, "gate") {
		t.Errorf("after rewriting 3 of 4 files, expand(%v) = %v: want no gate", q, ix.vocab.expand(q))
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	vocabFixture(t, root, 4)
	ix2 := openIndex(t, ws, state, nil)
	if _, err := ix2.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !has(ix2, "gate") {
		t.Fatalf("after restoring the files and reopening, expand(%v) = %v, want gate", q, ix2.vocab.expand(q))
	}
	if err := ix2.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened without changes, the manifest alone restores it.
	ix3 := openIndex(t, ws, state, nil)
	if n := len(ix3.vocab.fids); n != 21 {
		t.Errorf("reopened vocabulary has %d files, want 21 (4 p*/g.go, z/z.go, 16 f*/f.go)", n)
	}
	if !has(ix3, "gate") {
		t.Errorf("reopened: expand(%v) = %v, want gate", q, ix3.vocab.expand(q))
	}
}

// TestDocWords: prose words are stemmed as the index stems them; names
// the doc mentions (camelCase, ALLCAPS) and stop words are not words.
func TestDocWords(t *testing.T) {
	var got []string
	forDocWords([]byte("// WaitGroup waits for a collection of goroutines; see HTTP and the_thing."), func(w string) bool {
		got = append(got, w)
		return true
	})
	want := []string{"wait", "collect", "goroutin"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("doc words %v, want %v", got, want)
	}
	if !bytes.Equal(stem([]byte("waits")), []byte("wait")) {
		t.Errorf("stem(waits) = %q: doc words and index terms must stem alike", stem([]byte("waits")))
	}
}

// TestVocabLoadDropsDamaged: a manifest's contribution that set could not
// have written (ids past the table, a truncated layout, words out of
// order) is dropped at load rather than read out of bounds by a question.
func TestVocabLoadDropsDamaged(t *testing.T) {
	v := newVocab()
	v.set("a.go", fileVocab{words: []string{"admit"}, pairs: [][2]string{{"admit", "gate"}}})
	terms, files := v.snapshot()
	good := files["a.go"]
	if !wellFormed(good, len(terms)) {
		t.Fatalf("set's entry %v is not well formed", good)
	}
	// k=1 m=1, part 0 (4 bytes), word delta, one pair, index 0
	files["truncated.go"] = good[:len(good)-1]
	files["long.go"] = append(slices.Clone(good), 0)
	files["part-past-the-table.go"] = []byte{1, 1, 99, 0, 0, 0, 1, 1, 0}
	files["word-past-the-table.go"] = []byte{1, 1, 0, 0, 0, 0, 99, 1, 0}
	files["index-past-the-parts.go"] = []byte{1, 1, 0, 0, 0, 0, 1, 1, 1}
	files["words-repeated.go"] = []byte{2, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0}
	files["indexes-repeated.go"] = []byte{1, 2, 0, 0, 0, 0, 1, 0, 0, 0, 1, 2, 1, 1}
	files["parts-descending.go"] = []byte{1, 2, 1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0}
	files["empty.go"] = []byte{0, 0}
	w := newVocab()
	w.load(terms, files)
	if _, ok := w.fids["a.go"]; !ok || len(w.fids) != 1 {
		t.Fatalf("loaded files %v: want a.go only", w.fids)
	}
	nWord, _, pairs, n := w.counts([]uint32{w.ids["admit"]})
	if n != 1 || nWord[w.ids["admit"]] != 1 || pairs[w.ids["admit"]][w.ids["gate"]] != 1 {
		t.Errorf("counts %v %v %d: want admit in 1 file, paired with gate once", nWord, pairs, n)
	}
}

// unpackVocab reads a packed entry back: its words and its (word, part)
// pairs, ascending.
func unpackVocab(t *testing.T, e []byte) (words []uint32, pairs [][2]uint32) {
	t.Helper()
	parts := entryParts(e)
	words, offs := entryWords(e, nil, nil)
	for i, w := range words {
		j := int(offs[i])
		c, n := binary.Uvarint(e[j:])
		j += n
		for range c {
			x, n := binary.Uvarint(e[j:])
			j += n
			pairs = append(pairs, [2]uint32{w, binary.LittleEndian.Uint32(parts[4*x:])})
		}
	}
	return words, pairs
}

// TestPackedVocabRoundTrip: an entry holds a file's distinct words and
// the distinct pairs of them, whatever order and repeats they came in.
func TestPackedVocabRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 30))
	for range 200 {
		var words []uint32
		var pairs [][2]uint32
		wantW := map[uint32]bool{}
		wantP := map[[2]uint32]bool{}
		for range 1 + rng.IntN(40) {
			w := uint32(rng.IntN(5000))
			if rng.IntN(3) == 0 {
				w += 1 << 20 // a large id: deltas of several bytes
			}
			words = append(words, w)
			wantW[w] = true
			for range rng.IntN(4) {
				p := [2]uint32{w, uint32(rng.IntN(300))}
				pairs = append(pairs, p, p)
				wantP[p] = true
			}
		}
		pairs = append(pairs, [2]uint32{1<<30 + 1, 7}) // a pair of no listed word
		rng.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
		e := appendPackedVocab(nil, slices.Clone(words), pairs)
		if !wellFormed(e, 1<<30) {
			t.Fatalf("entry of %v not well formed", words)
		}
		gw, gp := unpackVocab(t, e)
		if len(gw) != len(wantW) || !slices.IsSorted(gw) || len(gp) != len(wantP) {
			t.Fatalf("words %v pairs %v, want %d words and %d pairs", gw, gp, len(wantW), len(wantP))
		}
		for _, w := range gw {
			if !wantW[w] {
				t.Fatalf("word %d was not given", w)
			}
		}
		for _, p := range gp {
			if !wantP[p] {
				t.Fatalf("pair %v was not given", p)
			}
		}
	}
}

// TestVocabCountsMatchAFullPass: the counts a question reads through the
// postings are those of a pass over every file's contribution, through
// random sets, rewrites, removals and a reload from a snapshot (file ids
// reused).
func TestVocabCountsMatchAFullPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 29))
	words := []string{"admit", "gate", "wait", "group", "read", "write", "close", "lock", "parse", "token"}
	randomVocab := func() fileVocab {
		var fv fileVocab
		for _, w := range words {
			if rng.IntN(3) == 0 {
				fv.words = append(fv.words, w)
				for _, p := range words {
					if rng.IntN(4) == 0 {
						fv.pairs = append(fv.pairs, [2]string{w, p})
					}
				}
			}
		}
		return fv
	}
	// fullPass counts as a question did before the postings: every file.
	fullPass := func(v *vocab, q []uint32) (map[uint32]int, map[uint32]int, map[uint32]map[uint32]int) {
		nWord, nPart, pairs := map[uint32]int{}, map[uint32]int{}, map[uint32]map[uint32]int{}
		_, files := v.snapshot()
		for _, enc := range files {
			seen := map[[2]uint32]bool{}
			ws, prs := unpackVocab(t, enc)
			for _, w := range ws {
				if slices.Contains(q, w) {
					nWord[w]++
				}
			}
			parts := map[uint32]bool{}
			for _, k := range prs {
				parts[k[1]] = true
				if slices.Contains(q, k[0]) && !seen[k] {
					seen[k] = true
					if pairs[k[0]] == nil {
						pairs[k[0]] = map[uint32]int{}
					}
					pairs[k[0]][k[1]]++
				}
			}
			for p := range parts {
				nPart[p]++
			}
		}
		return nWord, nPart, pairs
	}
	check := func(v *vocab, step int) {
		t.Helper()
		var q []uint32
		for _, w := range words {
			if id, ok := v.ids[w]; ok {
				q = append(q, id)
			}
		}
		nWord, nPart, pairs, n := v.counts(q)
		wWord, wPart, wPairs := fullPass(v, q)
		if n != len(v.fids) || !maps.Equal(nWord, wWord) || !maps.EqualFunc(pairs, wPairs, maps.Equal) {
			t.Fatalf("step %d: counts %v %v (%d files), a full pass %v %v", step, nWord, pairs, n, wWord, wPairs)
		}
		for id := range v.terms {
			if int(nPart[id]) != wPart[uint32(id)] {
				t.Fatalf("step %d: nPart[%s] = %d, a full pass %d", step, v.terms[id], nPart[id], wPart[uint32(id)])
			}
		}
	}
	v := newVocab()
	for step := 0; step < 400; step++ {
		rel := fmt.Sprintf("f%d.go", rng.IntN(30))
		if rng.IntN(4) == 0 {
			v.remove(rel)
		} else {
			v.set(rel, randomVocab())
		}
		check(v, step)
		if step%100 == 99 {
			terms, files := v.snapshot()
			w := newVocab()
			w.load(terms, files)
			check(w, step)
			v = w
		}
	}
}

// counts returns, for the question's word ids, how many files' docs have
// each (nWord), how many files document a name with each part (nPart, by
// id; the live table, read under v.mu), how many files pair each word
// with each part, and the number of files with documented declarations.
// (The tests' view of what expand reads word by word, without the maps.)
func (v *vocab) counts(q []uint32) (nWord map[uint32]int, nPart []int32, pairs map[uint32]map[uint32]int, nDocs int) {
	nWord, pairs = map[uint32]int{}, map[uint32]map[uint32]int{}
	for _, w := range q {
		if v.files(w) == 0 {
			continue
		}
		nWord[w] = v.files(w)
		pm := map[uint32]int{}
		pairs[w] = pm
		v.pairCounts(w, func(part uint32, n int32) { pm[part] = int(n) })
	}
	return nWord, v.nPart, pairs, len(v.fids)
}
