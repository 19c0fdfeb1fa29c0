package repomap

import (
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
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
//	w(r, i) = sqrt(uses of i in r) · specific(i) · private(i) · common(i) · ubiquitous(i) · focus(i)
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
//   - ubiquitous ×(5% of files / files using it) for names used by more
//     than 5% of the files (in repositories of 40+ files): string, error,
//     Errorf are vocabulary, not dependencies; without this the file that
//     declares the builtins outranks everything.
//   - a reference in an export list (`export { of } from`, __all__) has no
//     specific, short or private factor: it names exactly what it exports,
//     so a short name (of, tap) receives as much as a long one.
//   - focus ×10 for the identifiers of the selection and the names mentioned
//     in the question: the walk should follow what the user is looking at.
//   - self ×0.3 when r itself defines i: a file using its own private types
//     and helpers says nothing about what the rest of the code depends on.
//     i is the reference's name in the graph: a bare or qualified
//     reference's (graphName, resolveNames) is no definition's name, so
//     only member references and references in other languages get it.
//
// Only names that some file defines form edges; references to the standard
// library or unparsed code lead nowhere. Which definitions a reference can
// mean depends on its form (resolveNames): a qualified Go name
// (context.Context) only those in the package's directory that are not
// methods (pkg.Name never names one); a bare name in a
// language that reaches methods only through a receiver (Go, Python,
// JS/TS: x.m(), self.m(), this.m()) only definitions that are not methods,
// so Go's len(x) and string no longer feed every method named len or
// string; a member access (x.m) any definition of the name.
//
// Build output beside its declaration (compiled .js next to a .d.ts of the
// same stem, a .d.ts next to its .ts) defines nothing in the graph: it
// would double every name (zod's lib/types.js, index.mjs and types.d.ts).
// Its references still count. Overloads (the same name and scope again in
// one file: TypeScript overload signatures, Python property setters) rank
// as one definition, shown by its first line. A file with no edges spreads its
// rank by the personalization vector (the usual treatment of dangling nodes).
//
// Personalization (where the walk restarts): each of Focus.Files weight 1,
// each of Focus.Related 0.5, each file whose path matches a mentioned word
// 0.5, and each file defining a focus identifier or mentioned name 0.25
// (split among that name's definers). With no focus at all every file has
// weight 1 plus 1 for each name its export lists name (Ref.Export: an index
// file's re-exports, Python's __all__, C's EXPORT_SYMBOL and the functions
// a file-scope operations table holds) and for each Go example (func
// ExampleX in a _test.go file): plain PageRank, the most depended-upon
// code first, with the package's users entering through what it declares
// it offers and shows (rxjs's operators, http.Redirect, which nothing
// inside the package uses).
//
// The walk leaves r along its edges in proportion to the weights before
// the common and ubiquitous factors; the share those factors remove is not
// followed and restarts at the personalization. (Normalizing by the reduced
// weights instead would give it straight back: a file whose references are
// all to "string" and "error" would pass its whole rank to the builtins.)
//
// A definition's score is the rank that flowed along edges named after it
// into its file, split evenly among same-named definitions in that file
// (a constructor named after its class apart: the class and its
// constructors each take the whole), plus 1% of its file's rank split
// among the file's definitions (so that unreferenced definitions of highly
// ranked files, e.g. the selection's own file, still order among
// themselves; when nothing is focused, split among the file's API only, or
// in a file with an export list among the API it lists: a large file's
// entry points are not starved by its static helpers), raised to the power
// 0.4 when nothing is focused (unfocusedFlowExp), ×2 when its name is a focus
// identifier or mentioned name, ×0.1 in test fixtures (testdata/,
// fixtures/, __fixtures__/) and in Go's builtin package (the predeclared
// identifiers, which every Go file uses), ×0.1 in test files unless a focus
// file is a test, ×0.03 in Go internal/ and Java jdk/internal/ packages when nothing is focused, and
// ×0.2 per directory level below the shallowest file when nothing is
// focused (a subdirectory is another package or a module's internals:
// java.util.concurrent, kernel/sched's subfolders), ×3 for exported API (isAPI: Go's capitalized names, Python's public
// top-level names and members, in a module with __all__ only the top-level
// names it lists (unlisted), TypeScript/JavaScript exports) and ×10 more,
// when nothing is focused, for API an export list names (declared: an index
// file's `export { x } from`, a bundle's closing `export { ... }`, Python's
// __all__; the package author's own list of what it offers, which outranks
// names exported only for use between its modules), and when nothing is
// focused ×3 more for API with no enclosing scope (isEntry: the package's
// top-level functions, types and variables, its entry points, before the
// members they lead to; also Ruby's classes and modules at any nesting and
// what is called on a type rather than an instance: Java static methods,
// Ruby singleton methods, Rust associated functions without self) while
// what is not API ×0.1 (internalsFactor): a map with no focus should open
// on what a package offers, not on its plumbing. Since issue 29, isAPI
// reads each language's visibility (visibility.go: Java public, Rust pub,
// C static, Ruby private). Also since issue 29, with no focus: a C
// function or variable that a header declares and a .c file defines
// without static is header-declared API, whose .c definition ×0.1 (the
// header's line stands for it); a constructor named after its class, a
// Rust trait impl's item and a Java @Override method ×0.1 (the class line
// or the trait stands for them); and an API type with m API members
// ×(1 + log2(1+m)) (surfaceWeight: a rich public interface, HashMap's or
// Net::HTTP's, marks a package's core however few files inside use it).
// Also with no focus, a definition with n lines of documentation
// ×(1 + 2·log2(1+n)) (docWeight; doc.go: Javadoc, kernel-doc, rustdoc, RDoc
// and docstrings are written for the users of what a package offers; an
// overloaded name counts its most documented signature, a header's C
// declaration its definition's kernel-doc), and the file's 1% is split
// among its n API definitions by √n rather than n (apiSplitExp): a large
// file is usually the package's core (the scheduler's core.c, HashMap's
// map.rs), not n times less important per entry point.
// Also with no focus, API whose name n lines of the package's
// documentation examples use ×(1 + log2(1+n)) (exampleWeight; examples.go:
// rustdoc's fenced code, Javadoc's <pre>, JSDoc's @example and fences,
// doctests, RDoc's verbatim lines): like Go's Example functions, the
// package's own account of how it is used from outside, which references
// inside it do not see (HttpRequest.Builder.POST, rxjs's interval).
// A Java interface's or abstract method takes its name's flow divided only
// among the files declaring it so (abstractDefiners), not among the
// implementations too: callers call the declaration.
// The definitions of Focus.Known files are left out: the prompt holds them.
const (
	damping         = 0.85
	maxIterations   = 100
	tolerance       = 2e-3 // L1 change of the rank vector (sums to 1) that ends the iteration: a smaller one costs iterations without changing a quality figure (repomap/README.md)
	focusBoost      = 10.0
	specificBoost   = 3.0
	shortPenalty    = 0.3
	privatePenalty  = 0.3
	baselineShare   = 0.01
	defFocusBoost   = 2.0
	ubiquityShare   = 0.05
	fixturePenalty  = 0.1
	selfRefFactor   = 0.3
	testPenalty     = 0.1
	internalFactor  = 0.03 // unfocused: an internal package is no API (issue 29 round 5: ×0.3 before)
	apiBoost        = 3.0
	nestFactor      = 0.2
	declaredBoost   = 10.0
	internalsFactor = 0.1
	entryBoost      = 3.0
	surfaceWeight   = 1.0
	docWeight       = 2.0
	exampleWeight   = 1.0
	apiSplitExp     = 0.5
	// unfocusedFlowExp compresses what flows to a definition when nothing
	// is focused: what a package's own files use most (java.util's Locale,
	// 100× TreeMap's inflow) is not all a newcomer needs first, and the
	// overview's other inputs (documentation, surface, uses, visibility)
	// weigh against it (issue 29, round 5: 0.4 picked on the dev half).
	unfocusedFlowExp = 0.4
)

// Focus is what the question is about. All fields are optional.
type Focus struct {
	Files       []string // the selection's file(s), workspace-relative
	Related     []string // files with diagnostics, recently edited files
	Identifiers []string // identifiers in the selection (exact names)
	Mentioned   []string // words of the question: matched to file paths and names, case-insensitively
	// Known files are already in the prompt (the context engine's
	// selection file): their definitions are left out of the map.
	Known []string
}

func (f Focus) key() string {
	var b strings.Builder
	for _, l := range [][]string{f.Files, f.Related, f.Identifiers, f.Mentioned, f.Known} {
		s := append([]string(nil), l...)
		sort.Strings(s)
		b.WriteString(strings.Join(s, "\x00"))
		b.WriteByte(1)
	}
	return b.String()
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
	r := g.rank(focus, m.focusIDs(g, focus))
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

// focusIDs returns the ids in g of focus's identifiers, bare and as
// written.
func (m *Map) focusIDs(g *graph, focus Focus) []int32 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var ids []int32
	for _, n := range focus.Identifiers {
		for _, k := range []string{n, bareMark + n} {
			if id, ok := m.syms.ids[k]; ok && int(id) < len(g.idents) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

func (g *graph) rank(focus Focus, focusIdents []int32) *ranking {
	if len(g.tags) == 0 {
		return &ranking{}
	}
	sf := g.scoreFocus(focus)
	x := g.scoreIndex()
	n := x.scored(&sf)
	var bs *boundScratch
	var inflow []float64 // the files' inflow, for their bounds when scored in rounds
	if x.pruned(&sf, n, rankedPrefix) {
		bs = boundPool.Get().(*boundScratch)
		bs.inflow = slices.Grow(bs.inflow[:0], len(g.tags))[:len(g.tags)]
		inflow = bs.inflow
	}
	f := g.flows(focus, focusIdents, inflow)
	defer f.release()
	out := &ranking{iterations: f.iterations, n: n}
	// The definitions are scored in a buffer kept between rankings (all
	// of them, or in rounds: prune.go); the ranking keeps the best. The
	// rest are scored again (the same scores, from the same inputs) if a
	// budget ever needs them.
	buf := scoresPool.Get().(*[]float64)
	scores := slices.Grow((*buf)[:0], len(x.defs))[:len(x.defs)]
	hp := histPool.Get().(*[1 << scoreBucketBits]int32)
	clear(hp[:])
	if bs != nil {
		out.defs = g.bestBounded(scores, &sf, x, f, rankedPrefix, hp[:], bs)
		boundPool.Put(bs)
	} else {
		g.scoreAll(scores, &sf, x, f.pr, f.mass, f.focusIdent, hp[:], nil)
		out.defs = g.bestScored(scores, &sf, x, rankedPrefix, out.n, hp[:])
	}
	histPool.Put(hp)
	*buf = scores[:0]
	scoresPool.Put(buf)
	if out.n > len(out.defs) {
		// Rarely needed (a budget past rankedPrefix definitions): the walk
		// runs again rather than the ranking keeping its arrays. It gives
		// the same ranks and flows: it starts from the personalization.
		fc := Focus{Files: slices.Clone(focus.Files), Related: slices.Clone(focus.Related),
			Identifiers: slices.Clone(focus.Identifiers), Mentioned: slices.Clone(focus.Mentioned), Known: slices.Clone(focus.Known)}
		ids := slices.Clone(focusIdents)
		out.more = func() []rankedDef {
			f := g.flows(fc, ids, nil)
			defer f.release()
			return g.score(fc, f.pr, f.mass, f.focusIdent)
		}
	}
	return out
}

var scoresPool = sync.Pool{New: func() any { return new([]float64) }}

// ranking is the result of one personalized PageRank.
type ranking struct {
	key        string
	n          int // definitions ranked
	iterations int

	mu   sync.Mutex
	defs []rankedDef        // the best, in order
	more func() []rankedDef // every definition scored again, unsorted (nil when defs holds all)
	// overviews are an unfocused ranking's first definitions by value per
	// token (byValuePerToken), by how many were reordered: made by the
	// first Render that needs them, for the next ones.
	overviews map[int][]rankedDef
}

// rankedPrefix is how many definitions are sorted eagerly: far more than
// an 8k-token map shows. Larger budgets sort the rest on demand.
var rankedPrefix = 4096 // a variable for the tests

// get returns the first k ranked definitions (fewer when there are fewer).
func (r *ranking) get(k int) []rankedDef {
	r.mu.Lock()
	defer r.mu.Unlock()
	if k > len(r.defs) && r.more != nil {
		all := r.more()
		slices.SortFunc(all, cmpRanked)
		r.defs, r.more = all, nil
	}
	if k > len(r.defs) {
		k = len(r.defs)
	}
	return r.defs[:k:k]
}

// cmpRanked orders by score, descending, then by file and definition.
func cmpRanked(a, b rankedDef) int {
	switch {
	case a.score > b.score:
		return -1
	case a.score < b.score:
		return 1
	case a.file != b.file:
		return int(a.file - b.file)
	}
	return int(a.def - b.def)
}

// bestScored returns the k best of scoreAll's scores of the n definitions
// of the files sf does not know, sorted, in a new slice. It runs over every
// definition of the repository for each new focus, so it selects by the
// scores' bits rather than by comparisons: the histogram of the scores'
// top bits that scoreAll counted (hist) finds the bucket the k-th best
// falls in; the definitions in higher buckets are all kept, and only that
// bucket's are ordered with them to pick the rest.
func (g *graph) bestScored(scores []float64, sf *scoreFocus, x *scoreIndex, k, n int, hist []int32) []rankedDef {
	if k <= 0 {
		return nil
	}
	b := 0 // every bucket: they all fit
	if n > k {
		b, n = kthBucket(hist, k)
	}
	return sortedPrefix(g.appendRanked(make([]rankedDef, 0, n), scores, sf, x, b, nil), k)
}

// kthBucket returns the bucket of the k-th best of the scores counted in
// hist, and how many scores that bucket and the higher ones hold: the k
// best are the higher buckets' and the best of this one's.
func kthBucket(hist []int32, k int) (b, n int) {
	b, above := len(hist)-1, 0
	for ; b > 0 && above+int(hist[b]) < k; b-- {
		above += int(hist[b])
	}
	return b, above + int(hist[b])
}

// sortedPrefix sorts out and returns its first k, without the rest of a
// much larger array.
func sortedPrefix(out []rankedDef, k int) []rankedDef {
	slices.SortFunc(out, cmpRanked)
	if len(out) <= k {
		return out
	}
	if cap(out) > 2*k {
		return slices.Clone(out[:k]) // not the whole bucket's array
	}
	return out[:k:k]
}

var histPool = sync.Pool{New: func() any { return new([1 << scoreBucketBits]int32) }}

// scoreBucketBits is how many of a score's top bits (as an ordered key)
// make its bucket: the sign, the exponent and 4 bits of the mantissa, 16
// buckets an octave.
const scoreBucketBits = 16

// scoreBucket maps a score to its bucket, in score order: equal scores
// (0 and -0 too) share one, and a higher bucket holds only higher scores.
func scoreBucket(s float64) int {
	if s == 0 {
		s = 0 // -0 orders with +0
	}
	u := math.Float64bits(s)
	if u>>63 != 0 {
		u = ^u // negative: larger magnitude orders lower
	} else {
		u |= 1 << 63
	}
	return int(u >> (64 - scoreBucketBits))
}

type rankedDef struct {
	file  int32
	def   int32
	score float64
}
