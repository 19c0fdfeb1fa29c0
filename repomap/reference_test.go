package repomap

import (
	"context"
	"math"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/corpora"
	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/workspace"
)

// The reference ranking: the definition in the comment on ranking (rank.go)
// computed the plain way, from the tags alone, to check the ranking
// against. It shares none of the ranking's machinery (no interned ids, no
// CSR arrays, slots, pools or precomputed facts): names are strings, the
// walk is a power iteration over an explicit file-by-file transition
// matrix, and every score is the formula applied to one definition. It
// uses the ranking's parameters (the constants) and its predicates that
// classify one file or definition (isTestFile, isFixture, isInternal,
// isExperimental, isAPI, isEntry), which the tests of rank_test.go check on their own.

// refName is a name in the reference graph: what a reference names. A
// bare reference (no receiver, in a language where methods are reached
// only through one) is apart from a member access of the same name.
type refName struct {
	bare bool
	name string
}

// refEdge is one reference: file from uses name.
type refEdge struct {
	from int
	name refName
	w, b float64 // weight, and weight before the common and ubiquitous factors
}

type refGraph struct {
	files     []string
	tags      []*FileTags
	rootName  string
	inGraph   [][]bool           // per file, per definition: a definition of the graph
	definers  map[refName][]int  // files each name leads to, ascending
	resolved  map[refName]string // bare and qualified names resolved through a plain name: that name
	uses      map[refName]int    // references to each name (tags' reference entries)
	declared  map[string]bool    // names an export list names, and cDeclared's
	examples  map[string]int     // lines of documentation examples naming each name
	cDeclared map[string]bool    // C names a header declares and a .c file defines
	cDoc      map[string]int     // of cDeclared names: the most documentation lines of a .c definition
	edges     []refEdge          // in file order
}

// receiverLangs reach a method only through its receiver.
var receiverLangs = map[string]bool{"go": true, "python": true, "javascript": true, "typescript": true, "tsx": true}

func refIsMethod(lang string, d *Def) bool { return d.Kind() == "method" && receiverLangs[lang] }

// refTwin reports build output beside its declaration or source.
func refTwin(p string, has map[string]bool) bool {
	for _, js := range []string{".js", ".mjs", ".cjs"} {
		if strings.HasSuffix(p, js) {
			stem := strings.TrimSuffix(p, js)
			return has[stem+".d.ts"] || has[stem+".d.mts"] || has[stem+".d.cts"]
		}
	}
	if strings.HasSuffix(p, ".d.ts") {
		stem := strings.TrimSuffix(p, ".d.ts")
		return has[stem+".ts"] || has[stem+".tsx"]
	}
	return false
}

// nameOf is the name reference r of a file in lang has in the graph.
func nameOf(lang string, r Ref) refName {
	return refName{bare: !r.Member && receiverLangs[lang] && !strings.Contains(r.Name(), "."), name: r.Name()}
}

// qualified splits a qualified name pkg.Name (a dot past the first byte).
func qualified(n refName) (pkg, name string, ok bool) {
	if n.bare {
		return "", "", false
	}
	dot := strings.LastIndex(n.name, ".")
	if dot <= 0 {
		return "", "", false
	}
	return n.name[:dot], n.name[dot+1:], true
}

