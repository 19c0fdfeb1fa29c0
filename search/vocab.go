package search

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"slices"
	"sort"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
)

// The repository's own vocabulary (issue 29): which identifier parts the
// words of doc comments come with. A question says "wait for a collection
// of goroutines to finish"; the code says WaitGroup, and its doc comment
// says "waits for a collection of goroutines to finish". Counted over the
// workspace's documented declarations, a doc word that often documents
// declarations whose names have a part (and more often than that part is
// named at all) expands a question's word to that part, at a fraction of
// an original word's weight. Nothing comes from outside the workspace.
//
// Counts are per file (a file's documented declarations count once per
// word and per pair), so one file with a hundred similar methods does not
// make an association; a file's contribution is kept, persisted in the
// manifest, and replaced when the file changes.

// Expansion knobs, picked on the dev half of testdata/heldout.tsv.
var (
	expandMinFiles = 3    // files a (word, part) pair must occur in
	expandMinShare = 0.15 // of the files whose docs have the word
	expandMinLift  = 4.0  // share over the part's share of all documented files
	expandPerWord  = 2    // parts a question word expands to, at most
	expandMax      = 6    // parts a question expands to, at most
	boostExpand    = 0.5  // weight of an expansion, times its share, against an original word
	// expandMinSupport: question words that must point to a part, unless
	// one word alone has a share of expandAlone.
	expandMinSupport = 2
	expandAlone      = 0.5
)

const (
	maxDocWords = 40 // words of one declaration's doc that count
	minTermLen  = 3
)

// symDoc is one declaration's name and documentation, as chunking found it.
type symDoc struct {
	Sym string
	Doc []byte
}

// fileVocab is what one file contributes: the distinct doc words (stems)
// of its documented declarations, and the distinct (word, name part) pairs.
type fileVocab struct {
	words []string
	pairs [][2]string
}

// docVocab collects a file's contribution from its chunks.
func docVocab(chunks []chunk) fileVocab {
	var fv fileVocab
	words := map[string]bool{}
	pairs := map[[2]string]bool{}
	var parts []string
	for i := range chunks {
		for _, d := range chunks[i].Docs {
			parts = nameParts(d.Sym, parts[:0])
			if len(parts) == 0 {
				continue
			}
			n := 0
			forDocWords(d.Doc, func(w string) bool {
				for _, p := range parts {
					if p == w || stemOf(p) == w {
						return true
					}
				}
				n++
				if !words[w] {
					words[w] = true
					fv.words = append(fv.words, w)
				}
				for _, p := range parts {
					k := [2]string{w, p}
					if !pairs[k] {
						pairs[k] = true
						fv.pairs = append(fv.pairs, k)
					}
				}
				return n < maxDocWords
			})
		}
	}
	return fv
}

// nameParts appends the lowercase parts of a declaration's own name (the
// last dotted component) worth expanding to: three letters or more, not a
// stop word.
func nameParts(sym string, out []string) []string {
	for i := len(sym) - 1; i >= 0; i-- {
		if sym[i] == '.' || sym[i] == ':' {
			sym = sym[i+1:]
			break
		}
	}
	b := []byte(sym)
	for _, p := range splitIdent(b, nil) {
		w := string(lower(b[p[0]:p[1]], true))
		if len(w) < minTermLen || stopWords[w] || !isLetters(w) {
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || o == w
		}
		if !dup {
			out = append(out, w)
		}
	}
	return out
}

