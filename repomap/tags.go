package repomap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sitter "github.com/smacker/go-tree-sitter"
)

// Def is one definition found by a tags query.
//
// Its strings are numbers in the map's string table (str), read by Name,
// Kind, Scope and Signature: a Def holds no pointer, so the arrays of a
// large tree's definitions are data the collector does not scan. Its
// numbers are as small as their ranges allow (40 bytes rather than 64
// with ints: a large tree keeps millions). Callers outside the map get a
// Symbol, whose numbers are ints.
type Def struct {
	defNames
	Line     int32 // 1-based first line of the definition
	EndLine  int32 // 1-based last line
	NameLine int32 // 1-based line of the name (the signature line)
	Depth    int16 // number of enclosing definitions and scopes

	// The declaration of a definition that is not Local (FileTags.Decls),
	// kept in the definition's padding rather than as a second record:
	// declNest is its nesting in definitions (scopes do not count) and
	// declQual says its Symbol is Scope.Name rather than Name.
	declNest uint16
	// docLines is how many lines of documentation it carries (doc.go).
	docLines uint16

	TopLevel bool // no other definition encloses it
	Local    bool // inside a function or method body (not ranked in the map)
	// Private: the language's visibility rule keeps it out of the public
	// API (Java private or package-private, Rust without pub, C static or
	// file-local in a .c file, Ruby private/protected or :nodoc:); see
	// visibility.go. Go, Python and TS/JS are judged from the name and
	// signature (isAPI) and never set it.
	Private bool
	// Override: a Java method marked @Override, documented by the type
	// it overrides (markPrivate).
	Override bool
	// Deprecated: its authors mark it deprecated (doc.go,
	// deprecationMarks); an overview leaves it to what replaces it.
	Deprecated bool
	declQual   bool // see declNest
}

// defNames are a definition's strings, as numbers in the string table.
type defNames struct {
	name      str // the identifier
	kind      str // function, method, constructor, class, struct, interface, trait, enum, type, constant, variable, field, property, module, macro
	scope     str // enclosing type, receiver, class, impl or namespace; "" at top level
	signature str // the source line that names the definition, trimmed (at most 200 bytes)
}

// Ref is every use of one name in a file, folded into one record per name
// and form: bare (Name), member access (x.Name, Member) and export lists
// (Export: a re-export `export { Name } from`, an `export { Name }` clause,
// Python's __all__), which name what a package offers.
//
// Like Def, it holds no pointer: its name is a number in the string table
// (8 bytes; a large tree keeps millions).
type Ref struct {
	name   str
	Count  uint16 // occurrences in the file, at most 65535
	Member bool   // x.Name: the receiver's type is unknown
	Export bool   // named by an export list
}

// Name is the identifier defined.
func (d defNames) Name() string { return d.name.String() }

// Kind is what it defines: function, method, constructor, class, struct,
// interface, trait, enum, type, constant, variable, field, property,
// module, macro.
func (d defNames) Kind() string { return d.kind.String() }

// Scope is the enclosing type, receiver, class, impl or namespace; "" at
// top level.
func (d defNames) Scope() string { return d.scope.String() }

// Signature is the source line that names the definition, trimmed (at
// most 200 bytes).
func (d defNames) Signature() string { return d.signature.String() }

// Name is the name used.
func (r Ref) Name() string { return r.name.String() }

// refCount is n as a Ref's Count: a file's uses of one name past 65,535
// (a generated table's) count as 65,535, where a weight of their square
// root is one that no other file's comes near anyway.
func refCount(n int64) uint16 { return uint16(max(0, min(n, math.MaxUint16))) }

// Scope is a node that encloses definitions without being one itself (a Rust
// impl block, a C++ or C# namespace); kept to render class/impl context.
type Scope struct {
	Name      string
	Signature string
	Line      int
	EndLine   int
	Depth     int
}

