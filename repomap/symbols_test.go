package repomap

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
)

// definitionsBySet is DefinitionsOf as it was written first, one set over
// every match: the reference the faster scan must agree with.
func definitionsBySet(m *Map, names []string) []Symbol {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Symbol
	seen := map[string]bool{}
	scan := func(name, scope string, plain bool) {
		for _, rel := range filesOf(&m.defs, m.defs.names[name]) {
			t := m.files[rel].Tags
			for _, d := range t.Defs {
				if d.Name() != name || (!plain && d.Scope() != scope) {
					continue
				}
				k := rel + "\x00" + strconv.Itoa(int(d.NameLine)) + "\x00" + d.Name()
				if !seen[k] {
					seen[k] = true
					out = append(out, SymbolOf(t.Path, t.Language, &d))
				}
			}
		}
	}
	want := map[string]bool{}
	for _, n := range names {
		if n != "" {
			want[n] = true
		}
	}
	for n := range want {
		if i := lastDot(n); i > 0 && i < len(n)-1 {
			scan(n[i+1:], n[:i], false)
		}
		scan(n, "", true)
	}
	sortSymbols(out)
	return out
}

func lastDot(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '.' {
			return i
		}
	}
	return -1
}

// TestDefinitionsOfAgreesWithSet checks DefinitionsOf against the reference
// on a real package, for every name alone, every member as "Scope.Name",
// and pairs that meet ("T.m" with "m").
func TestDefinitionsOfAgreesWithSet(t *testing.T) {
	m := newMap(t, filepath.Join(testenv.GOROOT(t), "src", "net", "http"), Options{})
	build(t, m)
	var queries [][]string
	m.mu.RLock()
	for name := range m.defs.names {
		queries = append(queries, []string{name})
	}
	for _, e := range m.files {
		if e.Tags == nil {
			continue
		}
		for _, d := range e.Tags.Defs {
			if d.Scope() != "" {
				queries = append(queries, []string{d.Scope() + "." + d.Name()}, []string{d.Scope() + "." + d.Name(), d.Name()})
			}
		}
	}
	m.mu.RUnlock()
	many := 0
	for _, q := range queries {
		got, want := m.DefinitionsOf(q), definitionsBySet(m, q)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("DefinitionsOf(%q): %d definitions, the reference %d", q, len(got), len(want))
		}
		if len(want) > 10 {
			many++
		}
	}
	if len(queries) < 1000 || many == 0 {
		t.Fatalf("%d queries, %d with more than 10 definitions: too few to check", len(queries), many)
	}
}

// filesOf lists the files of a definition index list, once each, in order.
func filesOf(x *defIndex, l []defRef) []string {
	var out []string
	for _, r := range l {
		if p := x.tags(r).Path; len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	return out
}

// TestDefinitionsOfListsEachLineOnce: definitions of one name on one line
// (var a, a = …) are listed once, in a file with a few of them and in one
// with many, as the reference lists them.
func TestDefinitionsOfListsEachLineOnce(t *testing.T) {
	root := t.TempDir()
	many := "package p\n\n" + strings.Repeat("var a, a = 1, 2\n", 30)
	writeFiles(t, root, map[string]string{"p/many.go": many, "q/few.go": "package q\n\nvar a, a = 1, 2\nvar b, a = 1, 2\n"})
	m := newMap(t, root, Options{})
	build(t, m)
	got, want := m.DefinitionsOf([]string{"a"}), definitionsBySet(m, []string{"a"})
	if len(want) != 32 || !reflect.DeepEqual(got, want) {
		t.Fatalf("DefinitionsOf(a): %d definitions, the reference %d, want 32 (one per line)", len(got), len(want))
	}
}

// A name defined many times in one file (past the short run a file's
// matches are checked against) is listed once per definition, alone and
// among several names that meet ("T3.String" and "String"), call after
// call (the sets are kept between calls).
func TestDefinitionsOfManyInOneFile(t *testing.T) {
	var b strings.Builder
	b.WriteString("package lib\n")
	for i := range 20 {
		fmt.Fprintf(&b, "\ntype T%d int\n\nfunc (T%d) String() string { return \"\" }\n", i, i)
	}
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"lib/types.go": b.String(), "lib/other.go": "package lib\n\nfunc (T0) Other() {}\n"})
	m := newMap(t, root, Options{})
	build(t, m)
	for round := range 3 {
		if got := m.DefinitionsOf([]string{"String"}); len(got) != 20 {
			t.Fatalf("round %d: String: %d definitions, want 20", round, len(got))
		}
		got := m.DefinitionsOf([]string{"T3.String", "String", "Other"})
		lines := map[int]bool{}
		for _, d := range got {
			if d.Name() == "String" {
				lines[d.NameLine] = true
			}
		}
		if len(got) != 21 || len(lines) != 20 {
			t.Fatalf("round %d: T3.String, String and Other: %d definitions (%d String lines), want 21 (20)", round, len(got), len(lines))
		}
	}
}
