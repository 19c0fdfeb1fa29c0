package repomap

import (
	"path/filepath"
	"slices"
	"strings"
)

// symtab interns names for the graph. Guarded by Map.mu.
type symtab struct {
	ids    map[string]int32
	names  []string
	static []float64 // identWeight without the definer factor
	live   int       // names in use at the last graph build
}

func (t *symtab) id(name string) int32 {
	if id, ok := t.ids[name]; ok {
		return id
	}
	id := int32(len(t.names))
	t.ids[name] = id
	t.names = append(t.names, name)
	w := identWeight(strings.TrimPrefix(name, bareMark), 1)
	if strings.IndexByte(name, '.') > 0 {
		w = specificBoost // a qualified name means one thing
	}
	t.static = append(t.static, w)
	return id
}

// bareMark starts the graph name of a bare reference (see graphName); no
// identifier contains it.
const bareMark = "\x01"

// receiverLanguages reach a member (method) only through its receiver:
// x.m(), self.m(), this.m(). A bare m() there never means a method, so a
// bare reference leads only to definitions that are not members (Go's
// len(x) to no method len, string to no method string).
var receiverLanguages = map[string]bool{"go": true, "python": true, "javascript": true, "typescript": true, "tsx": true}

// graphName is the name a reference has in the graph: bare references in
// receiverLanguages get their own name (resolved to the non-member
// definitions of the name, resolveNames); member accesses, qualified names
// and references in other languages keep theirs.
func graphName(lang string, r *Ref) string {
	if !r.Member && receiverLanguages[lang] && strings.IndexByte(r.Name(), '.') < 0 {
		return bareMark + r.Name()
	}
	return r.Name()
}

// isMember reports a definition reached only through a receiver in its
// language (receiverLanguages): a method.
func isMember(lang string, d *Def) bool {
	return d.Kind() == "method" && receiverLanguages[lang]
}

// resolve fills an entry's name ids (once per entry).
func (t *symtab) resolve(e *entry) {
	if e.resolved || e.Tags == nil {
		return
	}
	ft := e.Tags
	e.defIDs = make([]int32, len(ft.Defs))
	e.defSame = make([]int32, len(ft.Defs))
	builtin := isBuiltinDecl(ft.Path)
	for i, d := range ft.Defs {
		e.defIDs[i] = -1
		// Local helpers are not edges of the map, nor are Go's predeclared
		// identifiers: every file uses them, none depends on builtin.go.
		if !d.Local && !builtin {
			e.defIDs[i] = t.id(d.Name())
		}
	}
	if len(ft.Defs) <= 64 {
		for i, a := range e.defIDs {
			for _, b := range e.defIDs {
				if a >= 0 && a == b {
					e.defSame[i]++
				}
			}
		}
	} else {
		cnt := map[int32]int32{}
		for _, id := range e.defIDs {
			cnt[id]++
		}
		for i, id := range e.defIDs {
			e.defSame[i] = cnt[id]
		}
	}
	e.refIDs = make([]int32, len(ft.Refs))
	for i, r := range ft.Refs {
		e.refIDs[i] = t.id(graphName(ft.Language, &r))
	}
	e.facts = computeFacts(ft, e.defIDs, e.defSame)
	e.resolved = true
}

// qualifiedOf returns the qualified and bare idents whose flow counts for
// the plain ident id.
func (g *graph) qualifiedOf(id int32) []int32 {
	if g.qualStart == nil {
		return nil
	}
	return g.qualList[g.qualStart[id]:g.qualStart[id+1]]
}

// resolveNames gives the qualified and bare reference names their
// definers, chosen among the definers of the plain name:
//
//   - a qualified name ("context.Context", from tags.go: a Go file's
//     pkg.Name where pkg is one of its imports) leads to the definitions of
//     Name in a directory named pkg that are not methods, so a use of
//     context.Context reaches package context's Context and not every
//     method named Context (nor net/http's CrossOriginProtection.Handler
//     for http.Handler). With
//     no such directory (the package is outside the workspace) the name
//     has no definers and no edge. The workspace root's directory counts by
//     the root's own name.
//   - a bare name (graphName) leads to the files with a definition of the
//     name that is not a member (isMember).
func (g *graph) resolveNames(st *symtab, rootName string) {
	n := len(g.idents)
	nm := g.nonMemberDefiners()
	lists := map[int32][]int32{}
	var quals [][2]int32 // (plain ident, qualified or bare ident resolved to some of its definers)
	for id := 0; id < n; id++ {
		base, l, ok := g.resolveName(g.idents[id], st, nm, rootName)
		if !ok {
			continue
		}
		lists[int32(id)] = l
		if len(l) > 0 {
			quals = append(quals, [2]int32{base, int32(id)})
		}
	}
	g.indexQualified(quals)
	g.replaceDefiners(lists)
}

