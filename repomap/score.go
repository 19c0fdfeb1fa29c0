package repomap

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// score scores every definition the map may show from the final ranks of
// the files (pr) and the flow along each name (mass); see the comment on
// ranking. The static facts of each file and definition (fileFacts) are
// computed when the file is parsed; this pass is arithmetic per definition.
func (g *graph) score(focus Focus, pr, mass []float64, focusIdent []bool) []rankedDef {
	sf := g.scoreFocus(focus)
	x := g.scoreIndex()
	scores := make([]float64, len(x.defs))
	g.scoreAll(scores, &sf, x, pr, mass, focusIdent, nil, nil)
	return g.appendRanked(make([]rankedDef, 0, x.scored(&sf)), scores, &sf, x, 0, nil)
}

// appendRanked appends to out the definitions scoreAll scored (those of
// the files of set that sf does not know) whose scores fall in bucket b or
// higher (0: every one), in file order.
func (g *graph) appendRanked(out []rankedDef, scores []float64, sf *scoreFocus, x *scoreIndex, b int, set *fileSet) []rankedDef {
	for fi := range g.tags {
		if sf.known[fi] || !set.has(fi) {
			continue
		}
		for i := x.fileStart[fi]; i < x.fileStart[fi+1]; i++ {
			if scoreBucket(scores[i]) >= b {
				out = append(out, rankedDef{file: int32(fi), def: x.defs[i].def, score: scores[i]})
			}
		}
	}
	return out
}

// scoreAll sets scores[i] to the score of x.defs[i] for the definitions of
// every file of set (nil: all) but those the prompt holds (sf.known: their
// entries are left as they were, as are other files'), and counts each
// score's bucket (scoreBucket) in hist when it is not nil. The files are scored in parts on every core, each part
// into its own range of scores. A score is all that is written: the
// definition is its place in x.defs, and its file the range holding it.
func (g *graph) scoreAll(scores []float64, sf *scoreFocus, x *scoreIndex, pr, mass []float64, focusIdent []bool, hist []int32, set *fileSet) {
	nf := len(g.tags)
	parts := fileParts(nf)
	var hists [][]int32 // per worker; worker 0 counts into hist
	if hist != nil {
		hists = make([][]int32, min(parts, runtime.GOMAXPROCS(0))) // at most one per worker
		hists[0] = hist
	}
	inParallel(parts, nf, func(w, c int) {
		var h []int32
		if hist != nil {
			if hists[w] == nil {
				hists[w] = histPool.Get().(*[1 << scoreBucketBits]int32)[:]
				clear(hists[w])
			}
			h = hists[w]
		}
		g.scorePart(scores, c, sf, x, pr, mass, focusIdent, h, set)
	})
	for _, h := range hists[min(1, len(hists)):] {
		if h == nil {
			continue
		}
		for i, n := range h {
			hist[i] += n
		}
		histPool.Put((*[1 << scoreBucketBits]int32)(h))
	}
}

// scorePart scores the definitions of part c's files in set into scores
// and counts their buckets in hist when it is not nil.
func (g *graph) scorePart(scores []float64, c int, sf *scoreFocus, x *scoreIndex, pr, mass []float64, focusIdent []bool, hist []int32, set *fileSet) {
	lo, hi := fileChunkRange(len(g.tags), c)
	for fi := lo; fi < hi; fi++ {
		t := g.tags[fi]
		if len(t.Defs) == 0 || sf.known[fi] || !set.has(fi) {
			continue // the prompt holds this file already, or it is not asked for
		}
		base := pr[fi] * baselineShare / float64(len(t.Defs))
		if sf.unfocused && g.facts[fi].api > 0 {
			// With no focus the file's share goes to what it offers: a
			// large file's entry points are not starved by its hundreds
			// of static helpers (the scheduler's core.c).
			base = pr[fi] * baselineShare / math.Pow(float64(g.facts[fi].api), apiSplitExp)
			if n := x.declared[fi]; n > 0 && g.facts[fi].exports > 0 {
				// A file with its own export list offers what it lists.
				base = pr[fi] * baselineShare / math.Pow(float64(n), apiSplitExp)
			}
		}
		fileFactor := sf.fileFactor(g.facts[fi])
		first := x.fileStart[fi]
		defs := x.defs[first:x.fileStart[fi+1]]
		out := scores[first : int(first)+len(defs)]
		for j := range defs {
			d := &defs[j]
			s := base + d.flowIn(x, mass)
			if sf.unfocused {
				s = math.Pow(s, unfocusedFlowExp)
			}
			s = sf.defFactor(s, d, focusIdent[d.id])
			s *= fileFactor
			out[j] = s
			if hist != nil {
				hist[scoreBucket(s)]++
			}
		}
	}
}

