package repomap

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Ranking
//
// Files are the nodes of the graph. A file r that references a name i
// defined in files D(i) sends a share of its rank to every d in D(i): the
// random walk goes from a use to the candidate definitions, so files whose
// definitions many (highly ranked) files use rank high. Ranks are computed
// with PageRank (damping 0.85) personalized toward the focus, then each
// definition is scored by the rank that flowed to it.
//
// The weight of the edge r → i (then split evenly among D(i)) is
//
//	w(r, i) = sqrt(uses of i in r) · specific(i) · private(i) · common(i) · focus(i)
//
// and the walk leaves r along its edges in proportion to w. The factors:
//
//   - sqrt(uses): the tenth use of a name in a file says less than the first;
//     the square root damps repetition without ignoring it.
//   - specific ×3 for long, compound names (≥ 8 characters with a camelCase or
//     snake_case word boundary, e.g. renderBudget, parse_file): they almost
//     always mean one thing, so the edge is likely a true dependency.
//     Names of 1–3 characters (x, id, Do) ×0.3: they collide with unrelated
//     definitions.
//   - private ×0.3 for names starting with "_": implementation details
//     rarely help a reader of the map.
//   - common ×1/(1+log2 |D(i)|): a name defined in many files (String, Error,
//     New, init) is ambiguous; its mass is already split among the definers,
//     and this further lowers how much of the referencing file's rank goes
//     into guesses (1 definer ×1, 2 ×0.5, 8 ×0.25, 512 ×0.1).
//   - focus ×10 for the identifiers of the selection and the names mentioned
//     in the question: the walk should follow what the user is looking at.
//
// Only names that some file defines form edges; references to the standard
// library or unparsed code lead nowhere. A file with no edges spreads its
// rank by the personalization vector (the usual treatment of dangling nodes).
//
// Personalization (where the walk restarts): each of Focus.Files weight 1,
// each of Focus.Related 0.5, each file whose path matches a mentioned word
// 0.5, and each file defining a focus identifier or mentioned name 0.25
// (split among that name's definers). With no focus at all it is uniform,
// which makes the ranking plain PageRank: the most depended-upon code first.
//
// A definition's score is the rank that flowed along edges named after it
// into its file, split evenly among same-named definitions in that file,
// plus 1% of its file's rank split among the file's definitions (so that
// unreferenced definitions of highly ranked files, e.g. the selection's own
// file, still order among themselves), ×2 when its name is a focus
// identifier or mentioned name.
const (
	damping        = 0.85
	maxIterations  = 100
	tolerance      = 1e-7
	focusBoost     = 10.0
	specificBoost  = 3.0
	shortPenalty   = 0.3
	privatePenalty = 0.3
	baselineShare  = 0.01
	defFocusBoost  = 2.0
)

// Focus is what the question is about. All fields are optional.
type Focus struct {
	Files       []string // the selection's file(s), workspace-relative
	Related     []string // files with diagnostics, recently edited files
	Identifiers []string // identifiers in the selection (exact names)
	Mentioned   []string // words of the question: matched to file paths and names, case-insensitively
}

func (f Focus) key() string {
	var b strings.Builder
	for _, l := range [][]string{f.Files, f.Related, f.Identifiers, f.Mentioned} {
		s := append([]string(nil), l...)
		sort.Strings(s)
		b.WriteString(strings.Join(s, "\x00"))
		b.WriteByte(1)
	}
	return b.String()
}

// graph is the static part of the ranking, rebuilt when files change.
type graph struct {
	gen      uint64
	files    []string // sorted
	fileIdx  map[string]int32
	tags     []*FileTags
	idents   []string
	identIdx map[string]int32
	definers [][]int32 // ident → files defining it
	// CSR edges: refs of file f are edgeIdent/edgeW[edgeStart[f]:edgeStart[f+1]].
	edgeStart []int32
	edgeIdent []int32
	edgeW     []float64 // static weight (no focus factor)
	// Per file, per definition: its ident (-1 for local definitions) and
	// how many definitions of the same name the file has.
	defIdent [][]int32
	defSame  [][]int32
}

