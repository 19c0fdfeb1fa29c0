package repomap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	sitter "github.com/smacker/go-tree-sitter"
)

// TestGoSyntaxAgreesWithQuery checks the go/parser path against the query
// it stands for, on code nobody here wrote: for every Go file of a few
// packages of the Go tree (all of it with CAIRN_QUALITY=1) and of this
// package that both parsers accept, goSyntax and tree-sitter's query
// cursor must give the same matches (as sets) and the same tags. Files
// tree-sitter-go cannot parse although go/parser can (newer syntax than
// the grammar knows) are counted, not compared: the map tags them from
// go/parser's reading.
func TestGoSyntaxAgreesWithQuery(t *testing.T) {
	l := languages["go"]
	if err := l.load(); err != nil {
		t.Fatal(err)
	}
	if l.walker == nil {
		t.Fatal("no Go walker: the query and the walker disagree on patterns or captures (see the log)")
	}
	files := goTestFiles("net/http", "go/types", "encoding/json", "cmd/compile/internal/syntax", "runtime", "slices", "iter")
	mt := newMatcher()
	p := sitter.NewParser()
	defer p.Close()
	p.SetLanguage(l.lang)
	compared, matches, rejected, grammarGaps, unsure := 0, 0, 0, 0, 0
	failed := 0
	for _, f := range files {
		content, err := os.ReadFile(f)
		if err != nil || len(content) > 1<<20 {
			continue
		}
		n, outcome, diff := compareGoSyntax(t, l, mt, p, content)
		switch outcome {
		case "rejected":
			rejected++
			continue
		case "grammar":
			grammarGaps++
			continue
		case "unsure":
			unsure++
			continue
		}
		if diff != "" {
			failed++
			if failed <= 20 {
				t.Errorf("%s: %s", f, diff)
			}
		}
		compared++
		matches += n
	}
	if failed > 20 {
		t.Errorf("... %d files differ in all", failed)
	}
	if compared < 500 {
		t.Fatalf("only %d files compared", compared)
	}
	t.Logf("%d Go files, %d matches: go/parser's reading and the query agree; tree-sitter tags %d files go/parser rejects and %d it reads by accident (paramsUnsure); %d files tree-sitter-go cannot parse", compared, matches, rejected, unsure, grammarGaps)
}

// compareGoSyntax compares goSyntax with the query cursor on content. The
// outcome is "rejected" when go/parser rejects content, "grammar" when
// only tree-sitter finds syntax errors, else "".
func compareGoSyntax(t testing.TB, l *language, mt *matcher, p *sitter.Parser, content []byte) (n int, outcome, diff string) {
	t.Helper()
	g, ok := parseGoSyntax(l, content)
	if !ok {
		return 0, "rejected", ""
	}
	tree, err := p.ParseCtx(context.Background(), nil, content)
	if err != nil || tree == nil {
		p.Reset()
		return 0, "grammar", ""
	}
	defer tree.Close()
	root := tree.RootNode()
	if root.HasError() {
		return 0, "grammar", ""
	}
	fromAST := g.source()
	fromQuery := func(fn func(uint16, []capture)) error { return mt.run(l.query, root, fn) }
	parsed, queried := matchSet(t, fromAST), matchSet(t, fromQuery)
	if g.unsure {
		return 0, "unsure", ""
	}
	if !slices.EqualFunc(parsed, queried, slices.Equal) {
		onlyAST, onlyQuery := recordsMinus(parsed, queried), recordsMinus(queried, parsed)
		return len(parsed), "", fmt.Sprintf("go/parser %d matches, query %d; only go/parser: %s; only query: %s",
			len(parsed), len(queried), describeRecords(onlyAST, content), describeRecords(onlyQuery, content))
	}
	var tagsAST, tagsQuery FileTags
	if err := extractFrom(l, mt, fromAST, g.lines, content, &tagsAST); err != nil {
		t.Fatal(err)
	}
	w := l.walker
	l.walker = nil
	err = extract(l, mt, root, content, &tagsQuery)
	l.walker = w
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tagsAST, tagsQuery) {
		return len(parsed), "", "tags differ between go/parser's reading and the query"
	}
	return len(parsed), "", ""
}

