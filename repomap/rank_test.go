package repomap

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// A qualified reference (context.Context) leads to the package it names,
// not to every definition called Context: the method Request.Context no
// longer collects the rank of every context.Context use.
func TestQualifiedReferencesResolveToTheirPackage(t *testing.T) {
	files := map[string]string{
		"context/context.go": "package context\n\ntype Context interface{ Done() }\n",
		"web/request.go":     "package web\n\nimport \"example.com/m/context\"\n\ntype Request struct{ ctx context.Context }\n\nfunc (r *Request) Context() context.Context { return r.ctx }\n",
	}
	for i := 0; i < 20; i++ {
		files[fmt.Sprintf("app/f%d.go", i)] = fmt.Sprintf("package app\n\nimport \"example.com/m/context\"\n\nfunc F%d(ctx context.Context) context.Context { return ctx }\n", i)
	}
	m := mapOfFiles(t, files)
	ft, _ := m.Tags("app/f0.go")
	var names []string
	for _, r := range ft.Refs {
		names = append(names, r.Name())
	}
	if strings.Join(names, " ") != "context.Context" {
		t.Errorf("refs of app/f0.go = %v, want the qualified context.Context", names)
	}
	out, _ := m.Render(Focus{}, 30)
	if !strings.HasPrefix(out, "context/context.go:\n") || strings.Contains(out, "Request) Context()") {
		t.Errorf("the map should open on package context's Context, not Request.Context:\n%s", out)
	}
}

// The unfocused map opens on exported API, not on private helpers, test
// files, or Go's builtin declarations; a focused map leaves out the focus
// file's own definitions.
func TestRankAPIFirstAndFocusFileLeftOut(t *testing.T) {
	files := map[string]string{
		"builtin/builtin.go": "package builtin\n\ntype int32 int32\n\ntype string string\n",
		"lib/lib.go":         "package lib\n\n// Serve is the entry point.\nfunc Serve(h Handler) string { return helper(h) }\n\ntype Handler interface{ Handle() string }\n\nfunc helper(h Handler) string { return pad(h.Handle()) }\n\nfunc pad(s string) string { return s }\n",
		"lib/lib_test.go":    "package lib\n\nfunc fakeHandlerForTests() Handler { return nil }\n\nfunc TestServe() { Serve(fakeHandlerForTests()); fakeHandlerForTests(); fakeHandlerForTests() }\n",
	}
	for i := 0; i < 10; i++ {
		files[fmt.Sprintf("app/f%d.go", i)] = fmt.Sprintf("package app\n\nfunc F%d(h lib.Handler) string { var n int32; _ = n; return lib.Serve(h) + pad(\"\") }\n", i)
	}
	m := mapOfFiles(t, files)
	g, r := m.rank(Focus{})
	top := map[string]int{}
	for i, d := range r.get(4) {
		top[g.tags[d.file].Defs[d.def].Name()] = i + 1
	}
	if top["Serve"] == 0 || top["Handler"] == 0 {
		t.Errorf("Serve and Handler should be in the top 4: %v", top)
	}
	for _, name := range []string{"int32", "string", "fakeHandlerForTests"} {
		if top[name] != 0 {
			t.Errorf("%s is in the unfocused top 4: %v", name, top)
		}
	}
	out, _ := m.Render(Focus{Files: []string{"lib/lib.go"}, Known: []string{"lib/lib.go"}}, 200)
	if strings.Contains(out, "lib/lib.go:") || !strings.Contains(out, "app/") {
		t.Errorf("a map focused on a file the prompt holds shows that file's definitions:\n%s", out)
	}
	out, _ = m.Render(Focus{Files: []string{"lib/lib.go"}}, 200)
	if !strings.HasPrefix(out, "lib/lib.go:") {
		t.Errorf("a map focused on a file (the repo_map tool) should open on it:\n%s", out)
	}
}