// Decl is a declaration of a file, for indexers that chunk code by
// declaration (the search index). Plain fields only. FileTags.Decls are the
// top-level declarations (Depth 0) and the members of classes, modules and
// other containers (Depth 1, 2, ...; their ranges lie inside their
// container's), never what is declared inside a function body. Namespaces
// and impl blocks do not count as nesting. Sorted by StartLine.
type Decl struct {
	Path      string // workspace-relative, slash-separated
	Language  string
	Symbol    string // Name, or Container.Name (a method of a class, a Go receiver, C++ Foo::bar, a Rust impl)
	Kind      string
	StartLine int // 1-based, inclusive
	EndLine   int // 1-based, inclusive
	Depth     int // 0 for top level
}

// FileTags is everything one parse of a file yields.
type FileTags struct {
	Path         string
	Language     string
	Hash         string // workspace.Hash of the content
	Lines        int
	SyntaxErrors bool   // the tree has ERROR or MISSING nodes (what parsed is kept)
	Constraint   string // a Go file's //go:build expression ("" when none)
	Defs         []Def
	Refs         []Ref // sorted by name
	Scopes       []Scope
	// Examples are the names the file's documentation examples call or
	// name (examples.go), each once, with the number of example lines
	// naming it as its Count.
	Examples []Ref
}

// Decls returns the file's declarations (see Decl): its definitions that
// are not Local, in the order of Defs. They are derived on each call, so
// the map keeps no second record per definition.
func (ft *FileTags) Decls() []Decl {
	n := 0
	for i := range ft.Defs {
		if !ft.Defs[i].Local {
			n++
		}
	}
	out := make([]Decl, 0, n)
	for i := range ft.Defs {
		d := &ft.Defs[i]
		if d.Local {
			continue
		}
		sym := d.Name()
		if d.declQual {
			sym = d.Scope() + "." + d.Name()
		}
		out = append(out, Decl{
			Path: ft.Path, Language: ft.Language, Symbol: sym, Kind: d.Kind(),
			StartLine: int(d.Line), EndLine: int(d.EndLine), Depth: int(d.declNest),
		})
	}
	return out
}

// ErrUnsupported is returned by ParseFile for a path with no grammar.
var ErrUnsupported = errors.New("repomap: unsupported language")

const maxSignature = 200

// containerKinds are definitions that enclose others as their "Scope".
var containerKinds = map[string]bool{
	"class": true, "struct": true, "interface": true, "trait": true, "enum": true, "module": true,
}

// ParseFile parses content as the file rel (the language comes from the
// extension) and returns its definitions, references and top-level
// declarations from one parse. Syntax errors are not an error: tree-sitter
// recovers and what parsed is kept (SyntaxErrors is set). It is safe for
// concurrent use.
func ParseFile(rel string, content []byte) (*FileTags, error) {
	return parseFile(context.Background(), rel, content)
}

func parseFile(ctx context.Context, rel string, content []byte) (*FileTags, error) {
	return parseFileHashed(ctx, rel, content, hashBytes(content))
}

