package repomap

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
)

// Go files the Go toolchain's parser accepts are tagged from its syntax
// tree, not from tree-sitter's: go/parser reads Go about nine times as fast
// (tree-sitter's parse of the Go files was a quarter of a cold build's CPU
// on the Go tree), and a file it accepts has exactly one reading. The tags
// query stays the definition: goSyntax yields the matches the query's
// patterns give on tree-sitter's tree of the same file, capture for
// capture, which means following tree-sitter-go's grammar where it reads
// Go differently from the spec (a type switch's `case nil` is a type
// name, `fns[i](x)` a generic conversion, `var ( ... )` specs are not
// top-level variables for the query). TestGoSyntaxAgreesWithQuery
// compares both on the Go tree. Files go/parser rejects, and every other
// language, go through tree-sitter, whose error recovery keeps what
// parsed.

// Capture indexes of goWalkerCaptures, the order goWalker.caps keeps the
// query's capture ids in.
const (
	gcName = iota
	gcDefFunction
	gcReceiver
	gcDefMethod
	gcDefStruct
	gcDefInterface
	gcDefType
	gcDefConstant
	gcDefVariable
	gcImport
	gcQualifier
	gcRefType
	gcRefMember
	gcRefCall
)

// Pattern indexes of queries/go-tags.scm, in the file's order.
const (
	gpFunction uint16 = iota
	gpMethod
	gpStruct
	gpInterface
	gpType
	gpAlias
	gpMethodElem
	gpConst
	gpVar
	gpImport
	gpQualifiedType
	gpQualifiedMember
	gpCall
	gpMember
	gpTypeIdentifier
)

// goSyntax walks one go/parser tree and hands each match to fn.
type goSyntax struct {
	file  *ast.File
	base  int // the token.File's base: Pos - base is the byte offset
	lines *lineIndex
	// lastRow is row's last answer.
	lastRow int
	caps    *[len(goWalkerCaptures)]uint32
	fn      func(pattern uint16, cs []capture)
	cs      []capture

	// While a * is folded into a conversion's type (conversionChain), the
	// selectors of folded start at foldStart.
	folding   bool
	foldStart token.Pos
	folded    []*ast.SelectorExpr

	// budget is the scoring steps left (spent); depth the nesting of
	// the walk. Both bound the work on pathological input (a thousand
	// nested calls or indexes): past them the file goes to tree-sitter,
	// whose operation limit bounds its parse.
	budget int
	depth  int

	// unsure is set on syntax tree-sitter-go reads by accident rather
	// than by its grammar's rules (paramsUnsure): the caller then tags
	// the file with tree-sitter.
	unsure bool
}

// maxDepth bounds the nesting of the walk over a syntax tree.
const maxDepth = 2000

// parseGoSyntax parses content with go/parser and prepares the walk over
// its tree that yields the query's matches for l; false when go/parser
// reports an error.
func parseGoSyntax(l *language, content []byte) (*goSyntax, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", content, parser.SkipObjectResolution)
	if err != nil {
		return nil, false
	}
	return &goSyntax{file: f, base: fset.File(f.Package).Base(), lines: newLineIndex(content), caps: &l.walker.caps,
		budget: 64*len(content) + 1<<16}, true
}

// enter counts one level of the walk's nesting; false past maxDepth.
// The caller leaves with g.depth--.
func (g *goSyntax) enter() bool {
	g.depth++
	if g.depth > maxDepth {
		g.unsure = true
		return false
	}
	return true
}

// spent counts one scoring step; true once the budget is gone.
func (g *goSyntax) spent() bool {
	g.budget--
	if g.budget < 0 {
		g.unsure = true
		return true
	}
	return false
}

// source is the file's matches as extractFrom takes them.
func (g *goSyntax) source() func(fn func(pattern uint16, cs []capture)) error {
	return func(fn func(pattern uint16, cs []capture)) error {
		g.fn = fn
		g.matches(g.file)
		return nil
	}
}

// matches hands g.fn the query's matches on f, in no particular order
// (extract does not depend on it).
func (g *goSyntax) matches(f *ast.File) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			g.funcDecl(d)
		case *ast.GenDecl:
			g.genDecl(d, true)
		}
	}
}

func (g *goSyntax) off(p token.Pos) uint32 { return uint32(int(p) - g.base) }

// at is the capture of query capture c over [start, end).
func (g *goSyntax) at(c int, start, end token.Pos) capture {
	s, e := g.off(start), g.off(end)
	sr := g.row(s)
	er := g.row(e)
	return capture{id: g.caps[c], start: s, end: e, startRow: uint32(sr), endRow: uint32(er), endColumn: e - g.lines.starts[er]}
}

