package repomap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"strconv"
	"sync"
)

// Go files are tagged from the syntax tree of the standard library's
// go/parser, which reads Go as the compiler does; a file it rejects (a
// syntax error, often a file being edited) goes to tree-sitter and the
// query in queries/go-tags.scm, whose error recovery keeps what parsed.
//
// A definition, for Go, is a name a declaration gives to something other
// code can use or a reader navigates to:
//
//   - a function (kind function) and a method (kind method, Scope the base
//     type name of its receiver, without pointer or type arguments);
//   - a declared type, at any level (kind struct or interface by its
//     underlying type literal, type for every other type and for aliases);
//     a type declared in a function body is Local;
//   - a method of a declared interface type (kind method, nested in the
//     type, which is its Scope);
//   - every name of a package-level const or var spec (constant,
//     variable), grouped or not, with the spec as its range.
//
// The blank identifier defines nothing. Struct fields, parameters, type
// parameters and what a function body declares other than types are not
// definitions: they are reached through their enclosing definition.
//
// A reference is a use of a name that another file may define:
//
//   - a type name: an identifier where the syntax requires a type (field,
//     parameter, result, receiver and variable types, composite literal
//     types, type assertions and type switch cases, type arguments of an
//     instantiation with several of them, constraints, the first argument
//     of new and make, the pointer type of a (*T)(x) conversion);
//   - the callee of a call written as a name: f(x) and T(x) (a call and a
//     conversion look the same without types, and both use the name);
//   - in F[A](x), F as a callee and A as a type: an instantiation of a
//     generic function with an explicit type argument, the usual reason to
//     index a name and call the result (a table of functions indexed by a
//     variable is the exception, and costs a reference to that variable);
//   - the member of a selector, x.f (Ref.Member: which type declares f is
//     unknown without type checking), except when x is the name of one of
//     the file's imports: then pkg.f is a qualified reference that the
//     ranker resolves to that package's definitions.
//
// A name used as a value (a variable, a constant read, a function passed
// along) is not a reference: without type checking it is most often a
// local variable, and counting it would tie the file to every definition
// of the same name. A type parameter is not a reference either, inside
// the declaration that declares it. A single index that is not called,
// a[i], stays an expression: it may be an index or a generic
// instantiation, and only type checking tells.

// goTags tags a Go file from go/parser's tree; false when go/parser
// rejects the file, or on a failure of the tagger's own: tree-sitter then
// parses it.
func goTags(rel string, content []byte, hash string) (ft *FileTags, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			slog.Warn("repomap: go/parser path failed; tree-sitter tags the file", "path", rel, "panic", r)
			ft, ok = nil, false
		}
	}()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", content, parser.SkipObjectResolution)
	if err != nil {
		return nil, false
	}
	tf := fset.File(f.Package)
	g := goTaggers.Get().(*goTagger)
	defer g.release()
	g.base, g.lines = tf.Base(), lineIndexOf(tf)
	g.file(f)
	ft = newFileTags(rel, "go", hash, content)
	ft.Refs = foldRefs(g.refs, nil)
	placeDefs(g.defs, content, g.lines, ft)
	return ft, true
}

// lineIndexOf is the line index of a file go/parser read: its scanner
// recorded every line start.
func lineIndexOf(tf *token.File) *lineIndex {
	ls := tf.Lines()
	starts := make([]uint32, len(ls))
	for i, s := range ls {
		starts[i] = uint32(s)
	}
	if len(starts) == 0 {
		starts = append(starts, 0)
	}
	return &lineIndex{starts: starts}
}

// goTagger collects the definitions and references of one Go file.
type goTagger struct {
	base    int // the token.File's base: Pos - base is the byte offset
	lines   *lineIndex
	imports map[string]bool // the names the file's imports bind
	// tparams are the type parameters of the declarations being walked.
	tparams []string
	defs    []*rawDef
	refs    []refHit
}

// goTaggers keeps the workers' taggers, whose buffers outlive a file.
var goTaggers = sync.Pool{New: func() any { return new(goTagger) }}

// release empties g and returns it to goTaggers.
func (g *goTagger) release() {
	clear(g.imports)
	clear(g.defs)
	*g = goTagger{imports: g.imports, tparams: g.tparams[:0], defs: g.defs[:0], refs: g.refs[:0]}
	goTaggers.Put(g)
}

func (g *goTagger) off(p token.Pos) uint32 { return uint32(int(p) - g.base) }