// hashBytes equals workspace.Hash(string(b)) without copying b.
func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func parseFileHashed(ctx context.Context, rel string, content []byte, hash string) (*FileTags, error) {
	name := LanguageOf(rel)
	if name == "" {
		return nil, fmt.Errorf("%s: %w", rel, ErrUnsupported)
	}
	l := languages[name]
	if err := l.load(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if name == "go" {
		if ft, ok := goTags(rel, content, hash); ok {
			return ft, nil
		}
	}
	// No cancellable context for the parse itself: go-tree-sitter watches
	// such a context from a goroutine that may set the parser's cancel flag
	// after the parse finished, and a cancelled parser resumes its old
	// input on the next call. The operation limit bounds pathological input.
	p := l.parsers.Get().(*sitter.Parser)
	p.SetOperationLimit(int(ParseTimeout / time.Microsecond))
	tree, err := p.ParseCtx(context.Background(), nil, content)
	if err != nil || tree == nil {
		p.Reset()
		l.parsers.Put(p)
		if err == nil {
			err = errors.New("no tree")
		}
		return nil, fmt.Errorf("repomap: parsing %s: %w", rel, err)
	}
	l.parsers.Put(p)
	defer tree.Close()
	root := tree.RootNode()
	ft := newFileTags(rel, name, hash, content)
	ft.SyntaxErrors = root.HasError()
	mt := matchers.Get().(*matcher)
	defer matchers.Put(mt)
	if err := extract(l, mt, root, content, ft); err != nil {
		return nil, fmt.Errorf("repomap: tags of %s: %w", rel, err)
	}
	ft.Examples = exampleNames(name, content)
	return ft, nil
}

// newFileTags is the record of one parse of content as rel, before its
// tags.
func newFileTags(rel, lang, hash string, content []byte) *FileTags {
	ft := &FileTags{Path: rel, Language: lang, Hash: hash, Lines: bytes.Count(content, []byte{'\n'}) + 1}
	if lang == "go" {
		ft.Constraint = goBuildConstraint(content)
	}
	return ft
}

// matchers are the workers' query cursors and buffers.
var matchers = sync.Pool{New: func() any { return newMatcher() }}

type rawDef struct {
	name       string
	kind       string
	receiver   string
	start, end uint32 // byte range of the definition node
	line, endL int    // 1-based
	nameStart  uint32
	nameRow    int // 0-based
	pattern    uint16
	scope      bool // a @scope, not a definition
	traitImpl  bool // a Rust impl of a trait (markPrivate)
}

// refHit is one reference node: its name's start byte, the name, its
// form (@reference.member, @reference.export), and the import that
// qualifies it ("" when none).
type refHit struct {
	start  uint32
	member bool
	export bool
	name   string
	qual   string
}

func extract(l *language, mt *matcher, root *sitter.Node, content []byte, ft *FileTags) error {
	lineOf := newLineIndex(content)
	c := newMatchCollector(l, mt, content)
	err := mt.run(l.query, root, c.match)
	mt.refs = c.refs[:0]
	if err != nil {
		return err
	}
	c.qualify()
	ft.Refs = foldRefs(c.refs, c.defs)
	defs := make([]*rawDef, 0, len(c.defs))
	for _, d := range c.defs {
		defs = append(defs, d)
	}
	if l.name == "c" {
		clipCFunctions(defs, lineOf)
		defs = dropCTypeNames(defs, content)
	}
	placeDefs(defs, content, lineOf, ft)
	markPrivate(l.name, defs, content, ft)
	return nil
}

// clipCFunctions ends a C function where the next function definition
// starts: C has no nested functions, but a macro the parser cannot expand
// (the kernel's `for_each_possible_cpu(i) stmt;`) can leave a function's
// body unclosed to the end of the file, and every later function would be
// read as local to it.
func clipCFunctions(defs []*rawDef, lineOf *lineIndex) {
	var fns []*rawDef
	for _, d := range defs {
		if d.kind == "function" && !d.scope {
			fns = append(fns, d)
		}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].start < fns[j].start })
	for i := 0; i+1 < len(fns); i++ {
		f, next := fns[i], fns[i+1]
		if next.start < f.end && next.start > f.start {
			f.end = next.start
			f.endL = max(f.line, lineOf.line(next.start-1))
		}
	}
}

// dropCTypeNames leaves out a C "variable" that is the type of what
// follows it: after a macro the parser cannot expand (`notrace u64
// sched_clock_cpu(int cpu)`) it reads the return type as a declared name.
// A declared name is followed by "=", ";", ",", "[" or ")", never by
// another identifier.
func dropCTypeNames(defs []*rawDef, content []byte) []*rawDef {
	out := defs[:0]
	for _, d := range defs {
		if d.kind == "variable" && !d.scope {
			i := int(d.nameStart)
			for i < len(content) && isWordByte(content[i]) {
				i++
			}
			for i < len(content) && (content[i] == ' ' || content[i] == '\t') {
				i++
			}
			if i < len(content) && isWordByte(content[i]) || i < len(content) && content[i] == '*' {
				continue
			}
		}
		out = append(out, d)
	}
	return out
}