// nameDefiners is a CSR of files per name: name id's are
// file[start[id]:start[id+1]].
type nameDefiners struct{ start, file []int32 }

func (d nameDefiners) of(id int32) []int32 { return d.file[d.start[id]:d.start[id+1]] }

// nonMemberDefiners returns the files with a non-member definition of each
// name (each file once per name, in file order), like the definers.
func (g *graph) nonMemberDefiners() nameDefiners {
	n := len(g.idents)
	pStart := make([]int32, n+1)
	last := make([]int32, n)
	each := func(fn func(fi, id int32)) {
		for i := range last {
			last[i] = -1
		}
		for fi, ids := range g.defIdent {
			t := g.tags[fi]
			for di, id := range ids {
				if id >= 0 && last[id] != int32(fi) && !isMember(t.Language, &t.Defs[di]) {
					last[id] = int32(fi)
					fn(int32(fi), id)
				}
			}
		}
	}
	each(func(_, id int32) { pStart[id+1]++ })
	for i := 0; i < n; i++ {
		pStart[i+1] += pStart[i]
	}
	pFile := make([]int32, pStart[n])
	fill := slices.Clone(pStart[:n])
	each(func(fi, id int32) { pFile[fill[id]] = fi; fill[id]++ })
	return nameDefiners{pStart, pFile}
}

// resolveName returns the definers a bare or qualified name resolves to,
// chosen among the non-member definers (nm) of its plain name base. ok is
// false when the name keeps the definers of its own name: a plain name,
// or a qualified name that resolves to no file. A bare name always
// resolves (to no file when its plain name is not among the graph's names).
func (g *graph) resolveName(name string, st *symtab, nm nameDefiners, rootName string) (base int32, defs []int32, ok bool) {
	n := len(g.idents)
	if strings.HasPrefix(name, bareMark) {
		base, ok := st.ids[name[len(bareMark):]]
		if !ok || int(base) >= n {
			return -1, nil, true
		}
		return base, nm.of(base), true
	}
	dot := strings.LastIndexByte(name, '.')
	if dot <= 0 {
		return -1, nil, false
	}
	base, ok = st.ids[name[dot+1:]]
	if !ok || int(base) >= n {
		return -1, nil, false
	}
	// pkg.Name is never a method: only the name's non-member definers.
	qual := name[:dot]
	for _, fi := range nm.of(base) {
		if packageDir(g.files[fi], rootName) == qual {
			defs = append(defs, fi)
		}
	}
	return base, defs, len(defs) > 0
}

// packageDir returns the name of the directory holding the file at path
// p: the workspace root's name for files at the root.
func packageDir(p, rootName string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return rootName
	}
	dir := p[:i]
	return dir[strings.LastIndexByte(dir, '/')+1:]
}

// indexQualified makes quals, pairs of a plain ident and a qualified or
// bare ident resolved to some of its definers, the CSR qualifiedOf reads
// (each base's idents in ascending order, as quals lists them).
func (g *graph) indexQualified(quals [][2]int32) {
	if len(quals) == 0 {
		return
	}
	n := len(g.idents)
	g.qualStart = make([]int32, n+1)
	for _, p := range quals {
		g.qualStart[p[0]+1]++
	}
	for i := 0; i < n; i++ {
		g.qualStart[i+1] += g.qualStart[i]
	}
	g.qualList = make([]int32, len(quals))
	fill := slices.Clone(g.qualStart[:n])
	for _, p := range quals {
		g.qualList[fill[p[0]]] = p[1]
		fill[p[0]]++
	}
}

// replaceDefiners gives the names in lists those definers instead of
// their own, and lists the defined names again.
func (g *graph) replaceDefiners(lists map[int32][]int32) {
	if len(lists) == 0 {
		return
	}
	n := len(g.idents)
	start := make([]int32, n+1)
	files := make([]int32, 0, len(g.defFile)+len(lists))
	g.defined = g.defined[:0]
	for id := 0; id < n; id++ {
		l, ok := lists[int32(id)]
		if !ok {
			l = g.defFile[g.defStart[id]:g.defStart[id+1]]
		}
		files = append(files, l...)
		start[id+1] = int32(len(files))
		if len(l) > 0 {
			g.defined = append(g.defined, int32(id))
		}
	}
	g.defStart, g.defFile = start, files
}

// rootName is the name of the workspace's root directory: the package name
// its top-level Go files usually have.
func (m *Map) rootName() string {
	return filepath.Base(m.ws.Root())
}