func newRefGraph(files []string, tags []*FileTags, rootName string) *refGraph {
	rg := &refGraph{files: files, tags: tags, rootName: rootName, definers: map[refName][]int{},
		resolved: map[refName]string{}, uses: map[refName]int{}, declared: map[string]bool{}, examples: map[string]int{}}
	has := map[string]bool{}
	for _, f := range files {
		has[f] = true
	}
	// Definitions in the graph, and who defines each name.
	plain := map[string][]int{}     // files defining the name
	nonMethod := map[string][]int{} // files defining the name with no method
	add := func(m map[string][]int, name string, f int) {
		if l := m[name]; len(l) == 0 || l[len(l)-1] != f {
			m[name] = append(l, f)
		}
	}
	rg.inGraph = make([][]bool, len(files))
	for f, t := range tags {
		rg.inGraph[f] = make([]bool, len(t.Defs))
		builtin := t.Path == "builtin/builtin.go" || strings.HasSuffix(t.Path, "/builtin/builtin.go")
		if builtin || refTwin(t.Path, has) {
			continue
		}
		for di := range t.Defs {
			d := &t.Defs[di]
			if d.Local {
				continue
			}
			rg.inGraph[f][di] = true
			add(plain, d.Name(), f)
			if !refIsMethod(t.Language, d) {
				add(nonMethod, d.Name(), f)
			}
		}
	}
	// Every name a definition or a reference has, with its definers.
	for name, l := range plain {
		rg.definers[refName{name: name}] = l
	}
	for _, t := range tags {
		for _, x := range t.Examples {
			rg.examples[x.Name()] += int(x.Count)
		}
		for _, r := range t.Refs {
			n := nameOf(t.Language, r)
			// The ranking counts reference entries, not files: a file
			// that both uses a name and lists it in an export list (two
			// entries, one name) counts twice.
			rg.uses[n]++
			if r.Export {
				rg.declared[r.Name()] = true
			}
			if _, done := rg.definers[n]; done {
				continue
			}
			rg.definers[n] = rg.resolve(n, plain, nonMethod)
		}
	}
	// C: a function or variable a header declares and a .c file defines
	// (not static) is declared API.
	rg.cDeclared = map[string]bool{}
	rg.cDoc = map[string]int{}
	inHeader, inSource := map[string]bool{}, map[string]bool{}
	for f, t := range tags {
		if t.Language != "c" {
			continue
		}
		for di := range t.Defs {
			d := &t.Defs[di]
			if !rg.inGraph[f][di] || !d.TopLevel || d.Private || d.Kind() != "function" && d.Kind() != "variable" {
				continue
			}
			if strings.HasSuffix(t.Path, ".h") {
				inHeader[d.Name()] = true
			} else {
				inSource[d.Name()] = true
				rg.cDoc[d.Name()] = max(rg.cDoc[d.Name()], int(d.docLines))
			}
		}
	}
	for n := range inHeader {
		if inSource[n] {
			rg.cDeclared[n] = true
		}
	}
	// The edges.
	for f, t := range tags {
		for _, r := range t.Refs {
			n := nameOf(t.Language, r)
			d := rg.definers[n]
			if len(d) == 0 {
				continue
			}
			e := refEdge{from: f, name: n}
			shape := refShape(n)
			if r.Export {
				shape = 1
			}
			e.b = math.Sqrt(float64(r.Count)) * shape
			// Self: the file defines the reference's name. A bare or
			// qualified reference's name is never a definition's (the
			// ranking compares the names in the graph), so only member
			// references and those in other languages get the factor.
			if !n.bare && slices.Contains(plain[n.name], f) {
				e.b *= selfRefFactor
			}
			e.w = e.b * refCommon(len(d)) * refUbiquity(rg.uses[n], len(files))
			rg.edges = append(rg.edges, e)
		}
	}
	return rg
}

// resolve returns the files name n leads to: a bare name to the files
// defining it with no method, pkg.Name to those of them in a directory
// named pkg (the root's by rootName), any other name (or pkg.Name when no
// such directory defines it) to every file defining it.
func (rg *refGraph) resolve(n refName, plain, nonMethod map[string][]int) []int {
	if n.bare {
		if l := nonMethod[n.name]; len(l) > 0 {
			rg.resolved[n] = n.name
			return l
		}
		return nil
	}
	if pkg, name, ok := qualified(n); ok {
		var l []int
		for _, f := range nonMethod[name] {
			dir := path.Base(path.Dir(rg.files[f]))
			if !strings.Contains(rg.files[f], "/") {
				dir = rg.rootName
			}
			if dir == pkg {
				l = append(l, f)
			}
		}
		if len(l) > 0 {
			rg.resolved[n] = name
			return l
		}
	}
	return plain[n.name]
}

