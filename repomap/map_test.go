package repomap

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/tokencount"
	"github.com/cairn-dev/cairn/workspace"
)

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newMap(t testing.TB, root string, opts Options) *Map {
	t.Helper()
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	return New(ws, opts)
}

func build(t testing.TB, m *Map) BuildStats {
	t.Helper()
	st, err := m.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// smallRepo is a three-package Go project: app uses billing's ComputeInvoiceTotal
// heavily; util is unrelated.
var smallRepo = map[string]string{
	"billing/invoice.go": `package billing

// Invoice is a bill.
type Invoice struct{ Lines []Line }

type Line struct{ Amount int }

// ComputeInvoiceTotal sums the lines.
func ComputeInvoiceTotal(inv *Invoice) int {
	t := 0
	for _, l := range inv.Lines {
		t += l.Amount
	}
	return t
}

func (inv *Invoice) AddLine(l Line) { inv.Lines = append(inv.Lines, l) }
`,
	"app/main.go": `package app

import "example.com/billing"

func Run() int {
	inv := &billing.Invoice{}
	inv.AddLine(billing.Line{Amount: 1})
	a := billing.ComputeInvoiceTotal(inv)
	b := billing.ComputeInvoiceTotal(inv)
	return a + b + helperForRun()
}

func helperForRun() int { return 0 }
`,
	"util/strings.go": `package util

func ReverseString(s string) string { return s }

func PadLeftString(s string, n int) string { return s }
`,
	"util/strings_user.go": `package util

func UseStrings() string { return ReverseString(PadLeftString("x", 2)) }
`,
	"web/page.py": `class Page:
    def render(self):
        return self.title()

    def title(self):
        return "t"
`,
}

func TestBuildStatsAndTags(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{"README.md": "# hi\n", ".gitignore": "ignored/\n", "ignored/x.go": "package x\nfunc Hidden() {}\n"}
	for k, v := range smallRepo {
		files[k] = v
	}
	writeFiles(t, root, files)
	var last atomic.Int64
	m := newMap(t, root, Options{Progress: func(done, total int) { last.Store(int64(done*1000 + total)) }})
	st := build(t, m)
	if got := last.Load(); got != int64(len(smallRepo)*1001) {
		t.Errorf("last progress = %d, want done = total = %d", got, len(smallRepo))
	}
	if st.Files != len(smallRepo) || st.Parsed != len(smallRepo) {
		t.Errorf("files=%d parsed=%d, want %d", st.Files, st.Parsed, len(smallRepo))
	}
	if st.Skipped[SkipIgnored] != 1 {
		t.Errorf("ignored = %d, want 1 (%v)", st.Skipped[SkipIgnored], st.Skipped)
	}
	if st.Skipped[SkipUnsupported] < 1 {
		t.Errorf("unsupported = %d, want README.md and .gitignore counted (%v)", st.Skipped[SkipUnsupported], st.Skipped)
	}
	if got := m.DefinitionsOf([]string{"Hidden"}); len(got) != 0 {
		t.Errorf("ignored file was indexed: %v", got)
	}
	defs := m.DefinitionsOf([]string{"ComputeInvoiceTotal", "Invoice.AddLine", "Page.render"})
	var got []string
	for _, d := range defs {
		got = append(got, fmt.Sprintf("%s:%d-%d %s %s", d.Path, d.Line, d.EndLine, d.Kind(), d.Name()))
	}
	want := []string{
		"billing/invoice.go:9-15 function ComputeInvoiceTotal",
		"billing/invoice.go:17-17 method AddLine",
		"web/page.py:2-3 method render",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DefinitionsOf = %q, want %q", got, want)
	}
	sym, ok := m.EnclosingSymbol("billing/invoice.go", 12)
	if !ok || sym.Name() != "ComputeInvoiceTotal" {
		t.Errorf("EnclosingSymbol(line 12) = %+v, %v", sym, ok)
	}
	sym, ok = m.EnclosingSymbol("web/page.py", 6)
	if !ok || sym.Name() != "title" || sym.Scope() != "Page" {
		t.Errorf("EnclosingSymbol(page.py:6) = %+v, %v", sym, ok)
	}
	if _, ok := m.EnclosingSymbol("billing/invoice.go", 1); ok {
		t.Error("EnclosingSymbol on the package line found a symbol")
	}
	var decls []string
	m.Each(func(ft *FileTags) {
		for _, d := range ft.Decls() {
			decls = append(decls, d.Path+" "+d.Symbol)
		}
	})
	if !contains(decls, "billing/invoice.go Invoice.AddLine") || !contains(decls, "web/page.py Page") || contains(decls, "web/page.py render") {
		t.Errorf("decls = %q", decls)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestRankFollowsFocus(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, smallRepo)
	m := newMap(t, root, Options{})
	build(t, m)

	firstFile := func(f Focus) string {
		out, _ := m.Render(f, 40)
		return strings.SplitN(out, "\n", 2)[0]
	}
	// Focus on app/main.go: billing (what it uses) must outrank util.
	out, _ := m.Render(Focus{Files: []string{"app/main.go"}}, 1000)
	bi := strings.Index(out, "billing/invoice.go:")
	ui := strings.Index(out, "util/strings.go:")
	if bi < 0 || (ui >= 0 && ui < bi) {
		t.Errorf("focus app/main.go: billing should come before util:\n%s", out)
	}
	ci := strings.Index(out, "ComputeInvoiceTotal")
	ai := strings.Index(out, "AddLine")
	if ci < 0 || ai < 0 {
		t.Errorf("missing billing definitions:\n%s", out)
	}
	// Focus on util: util's definitions come first instead.
	if got := firstFile(Focus{Files: []string{"util/strings_user.go"}}); got != "util/strings.go:" {
		t.Errorf("focus util/strings_user.go: first file %q, want util/strings.go:", got)
	}
	// A mentioned name pulls its definition to the top.
	if got := firstFile(Focus{Mentioned: []string{"Page"}}); got != "web/page.py:" {
		t.Errorf("mentioned Page: first file %q", got)
	}
	if got := firstFile(Focus{Identifiers: []string{"ReverseString"}}); got != "util/strings.go:" {
		t.Errorf("identifier ReverseString: first file %q", got)
	}
}

// bigRepo generates nFiles Go files with cross references.
func bigRepo(nFiles, nFuncs int) map[string]string {
	files := map[string]string{}
	for f := 0; f < nFiles; f++ {
		var b strings.Builder
		fmt.Fprintf(&b, "package p%d\n\n", f%5)
		fmt.Fprintf(&b, "type Service%d struct{ n int }\n\n", f)
		for i := 0; i < nFuncs; i++ {
			fmt.Fprintf(&b, "// Handler%d_%d does work.\nfunc (s *Service%d) Handler%d_%d(input string, count int) (string, error) {\n", f, i, f, f, i)
			fmt.Fprintf(&b, "\treturn Helper%d_%d(input), nil\n}\n\n", (f*7+i)%nFiles, i%3)
		}
		for i := 0; i < 3; i++ {
			fmt.Fprintf(&b, "func Helper%d_%d(s string) string { return s }\n", f, i)
		}
		files[fmt.Sprintf("pkg%d/file%d.go", f%5, f)] = b.String()
	}
	return files
}

func TestRenderBudget(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, bigRepo(40, 12))
	m := newMap(t, root, Options{})
	build(t, m)
	all, _ := m.Render(Focus{}, 1<<30)
	total := tokencount.Count(all)
	if total < 2000 {
		t.Fatalf("fixture too small: %d tokens", total)
	}
	for _, budget := range []int{20, 60, 100, 250, 500, 1000, 1500, total - 1, total, total + 500} {
		for _, f := range []Focus{{}, {Files: []string{"pkg1/file6.go"}}, {Mentioned: []string{"Helper3_1"}}} {
			out, st := m.Render(f, budget)
			n := tokencount.Count(out)
			if n > budget {
				t.Errorf("budget %d focus %v: %d tokens, over", budget, f, n)
			}
			if n != st.Tokens {
				t.Errorf("stats say %d tokens, text has %d", st.Tokens, n)
			}
			if budget >= 100 {
				want := budget
				if total < want {
					want = total
				}
				// Within 15%, or one new file's name and line (~20 tokens
				// here) when the budget is that small.
				if float64(n) < 0.85*float64(want) && want-n > 20 {
					t.Errorf("budget %d focus %v: %d tokens, more than 15%% and 20 tokens under (material %d)", budget, f, n, total)
				}
			}
			again, _ := m.Render(f, budget)
			if again != out {
				t.Errorf("budget %d: render not deterministic", budget)
			}
		}
	}
	// A fresh map over the same files renders the same text.
	m2 := newMap(t, root, Options{Workers: 1})
	build(t, m2)
	a, _ := m.Render(Focus{Files: []string{"pkg2/file7.go"}}, 800)
	b, _ := m2.Render(Focus{Files: []string{"pkg2/file7.go"}}, 800)
	if a != b {
		t.Errorf("different maps of the same files render differently:\n%s\n---\n%s", a, b)
	}
	if out, _ := m.Render(Focus{}, 0); out != "" {
		t.Errorf("zero budget rendered %q", out)
	}
}

func TestRenderKeepsClassContext(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"models.py": "class User:\n    def save(self):\n        pass\n\n    def load_everything_now(self):\n        pass\n",
		"main.py":   "from models import User\n\ndef run():\n    User().load_everything_now()\n    User().load_everything_now()\n",
	})
	m := newMap(t, root, Options{})
	build(t, m)
	want := "models.py:\n1: class User:\n5:   def load_everything_now(self):\n"
	out, _ := m.Render(Focus{Files: []string{"main.py"}}, tokencount.Count(want))
	if !strings.Contains(out, want) {
		t.Errorf("render lost class context; want %q in:\n%s", want, out)
	}
}