// row is the 0-based line of byte offset off. The walk meets offsets
// mostly in order, so the last answer is the first guess.
func (g *goSyntax) row(off uint32) int {
	st := g.lines.starts
	r := g.lastRow
	for i := 0; i < 4; i++ {
		if off < st[r] {
			break
		}
		if r+1 == len(st) || off < st[r+1] {
			g.lastRow = r
			return r
		}
		r++
	}
	r = g.lines.line(off) - 1
	g.lastRow = r
	return r
}

func (g *goSyntax) node(c int, n ast.Node) capture { return g.at(c, n.Pos(), n.End()) }

func (g *goSyntax) emit(pattern uint16, cs ...capture) {
	g.cs = append(g.cs[:0], cs...)
	g.fn(pattern, g.cs)
}

func (g *goSyntax) funcDecl(d *ast.FuncDecl) {
	if d.Recv == nil {
		g.emit(gpFunction, g.node(gcDefFunction, d), g.node(gcName, d.Name))
	} else {
		g.emit(gpMethod, g.node(gcDefMethod, d), g.at(gcReceiver, d.Recv.Opening, d.Recv.Closing+1), g.node(gcName, d.Name))
		g.params(d.Recv)
	}
	g.funcType(d.Type)
	if d.Body != nil {
		g.stmt(d.Body)
	}
}

func (g *goSyntax) funcType(t *ast.FuncType) {
	if t.TypeParams != nil {
		g.fields(t.TypeParams)
	}
	g.params(t.Params)
	if t.Results != nil {
		g.params(t.Results)
	}
}

// params visits a parameter or result list.
func (g *goSyntax) params(l *ast.FieldList) {
	if paramsUnsure(l) {
		g.unsure = true
	}
	g.fields(l)
}

// paramsUnsure reports a parameter list tree-sitter-go may read otherwise
// than Go does: past nine names sharing a type, its GLR parser runs out
// of stack versions and reads the first names as types; and the
// keywords func and map can be names to it, so after an unnamed
// parameter of a plain type name (int, map[K]V), map[K]V reads as more
// names (int, map) of the array type [K]V, and func(T) as a name func of
// type (T).
func paramsUnsure(l *ast.FieldList) bool {
	for i, f := range l.List {
		if len(f.Names) > 9 {
			return true
		}
		if i == 0 || len(f.Names) > 0 || len(l.List[i-1].Names) > 0 {
			continue
		}
		if _, ok := l.List[i-1].Type.(*ast.Ident); !ok {
			continue
		}
		switch t := f.Type.(type) {
		case *ast.FuncType:
			if t.Results == nil && t.TypeParams == nil && len(t.Params.List) == 1 && len(t.Params.List[0].Names) == 0 {
				return true
			}
		case *ast.MapType:
			return true
		}
	}
	return false
}

// conversionChain returns the selectors on the way from e to its leftmost
// operand when that is a call read as a type conversion: tree-sitter-go
// reads *(*T)(x).f with the leading * in the conversion's type, as Go
// does not (both readings score the same), so those selectors start at
// the *.
func (g *goSyntax) conversionChain(e ast.Expr) ([]*ast.SelectorExpr, bool) {
	var sels []*ast.SelectorExpr
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			sels = append(sels, x)
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.SliceExpr:
			e = x.X
		case *ast.TypeAssertExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.CallExpr:
			if r, _ := g.callReading(x); r == conversionCall {
				return sels, true
			}
			e = x.Fun
		default:
			return nil, false
		}
	}
}

// fields visits the types of a parameter, result or struct field list; the
// names are identifiers, not references.
func (g *goSyntax) fields(l *ast.FieldList) {
	for _, f := range l.List {
		g.typ(f.Type)
	}
}

