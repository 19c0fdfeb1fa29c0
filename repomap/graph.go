package repomap

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// graph is the static part of the ranking, rebuilt when files change. Names
// are interned once per Map (symtab) and each entry keeps its names' ids, so
// a rebuild after a one-file change is array work, not string hashing.
type graph struct {
	gen    uint64
	files  []string // sorted
	tags   []*FileTags
	idents []string // symtab snapshot: id → name
	// CSR: files defining ident i are defFile[defStart[i]:defStart[i+1]].
	defStart []int32
	defFile  []int32
	defined  []int32 // idents with at least one definer, ascending
	// slot numbers the defined idents densely (-1 for the others), those
	// that some file references first (0..referenced-1, in ident order, with
	// their definers in slotFile[slotStart[k]:slotStart[k+1]]), then the
	// rest: the PageRank's per-name arrays are per slot, and only the
	// referenced slots ever receive flow.
	slot       []int32
	referenced int
	slotStart  []int32
	slotFile   []int32
	// CSR edges: refs of file f are edgeSlot/edgeW[edgeStart[f]:edgeStart[f+1]].
	edgeStart []int32
	edgeSlot  []int32
	edgeW     []float64 // static weight (no focus factor)
	// slotDamp is, per referenced slot, its name's common and ubiquitous
	// factors: an edge's weight without them (its edgeW over them, the
	// same division that made it) is its share of its file's out-weight,
	// which normalizes the file's flow. A second weight per edge cost 8
	// bytes an edge (18 MB at 10x the Go tree) for one division.
	slotDamp []float64
	// Per file, per definition: its ident (-1 for local definitions) and
	// how many definitions of the same name the file has.
	defIdent [][]int32
	defSame  [][]int32
	fileIdx  map[string]int32
	refFiles []int32 // per ident: files referencing it
	// qualified lists, per plain ident, the qualified and bare idents
	// resolved to some of its definers (resolveNames): their flow counts
	// for it. CSR: qualList[qualStart[i]:qualStart[i+1]]; nil when no
	// name resolves.
	qualStart []int32
	qualList  []int32
	declared  []bool // per ident: named by some export list
	// examples, per ident: the lines of documentation examples naming it
	// (FileTags.Examples); nil when none do.
	examples []int32
	// cDeclared, per ident: a C function or variable a header declares and
	// a .c file defines (not static): the library's interface, as its
	// users see it through #include.
	cDeclared []bool
	// cDoc, per ident of cDeclared: the most documentation lines of its
	// .c definitions (kernel-doc sits on the definition, and the header's
	// declaration stands for it).
	cDoc    []uint16
	facts   []*fileFacts
	lower   *lowerPaths // shared with withTags copies (same files)
	flowIx  *flowIndex  // shared with withTags copies (same edges)
	scoreIx *scoreIndex // not shared: withTags changes a file's facts
	numDefs int         // definitions of all files: the most a ranking scores
}

// withTags returns a copy of g with rel's tags replaced (same shape).
func (g *graph) withTags(rel string, t *FileTags) *graph {
	fi, ok := g.fileIdx[rel]
	if !ok {
		return nil
	}
	ng := *g
	ng.tags = slices.Clone(g.tags)
	ng.tags[fi] = t
	ng.facts = slices.Clone(g.facts)
	ng.facts[fi] = computeFacts(t, g.defIdent[fi], g.defSame[fi])
	ng.numDefs += ng.facts[fi].scored - g.facts[fi].scored
	ng.scoreIx = &scoreIndex{}
	return &ng
}

func (g *graph) definers(id int32) []int32 { return g.defFile[g.defStart[id]:g.defStart[id+1]] }

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
	m.graph = m.buildGraphLocked()
	m.rankCache = nil
	return m.graph
}

// buildGraphLocked builds the graph of the current files: the files and
// their facts, each name's definers, the names' resolution, and the
// weighted edges. Called with m.mu held for writing.
func (m *Map) buildGraphLocked() *graph {
	st := &m.syms
	if st.ids == nil {
		st.ids = map[string]int32{}
	}
	g := &graph{gen: m.gen, fileIdx: map[string]int32{}, lower: &lowerPaths{}, flowIx: &flowIndex{}, scoreIx: &scoreIndex{}}
	entries := m.taggedEntries()
	g.addFiles(st, entries)
	g.dropTwins(entries)
	n := len(st.names)
	g.idents = st.names[:n:n]
	g.markDeclared(st, entries)
	g.countExamples(st, entries, m.docExamples)
	g.indexDefiners()
	g.resolveNames(st, m.rootName())
	g.countReferences(entries)
	st.live = g.liveNames()
	weight, damp := g.nameWeights(st.static, len(entries))
	g.assignSlots()
	g.addEdges(entries, weight, damp)
	return g
}