// cachedRepo writes smallRepo and a generated file (skipped, and cached
// as skipped) into a new root, and returns it with an empty cache dir.
func cachedRepo(t *testing.T) (root, cache string) {
	t.Helper()
	root, cache = t.TempDir(), t.TempDir()
	writeFiles(t, root, smallRepo)
	writeFiles(t, root, map[string]string{"gen.go": "// Code generated by x. DO NOT EDIT.\n\npackage gen\n"})
	return root, cache
}

// TestReadCacheAhead: a cache read started before the build (ReadCache,
// while the caller opens other indexes) serves the build as its own read
// would; repeated calls start nothing more.
func TestReadCacheAhead(t *testing.T) {
	root, cache := cachedRepo(t)
	build(t, newMap(t, root, Options{CacheDir: cache}))
	m := newMap(t, root, Options{CacheDir: cache})
	m.readFile = func(abs string) ([]byte, error) {
		t.Errorf("warm start read %s", abs)
		return os.ReadFile(abs)
	}
	m.ReadCache()
	first := m.cacheLoad
	m.ReadCache()
	if m.cacheLoad != first {
		t.Error("a second ReadCache started another read")
	}
	if st := build(t, m); st.Parsed != 0 || st.Cached != len(smallRepo)+1 {
		t.Errorf("build after ReadCache: parsed %d cached %d, want every file from the cache", st.Parsed, st.Cached)
	}
	m.ReadCache() // after the build: nothing to do
	if m.cacheLoad != first {
		t.Error("ReadCache after the build started another read")
	}
}