// forDocWords calls f with the stem of each prose word of a doc comment:
// runs of letters, lowercase or capitalized (a camelCase or ALLCAPS run is
// an identifier the doc mentions, not a word of it), three letters or more,
// not stop words. f returns false to stop.
func forDocWords(doc []byte, f func(string) bool) {
	i := 0
	for i < len(doc) {
		c := doc[i]
		if !isLetter(c) {
			i++
			continue
		}
		s := i
		for i < len(doc) && (isLetter(doc[i]) || doc[i] == '_' || (doc[i] >= '0' && doc[i] <= '9')) {
			i++
		}
		w := doc[s:i]
		if len(w) < minTermLen || len(w) > 24 || !proseWord(w) {
			continue
		}
		lw := string(lower(w, true))
		if stopWords[lw] || docStopWords[lw] {
			continue
		}
		if !f(stemOf(lw)) {
			return
		}
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isLetters(w string) bool {
	for i := 0; i < len(w); i++ {
		if !isLetter(w[i]) {
			return false
		}
	}
	return true
}

// proseWord: all letters, with at most the first one a capital.
func proseWord(w []byte) bool {
	for i, c := range w {
		if !isLetter(c) || (i > 0 && c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// stemOf is the word's Porter stem, or the word.
func stemOf(w string) string {
	if st := stem([]byte(w)); st != nil {
		return string(st)
	}
	return w
}

// docStopWords are words of doc comments that say nothing about what a
// declaration does (markup and the grammar of API docs).
var docStopWords = map[string]bool{
	"returns": true, "param": true, "see": true, "link": true, "null": true, "throws": true,
	"note": true, "also": true, "may": true, "must": true, "not": true, "will": true, "has": true,
	"have": true, "any": true, "all": true, "than": true, "such": true, "other": true, "then": true,
	"used": true, "use": true, "uses": true, "new": true, "given": true, "specified": true,
	"example": true, "should": true, "only": true, "same": true, "each": true, "one": true,
	"called": true, "call": true, "calls": true, "method": true, "class": true, "type": true,
	"object": true, "instance": true, "argument": true, "arguments": true, "otherwise": true,
	"but": true, "more": true, "most": true, "been": true, "these": true, "those": true,
	"like": true, "some": true, "because": true, "whether": true, "after": true, "before": true,
	"since": true, "deprecated": true, "version": true, "author": true, "exception": true,
}

// vocab holds the per-file contributions. The counts a question needs are
// made when it is asked, from the files whose docs have its words (postings
// kept beside the contributions), so a question costs what its words occur
// in, not a pass over every file of a large tree, and there are no
// word-pair maps to build at open or to keep current as files change.
type vocab struct {
	mu    sync.Mutex
	ids   map[string]uint32
	terms []string
	// Each file's contribution is a packed entry (laid out as
	// appendPackedVocab writes it). Files are known by an id, which
	// postings hold.
	fids  map[string]uint32 // rel → file id
	byFid [][]byte          // file id → its entry (nil: free)
	free  []uint32          // file ids to reuse
	// postings: word id → the files whose docs have it, ascending, each
	// as (file id, offset in its entry of the word's parts): a count reads
	// a file's parts of the word without searching its entry.
	postings [][]uint32
	nPart    []int32 // part id → files documenting a name with it

	pairCount []int32  // pairCounts' table: part id → files, zero between calls
	touched   []uint32 // pairCounts' parts counted in this call

	// put's and set's buffers (v.mu held)
	oldWords, newWords, offs []uint32
	pack                     []byte
}

func newVocab() *vocab {
	return &vocab{ids: map[string]uint32{}, fids: map[string]uint32{}}
}

func (v *vocab) id(t string) uint32 {
	if i, ok := v.ids[t]; ok {
		return i
	}
	i := uint32(len(v.terms))
	v.ids[t] = i
	v.terms = append(v.terms, t)
	return i
}

// set replaces rel's contribution (an empty one removes it). Terms no
// file uses any more keep their ids: the table only grows by new words.
func (v *vocab) set(rel string, fv fileVocab) {
	v.mu.Lock()
	defer v.mu.Unlock()
	var enc []byte
	if len(fv.words) > 0 {
		pairs := make([][2]uint32, len(fv.pairs))
		for i, p := range fv.pairs { // part ids first, in the order set has always assigned them
			pairs[i][1] = v.id(p[1])
		}
		words := make([]uint32, len(fv.words))
		for i, w := range fv.words {
			words[i] = v.id(w)
		}
		for i, p := range fv.pairs {
			pairs[i][0] = v.id(p[0])
		}
		v.pack = appendPackedVocab(v.pack[:0], words, pairs)
		enc = bytes.Clone(v.pack)
	}
	v.put(rel, enc)
}

// A file's contribution is packed into one entry, of which postings point
// into the middle:
//
//	uvarint k, uvarint m: the file's words and parts
//	m part ids, 4 bytes each, little-endian, ascending
//	k words, ascending, each:
//	  uvarint id (the first word) or its difference from the previous word's
//	  uvarint n, then n uvarint indexes (ascending) into the parts above:
//	  the parts the word pairs with
//
// As flat arrays of ids, with a word's id in each of its pairs, the entries
// were an eighth of a large tree's live heap at the peak of its first
// build (4.7× what they take packed).

// appendPackedVocab appends the entry of a file's words and (word, part)
// pairs, in any order and with repeats (words and pairs may be reordered),
// to b. Pairs of words not among the words are left out.
func appendPackedVocab(b []byte, words []uint32, pairs [][2]uint32) []byte {
	slices.Sort(words)
	words = slices.Compact(words)
	slices.SortFunc(pairs, func(a, b [2]uint32) int {
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		return cmp.Compare(a[1], b[1])
	})
	pairs = slices.Compact(pairs)
	parts := make([]uint32, 0, len(pairs))
	j := 0
	for _, w := range words { // only the parts of listed words
		for j < len(pairs) && pairs[j][0] < w {
			j++
		}
		for ; j < len(pairs) && pairs[j][0] == w; j++ {
			parts = append(parts, pairs[j][1])
		}
	}
	slices.Sort(parts)
	parts = slices.Compact(parts)
	b = binary.AppendUvarint(b, uint64(len(words)))
	b = binary.AppendUvarint(b, uint64(len(parts)))
	for _, p := range parts {
		b = binary.LittleEndian.AppendUint32(b, p)
	}
	j = 0
	prev := uint32(0)
	for _, w := range words {
		b = binary.AppendUvarint(b, uint64(w-prev))
		prev = w
		for j < len(pairs) && pairs[j][0] < w {
			j++
		}
		k := j
		for k < len(pairs) && pairs[k][0] == w {
			k++
		}
		b = binary.AppendUvarint(b, uint64(k-j))
		for _, p := range pairs[j:k] {
			i, _ := slices.BinarySearch(parts, p[1])
			b = binary.AppendUvarint(b, uint64(i))
		}
		j = k
	}
	return b
}

// entryParts returns a well-formed entry's part ids, packed.
func entryParts(e []byte) (parts []byte) {
	_, n1 := binary.Uvarint(e)
	m, n2 := binary.Uvarint(e[n1:])
	return e[n1+n2 : n1+n2+4*int(m)]
}

// entryWords appends a well-formed entry's words to words and the offset
// of each one's parts to offs.
func entryWords(e []byte, words, offs []uint32) ([]uint32, []uint32) {
	if e == nil {
		return words, offs
	}
	k, n1 := binary.Uvarint(e)
	m, n2 := binary.Uvarint(e[n1:])
	i := n1 + n2 + 4*int(m)
	w := uint32(0)
	for range k {
		d, n := binary.Uvarint(e[i:])
		i += n
		w += uint32(d)
		words = append(words, w)
		offs = append(offs, uint32(i))
		c, n := binary.Uvarint(e[i:])
		i += n
		for range c {
			_, n := binary.Uvarint(e[i:])
			i += n
		}
	}
	return words, offs
}

// wellFormed reports whether e is an entry appendPackedVocab could have
// written, with ids below nTerms: a manifest's that is not is not read.
func wellFormed(e []byte, nTerms int) bool {
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(e)
		if n <= 0 {
			return 0, false
		}
		e = e[n:]
		return v, true
	}
	k, ok1 := uv()
	m, ok2 := uv()
	if !ok1 || !ok2 || k == 0 || m > uint64(len(e))/4 {
		return false
	}
	prev := -1
	for i := range int(m) {
		p := int(binary.LittleEndian.Uint32(e[4*i:]))
		if p <= prev || p >= nTerms {
			return false
		}
		prev = p
	}
	e = e[4*m:]
	w := uint64(0)
	for i := range k {
		d, ok := uv()
		if !ok || (i > 0 && d == 0) {
			return false
		}
		if w += d; w >= uint64(nTerms) {
			return false
		}
		c, ok := uv()
		if !ok || c > m {
			return false
		}
		last := -1
		for range c {
			x, ok := uv()
			if !ok || x >= m || int(x) <= last {
				return false
			}
			last = int(x)
		}
	}
	return len(e) == 0
}

// put makes enc (packed; nil removes) rel's entry and updates the postings
// and part counts by the difference from its previous entry.
func (v *vocab) put(rel string, enc []byte) {
	var old []byte
	fid, had := v.fids[rel]
	if had {
		old = v.byFid[fid]
	} else {
		if enc == nil {
			return
		}
		if n := len(v.free); n > 0 {
			fid, v.free = v.free[n-1], v.free[:n-1]
		} else {
			fid = uint32(len(v.byFid))
			v.byFid = append(v.byFid, nil)
		}
		v.fids[rel] = fid
	}
	v.grow()
	ow, _ := entryWords(old, v.oldWords[:0], v.offs[:0])
	nw, offs := entryWords(enc, v.newWords[:0], v.offs[:0])
	v.oldWords, v.newWords, v.offs = ow, nw, offs
	// Both word lists ascend: one merge finds what left, what came and
	// what stayed (its parts may have moved).
	i, j := 0, 0
	for i < len(ow) || j < len(nw) {
		switch {
		case j == len(nw) || i < len(ow) && ow[i] < nw[j]:
			ps := v.postings[ow[i]]
			if k, ok := postingOf(ps, fid); ok {
				v.postings[ow[i]] = slices.Delete(ps, k, k+2)
			}
			i++
		default: // a word that came or stayed
			if i < len(ow) && ow[i] == nw[j] {
				i++
			}
			ps := v.postings[nw[j]]
			if k, ok := postingOf(ps, fid); ok {
				ps[k+1] = offs[j]
			} else {
				v.postings[nw[j]] = slices.Insert(ps, k, fid, offs[j])
			}
			j++
		}
	}
	if old != nil {
		op := entryParts(old)
		for k := 0; k < len(op); k += 4 {
			v.nPart[binary.LittleEndian.Uint32(op[k:])]--
		}
	}
	if enc == nil {
		delete(v.fids, rel)
		v.byFid[fid] = nil
		v.free = append(v.free, fid)
		return
	}
	np := entryParts(enc)
	for k := 0; k < len(np); k += 4 {
		v.nPart[binary.LittleEndian.Uint32(np[k:])]++
	}
	v.byFid[fid] = enc
}

// postingOf returns the index in ps (a word's postings) of file fid's
// posting, or where it would go.
func postingOf(ps []uint32, fid uint32) (int, bool) {
	lo, hi := 0, len(ps)/2
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ps[2*m] < fid {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return 2 * lo, 2*lo < len(ps) && ps[2*lo] == fid
}

// grow sizes the per-term tables to the term table.
func (v *vocab) grow() {
	if n := len(v.terms); len(v.postings) < n {
		v.postings = append(v.postings, make([][]uint32, n-len(v.postings))...)
		v.nPart = append(v.nPart, make([]int32, n-len(v.nPart))...)
	}
}

func (v *vocab) remove(rel string) { v.set(rel, fileVocab{}) }

// snapshot returns the persisted part (for the manifest): the terms, and
// each file's entry, which is never written again.
func (v *vocab) snapshot() ([]string, map[string][]byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	files := make(map[string][]byte, len(v.fids))
	for rel, fid := range v.fids {
		files[rel] = v.byFid[fid]
	}
	return append([]string(nil), v.terms...), files
}

// load replaces the contents with a manifest's. An entry that is not well
// formed (a damaged manifest) is left out.
func (v *vocab) load(terms []string, files map[string][]byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.terms, v.ids = terms, make(map[string]uint32, len(terms))
	v.free, v.postings, v.nPart = nil, nil, nil
	for i, t := range terms {
		v.ids[t] = uint32(i)
	}
	rels := make([]string, 0, len(files))
	for rel, enc := range files {
		if wellFormed(enc, len(terms)) {
			rels = append(rels, rel)
		}
	}
	// In path order, so that file ids, and so the postings built by
	// appending, ascend.
	sort.Strings(rels)
	v.fids = make(map[string]uint32, len(rels))
	v.byFid = make([][]byte, 0, len(rels))
	v.grow()
	// Each word's postings sized by a first pass, in one array: appending
	// them file by file grew each word's slice again and again (at 10×
	// the Go tree, a tenth of a warm start's CPU).
	count := make([]int, len(terms))
	total := 0
	words, offs := v.newWords[:0], v.offs[:0]
	for _, rel := range rels {
		words, offs = entryWords(files[rel], words[:0], offs[:0])
		for _, w := range words {
			count[w]++
		}
		total += len(words)
	}
	all := make([]uint32, 2*total)
	for w, n := range count {
		if n > 0 {
			v.postings[w], all = all[:0:2*n], all[2*n:]
		}
	}
	for i, rel := range rels {
		enc := files[rel]
		fid := uint32(i) // rels are in path order, byFid follows them
		v.fids[rel] = fid
		v.byFid = append(v.byFid, enc)
		words, offs = entryWords(enc, words[:0], offs[:0])
		for j, w := range words {
			v.postings[w] = append(v.postings[w], fid, offs[j])
		}
		ps := entryParts(enc)
		for k := 0; k < len(ps); k += 4 {
			v.nPart[binary.LittleEndian.Uint32(ps[k:])]++
		}
	}
	v.newWords, v.offs = words, offs
}

// files returns how many files' docs have word id w.
func (v *vocab) files(w uint32) int {
	if int(w) >= len(v.postings) {
		return 0
	}
	return len(v.postings[w]) / 2
}

// pairCounts calls each, in no particular order, for every part that some
// file's docs pair with word id w, with the number of files that do. It
// counts in a table indexed by part id kept between calls (v.mu held):
// a question's words reach thousands of files in a large tree, and a map
// per word was most of what its expansion cost.
func (v *vocab) pairCounts(w uint32, each func(part uint32, n int32)) {
	if len(v.pairCount) < len(v.terms) {
		v.pairCount = make([]int32, len(v.terms)+len(v.terms)/4)
	}
	count, touched := v.pairCount, v.touched[:0]
	ps := v.postings[w]
	for k := 0; k+1 < len(ps); k += 2 {
		e := v.byFid[ps[k]]
		parts := entryParts(e)
		i := int(ps[k+1])
		c, n := binary.Uvarint(e[i:])
		i += n
		for range c {
			x, n := binary.Uvarint(e[i:])
			i += n
			p := binary.LittleEndian.Uint32(parts[4*x:])
			if count[p] == 0 {
				touched = append(touched, p)
			}
			count[p]++
		}
	}
	for _, p := range touched {
		each(p, count[p])
		count[p] = 0
	}
	v.touched = touched[:0]
}

// expansion is a name part a question's words point to, with its weight.
type expansion struct {
	term   string
	weight float64
}

// expand returns the name parts the query's words are associated with,
// strongest first, leaving out the query's own terms.
func (v *vocab) expand(words []string) []expansion {
	own := map[string]bool{}
	var qs []string
	for _, t := range (stopFilter{}).Filter(tokenize([]byte(joinWords(words)), nil)) {
		own[string(t.Term)] = true
	}
	for w := range own {
		qs = append(qs, w)
	}
	sort.Strings(qs) // a map's order must not decide ties
	v.mu.Lock()
	defer v.mu.Unlock()
	var qids []uint32
	for _, q := range qs {
		if id, ok := v.ids[q]; ok && len(q) >= minTermLen && isLetters(q) {
			qids = append(qids, id)
		}
	}
	if len(qids) == 0 {
		return nil
	}
	nDocs := len(v.fids)
	best := map[string]float64{} // part → summed share over the question's words
	support := map[string]int{}  // part → question words pointing to it
	for _, wid := range qids {
		if v.files(wid) == 0 {
			continue
		}
		nw := float64(v.files(wid))
		var cands []expansion
		v.pairCounts(wid, func(pid uint32, c int32) {
			if int(c) < expandMinFiles {
				return
			}
			share := float64(c) / nw
			lift := share / (float64(v.nPart[pid]) / float64(nDocs))
			part := v.terms[pid]
			if share < expandMinShare || lift < expandMinLift || own[part] || own[stemOf(part)] {
				return
			}
			cands = append(cands, expansion{part, share})
		})
		sort.Slice(cands, func(i, j int) bool {
			if cands[i].weight != cands[j].weight {
				return cands[i].weight > cands[j].weight
			}
			return cands[i].term < cands[j].term
		})
		if len(cands) > expandPerWord {
			cands = cands[:expandPerWord]
		}
		for _, c := range cands {
			best[c.term] += c.weight
			support[c.term]++
		}
	}
	out := make([]expansion, 0, len(best))
	for t, w := range best {
		if support[t] < expandMinSupport && w < expandAlone {
			continue
		}
		out = append(out, expansion{t, min(w, 1)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].weight != out[j].weight {
			return out[i].weight > out[j].weight
		}
		return out[i].term < out[j].term
	})
	if len(out) > expandMax {
		out = out[:expandMax]
	}
	return out
}

func joinWords(ws []string) string {
	n := 0
	for _, w := range ws {
		n += len(w) + 1
	}
	b := make([]byte, 0, n)
	for _, w := range ws {
		b = append(append(b, w...), ' ')
	}
	return string(b)
}

// expansionScores scores the pool's chunks on the expansion terms (BM25 on
// body and meta, as the question's words are scored, times each term's
// weight) and adds boostExpand times that to their scores. Only chunks the
// question's words found are rescored: an expansion reorders what the
// question matched, it finds nothing on its own.
func (ix *Index) expansionScores(ctx context.Context, hits search.DocumentMatchCollection, exp []expansion, stats *search.BM25Stats) error {
	if len(exp) == 0 || len(hits) == 0 {
		return nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	var terms []query.Query
	for _, e := range exp {
		b := bleve.NewTermQuery(e.term)
		b.SetField(fBody)
		b.SetBoost(e.weight)
		m := bleve.NewTermQuery(e.term)
		m.SetField(fMeta)
		m.SetBoost(e.weight * boostMeta)
		terms = append(terms, b, m)
	}
	in := bleve.NewDocIDQuery(ids)
	in.SetBoost(0)
	q := bleve.NewConjunctionQuery(in, bleve.NewDisjunctionQuery(terms...))
	req := bleve.NewSearchRequestOptions(q, len(ids), 0, false)
	req.PreSearchData = map[string]interface{}{search.BM25PreSearchDataKey: stats}
	sr, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return err
	}
	add := make(map[string]float64, len(sr.Hits))
	for _, h := range sr.Hits {
		add[h.ID] = h.Score
	}
	for _, h := range hits {
		h.Score += boostExpand * add[h.ID]
	}
	return nil
}