// A bare name in Go never means a method: len(x) and the type string do
// not feed methods named len or string, while x.len() still does.
func TestBareReferencesSkipMethods(t *testing.T) {
	files := map[string]string{
		"q/q.go": "package q\n\ntype queue struct{ items []int }\n\nfunc (q *queue) len() int { return len(q.items) }\n\nfunc (q *queue) string() string { return \"\" }\n\n// Size is the API.\nfunc Size(n int) int { return n }\n",
	}
	for i := 0; i < 6; i++ {
		files[fmt.Sprintf("q/u%d.go", i)] = fmt.Sprintf("package q\n\nfunc use%d(s string) int { return len(s) + Size(%d) }\n", i, i)
	}
	m := mapOfFiles(t, files)
	g, r := m.rank(Focus{})
	score := scoresBy(g, r, func(d Def) string { return d.Name() })
	if score["len"] >= score["Size"] || score["string"] >= score["Size"] {
		t.Errorf("methods len/string fed by bare len(...) and string: %v", score)
	}
	// A member access reaches the method.
	files["q/m.go"] = "package q\n\nfunc count(q *queue) int { return q.len() + q.len() + q.len() }\n"
	m = mapOfFiles(t, files)
	ft, _ := m.Tags("q/m.go")
	var lenRefs []Ref
	for _, r := range ft.Refs {
		if r.Name() == "len" {
			lenRefs = append(lenRefs, r)
		}
	}
	if len(lenRefs) != 1 || !lenRefs[0].Member || lenRefs[0].Count != 3 {
		t.Errorf("references to len in q/m.go = %+v, want one member reference, 3 uses", lenRefs)
	}
	g, r = m.rank(Focus{})
	for _, d := range r.get(r.n) {
		if def := g.tags[d.file].Defs[d.def]; def.Name() == "len" && d.score <= score["len"] {
			t.Errorf("q.len() does not raise the method len: %g, was %g", d.score, score["len"])
		}
	}
}

// Compiled JavaScript beside its .d.ts defines nothing in the map (the
// declaration names the same API), and declared API (an index file's
// re-exports) comes before exported helpers in the unfocused map.
func TestTwinsCollapseAndDeclaredAPIFirst(t *testing.T) {
	files := map[string]string{
		"lib/types.d.ts": "export declare class Schema { parse(x: unknown): unknown; }\nexport declare function helper(): void;\n",
		"lib/types.js":   "class Schema { parse(x) { return helper(x); } }\nfunction helper() {}\nexports.Schema = Schema;\n",
		"lib/index.d.ts": "export { Schema } from './types';\n",
	}
	for i := 0; i < 5; i++ {
		files[fmt.Sprintf("lib/u%d.ts", i)] = "import { helper } from './types';\nexport function use() { helper(); helper(); }\n"
	}
	m := mapOfFiles(t, files)
	out, _ := m.Render(Focus{}, 2000)
	if strings.Contains(out, "lib/types.js") {
		t.Errorf("the compiled twin of types.d.ts is in the map:\n%s", out)
	}
	g, r := m.rank(Focus{})
	for _, d := range r.get(2) {
		if name := g.tags[d.file].Defs[d.def].Name(); name == "Schema" {
			return
		}
	}
	t.Errorf("the declared Schema is not in the top 2:\n%s", out)
}

