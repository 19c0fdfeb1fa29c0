package repomap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sitter "github.com/smacker/go-tree-sitter"
)

// Def is one definition found by a tags query.
type Def struct {
	Name      string // the identifier
	Kind      string // function, method, constructor, class, struct, interface, trait, enum, type, constant, variable, field, property, module, macro
	Scope     string // enclosing type, receiver, class, impl or namespace; "" at top level
	Signature string // the source line that names the definition, trimmed (at most 200 bytes)
	Line      int    // 1-based first line of the definition
	EndLine   int    // 1-based last line
	NameLine  int    // 1-based line of the name (the signature line)
	Depth     int    // number of enclosing definitions and scopes
	TopLevel  bool   // no other definition encloses it
	Local     bool   // inside a function or method body (not ranked in the map)
}

// Ref is every use of one name in a file, folded into one record per name
// and form: bare (Name), member access (x.Name, Member) and export lists
// (Export: a re-export `export { Name } from`, an `export { Name }` clause,
// Python's __all__), which name what a package offers.
type Ref struct {
	Name   string
	Count  int  // occurrences in the file
	Line   int  // 1-based line of the first occurrence
	Member bool // x.Name: the receiver's type is unknown
	Export bool // named by an export list
}

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
// declaration (the search index). Plain fields only. Decls are the
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
	Decls        []Decl
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
	if name == "go" && l.walker != nil {
		if ft, ok := goSyntaxTags(l, rel, content, hash); ok {
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
	return ft, nil
}

// goSyntaxTags tags a Go file from go/parser's tree (goast.go); false
// when go/parser rejects it, when goSyntax cannot vouch for tree-sitter's
// reading of it, or on a failure of its own: tree-sitter then parses it.
func goSyntaxTags(l *language, rel string, content []byte, hash string) (ft *FileTags, ok bool) {
	g, parsed := parseGoSyntax(l, content)
	if !parsed {
		return nil, false
	}
	defer func() {
		if r := recover(); r != nil {
			slog.Warn("repomap: go/parser path failed; tree-sitter tags the file", "path", rel, "panic", r)
			ft, ok = nil, false
		}
	}()
	ft = newFileTags(rel, "go", hash, content)
	mt := matchers.Get().(*matcher)
	defer matchers.Put(mt)
	if err := extractFrom(l, mt, g.source(), g.lines, content, ft); err != nil || g.unsure {
		return nil, false
	}
	return ft, true
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
}

// refHit is one reference node: its name's start byte, the name and the
// <kind> of @reference.<kind>.
type refHit struct {
	start uint32
	name  string
	kind  string
}

func extract(l *language, mt *matcher, root *sitter.Node, content []byte, ft *FileTags) error {
	each := func(fn func(uint16, []capture)) error { return l.matches(mt, root, fn) }
	return extractFrom(l, mt, each, newLineIndex(content), content, ft)
}

// extractFrom makes ft's tags from the matches each hands its function;
// lineOf indexes content's lines.
func extractFrom(l *language, mt *matcher, each func(fn func(uint16, []capture)) error, lineOf *lineIndex, content []byte, ft *FileTags) error {
	defs := map[uint32]*rawDef{} // by name start byte
	interned := map[string]string{}
	type refAgg struct {
		count int
		line  int
	}
	refs := mt.refs[:0]           // may repeat a node matched by several patterns
	qualOf := map[uint32]string{} // reference name start → its qualifier
	imports := map[string]bool{}  // the package names the file imports
	clen := uint32(len(content))
	err := each(func(pattern uint16, cs []capture) {
		if ps := l.predicates[pattern]; ps != nil && !holds(ps, cs, content) {
			return
		}
		var nameNode, defNode, refNode, recvNode, scopeNode, qualNode *capture
		var kind string
		for i := range cs {
			c := &cs[i]
			switch l.roles[c.id] {
			case roleImport:
				if n := importName(c.text(content)); n != "" {
					imports[n] = true
				}
			case roleQualifier:
				qualNode = c
			case roleName:
				nameNode = c
			case roleDef:
				defNode, kind = c, l.kinds[c.id]
			case roleRef:
				refNode, kind = c, l.kinds[c.id]
			case roleReceiver:
				recvNode = c
			case roleScope:
				scopeNode, kind = c, l.kinds[c.id]
			}
		}
		switch {
		case defNode != nil || scopeNode != nil:
			if nameNode == nil {
				return
			}
			n := defNode
			if n == nil {
				n = scopeNode
			}
			key := nameNode.start
			if old, ok := defs[key]; ok && old.pattern <= pattern {
				return
			}
			if nameNode.end > clen || n.end > clen {
				return
			}
			name := cleanName(nameNode.text(content))
			if name == "" {
				return
			}
			rd := &rawDef{
				name:      name,
				kind:      kind,
				start:     n.start,
				end:       n.end,
				line:      int(n.startRow) + 1,
				endL:      n.endLine(),
				nameStart: key,
				nameRow:   int(nameNode.startRow),
				pattern:   pattern,
				scope:     defNode == nil,
			}
			if recvNode != nil {
				rd.receiver = receiverType(recvNode.text(content))
			}
			defs[key] = rd
		case refNode != nil:
			if nameNode == nil {
				nameNode = refNode
			}
			// Intern per file: most references repeat a name, and the map
			// lookup with a []byte→string conversion does not allocate.
			start, end := nameNode.start, nameNode.end
			if end > clen || start > end {
				return
			}
			raw := content[start:end]
			name, ok := interned[string(raw)]
			if !ok {
				name = cleanName(string(raw))
				interned[string(raw)] = name
			}
			if name == "" {
				return
			}
			if qualNode != nil && qualNode.end <= clen {
				qualOf[start] = qualNode.text(content)
			}
			refs = append(refs, refHit{start, name, kind})
		}
	})
	mt.refs = refs[:0]
	if err != nil {
		return err
	}

	// References: fold by name and form, skipping the name nodes of definitions.
	type refKey struct {
		name           string
		member, export bool
	}
	agg := map[refKey]*refAgg{}
	sort.Slice(refs, func(i, j int) bool { return refs[i].start < refs[j].start })
	for i, r := range refs {
		if i > 0 && refs[i-1].start == r.start {
			continue // the same node from another pattern
		}
		if _, isDef := defs[r.start]; isDef {
			continue
		}
		k := refKey{name: r.name, member: r.kind == "member", export: r.kind == "export"}
		if q, ok := qualOf[r.start]; ok && imports[q] {
			// Resolved to package q's definitions (rank.go): a package
			// member, not a member of a value.
			k.name, k.member = q+"."+r.name, false
		}
		a := agg[k]
		if a == nil {
			a = &refAgg{line: lineOf.line(r.start)}
			agg[k] = a
		}
		a.count++
	}
	ft.Refs = make([]Ref, 0, len(agg))
	for k, a := range agg {
		ft.Refs = append(ft.Refs, Ref{Name: k.name, Count: a.count, Line: a.line, Member: k.member, Export: k.export})
	}
	sort.Slice(ft.Refs, func(i, j int) bool {
		a, b := &ft.Refs[i], &ft.Refs[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Member != b.Member {
			return !a.Member
		}
		return !a.Export && b.Export
	})

	// Definitions and scopes in document order (outer before inner).
	all := make([]*rawDef, 0, len(defs))
	for _, d := range defs {
		all = append(all, d)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].start != all[j].start {
			return all[i].start < all[j].start
		}
		if all[i].end != all[j].end {
			return all[i].end > all[j].end
		}
		return all[i].nameStart < all[j].nameStart
	})
	var stack []*rawDef
	for _, d := range all {
		for len(stack) > 0 && d.start >= stack[len(stack)-1].end {
			stack = stack[:len(stack)-1]
		}
		depth := len(stack)
		scope := d.receiver
		// The immediate parent (definition or scope) names the Scope; a
		// function directly inside a class-like parent is a method.
		var parent *rawDef
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		topLevel, local := true, false
		for _, s := range stack {
			if !s.scope {
				topLevel = false
				if !containerKinds[s.kind] {
					local = true
				}
			}
		}
		if scope == "" && parent != nil {
			scope = parent.name
		}
		sig := signatureLine(content, lineOf, d.nameRow, d.nameStart)
		if d.scope {
			ft.Scopes = append(ft.Scopes, Scope{Name: d.name, Signature: sig, Line: d.line, EndLine: d.endL, Depth: depth})
		} else {
			kind := d.kind
			if kind == "function" && parent != nil && isTypeLike(parent) {
				kind = "method"
			}
			def := Def{
				Name: d.name, Kind: kind, Scope: scope, Signature: sig,
				Line: d.line, EndLine: d.endL, NameLine: d.nameRow + 1,
				Depth: depth, TopLevel: topLevel, Local: local,
			}
			ft.Defs = append(ft.Defs, def)
			if !local {
				sym := def.Name
				if d.receiver != "" {
					sym = d.receiver + "." + def.Name
				} else if parent != nil && (!parent.scope || isTypeLike(parent)) {
					sym = parent.name + "." + def.Name
				}
				nesting := 0
				for _, s := range stack {
					if !s.scope {
						nesting++
					}
				}
				ft.Decls = append(ft.Decls, Decl{
					Path: ft.Path, Language: ft.Language, Symbol: sym, Kind: kind,
					StartLine: def.Line, EndLine: def.EndLine, Depth: nesting,
				})
			}
		}
		// Anything can enclose later items (a function encloses nested ones).
		stack = append(stack, d)
	}
	return nil
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
	p := strings.Trim(f[len(f)-1], "\"`")
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
