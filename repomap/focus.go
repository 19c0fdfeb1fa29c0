package repomap

import (
	"slices"
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
	ids   []int32     // the focus idents, ascending
	words []string    // focus.words()
	lower *lowerPaths // the graph's paths and names by word, when there are words
}

// focusNames finds the focus names of focus: focusIdents (the ids of its
// identifiers) that have definers, and the names its words match.
func (g *graph) focusNames(focus Focus, focusIdents []int32) focusNames {
	fn := focusNames{words: focus.words()}
	for _, id := range focusIdents {
		if g.defStart[id+1] > g.defStart[id] {
			fn.ids = append(fn.ids, id)
		}
	}
	if len(fn.words) > 0 {
		// The defined names equal to a word but for case.
		fn.lower = g.lowerFiles()
		for _, w := range fn.words {
			for _, id := range fn.lower.byName[foldKey(w)] {
				if name := strings.TrimPrefix(g.idents[id], bareMark); len(name) == len(w) && strings.EqualFold(name, w) {
					fn.ids = append(fn.ids, id)
				}
			}
		}
	}
	slices.Sort(fn.ids)
	fn.ids = slices.Compact(fn.ids)
	return fn
}

// personalization returns where the walk restarts (see the comment on
// ranking): the files with a weight, ascending, and their weights, summing
// to 1; none when the focus selects no file.
func (g *graph) personalization(focus Focus, fn focusNames) (files []int32, weights []float64) {
	p := map[int32]float64{}
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
	for _, i := range g.wordFiles(fn) {
		p[i] += 0.5
	}
	for _, id := range fn.ids {
		d := g.definers(id)
		for _, fi := range d {
			p[fi] += 0.25 / float64(len(d))
		}
	}
	for i := range p {
		files = append(files, i)
	}
	slices.Sort(files)
	sum := 0.0
	weights = make([]float64, len(files))
	for j, i := range files {
		weights[j] = p[i]
		sum += p[i]
	}
	for j := range weights {
		weights[j] /= sum
	}
	return files, weights
}

// wordFiles returns each file whose base name or path is a word of the
// focus, or whose path contains a word with a slash, ascending.
func (g *graph) wordFiles(fn focusNames) []int32 {
	if len(fn.words) == 0 {
		return nil
	}
	var matched []int32
	for _, w := range fn.words {
		matched = append(matched, fn.lower.byBase[w]...)
		matched = append(matched, fn.lower.byPath[w]...)
		if strings.Contains(w, "/") {
			for i, lf := range fn.lower.paths {
				if strings.Contains(lf, w) {
					matched = append(matched, int32(i))
				}
			}
		}
	}
	slices.Sort(matched)
	return slices.Compact(matched)
}