// Files only a GOEXPERIMENT builds are experimental; GOOS-specific and
// negated experiment files are not.
func TestExperimentalGoFiles(t *testing.T) {
	for src, want := range map[string]bool{
		"// Copyright\n\n//go:build goexperiment.jsonv2\n\npackage json\n":     true,
		"//go:build !goexperiment.jsonv2\n\npackage json\n":                    false,
		"//go:build windows\n\npackage os\n":                                   false,
		"//go:build goexperiment.jsonv2 && linux\n\npackage json\n":            true,
		"package json\n\n//go:build goexperiment.jsonv2 is not a build line\n": false,
	} {
		ft, err := ParseFile("x.go", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if got := isExperimental(ft); got != want {
			t.Errorf("isExperimental(%q) = %v (constraint %q), want %v", src, got, ft.Constraint, want)
		}
	}
}

// pkg.Name never names a method, even in pkg's own directory: http.Handler
// reaches the interface, not CrossOriginProtection.Handler beside it.
func TestQualifiedReferencesSkipMethods(t *testing.T) {
	files := map[string]string{
		"lib/handler.go": "package lib\n\ntype Handler interface{ Serve() }\n",
		"lib/protect.go": "package lib\n\ntype Protect struct{}\n\nfunc (p *Protect) Handler(h Handler) Handler { return h }\n",
	}
	for i := 0; i < 10; i++ {
		files[fmt.Sprintf("app/f%d.go", i)] = fmt.Sprintf("package app\n\nimport \"example.com/m/lib\"\n\nfunc F%d(h lib.Handler) lib.Handler { return h }\n", i)
	}
	m := mapOfFiles(t, files)
	g, r := m.rank(Focus{})
	score := scoresBy(g, r, func(d Def) string { return d.Kind() + " " + d.Name() })
	if id, ok := m.syms.ids["lib.Handler"]; !ok || len(g.definers(id)) != 1 || g.files[g.definers(id)[0]] != "lib/handler.go" {
		t.Errorf("lib.Handler should lead to lib/handler.go alone (ident found: %v)", ok)
	}
	iface, method := score["interface Handler"], score["method Handler"]
	if iface == 0 || method >= iface/10 {
		t.Errorf("lib.Handler should reach the interface, not the method: interface %g, method %g", iface, method)
	}
}

// An export list names exactly what it exports: its edges carry no
// length or shape factor (of and fromEventPattern, exported alike, score
// alike), and with no focus the walk restarts at the files with export
// lists in proportion to the names they list.
func TestExportListsAreEntryPoints(t *testing.T) {
	files := map[string]string{
		"src/index.ts":                     "export { of } from './internal/of';\nexport { fromEventPattern } from './internal/fromEventPattern';\n",
		"src/internal/of.ts":               "export function of(x: number): number { return x; }\n",
		"src/internal/fromEventPattern.ts": "export function fromEventPattern(x: number): number { return x; }\n",
		"src/internal/other.ts":            "export function unrelatedHelper(): void {}\n",
	}
	m := mapOfFiles(t, files)
	g, r := m.rank(Focus{})
	score := scoresBy(g, r, func(d Def) string { return d.Name() })
	a, b := score["of"], score["fromEventPattern"]
	if a == 0 || math.Abs(a-b) > 1e-9*b {
		t.Errorf("of and fromEventPattern should score alike: %g vs %g", a, b)
	}
	pr := fileRanks(m, Focus{})
	if ri, ro := pr[g.fileIdx["src/index.ts"]], pr[g.fileIdx["src/internal/other.ts"]]; ri < 2*ro {
		t.Errorf("the index file should be where the walk restarts most: rank %g vs %g", ri, ro)
	}
}

// Go's examples (func ExampleX in a _test.go file) are entry points too:
// with no focus the walk restarts there, so API that nothing in the
// package calls but its examples show (http.ListenAndServe, http.Redirect)
// ranks up.
func TestGoExamplesAreEntryPoints(t *testing.T) {
	files := map[string]string{
		"lib/serve.go":        "package lib\n\nfunc ListenAndServe(addr string) error { return nil }\n\nfunc Redirect(url string) {}\n",
		"lib/other.go":        "package lib\n\nfunc unrelatedHelper() {}\n",
		"lib/example_test.go": "package lib_test\n\nimport \"example.com/m/lib\"\n\nfunc ExampleListenAndServe() { lib.ListenAndServe(\":80\") }\n\nfunc ExampleRedirect() { lib.Redirect(\"/\") }\n",
		"lib/serve_test.go":   "package lib\n\nfunc TestServe() { unrelatedHelper() }\n",
	}
	m := mapOfFiles(t, files)
	g := m.currentGraph()
	pr := fileRanks(m, Focus{})
	ex, plain := pr[g.fileIdx["lib/example_test.go"]], pr[g.fileIdx["lib/serve_test.go"]]
	if ex < 2*plain {
		t.Errorf("the examples should be where the walk restarts most: rank %g vs a test file's %g", ex, plain)
	}
	if pr := fileRanks(m, Focus{Files: []string{"lib/other.go"}}); pr[g.fileIdx["lib/example_test.go"]] > pr[g.fileIdx["lib/other.go"]] {
		t.Errorf("with a focus the examples are files like any other")
	}
}

// mapOfFiles writes files into a new workspace and builds its map, and
// checks its ranking against the reference (reference_test.go), unfocused
// and focused on its first file and that file's first definition.
// fileRanks returns the files' ranks under focus (the walk alone).
func fileRanks(m *Map, focus Focus) []float64 {
	g := m.currentGraph()
	f := g.flows(focus, m.focusIDs(g, focus), nil)
	defer f.release()
	return slices.Clone(f.pr)
}

func mapOfFiles(t *testing.T, files map[string]string) *Map {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, files)
	m := newMap(t, root, Options{})
	build(t, m)
	g := m.currentGraph()
	focuses := []Focus{{}}
	if len(g.files) > 0 && len(g.tags[0].Defs) > 0 {
		first, name := g.files[0], g.tags[0].Defs[0].Name()
		focuses = append(focuses,
			Focus{Files: []string{first}, Identifiers: []string{name}},
			Focus{Related: []string{first}, Mentioned: []string{strings.ToUpper(name), "lib/"}, Known: []string{first}})
	}
	checkReference(t, m, focuses)
	return m
}