// scored returns how many definitions scoreAll scores for sf: those of
// the files the prompt does not hold.
func (x *scoreIndex) scored(sf *scoreFocus) int {
	n := len(x.defs)
	for _, fi := range sf.knownFiles {
		n -= int(x.fileStart[fi+1] - x.fileStart[fi])
	}
	return n
}

// scoreFocus is what scoring takes from the focus.
type scoreFocus struct {
	known      []bool // per file: in Focus.Known
	knownFiles []int  // the files known marks, each once
	testFocus  bool   // a focus file is a test
	unfocused  bool   // no files, identifiers or words
	minDepth   int    // with no focus: the depth of the shallowest file with definitions
}

func (g *graph) scoreFocus(focus Focus) scoreFocus {
	sf := scoreFocus{known: make([]bool, len(g.tags)), minDepth: math.MaxInt}
	for _, f := range focus.Known {
		if i, ok := g.fileIdx[f]; ok && !sf.known[i] {
			sf.known[i] = true
			sf.knownFiles = append(sf.knownFiles, int(i))
		}
	}
	for _, f := range focus.Files {
		sf.testFocus = sf.testFocus || isTestFile(f)
	}
	sf.unfocused = len(focus.Files)+len(focus.Related)+len(focus.Identifiers)+len(focus.Mentioned) == 0
	// With no focus, a package's API is nearest the root: each directory
	// level below the shallowest file with definitions counts nestFactor
	// times less (net/http's root files before httptest/ and internal/).
	if sf.unfocused {
		for fi, t := range g.tags {
			if len(t.Defs) > 0 {
				sf.minDepth = min(sf.minDepth, g.facts[fi].depth)
			}
		}
	}
	return sf
}

// fileFactor is the factor of every definition of a file with facts.
func (sf *scoreFocus) fileFactor(facts *fileFacts) float64 {
	f := 1.0
	if facts.fixture {
		f = fixturePenalty
	}
	if !sf.testFocus && facts.test {
		f *= testPenalty
	}
	if sf.unfocused && facts.internal {
		f *= internalFactor
	}
	if sf.unfocused && facts.experimental {
		f *= fixturePenalty
	}
	if sf.unfocused {
		f *= math.Pow(nestFactor, float64(facts.depth-sf.minDepth))
	}
	return f
}

// flowIn is the flow into definition d: its share of the mass of its name
// and of each qualified or bare form of the name that resolves to its
// file, split among the same-named definitions of the file.
func (d *scoreDef) flowIn(x *scoreIndex, mass []float64) float64 {
	// (x/1 is x: most names have one definer and one kept definition in
	// the file, and a division costs.)
	flowIn := 0.0 // the mass of a name nothing refers to
	if d.slot >= 0 {
		flowIn = mass[d.slot]
		if d.definers != 1 {
			flowIn /= float64(d.definers)
		}
	}
	for _, q := range x.quals[d.qualLo:d.qualHi] {
		flowIn += mass[q.slot] / float64(q.definers)
	}
	if d.kept != 1 {
		flowIn /= float64(d.kept)
	}
	return flowIn
}

// defFactor applies to s the factors of definition d: focus name, API,
// declared API and how widely the name is used.
func (sf *scoreFocus) defFactor(s float64, d *scoreDef, focusName bool) float64 {
	if focusName {
		s *= defFocusBoost
	}
	if d.flags&factAPI != 0 {
		s *= apiBoost
		if sf.unfocused && d.flags&scoreDeclared != 0 {
			s *= declaredBoost
		}
		if sf.unfocused && d.flags&factEntry != 0 {
			s *= entryBoost
		}
	} else if sf.unfocused {
		s *= internalsFactor
	}
	if sf.unfocused && d.flags&(scoreDeclaredElsewhere|factSecondary) != 0 {
		// One line per name in an overview: the header's declaration
		// stands for a C definition, the class line for its constructors,
		// the trait for a trait impl's items.
		s *= internalsFactor
	}
	if sf.unfocused {
		// How widely the name is used: a package's entry points are
		// used from many files, each with a small share of its rank.
		s *= 1 + math.Log2(1+float64(d.uses))
		if d.members > 0 {
			// How much it offers: a type with a rich public interface
			// (HashMap, TreeMap, Net::HTTP) is a package's core, however
			// few files inside the package use it; one with a method or
			// two (an iterator, an exception) is plumbing around it.
			s *= 1 + surfaceWeight*math.Log2(1+float64(d.members))
		}
		// How much its authors wrote for its users (doc.go).
		s *= 1 + docWeight*math.Log2(1+float64(d.doc))
		if d.examples > 0 && d.flags&factAPI != 0 {
			// How often its authors show it in use (examples.go).
			s *= 1 + exampleWeight*math.Log2(1+float64(d.examples))
		}
	}
	return s
}