func (g *goTagger) file(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			g.funcDecl(d)
		case *ast.GenDecl:
			g.genDecl(d, true)
		}
	}
}

// def records a definition of name over the node n.
func (g *goTagger) def(name *ast.Ident, kind, receiver string, n ast.Node) {
	if name.Name == "_" {
		return
	}
	start, end := g.off(n.Pos()), g.off(n.End())
	nameStart := g.off(name.Pos())
	row := g.lines.line(start) - 1
	endRow := g.lines.line(end) - 1
	endL := endRow + 1
	if endRow > row && g.lines.starts[endRow] == end {
		endL = endRow // ends at the start of a line: the line before is its last
	}
	g.defs = append(g.defs, &rawDef{
		name: name.Name, kind: kind, receiver: receiver,
		start: start, end: end, line: row + 1, endL: endL,
		nameStart: nameStart, nameRow: g.lines.line(nameStart) - 1,
	})
}

// ref records a use of id; qual is the import that qualifies it, if any.
func (g *goTagger) ref(id *ast.Ident, kind, qual string) {
	g.refs = append(g.refs, refHit{start: g.off(id.Pos()), name: id.Name, member: kind == "member", qual: qual})
}

func (g *goTagger) funcDecl(d *ast.FuncDecl) {
	mark := len(g.tparams)
	if d.Recv == nil {
		g.def(d.Name, "function", "", d)
	} else {
		recv := ""
		if len(d.Recv.List) == 1 {
			recv = g.receiver(d.Recv.List[0].Type)
		}
		g.def(d.Name, "method", recv, d)
		g.fields(d.Recv)
	}
	g.funcType(d.Type)
	if d.Body != nil {
		g.stmt(d.Body)
	}
	g.tparams = g.tparams[:mark]
}

// receiver returns the base type name of a receiver type (T in *T[K, V])
// and declares its type parameters (K, V) for the rest of the method.
func (g *goTagger) receiver(t ast.Expr) string {
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.IndexExpr:
			g.declareTypeParam(x.Index)
			t = x.X
		case *ast.IndexListExpr:
			for _, i := range x.Indices {
				g.declareTypeParam(i)
			}
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

func (g *goTagger) declareTypeParam(e ast.Expr) {
	if id, ok := e.(*ast.Ident); ok {
		g.tparams = append(g.tparams, id.Name)
	}
}

// typeParams declares a type parameter list and visits its constraints.
func (g *goTagger) typeParams(l *ast.FieldList) {
	if l == nil {
		return
	}
	for _, f := range l.List {
		for _, n := range f.Names {
			g.tparams = append(g.tparams, n.Name)
		}
	}
	g.fields(l)
}

func (g *goTagger) isTypeParam(name string) bool {
	for i := len(g.tparams) - 1; i >= 0; i-- {
		if g.tparams[i] == name {
			return true
		}
	}
	return false
}

func (g *goTagger) funcType(t *ast.FuncType) {
	g.typeParams(t.TypeParams)
	g.fields(t.Params)
	if t.Results != nil {
		g.fields(t.Results)
	}
}

// fields visits the types of a field list; its names declare, they do
// not refer.
func (g *goTagger) fields(l *ast.FieldList) {
	if l == nil {
		return
	}
	for _, f := range l.List {
		g.typ(f.Type)
	}
}

// genDecl visits an import, const, var or type declaration; top is a
// declaration directly in the file.
func (g *goTagger) genDecl(d *ast.GenDecl, top bool) {
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.ImportSpec:
			g.importSpec(s)
		case *ast.TypeSpec:
			g.typeSpec(s)
		case *ast.ValueSpec:
			if top {
				kind := "variable"
				if d.Tok == token.CONST {
					kind = "constant"
				}
				for _, n := range s.Names {
					g.def(n, kind, "", s)
				}
			}
			if s.Type != nil {
				g.typ(s.Type)
			}
			g.exprs(s.Values)
		}
	}
}

// importSpec records the name an import binds: its explicit name, else
// the last element of its path without a /vN major version. Blank and dot
// imports bind no name.
func (g *goTagger) importSpec(s *ast.ImportSpec) {
	name := ""
	if s.Name != nil {
		if s.Name.Name != "_" && s.Name.Name != "." {
			name = s.Name.Name
		}
	} else if p, err := strconv.Unquote(s.Path.Value); err == nil {
		name = pathName(p)
	}
	if name == "" {
		return
	}
	if g.imports == nil {
		g.imports = map[string]bool{}
	}
	g.imports[name] = true
}