// matchCollector turns a query's matches into definitions and reference
// hits.
type matchCollector struct {
	l        *language
	content  []byte
	defs     map[uint32]*rawDef // by name start byte
	interned map[string]string
	refs     []refHit          // may repeat a node matched by several patterns
	qualOf   map[uint32]string // reference name start → its qualifier
	imports  map[string]bool   // the package names the file imports
}

func newMatchCollector(l *language, mt *matcher, content []byte) *matchCollector {
	return &matchCollector{
		l: l, content: content,
		defs: map[uint32]*rawDef{}, interned: map[string]string{},
		refs: mt.refs[:0], qualOf: map[uint32]string{}, imports: map[string]bool{},
	}
}

// matchCaptures are the captures of one match, by role.
type matchCaptures struct {
	name, def, ref, recv, scope, qual *capture
	kind                              string
}

// match takes one match of the query.
func (c *matchCollector) match(pattern uint16, cs []capture) {
	l, content := c.l, c.content
	if ps := l.predicates[pattern]; ps != nil && !holds(ps, cs, content) {
		return
	}
	var m matchCaptures
	for i := range cs {
		cp := &cs[i]
		switch l.roles[cp.id] {
		case roleImport:
			if n := importName(cp.text(content)); n != "" {
				c.imports[n] = true
			}
		case roleQualifier:
			m.qual = cp
		case roleName:
			m.name = cp
		case roleDef:
			m.def, m.kind = cp, l.kinds[cp.id]
		case roleRef:
			m.ref, m.kind = cp, l.kinds[cp.id]
		case roleReceiver:
			m.recv = cp
		case roleScope:
			m.scope, m.kind = cp, l.kinds[cp.id]
		}
	}
	switch {
	case m.def != nil || m.scope != nil:
		c.definition(pattern, &m)
	case m.ref != nil:
		c.reference(&m)
	}
}

// definition takes a match of a definition or scope pattern: when several
// patterns match the same name, the first in the query wins.
func (c *matchCollector) definition(pattern uint16, m *matchCaptures) {
	if m.name == nil {
		return
	}
	n := m.def
	if n == nil {
		n = m.scope
	}
	key := m.name.start
	if old, ok := c.defs[key]; ok && old.pattern <= pattern {
		return
	}
	clen := uint32(len(c.content))
	if m.name.end > clen || n.end > clen {
		return
	}
	name := cleanName(m.name.text(c.content))
	if c.l.name == "ruby" {
		name = strings.TrimPrefix(name, ":") // attr_reader :code
	}
	if name == "" {
		return
	}
	rd := &rawDef{
		name:      name,
		kind:      m.kind,
		start:     n.start,
		end:       n.end,
		line:      int(n.startRow) + 1,
		endL:      n.endLine(),
		nameStart: key,
		nameRow:   int(m.name.startRow),
		pattern:   pattern,
		scope:     m.def == nil,
	}
	if m.recv != nil {
		rd.receiver = receiverType(m.recv.text(c.content))
	}
	c.defs[key] = rd
}

// reference takes a match of a reference pattern.
func (c *matchCollector) reference(m *matchCaptures) {
	nameNode := m.name
	if nameNode == nil {
		nameNode = m.ref
	}
	clen := uint32(len(c.content))
	start, end := nameNode.start, nameNode.end
	if end > clen || start > end {
		return
	}
	// Intern per file: most references repeat a name, and the map lookup
	// with a []byte→string conversion does not allocate.
	raw := c.content[start:end]
	name, ok := c.interned[string(raw)]
	if !ok {
		name = cleanName(string(raw))
		c.interned[string(raw)] = name
	}
	if name == "" {
		return
	}
	if m.qual != nil && m.qual.end <= clen {
		c.qualOf[start] = m.qual.text(c.content)
	}
	c.refs = append(c.refs, refHit{start: start, name: name, member: m.kind == "member", export: m.kind == "export"})
}

// qualify marks the references qualified by one of the file's imports
// (known only once every match is in: the query gives no order).
func (c *matchCollector) qualify() {
	if len(c.qualOf) == 0 {
		return
	}
	for i := range c.refs {
		if q, ok := c.qualOf[c.refs[i].start]; ok && c.imports[q] {
			c.refs[i].qual = q
		}
	}
}

