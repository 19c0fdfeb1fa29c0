package repomap

import (
	"math"
	"slices"
	"strings"
	"sync"
)

// Symbol is a definition with its file: what DefinitionsOf and
// EnclosingSymbol return (enough to cut a full snippet: Path, Line..EndLine).
// Its fields are a Def's, with ints for numbers.
type Symbol struct {
	Path       string
	Language   string
	defNames        // Name, Kind, Scope, Signature
	Line       int  // 1-based first line of the definition
	EndLine    int  // 1-based last line
	NameLine   int  // 1-based line of the name (the signature line)
	Depth      int  // number of enclosing definitions and scopes
	TopLevel   bool // no other definition encloses it
	Local      bool // inside a function or method body
	Private    bool // kept out of the public API by the language's rule (Def.Private)
	Override   bool // a Java method marked @Override
	Deprecated bool // marked deprecated by its authors
}

// SymbolOf is d, a definition of the file path in language lang, as a
// Symbol.
func SymbolOf(path, lang string, d *Def) Symbol {
	return Symbol{
		Path: path, Language: lang, defNames: d.defNames,
		Line: int(d.Line), EndLine: int(d.EndLine), NameLine: int(d.NameLine), Depth: int(d.Depth),
		TopLevel: d.TopLevel, Local: d.Local, Private: d.Private, Override: d.Override, Deprecated: d.Deprecated,
	}
}

// defKey is a definition as DefinitionsOf lists it once: its file (by
// number in the definition index), name and name line.
type defKey struct {
	file int32
	name str
	line int32
}

// defSets are DefinitionsOf's sets of what it listed, kept between calls
// (cleared): at 10× the Go tree a new question's lookups allocated ~0.5 MB
// of them.
type defSets struct {
	seen  map[defKey]bool
	lines map[int]bool
}

var defSetsPool = sync.Pool{New: func() any { return &defSets{seen: map[defKey]bool{}, lines: map[int]bool{}} }}

// DefinitionsOf returns the definitions of the given names, sorted by path
// and line. A name matches a definition's Name, or "Scope.Name" for a
// member (e.g. "Map.Render").
func (m *Map) DefinitionsOf(names []string) []Symbol {
	want := map[string]bool{}
	for _, n := range names {
		if n != "" {
			want[n] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	// Sized for every definition the plain scans may list: growing by
	// appends copied a common name's thousands of symbols several times
	// over. (A scoped scan lists a type's few members of the name.)
	size := 0
	for n := range want {
		size += len(m.defs.names[n])
	}
	out := make([]Symbol, 0, size)
	// A definition is listed once. For one name the scans never meet
	// (the scoped one looks for the part after the dot, the plain one for
	// the whole name), so repeats can only come from one file in one scan,
	// and a file's matches are checked against its earlier ones: that
	// spares a set over every match (a common name has thousands at 10×
	// a large tree). Several names may meet ("T.m" and "m"). The sets are
	// kept between calls (defSets).
	sets := defSetsPool.Get().(*defSets)
	defer func() {
		clear(sets.seen)
		clear(sets.lines)
		defSetsPool.Put(sets)
	}()
	seen := len(want) > 1
	scan := func(name, scope string, plain bool) {
		var sc str // the scope's number: compared as the records hold it
		if !plain {
			var ok bool
			if sc, ok = lookupStr(scope); !ok {
				return // no definition has that scope
			}
		}
		var file, linesOf *FileTags // linesOf: the file sets.lines holds the listed name lines of
		first := 0
		for _, r := range m.defs.names[name] {
			d := m.defs.def(r)
			if !plain && d.scope != sc {
				continue
			}
			t := m.defs.tags(r)
			if t != file {
				file, first = t, len(out)
			}
			if seen {
				k := defKey{r.file, d.name, d.NameLine}
				if sets.seen[k] {
					continue
				}
				sets.seen[k] = true
			} else if run := out[first:]; len(run) < 16 {
				if slices.ContainsFunc(run, func(s Symbol) bool { return s.NameLine == int(d.NameLine) }) {
					continue
				}
			} else {
				// The file has many (locals named alike): a set of its lines.
				if linesOf != t {
					linesOf = t
					clear(sets.lines)
					for _, s := range run {
						sets.lines[s.NameLine] = true
					}
				}
				if sets.lines[int(d.NameLine)] {
					continue
				}
				sets.lines[int(d.NameLine)] = true
			}
			out = append(out, SymbolOf(t.Path, t.Language, d))
		}
	}
	for n := range want {
		if i := strings.LastIndexByte(n, '.'); i > 0 && i < len(n)-1 {
			scan(n[i+1:], n[:i], false)
		}
		// A dotted name may also be a plain name (C# namespaces, Ruby).
		scan(n, "", true)
	}
	if len(out) == 0 {
		return nil
	}
	sortSymbols(out)
	return out
}

// sortSymbols orders symbols by path, line and name. The scans list a
// name's definitions in path order already, so most lookups need only the
// check.
func sortSymbols(out []Symbol) {
	if !slices.IsSortedFunc(out, cmpSymbols) {
		slices.SortFunc(out, cmpSymbols)
	}
}

func cmpSymbols(a, b Symbol) int {
	if c := strings.Compare(a.Path, b.Path); c != 0 {
		return c
	}
	if a.Line != b.Line {
		return a.Line - b.Line
	}
	return strings.Compare(a.Name(), b.Name())
}

// EnclosingSymbol returns the innermost definition of file rel whose line
// range contains the 1-based line.
func (m *Map) EnclosingSymbol(rel string, line int) (Symbol, bool) {
	t, ok := m.Tags(rel)
	if !ok {
		return Symbol{}, false
	}
	l := int32(max(math.MinInt32, min(line, math.MaxInt32))) // as Def keeps lines
	best := -1
	for i, d := range t.Defs {
		if d.Line <= l && l <= d.EndLine {
			if best < 0 || d.EndLine-d.Line < t.Defs[best].EndLine-t.Defs[best].Line ||
				(d.EndLine-d.Line == t.Defs[best].EndLine-t.Defs[best].Line && d.Depth > t.Defs[best].Depth) {
				best = i
			}
		}
	}
	if best < 0 {
		return Symbol{}, false
	}
	return SymbolOf(t.Path, t.Language, &t.Defs[best]), true
}