func (g *goTagger) typeSpec(s *ast.TypeSpec) {
	kind := "type"
	if !s.Assign.IsValid() {
		switch s.Type.(type) {
		case *ast.StructType:
			kind = "struct"
		case *ast.InterfaceType:
			kind = "interface"
		}
	}
	g.def(s.Name, kind, "", s)
	mark := len(g.tparams)
	g.typeParams(s.TypeParams)
	if it, ok := s.Type.(*ast.InterfaceType); ok {
		g.interfaceType(it, true)
	} else {
		g.typ(s.Type)
	}
	g.tparams = g.tparams[:mark]
}

// interfaceType visits an interface's elements; the methods of a
// declared interface are its definitions.
func (g *goTagger) interfaceType(t *ast.InterfaceType, declared bool) {
	for _, f := range t.Methods.List {
		ft, ok := f.Type.(*ast.FuncType)
		if !ok || len(f.Names) == 0 {
			g.typ(f.Type) // an embedded interface or a type set
			continue
		}
		if declared {
			g.def(f.Names[0], "method", "", methodElem{f.Names[0], ft})
		}
		g.funcType(ft)
	}
}

// methodElem is an interface method's span: its name through its
// signature.
type methodElem struct {
	name *ast.Ident
	typ  *ast.FuncType
}

func (m methodElem) Pos() token.Pos { return m.name.Pos() }
func (m methodElem) End() token.Pos { return m.typ.End() }

// typ visits an expression in a position where Go's syntax requires a
// type.
func (g *goTagger) typ(e ast.Expr) {
	switch e := e.(type) {
	case *ast.Ident:
		if e.Name != "_" && !g.isTypeParam(e.Name) {
			g.ref(e, "type", "")
		}
	case *ast.SelectorExpr:
		x, ok := e.X.(*ast.Ident)
		if !ok {
			g.expr(e) // not a type in valid Go
			return
		}
		if g.imports[x.Name] {
			g.ref(e.Sel, "type", x.Name)
		} else {
			g.ref(e.Sel, "type", "")
		}
	case *ast.StarExpr:
		g.typ(e.X)
	case *ast.ParenExpr:
		g.typ(e.X)
	case *ast.ArrayType:
		if _, ok := e.Len.(*ast.Ellipsis); !ok && e.Len != nil {
			g.expr(e.Len)
		}
		g.typ(e.Elt)
	case *ast.MapType:
		g.typ(e.Key)
		g.typ(e.Value)
	case *ast.ChanType:
		g.typ(e.Value)
	case *ast.FuncType:
		g.funcType(e)
	case *ast.StructType:
		g.fields(e.Fields)
	case *ast.InterfaceType:
		g.interfaceType(e, false)
	case *ast.IndexExpr:
		g.typ(e.X)
		g.typ(e.Index)
	case *ast.IndexListExpr:
		g.typ(e.X)
		for _, i := range e.Indices {
			g.typ(i)
		}
	case *ast.UnaryExpr: // ~T
		g.typ(e.X)
	case *ast.BinaryExpr: // A | B
		g.typ(e.X)
		g.typ(e.Y)
	case *ast.Ellipsis: // ...T
		if e.Elt != nil {
			g.typ(e.Elt)
		}
	default:
		g.expr(e)
	}
}

func (g *goTagger) exprs(es []ast.Expr) {
	for _, e := range es {
		g.expr(e)
	}
}

// expr visits an expression.
func (g *goTagger) expr(e ast.Expr) {
	switch e := e.(type) {
	case nil, *ast.Ident, *ast.BasicLit, *ast.BadExpr:
	case *ast.CompositeLit:
		if e.Type != nil {
			g.typ(e.Type)
		}
		g.exprs(e.Elts)
	case *ast.FuncLit:
		g.funcType(e.Type)
		g.stmt(e.Body)
	case *ast.ParenExpr:
		g.expr(e.X)
	case *ast.SelectorExpr:
		g.expr(e.X)
		if x, ok := e.X.(*ast.Ident); ok && g.imports[x.Name] {
			g.ref(e.Sel, "member", x.Name)
		} else {
			g.ref(e.Sel, "member", "")
		}
	case *ast.IndexExpr:
		g.expr(e.X)
		g.expr(e.Index)
	case *ast.IndexListExpr: // several indices: an instantiation
		g.typ(e)
	case *ast.SliceExpr:
		g.expr(e.X)
		g.expr(e.Low)
		g.expr(e.High)
		g.expr(e.Max)
	case *ast.TypeAssertExpr:
		g.expr(e.X)
		if e.Type != nil {
			g.typ(e.Type)
		}
	case *ast.CallExpr:
		g.call(e)
	case *ast.StarExpr:
		g.expr(e.X)
	case *ast.UnaryExpr:
		g.expr(e.X)
	case *ast.BinaryExpr:
		g.expr(e.X)
		g.expr(e.Y)
	case *ast.KeyValueExpr:
		g.expr(e.Key)
		g.expr(e.Value)
	default: // a type literal where an expression stands: []T(x), map[K]V{}
		g.typ(e)
	}
}