// refShape is the factor of a name's shape: a qualified name means one
// thing; a long compound name ×3, a name of three characters or fewer ×0.3;
// a private one (leading "_") ×0.3.
func refShape(n refName) float64 {
	if _, _, ok := qualified(n); ok {
		return specificBoost
	}
	s := 1.0
	runes := utf8.RuneCountInString(n.name)
	compound := false
	var prev rune
	for i, r := range n.name {
		if r == '_' || r == '-' || i > 0 && unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)) {
			compound = true
		}
		prev = r
	}
	if runes >= 8 && compound {
		s = specificBoost
	} else if runes <= 3 {
		s = shortPenalty
	}
	if strings.HasPrefix(n.name, "_") {
		s *= privatePenalty
	}
	return s
}

// refCommon is 1/(1 + log2 of the definers).
func refCommon(definers int) float64 { return 1 / (1 + math.Log2(float64(definers))) }

// refUbiquity lowers names used more than by 5% of the files, in
// repositories of 100 files or more, in proportion past that share.
func refUbiquity(uses, files int) float64 {
	limit := ubiquityShare * float64(files)
	if limit < 2 || float64(uses) <= limit {
		return 1
	}
	return limit / float64(uses)
}

// refRanking is the reference's outcome.
type refRanking struct {
	pr         []float64
	iterations int
	scores     map[[2]int32]float64 // (file, definition) → score
}

// rank runs the reference ranking for focus.
func (rg *refGraph) rank(focus Focus) refRanking {
	nf := len(rg.files)
	var words []string
	for _, w := range focus.Mentioned {
		w = strings.ToLower(strings.Trim(w, " \t\n`'\"()[]{},.;:?!"))
		if len(w) >= 3 {
			words = append(words, w)
		}
	}
	isFocus := func(n refName) bool {
		if len(rg.definers[n]) == 0 {
			return false
		}
		for _, id := range focus.Identifiers {
			if id == n.name {
				return true
			}
		}
		for _, w := range words {
			if len(w) == len(n.name) && strings.EqualFold(w, n.name) {
				return true
			}
		}
		return false
	}

	// Personalization.
	p := make([]float64, nf)
	index := map[string]int{}
	for i, f := range rg.files {
		index[f] = i
	}
	for _, f := range focus.Files {
		if i, ok := index[f]; ok {
			p[i]++
		}
	}
	for _, f := range focus.Related {
		if i, ok := index[f]; ok {
			p[i] += 0.5
		}
	}
	for i, f := range rg.files {
		lf := strings.ToLower(f)
		base := path.Base(lf)
		if dot := strings.Index(base, "."); dot > 0 {
			base = base[:dot]
		}
		for _, w := range words {
			if w == lf || w == base || strings.Contains(w, "/") && strings.Contains(lf, w) {
				p[i] += 0.5
				break
			}
		}
	}
	for n, d := range rg.definers {
		if isFocus(n) {
			for _, f := range d {
				p[f] += 0.25 / float64(len(d))
			}
		}
	}
	if sum(p) == 0 {
		for i, t := range rg.tags {
			p[i] = 1
			for _, r := range t.Refs {
				if r.Export {
					p[i]++
				}
			}
			if t.Language == "go" && isTestFile(t.Path) {
				for _, d := range t.Defs {
					if d.TopLevel && d.Kind() == "function" && strings.HasPrefix(d.Name(), "Example") {
						p[i]++
					}
				}
			}
		}
	}
	total := sum(p)
	for i := range p {
		p[i] /= total
	}

	// The transition matrix: move[to][from] is the share of from's rank
	// that goes to to in one step; stay[from] what restarts at p.
	weight := func(e refEdge) (w, b float64) {
		if isFocus(e.name) {
			return e.w * focusBoost, e.b * focusBoost
		}
		return e.w, e.b
	}
	out := make([]float64, nf)
	for _, e := range rg.edges {
		_, b := weight(e)
		out[e.from] += b
	}
	move := make([][]float64, nf)
	for i := range move {
		move[i] = make([]float64, nf)
	}
	restart := make([]float64, nf)
	for f := range restart {
		restart[f] = 1
	}
	for _, e := range rg.edges {
		w, _ := weight(e)
		d := rg.definers[e.name]
		for _, to := range d {
			move[to][e.from] += w / out[e.from] / float64(len(d))
		}
		restart[e.from] -= w / out[e.from]
	}
	pr := slices.Clone(p)
	it := 0
	for ; it < maxIterations; it++ {
		restarting := 0.0
		for f := range pr {
			restarting += restart[f] * pr[f]
		}
		next := make([]float64, nf)
		diff := 0.0
		for to := range next {
			in := 0.0
			for from, m := range move[to] {
				in += m * pr[from]
			}
			next[to] = damping*(in+restarting*p[to]) + (1-damping)*p[to]
			diff += math.Abs(next[to] - pr[to])
		}
		pr = next
		if diff < tolerance {
			break
		}
	}

	// The flow along each name in the last step.
	mass := map[refName]float64{}
	for _, e := range rg.edges {
		w, _ := weight(e)
		mass[e.name] += pr[e.from] * w / out[e.from]
	}
	return refRanking{pr: pr, iterations: it, scores: rg.scores(focus, pr, mass, isFocus)}
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}