func (m *Map) currentGraph() *graph {
	m.mu.RLock()
	g := m.graph
	gen := m.gen
	m.mu.RUnlock()
	if g != nil && g.gen == gen {
		return g
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.graph != nil && m.graph.gen == m.gen {
		return m.graph
	}
	m.graph = buildGraph(m.files, m.gen)
	m.rankCache = nil
	return m.graph
}

func buildGraph(files map[string]*entry, gen uint64) *graph {
	g := &graph{gen: gen, fileIdx: map[string]int32{}, identIdx: map[string]int32{}}
	for rel, e := range files {
		if e.Tags != nil {
			g.files = append(g.files, rel)
		}
	}
	sort.Strings(g.files)
	g.tags = make([]*FileTags, len(g.files))
	for i, rel := range g.files {
		g.fileIdx[rel] = int32(i)
		g.tags[i] = files[rel].Tags
	}
	for fi, t := range g.tags {
		for _, d := range t.Defs {
			if d.Local {
				continue // local helpers are not edges of the map
			}
			id, ok := g.identIdx[d.Name]
			if !ok {
				id = int32(len(g.idents))
				g.identIdx[d.Name] = id
				g.idents = append(g.idents, d.Name)
				g.definers = append(g.definers, nil)
			}
			if n := len(g.definers[id]); n == 0 || g.definers[id][n-1] != int32(fi) {
				g.definers[id] = append(g.definers[id], int32(fi))
			}
		}
	}
	g.defIdent = make([][]int32, len(g.tags))
	g.defSame = make([][]int32, len(g.tags))
	for fi, t := range g.tags {
		ids := make([]int32, len(t.Defs))
		same := make([]int32, len(t.Defs))
		for di, d := range t.Defs {
			ids[di] = -1
			if !d.Local {
				ids[di] = g.identIdx[d.Name]
			}
		}
		for di := range ids {
			for dj := range ids {
				if ids[di] >= 0 && ids[dj] == ids[di] {
					same[di]++
				}
			}
			if len(ids) > 64 { // quadratic only for small files
				break
			}
		}
		if len(ids) > 64 {
			cnt := map[int32]int32{}
			for _, id := range ids {
				cnt[id]++
			}
			for di, id := range ids {
				same[di] = cnt[id]
			}
		}
		g.defIdent[fi], g.defSame[fi] = ids, same
	}
	static := make([]float64, len(g.idents))
	for id, name := range g.idents {
		static[id] = identWeight(name, len(g.definers[id]))
	}
	g.edgeStart = make([]int32, len(g.tags)+1)
	for fi, t := range g.tags {
		g.edgeStart[fi] = int32(len(g.edgeIdent))
		for _, r := range t.Refs {
			id, ok := g.identIdx[r.Name]
			if !ok {
				continue
			}
			g.edgeIdent = append(g.edgeIdent, id)
			g.edgeW = append(g.edgeW, math.Sqrt(float64(r.Count))*static[id])
		}
	}
	g.edgeStart[len(g.tags)] = int32(len(g.edgeIdent))
	return g
}

// identWeight is the static part of w(r, i); see the package comment on ranking.
func identWeight(name string, definers int) float64 {
	w := 1.0
	n := len([]rune(name))
	switch {
	case n >= 8 && hasWordBoundary(name):
		w *= specificBoost
	case n <= 3:
		w *= shortPenalty
	}
	if strings.HasPrefix(name, "_") {
		w *= privatePenalty
	}
	if definers > 1 {
		w /= 1 + math.Log2(float64(definers))
	}
	return w
}

func hasWordBoundary(s string) bool {
	prevLower := false
	for _, r := range s {
		if r == '_' || r == '-' {
			return true
		}
		if unicode.IsUpper(r) && prevLower {
			return true
		}
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	return false
}

// ranking is the result of one personalized PageRank.
type ranking struct {
	key      string
	fileRank []float64
	defs     []rankedDef // descending score
}

type rankedDef struct {
	file  int32
	def   int32
	score float64
}

// rank returns the ranking for focus, cached per focus until the map changes.
func (m *Map) rank(focus Focus) (*graph, *ranking) {
	g := m.currentGraph()
	key := focus.key()
	m.mu.RLock()
	if m.graph == g {
		for _, r := range m.rankCache {
			if r.key == key {
				m.mu.RUnlock()
				return g, r
			}
		}
	}
	m.mu.RUnlock()
	r := g.rank(focus)
	r.key = key
	m.mu.Lock()
	if m.graph == g {
		m.rankCache = append(m.rankCache, r)
		if len(m.rankCache) > 8 {
			m.rankCache = m.rankCache[1:]
		}
	}
	m.mu.Unlock()
	return g, r
}

func (g *graph) rank(focus Focus) *ranking {
	nf := len(g.tags)
	out := &ranking{fileRank: make([]float64, nf)}
	if nf == 0 {
		return out
	}
	// Focus names: exact identifiers, and mentioned words matched case-insensitively.
	focusIdent := make([]bool, len(g.idents))
	var focusIDs []int32
	mark := func(id int32) {
		if !focusIdent[id] {
			focusIdent[id] = true
			focusIDs = append(focusIDs, id)
		}
	}
	for _, n := range focus.Identifiers {
		if id, ok := g.identIdx[n]; ok {
			mark(id)
		}
	}
	var words []string
	for _, w := range focus.Mentioned {
		w = strings.ToLower(strings.Trim(w, " \t\n`'\"()[]{},.;:?!"))
		if len(w) < 3 {
			continue
		}
		words = append(words, w)
	}
	if len(words) > 0 {
		for id, name := range g.idents {
			for _, w := range words {
				if len(name) == len(w) && strings.EqualFold(name, w) {
					mark(int32(id))
					break
				}
			}
		}
	}
	sort.Slice(focusIDs, func(i, j int) bool { return focusIDs[i] < focusIDs[j] })

	// Personalization.
	p := make([]float64, nf)
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
	if len(words) > 0 {
		for i, f := range g.files {
			lf := strings.ToLower(f)
			base := lf[strings.LastIndexByte(lf, '/')+1:]
			if dot := strings.IndexByte(base, '.'); dot > 0 {
				base = base[:dot]
			}
			for _, w := range words {
				if base == w || lf == w || (strings.Contains(w, "/") && strings.Contains(lf, w)) {
					p[i] += 0.5
					break
				}
			}
		}
	}
	for _, id := range focusIDs {
		d := g.definers[id]
		for _, fi := range d {
			p[fi] += 0.25 / float64(len(d))
		}
	}
	sum := 0.0
	for _, v := range p {
		sum += v
	}
	if sum == 0 {
		for i := range p {
			p[i] = 1
		}
		sum = float64(nf)
	}
	for i := range p {
		p[i] /= sum
	}

	// Out-weights with the focus factor.
	outW := make([]float64, nf)
	for f := 0; f < nf; f++ {
		s := 0.0
		for e := g.edgeStart[f]; e < g.edgeStart[f+1]; e++ {
			w := g.edgeW[e]
			if focusIdent[g.edgeIdent[e]] {
				w *= focusBoost
			}
			s += w
		}
		outW[f] = s
	}

	pr := append([]float64(nil), p...)
	next := make([]float64, nf)
	mass := make([]float64, len(g.idents))
	flow := func(pr []float64) (dangling float64) {
		for i := range mass {
			mass[i] = 0
		}
		for f := 0; f < nf; f++ {
			if outW[f] == 0 {
				dangling += pr[f]
				continue
			}
			scale := pr[f] / outW[f]
			for e := g.edgeStart[f]; e < g.edgeStart[f+1]; e++ {
				w := g.edgeW[e]
				id := g.edgeIdent[e]
				if focusIdent[id] {
					w *= focusBoost
				}
				mass[id] += scale * w
			}
		}
		return dangling
	}
	for it := 0; it < maxIterations; it++ {
		dangling := flow(pr)
		for i := range next {
			next[i] = 0
		}
		for id, mv := range mass {
			if mv == 0 {
				continue
			}
			d := g.definers[id]
			share := mv / float64(len(d))
			for _, fi := range d {
				next[fi] += share
			}
		}
		diff := 0.0
		for i := range next {
			next[i] = damping*(next[i]+dangling*p[i]) + (1-damping)*p[i]
			diff += math.Abs(next[i] - pr[i])
		}
		pr, next = next, pr
		if diff < tolerance {
			break
		}
	}
	copy(out.fileRank, pr)

	// Definition scores from the final flow.
	flow(pr)
	for fi, t := range g.tags {
		if len(t.Defs) == 0 {
			continue
		}
		base := pr[fi] * baselineShare / float64(len(t.Defs))
		ids, same := g.defIdent[fi], g.defSame[fi]
		for di, id := range ids {
			if id < 0 {
				continue // local
			}
			s := base + mass[id]/float64(len(g.definers[id]))/float64(same[di])
			if focusIdent[id] {
				s *= defFocusBoost
			}
			out.defs = append(out.defs, rankedDef{file: int32(fi), def: int32(di), score: s})
		}
	}
	slices.SortFunc(out.defs, func(a, b rankedDef) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		case a.file != b.file:
			return int(a.file - b.file)
		}
		return int(a.def - b.def)
	})
	return out
}