// recordsMinus is a without b, both sorted.
func recordsMinus(a, b [][]uint32) [][]uint32 {
	var out [][]uint32
	for _, r := range a {
		if _, ok := slices.BinarySearchFunc(b, r, slices.Compare); !ok {
			out = append(out, r)
		}
	}
	return out
}

// describeRecords shows up to three match records with their captures'
// text.
func describeRecords(rs [][]uint32, content []byte) string {
	var b strings.Builder
	for i, r := range rs {
		if i == 3 {
			fmt.Fprintf(&b, " ... (%d)", len(rs))
			break
		}
		fmt.Fprintf(&b, "[pattern %d", r[0])
		for j := 1; j+5 < len(r)+1 && j+2 < len(r); j += 6 {
			s, e := r[j+1], r[j+2]
			text := ""
			if s <= e && int(e) <= len(content) {
				text = string(content[s:e])
			}
			if len(text) > 40 {
				text = text[:40] + "…"
			}
			fmt.Fprintf(&b, " c%d@%d-%d row %d-%d col %d %q", r[j], s, e, r[j+3], r[j+4], r[j+5], text)
		}
		b.WriteString("] ")
	}
	return b.String()
}

// FuzzGoSyntaxAgreesWithQuery looks for Go sources both parsers accept on
// which go/parser's reading and the query disagree: ambiguous expressions
// (a[b][c](x), *(T)(x).f, generic calls) above all.
func FuzzGoSyntaxAgreesWithQuery(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/tags/*.go")
	more, _ := filepath.Glob("*.go")
	for _, p := range append(seeds, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) > 8<<10 {
			b = b[:8<<10]
		}
		f.Add(b)
	}
	f.Add([]byte("package p\nfunc f() { _ = a[b][c](x); _ = x.a[b[c]]; _ = *(*struct{})(p).f; g[int, T]() }\n"))
	f.Add([]byte("package p\nfunc f(string, func(T)) (int, map[int]T) { switch v := x.(type) { case nil, T: }; return new(T), make(chan T) }\n"))
	l := languages["go"]
	if err := l.load(); err != nil {
		f.Fatal(err)
	}
	if l.walker == nil {
		f.Fatal("no Go walker")
	}
	mt := newMatcher()
	p := sitter.NewParser()
	p.SetLanguage(l.lang)
	p.SetOperationLimit(int(ParseTimeout / time.Microsecond))
	f.Fuzz(func(t *testing.T, content []byte) {
		if _, _, diff := compareGoSyntax(t, l, mt, p, content); diff != "" {
			t.Fatalf("%s\n%s", diff, content)
		}
	})
}

// TestGoSyntaxBoundsPathologicalNesting: deeply nested calls and indexes
// (each level's reading depends on everything below it) do not make the
// go/parser path quadratic or its recursion unbounded: past its depth or
// its budget goSyntax gives the file to tree-sitter, and ParseFile still
// returns.
func TestGoSyntaxBoundsPathologicalNesting(t *testing.T) {
	l := languages["go"]
	if err := l.load(); err != nil {
		t.Fatal(err)
	}
	nest := func(open, mid, close string, n int) []byte {
		return []byte("package p\n\nvar x = " + strings.Repeat(open, n) + mid + strings.Repeat(close, n) + "\n\nfunc Kept() {}\n")
	}
	for name, src := range map[string][]byte{
		"calls":   nest("f(", "0", ")", 3000),
		"indexes": nest("a[", "i", "]", 1500),
	} {
		g, parsed := parseGoSyntax(l, src)
		if !parsed {
			t.Fatalf("%s: go/parser rejected the input; the test needs one it accepts", name)
		}
		_ = g.source()(func(uint16, []capture) {})
		if !g.unsure {
			t.Errorf("%s: goSyntax vouched for a reading it could not afford to work out", name)
		}
		ft, err := ParseFile("p.go", src)
		if err == nil && len(ft.Defs) == 0 {
			t.Errorf("%s: no definitions from tree-sitter either", name)
		}
	}
}