// scores scores every definition the map may show.
func (rg *refGraph) scores(focus Focus, pr []float64, mass map[refName]float64, isFocus func(refName) bool) map[[2]int32]float64 {
	unfocused := len(focus.Files)+len(focus.Related)+len(focus.Identifiers)+len(focus.Mentioned) == 0
	testFocus := slices.ContainsFunc(focus.Files, isTestFile)
	minDepth := math.MaxInt
	for _, t := range rg.tags {
		if len(t.Defs) > 0 {
			minDepth = min(minDepth, strings.Count(t.Path, "/"))
		}
	}
	// The bare and qualified forms of each plain name that resolve to some
	// of its definers.
	forms := map[string][]refName{}
	for n, plain := range rg.resolved {
		forms[plain] = append(forms[plain], n)
	}
	scores := map[[2]int32]float64{}
	for f, t := range rg.tags {
		if len(t.Defs) == 0 || slices.Contains(focus.Known, t.Path) {
			continue
		}
		fileFactor := 1.0
		if isFixture(t.Path) || strings.HasSuffix("/"+t.Path, "/builtin/builtin.go") {
			fileFactor *= fixturePenalty
		}
		if isTestFile(t.Path) && !testFocus {
			fileFactor *= testPenalty
		}
		if unfocused {
			if isInternal(t.Path) {
				fileFactor *= internalFactor
			}
			if isExperimental(t) {
				fileFactor *= fixturePenalty
			}
			fileFactor *= math.Pow(nestFactor, float64(strings.Count(t.Path, "/")-minDepth))
		}
		// With no focus the file's baseline is shared by its API.
		shares := len(t.Defs)
		sharesDiv := float64(shares)
		if unfocused {
			api := 0
			for di := range t.Defs {
				if rg.inGraph[f][di] && !rg.repeats(f, di) && isAPI(t.Language, &t.Defs[di]) && !unlisted(t, exportedNames(t), &t.Defs[di]) {
					api++
				}
			}
			if api > 0 {
				shares = api
			}
			// A file with its own export list (or Go examples) shares it
			// among the API the export lists name.
			exports := false
			for _, r := range t.Refs {
				exports = exports || r.Export
			}
			if t.Language == "go" && isTestFile(t.Path) {
				for _, d := range t.Defs {
					exports = exports || d.TopLevel && d.Kind() == "function" && strings.HasPrefix(d.Name(), "Example")
				}
			}
			listed := 0
			for di := range t.Defs {
				d := &t.Defs[di]
				if rg.inGraph[f][di] && !rg.repeats(f, di) && isAPI(t.Language, d) && !unlisted(t, exportedNames(t), d) && rg.declared[d.Name()] && !refIsMethod(t.Language, d) {
					listed++
				}
			}
			if api > 0 && exports && listed > 0 {
				shares = listed
			}
			if api > 0 {
				sharesDiv = math.Pow(float64(shares), apiSplitExp)
			}
		}
		// Each API type's API functions and methods (trait impls' items and
		// constructors aside), among the definitions scored.
		var scored []int
		for di := range t.Defs {
			if rg.inGraph[f][di] && !rg.repeats(f, di) {
				scored = append(scored, di)
			}
		}
		api := func(d *Def) bool { return isAPI(t.Language, d) && !unlisted(t, exportedNames(t), d) }
		members := map[int]int{}
		for i, di := range scored {
			d := &t.Defs[di]
			if d.Scope() == "" || !api(d) || d.Kind() == "constructor" && d.Name() == d.Scope() || inTraitImpl(t, d) || d.Override || d.Deprecated ||
				d.Kind() != "function" && d.Kind() != "method" && d.Kind() != "constructor" {
				continue
			}
			at := func(j int) *Def { return &t.Defs[scored[j]] }
			if p := memberOf(t, d, func(j int) bool { return api(at(j)) }, at, i); p >= 0 {
				members[scored[p]]++
			}
		}
		for di := range t.Defs {
			d := &t.Defs[di]
			if !rg.inGraph[f][di] || rg.repeats(f, di) {
				continue
			}
			// A constructor named after its class does not divide the
			// class's flow (nor the class its constructors').
			ctor := d.Kind() == "constructor" && d.Name() == d.Scope()
			kept := 0
			for j := range t.Defs {
				dj := &t.Defs[j]
				if rg.inGraph[f][j] && dj.Name() == d.Name() && !rg.repeats(f, j) && (dj.Kind() == "constructor" && dj.Name() == dj.Scope()) == ctor {
					kept++
				}
			}
			plain := refName{name: d.Name()}
			definers := len(rg.definers[plain])
			if isAbstract(t, di) {
				// A Java interface's or abstract method: the declarations
				// share the name's flow.
				definers = 0
				for _, g := range rg.definers[plain] {
					if len(rg.abstractDefs(g, d.Name())) > 0 {
						definers++
					}
				}
			}
			flow := mass[plain] / float64(definers)
			uses := rg.uses[plain]
			method := refIsMethod(t.Language, d)
			if !method {
				for _, n := range forms[d.Name()] {
					if slices.Contains(rg.definers[n], f) {
						flow += mass[n] / float64(len(rg.definers[n]))
						uses += rg.uses[n]
					}
				}
			}
			s := pr[f]*baselineShare/sharesDiv + flow/float64(kept)
			if unfocused {
				s = math.Pow(s, unfocusedFlowExp)
			}
			if isFocus(plain) {
				s *= defFocusBoost
			}
			if isAPI(t.Language, d) && !unlisted(t, exportedNames(t), d) {
				s *= apiBoost
				if unfocused && rg.declared[d.Name()] && !method {
					s *= declaredBoost
				}
				if unfocused && isEntry(t.Language, d) {
					s *= entryBoost
				}
			} else if unfocused {
				s *= internalsFactor
			}
			if unfocused && (ctor || inTraitImpl(t, d) || d.Override || d.Deprecated || rg.cDeclared[d.Name()] && !strings.HasSuffix(t.Path, ".h")) {
				s *= internalsFactor
			}
			if unfocused {
				s *= 1 + math.Log2(1+float64(uses))
				if m := members[di]; m > 0 {
					s *= 1 + surfaceWeight*math.Log2(1+float64(m))
				}
				// Documentation: the most of any overload of the name
				// and scope, and for a header-declared C name of its .c
				// definitions.
				doc := 0
				for j := range t.Defs {
					if dj := &t.Defs[j]; rg.inGraph[f][j] && dj.Name() == d.Name() && dj.Scope() == d.Scope() {
						doc = max(doc, int(dj.docLines))
					}
				}
				if rg.cDeclared[d.Name()] {
					doc = max(doc, rg.cDoc[d.Name()])
				}
				s *= 1 + docWeight*math.Log2(1+float64(doc))
				if n := rg.examples[d.Name()]; n > 0 && isAPI(t.Language, d) && !unlisted(t, exportedNames(t), d) {
					s *= 1 + exampleWeight*math.Log2(1+float64(n))
				}
			}
			scores[[2]int32{int32(f), int32(di)}] = s * fileFactor
		}
	}
	return scores
}