func TestWarmCache(t *testing.T) {
	root, cache := cachedRepo(t)
	m1 := newMap(t, root, Options{CacheDir: cache})
	st1 := build(t, m1)
	if st1.Parsed != len(smallRepo) {
		t.Fatalf("cold build parsed %d", st1.Parsed)
	}
	if _, err := os.Stat(filepath.Join(cache, cacheName)); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	var parsedAgain []string
	m2 := newMap(t, root, Options{CacheDir: cache, OnParse: func(ft *FileTags) { parsedAgain = append(parsedAgain, ft.Path) }})
	m2.readFile = func(abs string) ([]byte, error) {
		t.Errorf("warm start read %s", abs)
		return os.ReadFile(abs)
	}
	st2 := build(t, m2)
	if st2.Parsed != 0 || st2.Cached != len(smallRepo)+1 || len(parsedAgain) != 0 {
		t.Errorf("warm start: parsed %d cached %d (%v)", st2.Parsed, st2.Cached, parsedAgain)
	}
	if st2.Skipped[SkipGenerated] != 1 {
		t.Errorf("generated file not remembered as skipped: %v", st2.Skipped)
	}
	for rel := range smallRepo {
		a, _ := m1.Tags(rel)
		b, ok := m2.Tags(rel)
		if !ok || !reflect.DeepEqual(a, b) {
			t.Errorf("%s: cached tags differ", rel)
		}
	}
	a, _ := m1.Render(Focus{Files: []string{"app/main.go"}}, 500)
	b, _ := m2.Render(Focus{Files: []string{"app/main.go"}}, 500)
	if a != b {
		t.Errorf("warm render differs:\n%s\n---\n%s", a, b)
	}

	// Touch a file without changing it: read and hashed, not parsed.
	p := filepath.Join(root, "util/strings.go")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	// Change another one: parsed.
	writeFiles(t, root, map[string]string{"app/main.go": smallRepo["app/main.go"] + "\nfunc Extra() {}\n"})
	m3 := newMap(t, root, Options{CacheDir: cache})
	st3 := build(t, m3)
	if st3.Parsed != 1 {
		t.Errorf("after one change: parsed %d, want 1", st3.Parsed)
	}
	if len(m3.DefinitionsOf([]string{"Extra"})) != 1 {
		t.Error("changed file's new definition missing")
	}

	// A corrupt cache is ignored, not fatal.
	if err := os.WriteFile(filepath.Join(cache, cacheName), []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	m4 := newMap(t, root, Options{CacheDir: cache})
	if st := build(t, m4); st.Parsed != len(smallRepo) {
		t.Errorf("corrupt cache: parsed %d", st.Parsed)
	}
}

func TestUpdateAndRemove(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, smallRepo)
	m := newMap(t, root, Options{})
	build(t, m)
	before, _ := m.Render(Focus{Files: []string{"app/main.go"}}, 400)

	src := smallRepo["util/strings.go"] + "\nfunc BrandNewFunction() {}\n"
	if err := m.Update("util/strings.go", []byte(src)); err != nil {
		t.Fatal(err)
	}
	if d := m.DefinitionsOf([]string{"BrandNewFunction"}); len(d) != 1 || d[0].Line != 7 {
		t.Errorf("after Update: %+v", d)
	}
	out, _ := m.Render(Focus{Mentioned: []string{"BrandNewFunction"}}, 400)
	if !strings.Contains(out, "func BrandNewFunction()") {
		t.Errorf("render after Update misses the new function:\n%s", out)
	}
	// A new file through Update (an unsaved editor buffer).
	if err := m.Update("app/extra.go", []byte("package app\nfunc ExtraFromOverlay() {}\n")); err != nil {
		t.Fatal(err)
	}
	if len(m.DefinitionsOf([]string{"ExtraFromOverlay"})) != 1 {
		t.Error("new file not added")
	}
	m.Remove("billing/invoice.go")
	if d := m.DefinitionsOf([]string{"ComputeInvoiceTotal"}); len(d) != 0 {
		t.Errorf("after Remove: %+v", d)
	}
	after, _ := m.Render(Focus{Files: []string{"app/main.go"}}, 400)
	if after == before || strings.Contains(after, "billing/invoice.go") {
		t.Errorf("render after Remove still shows the file:\n%s", after)
	}
	// Refresh from disk brings it back.
	m.Refresh("billing/invoice.go")
	if d := m.DefinitionsOf([]string{"ComputeInvoiceTotal"}); len(d) != 1 {
		t.Errorf("after Refresh: %+v", d)
	}
	// Refresh of a deleted file removes it.
	os.Remove(filepath.Join(root, "util/strings_user.go"))
	m.Refresh("util/strings_user.go")
	if d := m.DefinitionsOf([]string{"UseStrings"}); len(d) != 0 {
		t.Errorf("deleted file still defines UseStrings: %+v", d)
	}
}

