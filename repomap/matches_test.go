package repomap

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	sitter "github.com/smacker/go-tree-sitter"
)

// matchesViaBindings collects a query's matches through the Go bindings'
// own cursor and nodes: what matcher.run must agree with.
func matchesViaBindings(l *language, root *sitter.Node) [][]uint32 {
	qc := sitter.NewQueryCursor()
	defer qc.Close()
	qc.Exec(l.query, root)
	var out [][]uint32
	for {
		m, ok := qc.NextMatch()
		if !ok {
			return out
		}
		rec := []uint32{uint32(m.PatternIndex)}
		for _, c := range m.Captures {
			s, e := c.Node.StartPoint(), c.Node.EndPoint()
			rec = append(rec, c.Index, c.Node.StartByte(), c.Node.EndByte(), s.Row, e.Row, e.Column)
		}
		out = append(out, rec)
	}
}

// TestMatchesAgreeWithBindings checks the matcher's C declarations of
// tree-sitter's structures (and its reading of the bindings' pointers)
// against the bindings: the same matches, captures, ranges and points, on
// every sample file and on Go files of this repository.
func TestMatchesAgreeWithBindings(t *testing.T) {
	files, _ := filepath.Glob("testdata/tags/*")
	more, _ := filepath.Glob("*.go")
	files = append(files, more...)
	mt := newMatcher()
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".golden") || LanguageOf(f) == "" {
			continue
		}
		content, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		l := languages[LanguageOf(f)]
		if err := l.load(); err != nil {
			t.Fatal(err)
		}
		p := sitter.NewParser()
		p.SetLanguage(l.lang)
		tree, err := p.ParseCtx(context.Background(), nil, content)
		if err != nil {
			t.Fatal(err)
		}
		want := matchesViaBindings(l, tree.RootNode())
		var got [][]uint32
		if err := mt.run(l.query, tree.RootNode(), func(pattern uint16, cs []capture) {
			got = append(got, matchRecord(pattern, cs))
		}); err != nil {
			t.Fatal(err)
		}
		tree.Close()
		p.Close()
		if len(want) == 0 {
			t.Errorf("%s: no matches through the bindings", f)
		}
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("%s: matcher gave %d matches, the bindings %d; first difference at %d", f, len(got), len(want), firstDiff(got, want))
		}
		n++
		runtime.GC() // a freed tree or cursor in use would show here
	}
	if n < 12 {
		t.Fatalf("only %d files compared", n)
	}
}

// matchRecord is a match as the flat record cairn_matches writes: the
// pattern, then each capture's id, byte range, rows and end column.
func matchRecord(pattern uint16, cs []capture) []uint32 {
	rec := []uint32{uint32(pattern)}
	for _, c := range cs {
		rec = append(rec, c.id, c.start, c.end, c.startRow, c.endRow, c.endColumn)
	}
	return rec
}

func firstDiff(a, b [][]uint32) int {
	for i := range min(len(a), len(b)) {
		if !slices.Equal(a[i], b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestPredicatesFilterMatches checks that a pattern's #eq? condition is
// applied: only the list assigned to __all__ names exports.
func TestPredicatesFilterMatches(t *testing.T) {
	src := "__all__ = [\"Public\"]\nothers = [\"NotExported\"]\n"
	ft, err := ParseFile("m.py", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	exports := map[string]bool{}
	for _, r := range ft.Refs {
		if r.Export {
			exports[r.Name()] = true
		}
	}
	if !exports["Public"] || exports["NotExported"] || len(exports) != 1 {
		t.Fatalf("exports %v, want only Public", exports)
	}
}

func TestPredicateKinds(t *testing.T) {
	cs := []capture{{id: 0, start: 0, end: 3}, {id: 1, start: 4, end: 7}}
	content := []byte("abc abc xyz")
	for _, c := range []struct {
		p    predicate
		want bool
	}{
		{predicate{left: 0, right: -1, text: "abc"}, true},
		{predicate{left: 0, right: -1, text: "abd"}, false},
		{predicate{left: 0, right: -1, text: "abc", not: true}, false},
		{predicate{left: 0, right: 1}, true},
		{predicate{left: 0, right: 1, not: true}, false},
		{predicate{left: 1, right: -1, re: regexp.MustCompile("^a")}, true},
		{predicate{left: 1, right: -1, re: regexp.MustCompile("^x")}, false},
		{predicate{left: 1, right: -1, re: regexp.MustCompile("^x"), not: true}, true},
		{predicate{left: 2, right: -1, text: "none"}, true}, // no such capture
	} {
		if got := holds([]predicate{c.p}, cs, content); got != c.want {
			t.Errorf("%+v: holds = %v, want %v", c.p, got, c.want)
		}
	}
}