// call visits a call or conversion.
func (g *goTagger) call(c *ast.CallExpr) {
	args := c.Args
	switch f := c.Fun.(type) {
	case *ast.Ident:
		g.ref(f, "call", "")
		if (f.Name == "new" || f.Name == "make") && len(args) > 0 {
			g.typ(args[0])
			args = args[1:]
		}
	case *ast.IndexExpr: // F[A](x): see the definitions at the top
		g.callee(f.X)
		g.typ(f.Index)
	case *ast.IndexListExpr:
		g.callee(f.X)
		for _, i := range f.Indices {
			g.typ(i)
		}
	case *ast.ParenExpr:
		if s, ok := f.X.(*ast.StarExpr); ok {
			g.typ(s) // (*T)(x): calling through a pointer to a func is rare, the conversion common
		} else {
			g.expr(f)
		}
	default:
		g.expr(f)
	}
	g.exprs(args)
}

// callee visits the operand of a called instantiation or index.
func (g *goTagger) callee(x ast.Expr) {
	if id, ok := x.(*ast.Ident); ok {
		g.ref(id, "call", "")
		return
	}
	g.expr(x)
}

func (g *goTagger) stmts(l []ast.Stmt) {
	for _, s := range l {
		g.stmt(s)
	}
}

func (g *goTagger) stmt(s ast.Stmt) {
	switch s := s.(type) {
	case nil:
	case *ast.BlockStmt:
		g.stmts(s.List)
	case *ast.DeclStmt:
		if d, ok := s.Decl.(*ast.GenDecl); ok {
			g.genDecl(d, false)
		}
	case *ast.ExprStmt:
		g.expr(s.X)
	case *ast.SendStmt:
		g.expr(s.Chan)
		g.expr(s.Value)
	case *ast.IncDecStmt:
		g.expr(s.X)
	case *ast.AssignStmt:
		g.exprs(s.Lhs)
		g.exprs(s.Rhs)
	case *ast.GoStmt:
		g.expr(s.Call)
	case *ast.DeferStmt:
		g.expr(s.Call)
	case *ast.ReturnStmt:
		g.exprs(s.Results)
	case *ast.LabeledStmt:
		g.stmt(s.Stmt)
	case *ast.IfStmt:
		g.stmt(s.Init)
		g.expr(s.Cond)
		g.stmt(s.Body)
		g.stmt(s.Else)
	case *ast.CaseClause:
		g.exprs(s.List)
		g.stmts(s.Body)
	case *ast.SwitchStmt:
		g.stmt(s.Init)
		g.expr(s.Tag)
		g.stmt(s.Body)
	case *ast.TypeSwitchStmt:
		g.typeSwitch(s)
	case *ast.CommClause:
		g.stmt(s.Comm)
		g.stmts(s.Body)
	case *ast.SelectStmt:
		g.stmt(s.Body)
	case *ast.ForStmt:
		g.stmt(s.Init)
		g.expr(s.Cond)
		g.stmt(s.Post)
		g.stmt(s.Body)
	case *ast.RangeStmt:
		g.expr(s.Key)
		g.expr(s.Value)
		g.expr(s.X)
		g.stmt(s.Body)
	}
}

// typeSwitch visits a type switch: its cases list types (and nil, which
// is not one).
func (g *goTagger) typeSwitch(s *ast.TypeSwitchStmt) {
	g.stmt(s.Init)
	g.stmt(s.Assign) // x.(type) or v := x.(type): the assertion has no type
	for _, c := range s.Body.List {
		c := c.(*ast.CaseClause)
		for _, t := range c.List {
			if id, ok := t.(*ast.Ident); ok && id.Name == "nil" {
				continue
			}
			g.typ(t)
		}
		g.stmts(c.Body)
	}
}