func TestBadInput(t *testing.T) {
	root := t.TempDir()
	huge := "package huge\nvar X = \"" + strings.Repeat("a", 20000) + "\"\n"
	writeFiles(t, root, map[string]string{
		"ok.go":            "package ok\nfunc Fine() {}\n",
		"broken.go":        "package broken\n\nfunc Good() int { return 1 }\n\nfunc Bad() { x := ; if {\n}\n\nfunc AlsoGood() {}\n",
		"latin1.py":        "def f():\n    return '\xe9t\xe9'\n",
		"minified.js":      "function a(){" + strings.Repeat("x();", 5000) + "}\n",
		"huge.go":          huge,
		"bin.c":            "int main() { return 0; }\x00\x01\x02",
		"gen.go":           "// Code generated by stringer; DO NOT EDIT.\n\npackage gen\nfunc Gen() {}\n",
		"big.go":           "package big\n// " + strings.Repeat("b", 3000) + "\nfunc Big() {}\n",
		"vendor/v/v.go":    "package v\nfunc Vendored() {}\n",
		"gone.go":          "package gone\nfunc Gone() {}\n",
		"secret/locked.go": "package locked\nfunc Locked() {}\n",
	})
	// A symlink loop and a dangling link: never followed.
	if err := os.Symlink(root, filepath.Join(root, "loop")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(root, "dangling.go"))

	m := newMap(t, root, Options{MaxFileSize: 2048, MaxLineLength: 4096})
	read := m.readFile
	m.readFile = func(abs string) ([]byte, error) {
		switch filepath.Base(abs) {
		case "gone.go": // deleted between the walk and the read
			os.Remove(abs)
		case "locked.go": // unreadable (tests may run as root, so inject it)
			return nil, &fs.PathError{Op: "open", Path: abs, Err: fs.ErrPermission}
		}
		return read(abs)
	}
	done := make(chan BuildStats)
	go func() { done <- build(t, m) }()
	var st BuildStats
	select {
	case st = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Build hung")
	}
	want := map[SkipReason]int{
		SkipInvalidUTF8: 1, SkipLongLine: 1, SkipBinary: 1, SkipGenerated: 1,
		SkipOversized: 2, // huge.go and minified.js exceed 2 KiB... see below
		SkipVendored:  1, SkipDeleted: 1, SkipUnreadable: 1,
	}
	// huge.go (20 KB) and minified.js (20 KB) are over MaxFileSize; big.go
	// (3 KB) too. Check the long-line rule on a small file separately.
	want[SkipOversized] = 3
	want[SkipLongLine] = 0
	for r, n := range want {
		if st.Skipped[r] != n {
			t.Errorf("skipped[%s] = %d, want %d (all: %v)", r, st.Skipped[r], n, st.Skipped)
		}
	}
	if st.Files != 2 {
		t.Errorf("files = %d, want 2 (ok.go, broken.go)", st.Files)
	}
	ft, ok := m.Tags("broken.go")
	if !ok || !ft.SyntaxErrors {
		t.Fatalf("broken.go: %+v %v", ft, ok)
	}
	var names []string
	for _, d := range ft.Defs {
		names = append(names, d.Name())
	}
	if !contains(names, "Good") || !contains(names, "AlsoGood") {
		t.Errorf("broken.go kept %v, want Good and AlsoGood", names)
	}

	// Long lines, with a size limit that lets the file through.
	m2 := newMap(t, root, Options{MaxLineLength: 4096})
	st2 := build(t, m2)
	if st2.Skipped[SkipLongLine] != 2 { // huge.go, minified.js
		t.Errorf("long-line = %d, want 2 (%v)", st2.Skipped[SkipLongLine], st2.Skipped)
	}
	if len(m2.DefinitionsOf([]string{"Big"})) != 1 {
		t.Error("big.go (long but fine) missing")
	}
}

func TestParseFileHostileContent(t *testing.T) {
	for name, src := range map[string]string{
		"empty.go":    "",
		"nul.py":      "def f():\x00\n",
		"invalid.rs":  "fn \xff\xfe() {}\n",
		"deep.js":     strings.Repeat("(", 5000) + strings.Repeat(")", 5000),
		"unclosed.ts": "class A { m() { ",
	} {
		ft, err := ParseFile(name, []byte(src))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, d := range ft.Defs {
			if !utf8Valid(d.Name()) || !utf8Valid(d.Signature()) {
				t.Errorf("%s: invalid UTF-8 in %+v", name, d)
			}
		}
	}
	if _, err := ParseFile("x.txt", []byte("hi")); err == nil {
		t.Error("unsupported extension parsed")
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "?") == s }

func TestConcurrentUse(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, bigRepo(10, 5))
	m := newMap(t, root, Options{CacheDir: t.TempDir()})
	build(t, m)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				switch (g + i) % 4 {
				case 0:
					m.Update(fmt.Sprintf("pkg%d/extra%d.go", g, i), []byte(fmt.Sprintf("package x\nfunc Extra%d_%d() {}\n", g, i)))
				case 1:
					m.Render(Focus{Files: []string{"pkg1/file1.go"}}, 300)
				case 2:
					m.DefinitionsOf([]string{"Helper1_1"})
					m.EnclosingSymbol("pkg1/file1.go", 5)
				case 3:
					m.SaveCache()
					if i%5 == 0 {
						m.Build(context.Background())
					}
				}
			}
		}(g)
	}
	wg.Wait()
}

func TestBestOf(t *testing.T) {
	var all []rankedDef
	for i := 0; i < 5000; i++ {
		all = append(all, rankedDef{file: int32(i % 37), def: int32(i), score: float64((i * 7919) % 1000)})
	}
	want := append([]rankedDef(nil), all...)
	slices.SortFunc(want, cmpRanked)
	for _, k := range []int{0, 1, 10, 4999, 5000, 6000} {
		top := bestOf(all, k, nil)
		r := &ranking{defs: top, n: len(all), more: func() []rankedDef { return slices.Clone(all) }}
		if got := r.get(k); !slices.Equal(got, want[:min(k, len(want))]) {
			t.Errorf("k=%d: top differs", k)
		}
		if got := r.get(len(all)); !slices.Equal(got, want) {
			t.Errorf("k=%d: full order differs", k)
		}
	}
}