// genDecl visits a const, var, type or import declaration; top is a
// declaration directly in the file, where the query's const and var
// patterns apply.
func (g *goSyntax) genDecl(d *ast.GenDecl, top bool) {
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.ImportSpec:
			g.emit(gpImport, g.at(gcImport, s.Pos(), s.Path.End()))
		case *ast.TypeSpec:
			name := g.node(gcName, s.Name)
			if s.Assign.IsValid() {
				g.emit(gpAlias, g.at(gcDefType, s.Pos(), s.Type.End()), name)
			} else {
				def := g.at(gcDefType, s.Pos(), s.Type.End())
				switch s.Type.(type) {
				case *ast.StructType:
					g.emit(gpStruct, g.at(gcDefStruct, s.Pos(), s.Type.End()), name)
				case *ast.InterfaceType:
					g.emit(gpInterface, g.at(gcDefInterface, s.Pos(), s.Type.End()), name)
				}
				g.emit(gpType, def, name)
			}
			g.emit(gpTypeIdentifier, g.node(gcRefType, s.Name))
			if s.TypeParams != nil {
				g.fields(s.TypeParams)
			}
			g.typ(s.Type)
		case *ast.ValueSpec:
			if top && d.Tok == token.CONST {
				// The grammar puts the name field on the whole list of a
				// const spec: the cursor matches its first name only.
				g.emit(gpConst, g.node(gcDefConstant, s), g.node(gcName, s.Names[0]))
			}
			if top && d.Tok == token.VAR && !d.Lparen.IsValid() {
				// Specs of `var ( ... )` sit in a var_spec_list, which
				// the query's (var_declaration (var_spec)) does not reach.
				for _, n := range s.Names {
					g.emit(gpVar, g.node(gcDefVariable, s), g.node(gcName, n))
				}
			}
			if s.Type != nil {
				g.typ(s.Type)
			}
			g.exprs(s.Values)
		}
	}
}

// typ visits an expression in a position tree-sitter-go reads as a type.
func (g *goSyntax) typ(e ast.Expr) {
	if g.enter() {
		g.typIn(e)
	}
	g.depth--
}

func (g *goSyntax) typIn(e ast.Expr) {
	switch e := e.(type) {
	case *ast.Ident:
		g.emit(gpTypeIdentifier, g.node(gcRefType, e))
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			g.emit(gpQualifiedType, g.node(gcRefType, e), g.node(gcQualifier, x), g.node(gcName, e.Sel))
			g.emit(gpTypeIdentifier, g.node(gcRefType, e.Sel))
			return
		}
		g.expr(e) // not a type in valid Go
	case *ast.StarExpr:
		g.typ(e.X)
	case *ast.ParenExpr:
		g.typ(e.X)
	case *ast.ArrayType:
		if e.Len != nil {
			if _, ok := e.Len.(*ast.Ellipsis); !ok {
				g.expr(e.Len)
			}
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
		for _, f := range e.Methods.List {
			if len(f.Names) > 0 {
				if ft, ok := f.Type.(*ast.FuncType); ok {
					g.emit(gpMethodElem, g.at(gcDefMethod, f.Names[0].Pos(), ft.End()), g.node(gcName, f.Names[0]))
					g.funcType(ft)
					continue
				}
			}
			g.typ(f.Type)
		}
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
	case *ast.Ellipsis:
		if e.Elt != nil {
			g.typ(e.Elt)
		}
	default:
		g.expr(e)
	}
}

// Where Go's syntax leaves a reading open to tree-sitter-go (is a[b][c]
// an index of an index, or the instantiation of a generic type a[b]?),
// its GLR parser keeps both and picks the one whose nodes carry the
// larger sum of dynamic precedence: -1 for a type name read through
// _simple_type, for a type conversion and for a type instantiation; +1
// for a generic type and +2 for its type arguments. On a tie it keeps
// the type reading. exprScore and typeScore are those sums over a
// subtree read as an expression or as a type; cannot when it cannot be
// read so.
const cannot = -1 << 20

func possible(n int) bool { return n > cannot/2 }

// typeScore is e read as a _type.
func (g *goSyntax) typeScore(e ast.Expr) int {
	if g.spent() {
		return cannot
	}
	switch e := e.(type) {
	case *ast.Ident:
		return -1
	case *ast.SelectorExpr:
		if _, ok := e.X.(*ast.Ident); ok {
			return 0 // qualified_type
		}
	case *ast.StarExpr:
		return g.typeScore(e.X)
	case *ast.ParenExpr:
		return g.typeScore(e.X)
	case *ast.ArrayType:
		n := g.typeScore(e.Elt)
		if e.Len != nil {
			if _, ok := e.Len.(*ast.Ellipsis); !ok {
				n += g.exprScore(e.Len)
			}
		}
		return n
	case *ast.MapType:
		return g.typeScore(e.Key) + g.typeScore(e.Value)
	case *ast.ChanType:
		return g.typeScore(e.Value)
	case *ast.FuncType, *ast.StructType, *ast.InterfaceType:
		return 0 // types only: the same in every reading
	case *ast.IndexExpr:
		return g.genericScore(e.X, []ast.Expr{e.Index})
	case *ast.IndexListExpr:
		return g.genericScore(e.X, e.Indices)
	case *ast.UnaryExpr:
		if e.Op == token.TILDE {
			return g.typeScore(e.X)
		}
	}
	return cannot
}