// foldRefs folds reference hits into one Ref per name and form, skipping
// the name nodes of definitions and a node hit twice. A hit qualified by
// an import is the package member qual.name (rank.go resolves it to that
// package's definitions), not a member of a value.
func foldRefs(refs []refHit, defs map[uint32]*rawDef) []Ref {
	type refKey struct {
		qual, name     string
		member, export bool
	}
	agg := map[refKey]int{}
	if !sort.SliceIsSorted(refs, func(i, j int) bool { return refs[i].start < refs[j].start }) {
		sort.Slice(refs, func(i, j int) bool { return refs[i].start < refs[j].start })
	}
	for i, r := range refs {
		if i > 0 && refs[i-1].start == r.start {
			continue // the same node from another pattern
		}
		if _, isDef := defs[r.start]; isDef {
			continue
		}
		k := refKey{qual: r.qual, name: r.name, member: r.member && r.qual == "", export: r.export}
		agg[k]++
	}
	if len(agg) == 0 {
		return nil
	}
	out := make([]Ref, 0, len(agg))
	for k, count := range agg {
		name := k.name
		if k.qual != "" {
			name = k.qual + "." + k.name
		}
		out = append(out, Ref{name: internStr(name), Count: refCount(int64(count)), Member: k.member, Export: k.export})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.Name() != b.Name() {
			return a.Name() < b.Name()
		}
		if a.Member != b.Member {
			return !a.Member
		}
		return !a.Export && b.Export
	})
	return out
}

// placeDefs sets ft's Defs, Scopes and Decls from the raw definitions:
// in document order, each nested in the definitions and scopes whose
// ranges enclose it.
func placeDefs(all []*rawDef, content []byte, lineOf *lineIndex, ft *FileTags) {
	sort.Slice(all, func(i, j int) bool {
		if all[i].start != all[j].start {
			return all[i].start < all[j].start
		}
		if all[i].end != all[j].end {
			return all[i].end > all[j].end
		}
		return all[i].nameStart < all[j].nameStart
	})
	// Exactly sized: the map keeps these slices for as long as the file
	// is unchanged, so append's spare capacity would stay resident.
	scopes := 0
	for _, d := range all {
		if d.scope {
			scopes++
		}
	}
	if len(all) > scopes {
		ft.Defs = make([]Def, 0, len(all)-scopes)
	}
	if scopes > 0 {
		ft.Scopes = make([]Scope, 0, scopes)
	}
	var stack []*rawDef
	for _, d := range all {
		// A definition ending where d starts does not enclose it, nor does
		// one over the same range: several names of one declaration
		// (Go's `var x, y int`) are siblings.
		for len(stack) > 0 && (d.start >= stack[len(stack)-1].end || sameRange(d, stack[len(stack)-1])) {
			stack = stack[:len(stack)-1]
		}
		sig := signatureLine(content, lineOf, d.nameRow, d.nameStart)
		if (ft.Language == "c" || ft.Language == "cpp") && !d.scope {
			if d.kind == "function" {
				sig = cTypeAbove(content, lineOf, d, sig)
			} else if strings.HasPrefix(sig, "}") {
				sig = cTypedefHead(content, lineOf, d, sig)
			}
		}
		if d.scope {
			ft.Scopes = append(ft.Scopes, Scope{Name: d.name, Signature: sig, Line: d.line, EndLine: d.endL, Depth: len(stack)})
		} else {
			placeDef(d, stack, sig, ft)
			if dd := &ft.Defs[len(ft.Defs)-1]; !dd.Local {
				dd.docLines, dd.Deprecated = docLines(ft.Language, content, lineOf, d.line-1, d.nameRow)
			}
		}
		// Anything can enclose later items (a function encloses nested ones).
		stack = append(stack, d)
	}
	undeprecateOverloads(ft.Defs)
}

