package repomap

import (
	"sort"
	"strings"
)

// Symbol is a definition with its file: what DefinitionsOf and
// EnclosingSymbol return (enough to cut a full snippet: Path, Line..EndLine).
type Symbol struct {
	Path     string
	Language string
	Def
}

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
	g := m.currentGraph()
	var out []Symbol
	seen := map[[2]int]bool{}
	add := func(fi int32, di int) {
		k := [2]int{int(fi), di}
		if seen[k] {
			return
		}
		seen[k] = true
		t := g.tags[fi]
		out = append(out, Symbol{Path: t.Path, Language: t.Language, Def: t.Defs[di]})
	}
	for n := range want {
		name, scope := n, ""
		if i := strings.LastIndexByte(n, '.'); i > 0 && i < len(n)-1 {
			scope, name = n[:i], n[i+1:]
		}
		for _, fi := range g.defFiles[name] {
			for di, d := range g.tags[fi].Defs {
				if d.Name == name && (scope == "" || d.Scope == scope) {
					add(fi, di)
				}
			}
		}
		if scope != "" { // a dotted name may also be a plain name (C# namespaces, Ruby)
			for _, fi := range g.defFiles[n] {
				for di, d := range g.tags[fi].Defs {
					if d.Name == n {
						add(fi, di)
					}
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// EnclosingSymbol returns the innermost definition of file rel whose line
// range contains the 1-based line.
func (m *Map) EnclosingSymbol(rel string, line int) (Symbol, bool) {
	t, ok := m.Tags(rel)
	if !ok {
		return Symbol{}, false
	}
	best := -1
	for i, d := range t.Defs {
		if d.Line <= line && line <= d.EndLine {
			if best < 0 || d.EndLine-d.Line < t.Defs[best].EndLine-t.Defs[best].Line ||
				(d.EndLine-d.Line == t.Defs[best].EndLine-t.Defs[best].Line && d.Depth > t.Defs[best].Depth) {
				best = i
			}
		}
	}
	if best < 0 {
		return Symbol{}, false
	}
	return Symbol{Path: t.Path, Language: t.Language, Def: t.Defs[best]}, true
}