func TestUpdateSameShapeKeepsRanking(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, smallRepo)
	m := newMap(t, root, Options{})
	build(t, m)
	focus := Focus{Files: []string{"app/main.go"}}
	before, _ := m.Render(focus, 1000)
	m.mu.RLock()
	cached := len(m.rankCache)
	m.mu.RUnlock()
	if cached != 1 {
		t.Fatalf("rank cache has %d entries", cached)
	}
	// Two comment lines on top: same names and counts, lines shift by 2.
	src := "// one\n// two\n" + smallRepo["billing/invoice.go"]
	if err := m.Update("billing/invoice.go", []byte(src)); err != nil {
		t.Fatal(err)
	}
	m.mu.RLock()
	cached = len(m.rankCache)
	m.mu.RUnlock()
	if cached != 1 {
		t.Errorf("same-shape edit dropped the rank cache")
	}
	after, _ := m.Render(focus, 1000)
	if !strings.Contains(after, "\n11: func ComputeInvoiceTotal") || after == before {
		t.Errorf("render after same-shape edit has stale lines:\n%s", after)
	}
	// The result equals a map built from scratch on the new content.
	writeFiles(t, root, map[string]string{"billing/invoice.go": src})
	fresh := newMap(t, root, Options{})
	build(t, fresh)
	if want, _ := fresh.Render(focus, 1000); want != after {
		t.Errorf("patched render differs from a fresh build:\n%s\n---\n%s", after, want)
	}
	// A new reference changes the shape: the ranking is recomputed.
	if err := m.Update("billing/invoice.go", []byte(src+"\nfunc X() { ComputeInvoiceTotal(nil) }\n")); err != nil {
		t.Fatal(err)
	}
	m.mu.RLock()
	cached = len(m.rankCache)
	m.mu.RUnlock()
	if cached != 0 {
		t.Errorf("shape change kept %d cached rankings", cached)
	}
}

func TestRankDownweightsFixtures(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		// A test fixture that defines a name everything uses.
		"pkg/testdata/fixture.go": "package fixture\n\nfunc SharedHelperName() {}\n",
		"core/core.go":            "package core\n\nfunc CoreEngineStart() {}\n",
	}
	for i := 0; i < 30; i++ {
		files[fmt.Sprintf("app/f%d.go", i)] = fmt.Sprintf("package app\n\nfunc F%d() {\n\tSharedHelperName()\n\tSharedHelperName()\n\tCoreEngineStart()\n}\n", i)
	}
	writeFiles(t, root, files)
	m := newMap(t, root, Options{})
	build(t, m)
	out, _ := m.Render(Focus{}, 25)
	if !strings.HasPrefix(out, "core/core.go:\n") {
		t.Errorf("fixture outranks real code:\n%s", out)
	}
}

func TestParseFailureIsCountedAndRetried(t *testing.T) {
	root := t.TempDir()
	// Python: Go files go/parser accepts never reach tree-sitter.
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "def F%d(a, b):\n    if a > b:\n        return a - b\n    return b - a\n", i)
	}
	writeFiles(t, root, map[string]string{"big.py": b.String(), "small.py": "x = 1\n"})
	old := ParseTimeout
	ParseTimeout = time.Microsecond
	m := newMap(t, root, Options{})
	st := build(t, m)
	ParseTimeout = old
	if st.Skipped[SkipParseFailed] != 1 {
		t.Fatalf("parse-failed = %d, want 1 (%v)", st.Skipped[SkipParseFailed], st.Skipped)
	}
	// Not remembered as a lasting skip: the next build parses it.
	st = build(t, m)
	if st.Skipped[SkipParseFailed] != 0 || len(m.DefinitionsOf([]string{"F2999"})) != 1 {
		t.Errorf("after the timeout is lifted: %v", st.Skipped)
	}
	// The parser that timed out is reset: a later parse is not confused.
	ft, err := ParseFile("x.py", []byte("def OnlyThis():\n    pass\n"))
	if err != nil || len(ft.Defs) != 1 || ft.Defs[0].Name() != "OnlyThis" {
		t.Errorf("after a timeout: %+v, %v", ft, err)
	}
}