// genericScore is x[args] read as a generic_type: a type name, possibly
// qualified, with type arguments.
func (g *goSyntax) genericScore(x ast.Expr, args []ast.Expr) int {
	switch x := x.(type) {
	case *ast.Ident:
	case *ast.SelectorExpr:
		if _, ok := x.X.(*ast.Ident); !ok {
			return cannot
		}
	default:
		return cannot
	}
	return 1 + g.typeArgsScore(args)
}

// typeArgsScore is args read as type_arguments, each a type_elem (types
// joined by |).
func (g *goSyntax) typeArgsScore(args []ast.Expr) int {
	n := 2
	for _, a := range args {
		n += g.elemScore(a)
	}
	return n
}

func (g *goSyntax) elemScore(e ast.Expr) int {
	if b, ok := e.(*ast.BinaryExpr); ok && b.Op == token.OR {
		return g.elemScore(b.X) + g.elemScore(b.Y)
	}
	return g.typeScore(e)
}

// exprScore is e read as an _expression.
func (g *goSyntax) exprScore(e ast.Expr) int {
	if g.spent() {
		return cannot
	}
	switch e := e.(type) {
	case nil, *ast.Ident, *ast.BasicLit, *ast.FuncLit, *ast.CompositeLit, *ast.BadExpr:
		return 0 // the same in every reading
	case *ast.SelectorExpr:
		return g.exprScore(e.X)
	case *ast.ParenExpr:
		return g.exprScore(e.X)
	case *ast.StarExpr:
		return g.exprScore(e.X)
	case *ast.UnaryExpr:
		return g.exprScore(e.X)
	case *ast.BinaryExpr:
		return g.exprScore(e.X) + g.exprScore(e.Y)
	case *ast.KeyValueExpr:
		return g.exprScore(e.Key) + g.exprScore(e.Value)
	case *ast.IndexExpr:
		index, inst := g.indexScores(e)
		return max(index, inst)
	case *ast.IndexListExpr:
		return g.instScore(e.X, e.Indices)
	case *ast.SliceExpr:
		return g.exprScore(e.X) + g.exprScore(e.Low) + g.exprScore(e.High) + g.exprScore(e.Max)
	case *ast.TypeAssertExpr:
		return g.exprScore(e.X)
	case *ast.CallExpr:
		_, n := g.callReading(e)
		return n
	}
	return cannot
}

// indexScores are a[i] read as an index_expression and as a
// type_instantiation_expression.
func (g *goSyntax) indexScores(e *ast.IndexExpr) (index, inst int) {
	index = g.exprScore(e.X) + g.exprScore(e.Index)
	if !possible(index) {
		index = cannot
	}
	return index, g.instScore(e.X, []ast.Expr{e.Index})
}

func (g *goSyntax) instScore(x ast.Expr, args []ast.Expr) int {
	n := -1 + g.typeScore(x)
	for _, a := range args {
		n += g.typeScore(a)
	}
	if !possible(n) {
		return cannot
	}
	return n
}

// Readings of a call.
const (
	plainCall      = iota
	typeArgsCall   // f[T](x): the callee with type_arguments
	conversionCall // T(x), a[b](x): a type_conversion_expression
	specialCall    // new(T), make(T, n): a type first
)

// callReading is how tree-sitter-go reads e, and that reading's score.
func (g *goSyntax) callReading(e *ast.CallExpr) (int, int) {
	args := 0
	for _, a := range e.Args {
		args += g.exprScore(a)
	}
	if f, ok := e.Fun.(*ast.Ident); ok && (f.Name == "new" || f.Name == "make") && len(e.Args) > 0 && possible(g.typeScore(e.Args[0])) {
		return specialCall, 0
	}
	best, reading := g.exprScore(e.Fun), plainCall
	var x ast.Expr
	var targs []ast.Expr
	switch f := e.Fun.(type) {
	case *ast.IndexExpr:
		x, targs = f.X, []ast.Expr{f.Index}
	case *ast.IndexListExpr:
		x, targs = f.X, f.Indices
	}
	if x != nil {
		if n := g.exprScore(x) + g.typeArgsScore(targs); possible(n) && n >= best {
			best, reading = n, typeArgsCall
		}
	}
	if len(e.Args) == 1 && !e.Ellipsis.IsValid() {
		if n := -1 + g.typeScore(e.Fun); possible(n) && n >= best {
			best, reading = n, conversionCall
		}
	}
	if !possible(best) {
		return plainCall, cannot
	}
	return reading, best + args
}