// undeprecateOverloads clears Deprecated on the overloads of a name that
// has one not deprecated: a deprecated signature (rxjs's filter with a
// thisArg) does not deprecate the name.
func undeprecateOverloads(defs []Def) {
	type key struct{ name, scope string }
	var live map[key]bool
	for i := range defs {
		if defs[i].Deprecated {
			live = map[key]bool{}
			break
		}
	}
	if live == nil {
		return
	}
	for i := range defs {
		if d := &defs[i]; !d.Deprecated && !d.Local {
			live[key{d.Name(), d.Scope()}] = true
		}
	}
	for i := range defs {
		if d := &defs[i]; d.Deprecated && live[key{d.Name(), d.Scope()}] {
			d.Deprecated = false
		}
	}
}

func sameRange(a, b *rawDef) bool { return a.start == b.start && a.end == b.end }

// placeDef appends the definition d, inside the definitions and scopes of
// stack (outermost first), to ft's Defs and, unless it is local to a
// function, to its Decls.
func placeDef(d *rawDef, stack []*rawDef, sig string, ft *FileTags) {
	// The immediate parent (definition or scope) names the Scope; a
	// function directly inside a class-like parent is a method.
	var parent *rawDef
	if len(stack) > 0 {
		parent = stack[len(stack)-1]
	}
	topLevel, local, nesting := true, false, 0
	for _, s := range stack {
		if !s.scope {
			topLevel = false
			nesting++
			if !containerKinds[s.kind] {
				local = true
			}
		}
	}
	scope := d.receiver
	if scope == "" && parent != nil {
		scope = parent.name
	}
	kind := d.kind
	if kind == "function" && parent != nil && isTypeLike(parent) {
		kind = "method"
	}
	def := Def{
		defNames: defNames{name: internStr(d.name), kind: internStr(kind), scope: internStr(scope), signature: internStr(sig)},
		Line:     int32(d.line), EndLine: int32(d.endL), NameLine: int32(d.nameRow + 1),
		Depth: int16(min(len(stack), math.MaxInt16)), TopLevel: topLevel, Local: local,
	}
	if !local {
		// The Symbol is Scope.Name for a receiver's method and a member of
		// a definition or type-like scope (Scope is then that name).
		def.declQual = d.receiver != "" || parent != nil && (!parent.scope || isTypeLike(parent))
		def.declNest = uint16(min(nesting, math.MaxUint16))
	}
	ft.Defs = append(ft.Defs, def)
}

// goBuildConstraint returns the expression of a Go file's //go:build line,
// which must come before the package clause.
func goBuildConstraint(content []byte) string {
	for len(content) > 0 {
		line := content
		if i := bytes.IndexByte(content, '\n'); i >= 0 {
			line, content = content[:i], content[i+1:]
		} else {
			content = nil
		}
		line = bytes.TrimSpace(line)
		if expr, ok := bytes.CutPrefix(line, []byte("//go:build ")); ok {
			return string(bytes.TrimSpace(expr))
		}
		if bytes.HasPrefix(line, []byte("package ")) {
			break
		}
	}
	return ""
}

// isTypeLike reports whether a parent makes the functions in it methods:
// a class-like definition or an impl scope, not a module or namespace.
func isTypeLike(d *rawDef) bool {
	if d.scope {
		return d.kind != "namespace"
	}
	return containerKinds[d.kind] && d.kind != "module"
}

// cleanName normalizes an identifier: valid UTF-8, no surrounding space,
// and never absurdly long (a broken parse can capture a huge span).
func cleanName(s string) string {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) > 128 || strings.ContainsAny(s, "\n\r") {
		return ""
	}
	return s
}

// importName returns the name a Go import spec binds: its explicit name,
// else the last element of its path (without a /vN major version); "" for
// blank and dot imports.
func importName(spec string) string {
	f := strings.Fields(spec)
	if len(f) == 0 {
		return ""
	}
	if len(f) >= 2 {
		if f[0] == "_" || f[0] == "." {
			return ""
		}
		return f[0]
	}
	return pathName(strings.Trim(f[len(f)-1], "\"`"))
}