// The unfocused map shortens lines: one-line bodies and class heritage go,
// a class's generic parameter and argument lists become <…> unless as
// short (a function's or type alias's only on a long line); a focused map
// shows lines as they are.
func TestCompactSignatures(t *testing.T) {
	for _, c := range []struct{ lang, kind, in, want string }{
		{"go", "method", "func (p Protocols) HTTP1() bool { return p.bits&protoHTTP1 != 0 }", "func (p Protocols) HTTP1() bool"},
		{"go", "method", "func (fakeLocker) Lock()   {}", "func (fakeLocker) Lock()"},
		{"go", "function", "func New(x struct{ a int }) interface{} {", "func New(x struct{ a int }) interface{}"},
		{"go", "type", "type T struct{ a int }", "type T struct{ a int }"},
		{"typescript", "class", "export declare class ZodUnion<T extends ZodUnionOptions> extends ZodType<T[number][\"_output\"], ZodUnionDef<T>, T[number][\"_input\"]> {", "export declare class ZodUnion<…>"},
		{"java", "class", "public class EnumMap<K extends Enum<K>, V> extends AbstractMap<K, V>", "public class EnumMap<…>"},
		{"java", "interface", "public interface Map<K, V> {", "public interface Map<K, V>"},
		{"rust", "struct", "pub struct IoSliceMut<'a>(sys::io::IoSliceMut<'a>);", "pub struct IoSliceMut<'a>(sys::io::IoSliceMut<'a>);"},
		{"typescript", "class", "export declare class ZodObject<T extends ZodRawShape, UnknownKeys extends UnknownKeysParam = UnknownKeysParam, Catchall extends Zod", "export declare class ZodObject<…>"},
		{"typescript", "class", "export class Subscriber<T> extends Subscription implements Observer<T> {", "export class Subscriber<T>"},
		{"typescript", "type", "export type X<T extends Y> = T extends Z ? A : B;", "export type X<T extends Y> = T extends Z ? A : B;"},
		{"python", "class", "class Lock(_ContextManagerMixin, mixins._LoopBoundMixin):", "class Lock:"},
		{"typescript", "type", "export type Fn<T extends (x: number) => string> = (value: T, index: number) => Observable<ObservedValueOf<T>>;", "export type Fn<…> = (value: T, index: number) => Observable<…>;"},
		{"typescript", "function", "export function map<T, R>(project: (value: T) => R): OperatorFunction<T, R>;", "export function map<T, R>(project: (value: T) => R): OperatorFunction<T, R>;"},
		{"python", "class", "class VeryLongName(BaseClassWithALongName[TypeVariableOne, TypeVariableTwo], metaclass=Meta):", "class VeryLongName:"},
		{"python", "function", "def call_soon(self, callback, *args, context=None):", "def call_soon(self, callback, *args, context=None):"},
		{"python", "class", "class Task(futures._PyFuture):  # Inherit Python Task implementation", "class Task:"},
		{"python", "variable", "TimeoutError = TimeoutError  # make local alias", "TimeoutError = TimeoutError"},
		{"python", "variable", `SEP = " # "  # the separator`, `SEP = " # "`},
		{"python", "variable", `ESC = '\\' + "#"`, `ESC = '\\' + "#"`},
		{"ruby", "class", "class Net::HTTPSuccess < Net::HTTPResponse               # 2xx", "class Net::HTTPSuccess"},
		{"ruby", "class", "  class ProtocolError          < StandardError; end", "  class ProtocolError"},
		{"ruby", "", "module Net   #:nodoc:", "module Net"},
		{"ruby", "class", "class << self", "class << self"},
		{"ruby", "method", `def greet(name = "#{x}")`, `def greet(name = "#{x}")`},
		{"c", "function", "asmlinkage __visible void __sched notrace preempt_schedule(void)", "void preempt_schedule(void)"},
		{"c", "variable", "extern const struct file_operations ext4_file_operations;", "const struct file_operations ext4_file_operations;"},
		{"c", "function", "__u32 ext4_hash(const char *name, int __init_len)", "__u32 ext4_hash(const char *name, int __init_len)"},
		// The brace that opens a body or an initializer goes, and the "=" before it.
		{"java", "class", "public class Arrays {", "public class Arrays"},
		{"c", "struct", "struct rq {", "struct rq"},
		{"c", "variable", "const struct file_operations ext4_file_operations = {", "const struct file_operations ext4_file_operations"},
		{"c", "variable", "int a[] = {", "int a[]"},
		{"rust", "impl", "impl<T> Vec<T>{", "impl<T> Vec<T>"},
		{"c", "macro", "{", "{"},
	} {
		if got := compactSignature(c.lang, c.kind, c.in); got != c.want {
			t.Errorf("compactSignature(%s, %s, %q) = %q, want %q", c.lang, c.kind, c.in, got, c.want)
		}
	}
	// An API line loses the word that makes it public; others keep it.
	for _, c := range []struct{ lang, in, want string }{
		{"java", "public class Arrays", "class Arrays"},
		{"java", "public abstract class Calendar", "abstract class Calendar"},
		{"java", "protected void finalize()", "protected void finalize()"},
		{"rust", "pub struct Vec<T>", "struct Vec<T>"},
		{"rust", "pub(crate) fn helper()", "pub(crate) fn helper()"},
		{"typescript", "export declare class ZodType<…>", "class ZodType<…>"},
		{"typescript", "export default class Foo", "class Foo"},
		{"go", "func Handle(pattern string, handler Handler)", "func Handle(pattern string, handler Handler)"},
		{"java", "public ", "public "},
	} {
		if got := cutVisibility(c.lang, c.in); got != c.want {
			t.Errorf("cutVisibility(%s, %q) = %q, want %q", c.lang, c.in, got, c.want)
		}
	}
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"a.go": "package a\n\nfunc (p P) Long() bool { return p.bits&protoHTTP1 != 0 }\n\ntype P struct{ bits int }\n",
		"b.go": "package a\n\nfunc B(p P) bool { return p.Long() }\n",
	})
	m := newMap(t, root, Options{})
	build(t, m)
	if out, _ := m.Render(Focus{}, 200); !strings.Contains(out, "func (p P) Long() bool\n") {
		t.Errorf("the unfocused map should show the signature without its body:\n%s", out)
	}
	if out, _ := m.Render(Focus{Files: []string{"b.go"}}, 200); !strings.Contains(out, "func (p P) Long() bool { return p.bits&protoHTTP1 != 0 }\n") {
		t.Errorf("a focused map shows the line as it is:\n%s", out)
	}
}