func (g *goSyntax) exprs(es []ast.Expr) {
	for _, e := range es {
		g.expr(e)
	}
}

// expr visits an expression in a position tree-sitter-go reads as one.
func (g *goSyntax) expr(e ast.Expr) {
	if g.enter() {
		g.exprIn(e)
	}
	g.depth--
}

func (g *goSyntax) exprIn(e ast.Expr) {
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
		if x, ok := e.X.(*ast.Ident); ok {
			g.emit(gpQualifiedMember, g.node(gcRefMember, e), g.node(gcQualifier, x), g.node(gcName, e.Sel))
		}
		member := g.node(gcRefMember, e)
		if g.folding && slices.Contains(g.folded, e) {
			member = g.at(gcRefMember, g.foldStart, e.End())
		}
		g.emit(gpMember, member, g.node(gcName, e.Sel))
	case *ast.IndexExpr:
		if index, inst := g.indexScores(e); inst >= index {
			g.typ(e.X)
			g.typ(e.Index)
		} else {
			g.expr(e.X)
			g.expr(e.Index)
		}
	case *ast.IndexListExpr:
		g.typ(e.X)
		for _, i := range e.Indices {
			g.typ(i)
		}
	case *ast.SliceExpr:
		g.expr(e.X)
		g.expr(e.Low)
		g.expr(e.High)
		g.expr(e.Max)
	case *ast.TypeAssertExpr:
		g.expr(e.X)
		if e.Type != nil {
			g.typ(e.Type)
		} else {
			g.unsure = true // x.(type) outside a type switch's header
		}
	case *ast.CallExpr:
		g.call(e)
	case *ast.StarExpr:
		if !g.folding {
			if sels, ok := g.conversionChain(e.X); ok {
				g.folding, g.foldStart, g.folded = true, e.Star, sels
				g.expr(e.X)
				g.folding, g.folded = false, nil
				return
			}
		}
		g.expr(e.X)
	case *ast.UnaryExpr:
		g.expr(e.X)
	case *ast.BinaryExpr:
		g.expr(e.X)
		g.expr(e.Y)
	case *ast.KeyValueExpr:
		g.expr(e.Key)
		g.expr(e.Value)
	case *ast.Ellipsis:
		if e.Elt != nil {
			g.typ(e.Elt)
		}
	default: // a type where an expression may stand
		g.typ(e)
	}
}

// call visits a call as tree-sitter-go reads it (callReading).
func (g *goSyntax) call(e *ast.CallExpr) {
	args := e.Args
	reading, _ := g.callReading(e)
	switch reading {
	case specialCall:
		g.emit(gpCall, g.node(gcRefCall, e), g.node(gcName, e.Fun))
		g.typ(args[0])
		args = args[1:]
	case conversionCall:
		g.typ(e.Fun)
	case typeArgsCall:
		var x ast.Expr
		var targs []ast.Expr
		switch f := e.Fun.(type) {
		case *ast.IndexExpr:
			x, targs = f.X, []ast.Expr{f.Index}
		case *ast.IndexListExpr:
			x, targs = f.X, f.Indices
		}
		if id, ok := x.(*ast.Ident); ok {
			g.emit(gpCall, g.node(gcRefCall, e), g.node(gcName, id))
		}
		g.expr(x)
		for _, t := range targs {
			g.typ(t)
		}
	default:
		if id, ok := e.Fun.(*ast.Ident); ok {
			g.emit(gpCall, g.node(gcRefCall, e), g.node(gcName, id))
		}
		g.expr(e.Fun)
	}
	g.exprs(args)
}

func (g *goSyntax) stmts(l []ast.Stmt) {
	for _, s := range l {
		g.stmt(s)
	}
}

func (g *goSyntax) stmt(s ast.Stmt) {
	if g.enter() {
		g.stmtIn(s)
	}
	g.depth--
}

func (g *goSyntax) stmtIn(s ast.Stmt) {
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
		g.stmt(s.Init)
		switch a := s.Assign.(type) { // x.(type) or v := x.(type)
		case *ast.ExprStmt:
			g.expr(a.X.(*ast.TypeAssertExpr).X)
		case *ast.AssignStmt:
			g.exprs(a.Lhs)
			g.expr(a.Rhs[0].(*ast.TypeAssertExpr).X)
		}
		for _, c := range s.Body.List {
			c := c.(*ast.CaseClause)
			for _, t := range c.List {
				g.typ(t)
			}
			g.stmts(c.Body)
		}
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