// pathName is the name an import path binds by default: its last element,
// without a /vN major version.
func pathName(p string) string {
	parts := strings.Split(p, "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && len(last) >= 2 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
		last = parts[len(parts)-2]
	}
	return last
}

// receiverType extracts the type name from a Go receiver "(r *Foo[T])" or a
// C++ scope "ns::Foo".
func receiverType(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "(")
	s = strings.TrimSuffix(s, ")")
	if i := strings.IndexByte(s, '['); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, '<'); i >= 0 {
		s = s[:i]
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	t := strings.TrimLeft(f[len(f)-1], "*&")
	return cleanName(t)
}

// lineIndex maps byte offsets to lines.
type lineIndex struct{ starts []uint32 }

func newLineIndex(content []byte) *lineIndex {
	starts := make([]uint32, 1, bytes.Count(content, []byte{'\n'})+1)
	for i, b := range content {
		if b == '\n' {
			starts = append(starts, uint32(i+1))
		}
	}
	return &lineIndex{starts: starts}
}

// line returns the 1-based line of byte offset off.
func (li *lineIndex) line(off uint32) int {
	return sort.Search(len(li.starts), func(i int) bool { return li.starts[i] > off })
}

// cTypeAbove puts a C function's return type before its signature when
// the type stands alone on the line above the name, as the kernel and GNU
// write it ("unsigned long __sched" over
// "wait_for_completion_timeout(struct completion *x, ...)"): the name's
// line alone shows no type. The line above is taken only when the
// definition starts there and it holds nothing but words and pointers.
func cTypeAbove(content []byte, li *lineIndex, d *rawDef, sig string) string {
	if d.nameRow == 0 || d.nameRow >= len(li.starts) || !strings.HasPrefix(sig, d.name) {
		return sig
	}
	above, here := li.starts[d.nameRow-1], li.starts[d.nameRow]
	if d.start >= here || d.start < above && !blankBefore(content, d.start, above) {
		return sig
	}
	t := bytes.TrimSpace(content[above:here])
	if len(t) == 0 || len(t) > 80 {
		return sig
	}
	for _, c := range t {
		if !isWordByte(c) && c != ' ' && c != '\t' && c != '*' {
			return sig
		}
	}
	return strings.Join(strings.Fields(string(t)), " ") + " " + sig
}

// cTypedefHead puts the first line of a C typedef whose name follows its
// body ("typedef struct ext4_io_end {" ... "} ext4_io_end_t;") before the
// name's line, which alone says nothing: "typedef struct ext4_io_end { …
// } ext4_io_end_t;".
func cTypedefHead(content []byte, li *lineIndex, d *rawDef, sig string) string {
	row := li.line(d.start) - 1
	if row < 0 || row >= d.nameRow {
		return sig
	}
	end := len(content)
	if row+1 < len(li.starts) {
		end = int(li.starts[row+1])
	}
	head := strings.Join(strings.Fields(string(content[d.start:end])), " ")
	if !strings.HasSuffix(head, "{") || len(head) > 80 {
		return sig
	}
	return head + " … " + sig
}

// blankBefore reports whether content[from:to] is only white space.
func blankBefore(content []byte, from, to uint32) bool {
	return len(bytes.TrimSpace(content[from:to])) == 0
}

// signatureLine returns the trimmed text of 0-based row, cut to maxSignature
// bytes around the name when the line is long.
func signatureLine(content []byte, li *lineIndex, row int, nameStart uint32) string {
	if row < 0 || row >= len(li.starts) {
		return ""
	}
	start := int(li.starts[row])
	end := len(content)
	if row+1 < len(li.starts) {
		end = int(li.starts[row+1])
	}
	line := content[start:end]
	if len(line) > maxSignature {
		off := int(nameStart) - start
		lo := off - maxSignature/4
		if lo < 0 {
			lo = 0
		}
		hi := lo + maxSignature
		if hi > len(line) {
			hi = len(line)
		}
		line = line[lo:hi]
		for len(line) > 0 && !utf8.FullRune(line) {
			line = line[1:]
		}
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(line), "\uFFFD"))
	s = strings.ReplaceAll(s, "\t", " ")
	return s
}