// taggedEntries returns the files with tags, by path.
func (m *Map) taggedEntries() []*entry {
	entries := make([]*entry, 0, len(m.files))
	for _, e := range m.files {
		if e.Tags != nil {
			entries = append(entries, e)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Rel < entries[j].Rel })
	return entries
}

// addFiles makes entries the graph's files, with their name ids and facts.
func (g *graph) addFiles(st *symtab, entries []*entry) {
	g.files = make([]string, len(entries))
	g.tags = make([]*FileTags, len(entries))
	g.defIdent = make([][]int32, len(entries))
	g.defSame = make([][]int32, len(entries))
	g.facts = make([]*fileFacts, len(entries))
	for i, e := range entries {
		st.resolve(e)
		if e.facts == nil { // resolved ids kept from an earlier version of the file (sameShape)
			e.facts = computeFacts(e.Tags, e.defIDs, e.defSame)
		}
		g.files[i] = e.Rel
		g.tags[i] = e.Tags
		g.fileIdx[e.Rel] = int32(i)
		g.defIdent[i], g.defSame[i] = e.defIDs, e.defSame
		g.facts[i] = e.facts
	}
}

// dropTwins leaves the definitions of build output beside its declaration
// or source (twinOf) out of the graph, and counts the definitions a
// ranking scores.
func (g *graph) dropTwins(entries []*entry) {
	has := func(rel string) bool { _, ok := g.fileIdx[rel]; return ok }
	for i, e := range entries {
		if len(e.defIDs) > 0 && twinOf(e.Rel, has) {
			none := make([]int32, len(e.defIDs))
			for j := range none {
				none[j] = -1
			}
			g.defIdent[i] = none
			g.facts[i] = computeFacts(e.Tags, none, e.defSame)
		}
		g.numDefs += g.facts[i].scored
	}
}

// countExamples counts, per name, the lines of documentation examples
// naming it: the files' (FileTags.Examples) and the workspace's Markdown's
// (Map.docExamples).
func (g *graph) countExamples(st *symtab, entries []*entry, docExamples []Ref) {
	count := func(examples []Ref) {
		for _, x := range examples {
			if id, ok := st.ids[x.Name()]; ok {
				if g.examples == nil {
					g.examples = make([]int32, len(g.idents))
				}
				g.examples[id] += int32(x.Count)
			}
		}
	}
	for _, e := range entries {
		count(e.Tags.Examples)
	}
	count(docExamples)
}

// markDeclared marks the names an export list mentions: the package's
// declared API.
func (g *graph) markDeclared(st *symtab, entries []*entry) {
	g.declared = make([]bool, len(g.idents))
	for _, e := range entries {
		for _, r := range e.Tags.Refs {
			if r.Export {
				if id, ok := st.ids[r.Name()]; ok {
					g.declared[id] = true
				}
			}
		}
	}
	// In C a header is an export list too: a function or variable it
	// declares and some .c file defines without static is what the
	// header's includers call (weaker than an explicit export list:
	// EXPORT_SYMBOL picks, among them, what leaves the subsystem).
	var inHeader, inSource []bool
	for fi, e := range entries {
		if e.Tags.Language != "c" {
			continue
		}
		if inHeader == nil {
			inHeader, inSource = make([]bool, len(g.idents)), make([]bool, len(g.idents))
		}
		header := strings.HasSuffix(e.Rel, ".h")
		for di := range e.Tags.Defs {
			d := &e.Tags.Defs[di]
			id := g.defIdent[fi][di]
			if id < 0 || !d.TopLevel || d.Private || d.Kind() != "function" && d.Kind() != "variable" {
				continue
			}
			if header {
				inHeader[id] = true
			} else {
				inSource[id] = true
				if g.cDoc == nil {
					g.cDoc = make([]uint16, len(g.idents))
				}
				g.cDoc[id] = max(g.cDoc[id], d.docLines)
			}
		}
	}
	if inHeader == nil {
		return
	}
	g.cDeclared = make([]bool, len(g.idents))
	for id := range inHeader {
		if inHeader[id] && inSource[id] {
			g.cDeclared[id] = true
		}
	}
}

// indexDefiners makes each name's definers (the files with a definition of
// it, each file once, in file order) a CSR, and lists the defined names.
func (g *graph) indexDefiners() {
	n := len(g.idents)
	last := make([]int32, n) // the last file counted for each name
	eachDefiner := func(fn func(fi, id int32)) {
		for i := range last {
			last[i] = -1
		}
		for fi, ids := range g.defIdent {
			for _, id := range ids {
				if id >= 0 && last[id] != int32(fi) {
					last[id] = int32(fi)
					fn(int32(fi), id)
				}
			}
		}
	}
	g.defStart = make([]int32, n+1)
	total := 0
	eachDefiner(func(_, id int32) { g.defStart[id+1]++; total++ })
	for i := 0; i < n; i++ {
		if g.defStart[i+1] > 0 {
			g.defined = append(g.defined, int32(i))
		}
		g.defStart[i+1] += g.defStart[i]
	}
	g.defFile = make([]int32, total)
	fill := make([]int32, n)
	copy(fill, g.defStart[:n])
	eachDefiner(func(fi, id int32) { g.defFile[fill[id]] = fi; fill[id]++ })
}

