package repomap

import (
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// words are the focus's mentioned words, trimmed of quotes and
// punctuation and lowercased, of three letters or more: matched against
// defined names regardless of case.
func (focus Focus) words() []string {
	var words []string
	for _, w := range focus.Mentioned {
		w = strings.ToLower(strings.Trim(w, " \t\n`'\"()[]{},.;:?!"))
		if len(w) >= 3 {
			words = append(words, w)
		}
	}
	return words
}

// lowerPaths are the graph's file paths lowercased, and their base names
// without extensions, for matching mentioned words: made once per graph, on
// the first ranking that has words. byName, byPath and byBase find them by
// a word without a pass over every name and file per ranking.
type lowerPaths struct {
	once         sync.Once
	paths, bases []string
	byPath       map[string][]int32 // lowercased path → files
	byBase       map[string][]int32 // base name → files, ascending
	byName       map[string][]int32 // foldKey of a defined name (bareMark trimmed) → its idents, ascending
}

func (g *graph) lowerFiles() *lowerPaths {
	l := g.lower
	l.once.Do(func() {
		l.paths = make([]string, len(g.files))
		l.bases = make([]string, len(g.files))
		l.byPath = make(map[string][]int32, len(g.files))
		l.byBase = map[string][]int32{}
		for i, f := range g.files {
			lf := strings.ToLower(f)
			base := lf[strings.LastIndexByte(lf, '/')+1:]
			if dot := strings.IndexByte(base, '.'); dot > 0 {
				base = base[:dot]
			}
			l.paths[i], l.bases[i] = lf, base
			l.byPath[lf] = append(l.byPath[lf], int32(i))
			l.byBase[base] = append(l.byBase[base], int32(i))
		}
		l.byName = make(map[string][]int32, len(g.defined))
		for _, id := range g.defined {
			k := foldKey(strings.TrimPrefix(g.idents[id], bareMark))
			l.byName[k] = append(l.byName[k], id)
		}
	})
	return l
}

// foldKey maps s to a key that another string has exactly when
// strings.EqualFold says the two are equal: each rune becomes the smallest
// rune of its simple case-folding orbit (EqualFold compares rune by rune,
// by those orbits).
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

// focusNames are a ranking's focus names: the focus identifiers, and the
// defined names equal to a mentioned word but for case.
type focusNames struct {
	ident []bool      // per ident
	ids   []int32     // the focus idents, ascending
	words []string    // focus.words()
	lower *lowerPaths // the graph's paths and names by word, when there are words
}

// focusNames finds the focus names of focus: focusIdents (the ids of its
// identifiers) that have definers, and the names its words match (ident
// in sc's buffer).
func (g *graph) focusNames(sc *flowScratch, focus Focus, focusIdents []int32) focusNames {
	fn := focusNames{ident: sc.bools(&sc.ident, len(g.idents)), words: focus.words()}
	mark := func(id int32) {
		if !fn.ident[id] {
			fn.ident[id] = true
			fn.ids = append(fn.ids, id)
		}
	}
	for _, id := range focusIdents {
		if g.defStart[id+1] > g.defStart[id] {
			mark(id)
		}
	}
	if len(fn.words) > 0 {
		// The defined names equal to a word but for case (the same set a
		// pass over every name finds: the order is made below).
		fn.lower = g.lowerFiles()
		for _, w := range fn.words {
			for _, id := range fn.lower.byName[foldKey(w)] {
				if name := strings.TrimPrefix(g.idents[id], bareMark); len(name) == len(w) && strings.EqualFold(name, w) {
					mark(id)
				}
			}
		}
	}
	sort.Slice(fn.ids, func(i, j int) bool { return fn.ids[i] < fn.ids[j] })
	return fn
}

// personalization returns where the walk restarts, summing to 1 (see the
// comment on ranking), in sc's buffer.
func (g *graph) personalization(sc *flowScratch, focus Focus, fn focusNames) []float64 {
	nf := len(g.tags)
	p := sc.floats(&sc.p, nf)
	for _, f := range focus.Files {
		if i, ok := g.fileIdx[f]; ok {
			p[i] += 1
		}
	}
	for _, f := range focus.Related {
		if i, ok := g.fileIdx[f]; ok {
			p[i] += 0.5
		}
	}
	if len(fn.words) > 0 {
		for i, m := range g.wordFiles(sc, fn) {
			if m {
				p[i] += 0.5
			}
		}
	}
	for _, id := range fn.ids {
		d := g.definers(id)
		for _, fi := range d {
			p[fi] += 0.25 / float64(len(d))
		}
	}
	sum := 0.0
	for _, v := range p {
		sum += v
	}
	if sum == 0 {
		// No focus: every file, and once more for each name its export
		// lists name (an index file, Python's __all__): the package's
		// users enter through what it declares it offers.
		for i := range p {
			p[i] = 1 + float64(g.facts[i].exports)
			sum += p[i]
		}
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// wordFiles marks, in sc's buffer, each file whose base name or path is a
// word of the focus, or whose path contains a word with a slash.
func (g *graph) wordFiles(sc *flowScratch, fn focusNames) []bool {
	matched := sc.bools(&sc.matched, len(g.tags))
	for _, w := range fn.words {
		for _, i := range fn.lower.byBase[w] {
			matched[i] = true
		}
		for _, i := range fn.lower.byPath[w] {
			matched[i] = true
		}
		if strings.Contains(w, "/") {
			for i, lf := range fn.lower.paths {
				if strings.Contains(lf, w) {
					matched[i] = true
				}
			}
		}
	}
	return matched
}