// abstractDefs lists file f's definitions of name in the graph that
// isAbstract.
func (rg *refGraph) abstractDefs(f int, name string) []int {
	var out []int
	for di := range rg.tags[f].Defs {
		if rg.inGraph[f][di] && rg.tags[f].Defs[di].Name() == name && isAbstract(rg.tags[f], di) {
			out = append(out, di)
		}
	}
	return out
}

// repeats reports a definition that repeats the name and scope of an
// earlier one of its file (an overload): the first stands for them.
func (rg *refGraph) repeats(f, di int) bool {
	t := rg.tags[f]
	for j := 0; j < di; j++ {
		if rg.inGraph[f][j] && t.Defs[j].Name() == t.Defs[di].Name() && t.Defs[j].Scope() == t.Defs[di].Scope() {
			return true
		}
	}
	return false
}

// near reports a and b equal but for rounding.
func near(a, b float64) bool {
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// checkReference ranks m for each focus and compares the iterations, the
// files' ranks and every definition's score and place with the
// reference's.
func checkReference(t *testing.T, m *Map, focuses []Focus) {
	t.Helper()
	g := m.currentGraph()
	rg := newRefGraph(g.files, g.tags, m.rootName())
	for _, x := range m.docExamples {
		rg.examples[x.Name()] += int(x.Count)
	}
	for _, f := range focuses {
		_, r := m.rank(f)
		want := rg.rank(f)
		if r.iterations != want.iterations {
			t.Errorf("focus %+v: %d iterations, want %d", f, r.iterations, want.iterations)
		}
		pr := fileRanks(m, f)
		for i := range want.pr {
			if !near(pr[i], want.pr[i]) {
				t.Errorf("focus %+v: rank of %s = %v, want %v", f, g.files[i], pr[i], want.pr[i])
				break
			}
		}
		// The kept prefix (bestScored's pick by the scores' bits) is the head
		// of every definition scored again and sorted.
		prefix := slices.Clone(r.get(len(r.defs)))
		got := r.get(r.n)
		if len(got) < len(prefix) || !slices.Equal(prefix, got[:len(prefix)]) {
			t.Errorf("focus %+v: the kept %d best differ from the head of all %d scored", f, len(prefix), len(got))
		}
		if len(got) != len(want.scores) {
			t.Errorf("focus %+v: %d definitions ranked, want %d", f, len(got), len(want.scores))
		}
		for i, d := range got {
			w, ok := want.scores[[2]int32{d.file, d.def}]
			if !ok || !near(d.score, w) {
				def := g.tags[d.file].Defs[d.def]
				t.Errorf("focus %+v: #%d %s %s (line %d) scores %v, want %v (ranked: %v)", f, i, g.files[d.file], def.Name(), def.Line, d.score, w, ok)
				break
			}
			if i > 0 && cmpRanked(got[i-1], d) >= 0 {
				t.Errorf("focus %+v: #%d out of order", f, i)
				break
			}
		}
	}
}

// netHTTPMap builds the map of the Go tree's net/http.
func netHTTPMap(t *testing.T) *Map {
	t.Helper()
	root := filepath.Join(testenv.GOROOT(t), "src", "net", "http")
	ws, err := workspace.Open(root)
	if err != nil {
		testenv.Need(t, "the Go tree's net/http: %v", err)
	}
	m := New(ws, Options{})
	if _, err := m.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// The ranking of a real tree is the reference's, focused and not, with the
// kept sorted prefix at its size and at 500 (the rest scored again on
// demand).
func TestRankMatchesReferenceOnRealCode(t *testing.T) {
	if testing.Short() {
		t.Skip("parses net/http")
	}
	m := netHTTPMap(t)
	focuses := []Focus{
		{},
		{Files: []string{"server.go"}, Identifiers: []string{"Handler", "ServeHTTP", "ResponseWriter"}, Known: []string{"server.go"}},
		{Files: []string{"client_test.go"}, Mentioned: []string{"redirect", "cookies", "jar"}},
		{Related: []string{"transport.go"}, Mentioned: []string{"how", "does", "the", "transport", "reuse", "connections", "httptrace/"}},
	}
	checkReference(t, m, focuses)
	defer func(n int) { rankedPrefix = n }(rankedPrefix)
	for _, k := range []int{500, 50, 7} {
		rankedPrefix = k
		m.mu.Lock()
		m.rankCache = nil // rank again with the smaller prefix
		m.mu.Unlock()
		checkReference(t, m, focuses)
	}
	// The focused rankings in rounds (prune.go), forced on this small tree.
	defer func(n, r int) { pruneMinDefs, firstRound = n, r }(pruneMinDefs, firstRound)
	pruneMinDefs, firstRound = 0, 2
	for _, k := range []int{500, 50, 7} {
		rankedPrefix = k
		m.mu.Lock()
		m.rankCache = nil
		m.mu.Unlock()
		checkReference(t, m, focuses)
	}
}

// The ranking split into many parts (as a tree of tens of thousands of
// files is, on every core) is the reference's, and the same to the bit
// whatever the number of cores.
func TestRankInPartsMatchesReference(t *testing.T) {
	if testing.Short() {
		t.Skip("parses net/http")
	}
	defer func(f, g, p int) { fileChunk, gatherChunk, parallelFiles = f, g, p }(fileChunk, gatherChunk, parallelFiles)
	fileChunk, gatherChunk, parallelFiles = 13, 500, 0
	m := netHTTPMap(t)
	g := m.currentGraph()
	if n, x := fileParts(len(g.tags)), g.flowIndex(); n < 4 || x.gatherParts < 4 {
		t.Fatalf("%d file parts and %d gather parts: the test needs several of each", n, x.gatherParts)
	}
	focuses := []Focus{
		{},
		{Files: []string{"server.go"}, Identifiers: []string{"Handler", "ServeHTTP", "ResponseWriter"}, Known: []string{"server.go"}},
		{Related: []string{"transport.go"}, Mentioned: []string{"transport", "reuse", "connections"}},
	}
	checkReference(t, m, focuses)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, f := range focuses {
		var ranks [][]float64
		for _, procs := range []int{1, 4} {
			runtime.GOMAXPROCS(procs)
			ranks = append(ranks, fileRanks(m, f))
		}
		for i := range ranks[0] {
			if math.Float64bits(ranks[0][i]) != math.Float64bits(ranks[1][i]) {
				t.Fatalf("focus %+v: %s ranks %v on one core and %v on four", f, g.files[i], ranks[0][i], ranks[1][i])
			}
		}
	}
}

// The same on the quality corpora (TypeScript, Python, Java, C, Ruby and
// Rust included).
func TestRankMatchesReferenceOnCorpora(t *testing.T) {
	corpora.Enabled(t)
	for _, c := range []struct{ corpus, dir string }{{"rxjs", ""}, {"zod", ""}, {"python", "asyncio"}, {"go", "go"}, {"java", "java.net.http"}, {"linux", "fs/ext4"}, {"ruby", "net"}, {"rust", "io"}} {
		ws, err := workspace.Open(filepath.Join(corpora.Root(t, c.corpus), c.dir))
		if err != nil {
			t.Fatal(err)
		}
		m := New(ws, Options{})
		if _, err := m.Build(context.Background()); err != nil {
			t.Fatal(err)
		}
		focuses := []Focus{{}, {Mentioned: []string{"subscribe", "pipe", "parse", "event", "loop", "ast/"}}, {Identifiers: []string{"Node", "String", "map"}}}
		checkReference(t, m, focuses)
		checkBounded(t, m, focuses)
	}
}