// countReferences counts, per name, the references to it (refFiles).
func (g *graph) countReferences(entries []*entry) {
	g.refFiles = make([]int32, len(g.idents))
	for _, e := range entries {
		for _, id := range e.refIDs {
			g.refFiles[id]++
		}
	}
}

// liveNames counts the names some file refers to or defines.
func (g *graph) liveNames() int {
	live := 0
	for id := range g.idents {
		if g.refFiles[id] > 0 || g.defStart[id+1] > g.defStart[id] {
			live++
		}
	}
	return live
}

// nameWeights returns, per name with definers, its static weight (static,
// from the name alone, times damp) and damp, its common and ubiquitous
// factors; 0 for names nobody defines.
func (g *graph) nameWeights(static []float64, files int) (weight, damp []float64) {
	n := len(g.idents)
	weight = make([]float64, n)
	damp = make([]float64, n)
	for id := 0; id < n; id++ {
		if d := g.defStart[id+1] - g.defStart[id]; d > 0 {
			damp[id] = commonFactor(int(d)) * ubiquityFactor(int(g.refFiles[id]), files)
			weight[id] = static[id] * damp[id]
		}
	}
	return weight, damp
}

// assignSlots numbers the defined names densely: the referenced ones
// first, with their definers in slotFile, then the rest.
func (g *graph) assignSlots() {
	g.slot = make([]int32, len(g.idents))
	for i := range g.slot {
		g.slot[i] = -1
	}
	g.slotStart = []int32{0}
	for _, id := range g.defined {
		if g.refFiles[id] > 0 {
			g.slot[id] = int32(g.referenced)
			g.referenced++
			g.slotFile = append(g.slotFile, g.definers(id)...)
			g.slotStart = append(g.slotStart, int32(len(g.slotFile)))
		}
	}
	k := int32(g.referenced)
	for _, id := range g.defined {
		if g.slot[id] < 0 {
			g.slot[id] = k
			k++
		}
	}
}

// addEdges makes the edges, as a CSR per file: each reference to a name
// some file defines, weighted by w(r, i) (see the comment on ranking).
func (g *graph) addEdges(entries []*entry, weight, damp []float64) {
	edges := 0
	for _, e := range entries {
		edges += len(e.refIDs)
	}
	g.edgeStart = make([]int32, len(entries)+1)
	g.edgeSlot = make([]int32, 0, edges)
	g.edgeW = make([]float64, 0, edges)
	g.slotDamp = make([]float64, g.referenced)
	own := make([]int32, len(g.idents)) // own[id] == fi+1: file fi defines id
	for fi, e := range entries {
		g.edgeStart[fi] = int32(len(g.edgeSlot))
		for _, id := range g.defIdent[fi] {
			if id >= 0 {
				own[id] = int32(fi) + 1
			}
		}
		for i, id := range e.refIDs {
			if weight[id] == 0 {
				continue
			}
			k := g.slot[id] // weight > 0: id has definers, and a reference: k < referenced
			g.edgeSlot = append(g.edgeSlot, k)
			g.slotDamp[k] = damp[id]
			w := math.Sqrt(float64(e.Tags.Refs[i].Count)) * weight[id]
			if e.Tags.Refs[i].Export {
				// An export list names exactly what it means: no
				// guessing by the name's length or shape.
				w = math.Sqrt(float64(e.Tags.Refs[i].Count)) * damp[id]
			}
			if own[id] == int32(fi)+1 {
				w *= selfRefFactor
			}
			g.edgeW = append(g.edgeW, w)
		}
	}
	g.edgeStart[len(entries)] = int32(len(g.edgeSlot))
}

// ubiquityFactor lowers names used by more than 5% of the files (string,
// error, Errorf): past that share, the weight falls in proportion.
func ubiquityFactor(refFiles, files int) float64 {
	limit := float64(files) * ubiquityShare
	if limit < 2 || float64(refFiles) <= limit {
		return 1
	}
	return limit / float64(refFiles)
}

// commonFactor lowers names defined in many files: 1/(1+log2 n).
func commonFactor(definers int) float64 {
	if definers <= 1 {
		return 1
	}
	return 1 / (1 + math.Log2(float64(definers)))
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
	return w * commonFactor(definers)
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