// countMembers sets members on a file's scored API types: how many API
// functions and methods of the file name the type as their Scope and lie
// inside it (or, for a Rust impl's items, anywhere in the file: an impl
// block is no definition). Trait impls' items do not count: the trait
// offers them. Nor do constants and fields: what a type offers is what
// it does (Calendar's sixty field numbers, Net::HTTPNotFound's HAS_BODY
// made a constant-holder look like a package's core).
func (g *graph) countMembers(fi int, defs []scoreDef) {
	t := g.tags[fi]
	for i := range defs {
		d := &t.Defs[defs[i].def]
		if d.Scope() == "" || defs[i].flags&factAPI == 0 || defs[i].flags&factSecondary != 0 || !callableKinds[d.Kind()] {
			continue
		}
		if p := memberOf(t, d, func(j int) bool { return defs[j].flags&factAPI != 0 }, func(j int) *Def { return &t.Defs[defs[j].def] }, i); p >= 0 {
			defs[p].members++
		}
	}
}

// callableKinds are the kinds of definitions countMembers counts.
var callableKinds = map[string]bool{"function": true, "method": true, "constructor": true}

// memberOf returns the index (below i, by at) of the container d is a
// member of, -1 for none: the nearest earlier container named d.Scope that
// is API (api) and shallower than d, and encloses it unless top-level.
func memberOf(t *FileTags, d *Def, api func(int) bool, at func(int) *Def, i int) int {
	for j := i - 1; j >= 0; j-- {
		c := at(j)
		if c.Name() != d.Scope() || !containerKinds[c.Kind()] || c.Depth >= d.Depth {
			continue
		}
		if api(j) && (c.Line <= d.Line && d.EndLine <= c.EndLine || c.Depth == 0) {
			return j
		}
		return -1
	}
	return -1
}

// scoreIndex is what score needs of each definition it scores that no
// focus changes, in the order it scores them (by file, then definition):
// made once per graph, on its first ranking, so that scoring a new focus
// reads one array instead of looking up each name's slot, definers and
// qualified forms (a binary search per qualified form) every time.
type scoreIndex struct {
	once      sync.Once
	fileStart []int32 // file f's definitions are defs[fileStart[f]:fileStart[f+1]]
	defs      []scoreDef
	quals     []scoreQual
	declared  []int32 // per file: its API definitions an export list names
	// Per file, what bounds its definitions' scores (setBounds), made by
	// the first ranking in rounds: smaller trees never need them.
	boundsOnce                                         sync.Once
	baseShare, flowRatio, factorBound, factorBoundTest []float64
}

// scoreDef is one scored definition: the flow into it is the mass of its
// slot split among the name's definers, plus that of each qualified or
// bare form of the name that resolves to its file (quals[qualLo:qualHi],
// in qualifiedOf order).
type scoreDef struct {
	def, id        int32
	slot           int32 // -1: no file refers to the name (no mass)
	definers       int32
	qualLo, qualHi int32
	kept           int32  // defFacts.kept
	members        int32  // of an API type: its API members (countMembers)
	uses           int32  // files referring to the name or its forms that resolve here
	doc            uint16 // Def.docLines
	examples       int32  // lines of documentation examples naming it (graph.examples)
	flags          uint8  // factAPI, factEntry, factSecondary, scoreDeclared, scoreDeclaredElsewhere
}

type scoreQual struct{ slot, definers int32 }

// scoreDeclared marks API that an export list names (and is no member).
const scoreDeclared = 1 << 7

// scoreDeclaredElsewhere marks a C definition whose header declaration
// the map shows instead when nothing is focused: the header is where a
// reader of the interface looks, and one line per name is enough.
const scoreDeclaredElsewhere = 1 << 6