// The unfocused map lists a type's methods by name, those next to each
// other on one line; a focused map shows each method's line.
func TestOverviewListsMethods(t *testing.T) {
	for _, c := range []struct{ sig, name, want string }{
		{"pub fn get<Q: ?Sized>(&self, k: &Q) -> Option<&V>", "get", "get(…)"},
		{"pub fn len(&self) -> usize {", "len", "len()"},
		{"def as_string(self, unixfrom=False):", "as_string", "as_string(…)"},
		{"def close(self):", "close", "close()"},
		{"public abstract <T> HttpResponse<T> send(HttpRequest req, BodyHandler<T> h)", "send", "send(…)"},
		{"def started?", "started?", "started?"},
		{"def get_response(uri_or_host, path = nil, port = nil, &block)", "get_response", "get_response(…)"},
		{"fn forget(x: T) { reget(x) }", "get", "get"}, // no word "get" followed by "("
	} {
		if got := memberLabel(c.sig, c.name); got != c.want {
			t.Errorf("memberLabel(%q, %q) = %q, want %q", c.sig, c.name, got, c.want)
		}
	}
	root := t.TempDir()
	var b strings.Builder
	b.WriteString("class Store:\n    def __init__(self):\n        self.d = {}\n")
	for _, m := range []string{"get", "put", "remove", "keys", "values", "items", "clear", "copy", "update", "pop", "popitem", "setdefault", "first", "last", "size"} {
		fmt.Fprintf(&b, "    def %s(self, key):\n        return self.d\n", m)
	}
	writeFiles(t, root, map[string]string{
		"store.py": b.String(),
		"use.py":   "from store import Store\n\ns = Store()\ns.get(1)\ns.put(2)\ns.remove(3)\n",
	})
	m := newMap(t, root, Options{})
	build(t, m)
	out, _ := m.Render(Focus{}, 400)
	lines := strings.Split(out, "\n")
	joined := 0
	for _, l := range lines {
		if strings.Contains(l, "def ") && strings.Contains(l, "    def ") {
			t.Errorf("an overview shows a method's signature line: %q\n%s", l, out)
		}
		if n := strings.Count(l, "(…)"); n > 1 {
			joined++
			if len(l) > maxMemberLine+len(", 999: setdefault(…)")+8 {
				t.Errorf("a line of methods runs past %d bytes: %q", maxMemberLine, l)
			}
		}
	}
	if joined == 0 || !strings.Contains(out, "get(…), ") || !strings.Contains(out, "\n1: class Store:") {
		t.Errorf("the overview should list Store's methods by name on shared lines under the class:\n%s", out)
	}
	shown := 0
	for _, l := range lines {
		shown += len(regexp.MustCompile(`(^|, ) *\d+: `).FindAllString(l, -1))
	}
	if _, st := m.Render(Focus{}, 400); shown < st.Defs {
		t.Errorf("%d line numbers shown for %d definitions:\n%s", shown, st.Defs, out)
	}
	if out, _ := m.Render(Focus{Files: []string{"use.py"}}, 400); !strings.Contains(out, "def get(self, key):") {
		t.Errorf("a focused map shows a method's line as it is:\n%s", out)
	}
}

