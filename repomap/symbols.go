package repomap

import (
	"sort"
	"strconv"
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
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []Symbol
	seen := map[string]bool{}
	scan := func(name, scope string, plain bool) {
		for _, rel := range m.defIndex[name] {
			t := m.files[rel].Tags
			for _, d := range t.Defs {
				if d.Name != name || (!plain && d.Scope != scope) {
					continue
				}
				k := rel + "\x00" + strconv.Itoa(d.NameLine) + "\x00" + d.Name
				if !seen[k] {
					seen[k] = true
					out = append(out, Symbol{Path: t.Path, Language: t.Language, Def: d})
				}
			}
		}
	}
	for n := range want {
		if i := strings.LastIndexByte(n, '.'); i > 0 && i < len(n)-1 {
			scan(n[i+1:], n[:i], false)
		}
		// A dotted name may also be a plain name (C# namespaces, Ruby).
		scan(n, "", true)
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