func (g *graph) scoreIndex() *scoreIndex {
	x := g.scoreIx
	x.once.Do(func() {
		x.fileStart = make([]int32, len(g.tags)+1)
		x.declared = make([]int32, len(g.tags))
		x.defs = make([]scoreDef, 0, g.numDefs)
		abstract := g.abstractDefiners()
		for fi := range g.tags {
			x.fileStart[fi] = int32(len(x.defs))
			facts := g.facts[fi]
			overloads := false
			for di, id := range g.defIdent[fi] {
				if id < 0 {
					continue // local
				}
				df := facts.defs[di]
				if df.flags&factOverload != 0 {
					overloads = true // one line per name (overloadDocs)
					continue
				}
				member := df.flags&factMember != 0
				d := scoreDef{def: int32(di), id: id, slot: -1, definers: g.defStart[id+1] - g.defStart[id],
					kept: df.kept, uses: g.refFiles[id], doc: g.tags[fi].Defs[di].docLines, flags: df.flags & (factAPI | factEntry | factSecondary)}
				if k := g.slot[id]; int(k) < g.referenced {
					d.slot = k
				}
				if n := abstract[id]; n > 0 && isAbstract(g.tags[fi], di) {
					// A Java interface's (or abstract) method is what its
					// callers call, whichever implementation runs: the
					// declarations share the name's flow, which the
					// implementations do not divide.
					d.definers = n
				}
				if g.examples != nil {
					d.examples = g.examples[id]
				}
				if g.declared[id] && !member {
					d.flags |= scoreDeclared
				}
				if g.cDeclared != nil && g.cDeclared[id] {
					if g.cDoc != nil {
						d.doc = max(d.doc, g.cDoc[id])
					}
					if !strings.HasSuffix(g.files[fi], ".h") {
						d.flags |= scoreDeclaredElsewhere
					}
				}
				d.qualLo = int32(len(x.quals))
				for _, q := range g.qualifiedOf(id) {
					if member {
						break // neither a bare nor a qualified name means a member
					}
					// Definers are in file order.
					if _, ok := slices.BinarySearch(g.definers(q), int32(fi)); ok {
						d.uses += g.refFiles[q]
						if k := g.slot[q]; int(k) < g.referenced {
							x.quals = append(x.quals, scoreQual{slot: k, definers: g.defStart[q+1] - g.defStart[q]})
						} // else its mass is zero: adding it changes nothing
					}
				}
				d.qualHi = int32(len(x.quals))
				x.defs = append(x.defs, d)
				if d.flags&scoreDeclared != 0 && d.flags&factAPI != 0 {
					x.declared[fi]++
				}
			}
			if overloads {
				g.overloadDocs(fi, x.defs[x.fileStart[fi]:])
			}
			g.countMembers(fi, x.defs[x.fileStart[fi]:])
		}
		x.fileStart[len(g.tags)] = int32(len(x.defs))
	})
	return x
}

// overloadDocs gives each of file fi's scored definitions (defs) the most
// documentation of its overloads: one line stands for all of them, and
// TypeScript documents the implementation or the last signature.
func (g *graph) overloadDocs(fi int, defs []scoreDef) {
	type key struct {
		id    int32
		scope string
	}
	t := g.tags[fi]
	first := make(map[key]int, len(defs))
	for i := range defs {
		k := key{defs[i].id, t.Defs[defs[i].def].Scope()}
		if _, ok := first[k]; !ok {
			first[k] = i
		}
	}
	for di, id := range g.defIdent[fi] {
		if id < 0 || g.facts[fi].defs[di].flags&factOverload == 0 {
			continue
		}
		if i, ok := first[key{id, t.Defs[di].Scope()}]; ok {
			defs[i].doc = max(defs[i].doc, t.Defs[di].docLines)
		}
	}
}

// abstractDefiners counts, per name, the files that declare it abstract
// (isAbstract).
func (g *graph) abstractDefiners() []int32 {
	n := make([]int32, len(g.defStart))
	counted := make(map[int32]bool)
	for fi, t := range g.tags {
		if t.Language != "java" {
			continue
		}
		clear(counted)
		for di, id := range g.defIdent[fi] {
			if id >= 0 && !counted[id] && isAbstract(t, di) {
				counted[id] = true
				n[id]++
			}
		}
	}
	return n
}

// isAbstract reports a Java method declared without the body its callers
// reach: a member of an interface, or marked abstract.
func isAbstract(t *FileTags, di int) bool {
	d := &t.Defs[di]
	if t.Language != "java" || d.Scope() == "" || d.Kind() != "method" {
		return false
	}
	if strings.HasPrefix(d.Signature(), "abstract ") || strings.Contains(d.Signature(), " abstract ") {
		return true
	}
	p := memberOf(t, d, func(int) bool { return true }, func(j int) *Def { return &t.Defs[j] }, di)
	return p >= 0 && t.Defs[p].Kind() == "interface"
}