// TestCacheTruncatedOrCorrupt: a cache cut at any length, or with any
// byte changed, loads as an empty cache (the map parses again), never as
// a panic or a part of the entries.
func TestCacheTruncatedOrCorrupt(t *testing.T) {
	root, cache := cachedRepo(t)
	m := newMap(t, root, Options{CacheDir: cache})
	build(t, m)
	data, err := os.ReadFile(filepath.Join(cache, cacheName))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := decodeCache(data, cacheVersion())
	if err != nil || len(entries) != len(smallRepo)+1 {
		t.Fatalf("the whole cache: %d entries, %v", len(entries), err)
	}
	if _, err := decodeCache(data, "another version"); err == nil {
		t.Error("another version's cache decoded")
	}
	step := max(1, len(data)/500)
	for n := 0; n < len(data); n += step {
		if e, err := decodeCache(data[:n], cacheVersion()); err == nil || e != nil {
			t.Fatalf("cut at %d of %d bytes: %d entries, err %v", n, len(data), len(e), err)
		}
		bad := bytes.Clone(data)
		bad[n] ^= 0x5a
		if e, err := decodeCache(bad, cacheVersion()); err == nil || e != nil {
			t.Fatalf("byte %d of %d changed: %d entries, err %v", n, len(data), len(e), err)
		}
	}
	// Through the Map: a truncated file is an empty cache and a new build
	// parses everything again.
	if err := os.WriteFile(filepath.Join(cache, cacheName), data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if st := build(t, newMap(t, root, Options{CacheDir: cache})); st.Parsed != len(smallRepo) {
		t.Errorf("truncated cache: parsed %d, want %d", st.Parsed, len(smallRepo))
	}
}

// TestCacheDecodeRobust decodes a well-formed frame (right magic, offset
// and checksum) around arbitrary content: the decoder itself, past the
// checksum, must fail cleanly on any input.
func TestCacheDecodeRobust(t *testing.T) {
	frame := func(version string, body, strs []byte) []byte {
		b := []byte(cacheMagic)
		b = binary.AppendUvarint(b, uint64(len(version)))
		b = append(b, version...)
		b = append(b, body...)
		off := len(b)
		b = append(b, strs...)
		b = binary.LittleEndian.AppendUint64(b, uint64(off))
		return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		body := make([]byte, r.IntN(64))
		for j := range body {
			body[j] = byte(r.IntN(256))
			if r.IntN(3) == 0 {
				body[j] = byte(r.IntN(4)) // small counts and ids are the interesting ones
			}
		}
		strs := []byte{3, 1, 1, 1, 'a', 'b', 'c'}
		if r.IntN(4) == 0 {
			strs = body[:r.IntN(len(body)+1)]
		}
		decodeCache(frame(cacheVersion(), body, strs), cacheVersion()) // must not panic
	}
}

// TestCacheBlocks: a cache of several blocks (decoded in parallel) gives
// back every entry, in order and equal to what was written.
func TestCacheBlocks(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, smallRepo)
	m := newMap(t, root, Options{})
	build(t, m)
	var entries []*entry
	for i := 0; len(entries) < 3*cacheBlock+7; i++ {
		for _, rel := range []string{"app/main.go", "billing/invoice.go", "util/strings.go"} {
			e := *m.files[rel]
			e.Rel = fmt.Sprintf("copy%04d/%s", i, rel)
			tags := *e.Tags
			tags.Path = e.Rel
			e.Tags = &tags
			entries = append(entries, &e)
		}
		entries = append(entries, &entry{Rel: fmt.Sprintf("copy%04d/gen.go", i), Size: 9, Mod: int64(i), Skip: SkipGenerated})
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if err := encodeCache(w, "v", entries); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	got, err := decodeCache(buf.Bytes(), "v")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(entries) {
		t.Fatalf("%d entries back of %d", len(got), len(entries))
	}
	for i := range got {
		want := *entries[i]
		want.resolved, want.defIDs, want.defSame, want.refIDs, want.facts = false, nil, nil, nil, nil
		if !reflect.DeepEqual(got[i], &want) {
			t.Fatalf("entry %d (%s) differs:\n%+v\n%+v", i, want.Rel, got[i], &want)
		}
	}
}

// TestDefIndexOf: the build's definition index equals one built list by
// list, and edits of one list (setLocked) leave its neighbours in the
// shared backing array as they were.
func TestDefIndexOf(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	files := map[string]*entry{}
	var rels []string
	for i := 0; i < 200; i++ {
		rel := fmt.Sprintf("f%03d.go", i)
		ft := &FileTags{Path: rel}
		for j := r.IntN(12); j > 0; j-- {
			ft.Defs = append(ft.Defs, Def{defNames: defNames{name: internStr(fmt.Sprintf("N%d", r.IntN(40)))}})
		}
		files[rel] = &entry{Rel: rel, Tags: ft}
		rels = append(rels, rel)
	}
	want := map[string][]placedDef{}
	for _, rel := range rels {
		for i, d := range files[rel].Tags.Defs {
			want[d.Name()] = append(want[d.Name()], placedDef{files[rel].Tags, int32(i)})
		}
	}
	got := defIndexOf(rels, files, 0)
	if !reflect.DeepEqual(placedDefs(&got), want) {
		t.Fatalf("index differs:\n%v\n%v", got, want)
	}
	m := &Map{files: files, defs: got}
	for i := 0; i < 300; i++ {
		rel := rels[r.IntN(len(rels))]
		ft := &FileTags{Path: rel}
		for j := r.IntN(6); j > 0; j-- {
			ft.Defs = append(ft.Defs, Def{defNames: defNames{name: internStr(fmt.Sprintf("N%d", r.IntN(45)))}})
		}
		e := &entry{Rel: rel, Tags: ft}
		if r.IntN(5) == 0 {
			e = nil
		}
		m.setLocked(rel, e)
	}
	for name, l := range m.defs.names {
		for _, r := range l {
			ft := m.defs.tags(r)
			if e := m.files[ft.Path]; e == nil || e.Tags != ft || m.defs.def(r).Name() != name {
				t.Fatalf("%s: a ref to %s's definition %d is not one of the file's current definitions of it", name, ft.Path, r.i)
			}
		}
	}
	for rel, num := range m.defs.num {
		if e := m.files[rel]; e == nil || e.Tags != m.defs.files[num] {
			t.Fatalf("%s is number %d, which holds other tags", rel, num)
		}
	}
	for num, ft := range m.defs.files {
		if ft != nil && m.defs.num[ft.Path] != int32(num) {
			t.Fatalf("number %d holds %s, numbered %d", num, ft.Path, m.defs.num[ft.Path])
		}
	}
	fresh := slices.DeleteFunc(slices.Clone(rels), func(rel string) bool { return m.files[rel] == nil })
	rebuilt := defIndexOf(fresh, m.files, len(m.defs.names))
	if !reflect.DeepEqual(placedDefs(&m.defs), placedDefs(&rebuilt)) {
		t.Fatalf("after edits the index differs from a rebuilt one")
	}
}

// placedDef is a defRef with its file's tags in place of its number.
type placedDef struct {
	tags *FileTags
	i    int32
}

// placedDefs is x's lists with each file's tags for its number: indexes
// that number their files apart compare by what they list.
func placedDefs(x *defIndex) map[string][]placedDef {
	out := map[string][]placedDef{}
	for name, l := range x.names {
		for _, r := range l {
			out[name] = append(out[name], placedDef{x.tags(r), r.i})
		}
	}
	return out
}

// TestStatsFollowEdits: the counts Stats keeps between changes follow
// every kind of change, and a caller's copy is its own.
func TestStatsFollowEdits(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, smallRepo)
	m := newMap(t, root, Options{})
	build(t, m)
	st := m.Stats()
	if st.Files != len(smallRepo) || st.Defs == 0 {
		t.Fatalf("stats after build %+v, want %d files with definitions", st, len(smallRepo))
	}
	st.Skipped["mine"] = 1
	if m.Stats().Skipped["mine"] != 0 {
		t.Error("a caller's change to Skipped reached the map's counts")
	}
	src := smallRepo["util/strings.go"] + "\nfunc BrandNewFunction() {}\n"
	if err := m.Update("util/strings.go", []byte(src)); err != nil {
		t.Fatal(err)
	}
	if got := m.Stats(); got.Defs != st.Defs+1 {
		t.Errorf("after a new function: %d definitions, want %d", got.Defs, st.Defs+1)
	}
	if err := m.Update("app/extra.go", []byte("package app\nfunc ExtraFromOverlay() {}\n")); err != nil {
		t.Fatal(err)
	}
	if got := m.Stats(); got.Files != st.Files+1 {
		t.Errorf("after a new file: %d files, want %d", got.Files, st.Files+1)
	}
	m.Remove("app/extra.go")
	m.Remove("billing/invoice.go")
	if got := m.Stats(); got.Files != st.Files-1 {
		t.Errorf("after two removals: %d files, want %d", got.Files, st.Files-1)
	}
	build(t, m) // the disk has the files as they were
	if got := m.Stats(); got.Files != st.Files || got.Defs != st.Defs {
		t.Errorf("after a rebuild from disk: %+v, want %d files, %d definitions", got, st.Files, st.Defs)
	}
}