// scoresBy maps every ranked definition, keyed by key, to its score.
func scoresBy(g *graph, r *ranking, key func(Def) string) map[string]float64 {
	score := map[string]float64{}
	for _, d := range r.get(r.n) {
		score[key(g.tags[d.file].Defs[d.def])] = d.score
	}
	return score
}

// bestOf selects by the scores' bits: scores over many octaves, some in
// one bucket but not equal, zeros of both signs and negatives give the
// same top as sorting everything.
func TestBestOfBuckets(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var all []rankedDef
	for i := 0; i < 20000; i++ {
		s := math.Exp(-40 * r.Float64())
		switch i % 10 {
		case 0:
			s = 0
		case 1:
			s = math.Copysign(0, -1)
		case 2:
			s = -s
		case 3:
			s = math.Nextafter(0.5, 1) + float64(i%3)*1e-16
		}
		all = append(all, rankedDef{file: int32(r.IntN(50)), def: int32(i), score: s})
	}
	want := append([]rankedDef(nil), all...)
	slices.SortFunc(want, cmpRanked)
	hist := make([]int32, 1<<scoreBucketBits)
	for i := range all {
		hist[scoreBucket(all[i].score)]++
	}
	for _, k := range []int{1, 100, 1999, 2000, 2001, 4096, 15000, 17000, 19999} {
		if top := bestOf(all, k, nil); !slices.Equal(top, want[:k]) {
			t.Errorf("k=%d: top differs", k)
		}
		if top := bestOf(all, k, hist); !slices.Equal(top, want[:k]) {
			t.Errorf("k=%d: top differs with the counts made while scoring", k)
		}
	}
}

// bestOf is bestScored's selection over a slice of ranked definitions,
// with their buckets counted in hist (nil: counted here): the tests check
// kthBucket and sortedPrefix with it on scores made to tie and straddle.
func bestOf(all []rankedDef, k int, hist []int32) []rankedDef {
	if k <= 0 {
		return nil
	}
	if len(all) <= k {
		return sortedPrefix(slices.Clone(all), k)
	}
	if hist == nil {
		hp := histPool.Get().(*[1 << scoreBucketBits]int32)
		defer histPool.Put(hp)
		hist = hp[:]
		clear(hist)
		for i := range all {
			hist[scoreBucket(all[i].score)]++
		}
	}
	b, n := kthBucket(hist, k)
	out := make([]rankedDef, 0, n)
	for i := range all {
		if scoreBucket(all[i].score) >= b {
			out = append(out, all[i])
		}
	}
	return sortedPrefix(out, k)
}
