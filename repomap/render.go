package repomap

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/tokencount"
)

// RenderStats describes one Render.
type RenderStats struct {
	Budget     int // tokens asked for
	Tokens     int // tokens of the returned text (tokencount.Count)
	Files      int // files shown
	Defs       int // ranked definitions shown (context lines not counted)
	Candidates int // definitions that could have been shown
	Rank       time.Duration
	Duration   time.Duration // total, ranking included
}

// Render returns the repository map for focus fitted to tokens: the
// top-ranked definitions grouped by file, each file's lines in source order
// with their line numbers, indented by nesting, with the enclosing class,
// impl or namespace line shown for members. The text never exceeds tokens
// (counted with tokencount.Count) and, when there is enough material, is
// within 15% under it (or one file's name and line, on a small budget).
// The output is a pure function of the map's content, focus and tokens.
// With no focus the map is an overview: lines are shortened and a type's
// methods listed by name, those next to each other on one line
// ("120:   get(…), 131: put(…), 170: len()").
//
// Example:
//
//	repomap/map.go:
//	71: type Map struct {
//	108: func (m *Map) Build(ctx context.Context) (BuildStats, error) {
//	pkg/models.py:
//	10: class User(Base):
//	25:   def save(self):
func (m *Map) Render(focus Focus, tokens int) (string, RenderStats) {
	start := time.Now()
	g, r := m.rank(focus)
	st := RenderStats{Budget: tokens, Candidates: r.n, Rank: time.Since(start)}
	if tokens <= 0 || r.n == 0 {
		st.Duration = time.Since(start)
		return "", st
	}
	unfocused := len(focus.Files)+len(focus.Related)+len(focus.Identifiers)+len(focus.Mentioned) == 0
	rd := &renderer{m: m, g: g, r: r, compact: unfocused}
	if unfocused {
		rd.order = rd.overview(rd.fit(rd.r.get, tokens))
	}

	// Estimate how many of the ranked definitions fit by summing per-line
	// token counts (cached), check with one exact count of the rendered
	// text, and correct the estimate's budget by the measured error. The
	// sum of line counts is within a few tokens of the exact count, so this
	// settles in one or two exact counts; a binary search is the fallback.
	var best string
	bestN, bestK, bestF := 0, 0, 0
	tried := map[int]bool{}
	try := func(k int) (int, bool) {
		tried[k] = true
		s, f := rd.render(k)
		n := tokencount.Count(s)
		if n <= tokens && k >= bestK {
			best, bestN, bestK, bestF = s, n, k, f
		}
		return n, n <= tokens
	}
	adj := tokens
	lo, hi := 0, r.n+1 // lo fits, hi does not
	for i := 0; i < 6; i++ {
		k := rd.estimate(adj)
		if k <= lo || k >= hi || tried[k] {
			break
		}
		n, ok := try(k)
		if ok {
			lo = k
			if k == r.n || float64(n) >= 0.95*float64(tokens) {
				break
			}
		} else {
			hi = k
		}
		adj += tokens - n
		if adj <= 0 {
			break
		}
	}
	if lo < r.n && float64(bestN) < 0.9*float64(tokens) {
		// Find an upper bound by doubling before bisecting: without one, hi
		// is every definition of the repository and each probe would render
		// all of them (a tiny budget on a large tree took seconds).
		for k := max(1, 2*lo); hi > r.n && k < hi; k *= 2 {
			if _, ok := try(k); ok {
				lo = k
			} else {
				hi = k
			}
		}
		for lo+1 < hi {
			mid := (lo + hi) / 2
			if _, ok := try(mid); ok {
				lo = mid
			} else {
				hi = mid
			}
		}
	}
	st.Tokens = bestN
	st.Defs = bestK
	st.Files = bestF
	st.Duration = time.Since(start)
	return best, st
}

type renderer struct {
	m *Map
	g *graph
	r *ranking
	// compact shortens signature lines (compactSignature): the unfocused
	// map is an overview, where more definitions beat longer lines.
	compact bool
	// order is an overview's first definitions in the order the renderer
	// takes them (overview).
	order []rankedDef
}

// defItem is the rendered line of definition d of file t.
func (rd *renderer) defItem(t *FileTags, d *Def) item {
	it := item{line: int(d.NameLine), depth: int(d.Depth), sig: d.Signature()}
	if rd.compact && d.Depth > 0 {
		switch d.Kind() {
		case "function", "method", "constructor":
			it.member = memberLabel(d.Signature(), d.Name())
			return it
		}
	}
	if rd.compact {
		it.sig = overviewSig(t, d, d.Kind(), it.sig)
		if len(it.sig) > longParams || openParams(it.sig) {
			switch d.Kind() {
			case "function", "method", "constructor":
				it.sig = elideParams(it.sig, d.Name())
			}
		}
	}
	return it
}

// longParams is the length past which an overview's function line drops
// its parameters (elideParams).
const longParams = 60

// openParams reports a line whose last parenthesis opened is not closed
// on it: a parameter list continued on the next lines (C's prototypes).
func openParams(sig string) bool {
	depth := 0
	for i := 0; i < len(sig); i++ {
		switch sig[i] {
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	return depth > 0
}

// elideParams replaces the parameter list that follows name in a function
// line with "…" ("int __wake_up(struct wait_queue_head *wq_head, unsigned
// int mode," becomes "int __wake_up(…)"): an overview names what a package
// offers, and a long parameter list (continued on the next lines in C)
// costs the tokens of two or three more names. What follows the list (a
// return type) stays, and so do type parameters between the name and the
// list ("custom<…>(…)"). A line without "name(" or "name<…>(" is left as
// it is.
func elideParams(sig, name string) string {
	i := paramsAt(sig, name, true)
	if i < 0 {
		return sig
	}
	depth := 0
	for k := i; k < len(sig); k++ {
		switch sig[k] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				if k == i+1 {
					return sig // no parameters
				}
				return sig[:i] + "(…)" + sig[k+1:]
			}
		}
	}
	return sig[:i] + "(…)"
}

// paramsAt returns the index of the "(" that opens name's parameter list
// in sig: the first occurrence of name as a whole word followed by "(",
// or, with typeParams, by a <...> type parameter list and "(" (Rust's
// "get<Q: ?Sized>("). -1 when there is none.
func paramsAt(sig, name string, typeParams bool) int {
	for i := 0; ; {
		j := strings.Index(sig[i:], name)
		if j < 0 {
			return -1
		}
		i += j + len(name)
		if i-len(name) > 0 && isNameByte(sig[i-len(name)-1]) {
			continue
		}
		k := i
		if typeParams && k < len(sig) && sig[k] == '<' {
			depth := 0
			for ; k < len(sig); k++ {
				if sig[k] == '<' {
					depth++
				} else if sig[k] == '>' {
					if depth--; depth == 0 {
						k++
						break
					}
				}
			}
		}
		if k < len(sig) && sig[k] == '(' {
			return k
		}
	}
}

// memberLabel is a method's name as an overview lists it: "name()" when
// its line shows an empty parameter list (or only Python's self or cls),
// "name(…)" when it shows parameters, the bare name otherwise (a Ruby
// method without parentheses).
func memberLabel(sig, name string) string {
	k := paramsAt(sig, name, true)
	if k < 0 {
		return name
	}
	params, _, _ := strings.Cut(sig[k+1:], ")")
	switch strings.TrimSpace(params) {
	case "", "self", "cls", "&self", "&mut self", "mut self":
		return name + "()"
	}
	return name + "(…)"
}

// maxMemberLine is the width past which an overview's line of methods
// continues on the next line.
const maxMemberLine = 100

// contextItem is contextOf, shortened like defItem.
func (rd *renderer) contextItem(t *FileTags, d *Def) (item, bool) {
	c, ok := contextOf(t, d)
	if ok && rd.compact {
		// The line of the type holding d: API when d is (a member is API
		// only in a type that is).
		c.sig = overviewSig(t, d, "", c.sig)
	}
	return c, ok
}

// overviewSig is sig, the line of definition d (of kind kind) or of
// what holds it, as an overview shows it: compacted, and without the word
// that makes it public when d is API.
func overviewSig(t *FileTags, d *Def, kind, sig string) string {
	sig = compactSignature(t.Language, kind, sig)
	if isAPI(t.Language, d) {
		sig = cutVisibility(t.Language, sig)
	}
	return sig
}

// longLine is the length past which compactSignature elides the type
// parameters of a line that reuses them (reusesTypeParams).
const longLine = 80

// reusesTypeParams reports a kind of definition whose line names its type
// parameters again: a function's parameters and result (map<T, R>(project:
// (value: T) => R)), a type alias's right side.
func reusesTypeParams(kind string) bool {
	return kind == "function" || kind == "method" || kind == "constructor" || kind == "type"
}

// compactSignature shortens a signature line for an overview: a function's
// one-line body goes (the map shows signatures, not bodies), so do a
// class's heritage (cutHeritage) and a closing "{" (cutOpeningBrace), and in a
// language with angle-bracket generics each outermost <...> type parameter
// or argument list of a class's line (or a long line, reusesTypeParams) becomes <…>
// unless it is as short (zod's class lines were ~50 tokens each, mostly
// type arguments of the base class; `Map<K,V>` stays, `EnumMap<K extends
// Enum<K>,V>` is `EnumMap<…>`: issue 29 round 8).
func compactSignature(lang, kind, sig string) string {
	if lang == "python" {
		sig = cutPythonComment(sig)
	}
	switch kind {
	case "function", "method", "constructor":
		sig = cutOneLineBody(sig)
	case "class", "interface":
		sig = cutHeritage(lang, sig)
	}
	switch lang {
	case "ruby":
		sig = cutRubyTail(sig)
	case "c", "cpp":
		sig = cutCAnnotations(sig)
	}
	switch lang {
	case "typescript", "tsx", "javascript", "java", "csharp", "rust", "cpp":
		if len(sig) > longLine || !reusesTypeParams(kind) {
			sig = elideTypeArguments(sig)
		}
	}
	return cutOpeningBrace(sig)
}

// cutVisibility drops the words that make an API definition's line public
// (Java's and C#'s `public`, Rust's `pub`, TypeScript's `export`,
// `default` and `declare`) from the start of its overview line: an
// overview is of the API, so the word says nothing there, and on a map of
// class lines it is a token in six ("public class ArrayList<…>"). The
// lines of what is not API keep theirs.
func cutVisibility(lang, sig string) string {
	var words []string
	switch lang {
	case "java", "csharp":
		words = []string{"public "}
	case "rust":
		words = []string{"pub "}
	case "typescript", "tsx", "javascript":
		words = []string{"export ", "default ", "declare "}
	}
	for _, w := range words {
		if t := strings.TrimPrefix(sig, w); t != "" {
			sig = t
		}
	}
	return sig
}

// cutOpeningBrace drops the "{" that ends a line (a body or an
// initializer opens there: "public class Arrays {", "struct rq {",
// "… ext4_file_operations = {"), and an "=" before it: an overview shows
// declarations, and on a map of class lines the brace is one token in
// seven.
func cutOpeningBrace(sig string) string {
	t := strings.TrimRight(sig, " \t")
	if !strings.HasSuffix(t, "{") {
		return sig
	}
	t = strings.TrimRight(t[:len(t)-1], " \t")
	if u := strings.TrimRight(strings.TrimSuffix(t, "="), " \t"); u != t && u != "" && !strings.HasSuffix(u, "=") {
		t = u
	}
	if t == "" {
		return sig
	}
	return t
}

// cAnnotations are the words of a C declaration that tell the compiler
// or the kernel's tooling how to build or check a function, not what it
// takes or returns: an overview leaves them out ("asmlinkage __visible
// void __sched notrace preempt_schedule(…)" is "void preempt_schedule(…)").
var cAnnotations = map[string]bool{
	"extern": true, "asmlinkage": true, "notrace": true, "noinline": true, "__visible": true,
	"__sched": true, "__weak": true, "__init": true, "__exit": true, "__cold": true,
	"__always_inline": true, "__must_check": true, "__noreturn": true, "__attribute_const__": true,
}

// cutCAnnotations drops the cAnnotations before a declaration's name.
func cutCAnnotations(sig string) string {
	head, rest := sig, ""
	if i := strings.IndexAny(sig, "(=;{"); i >= 0 {
		head, rest = sig[:i], sig[i:]
	}
	words := strings.Fields(head)
	kept := words[:0]
	for _, w := range words {
		if !cAnnotations[w] {
			kept = append(kept, w)
		}
	}
	if len(kept) == len(words) || len(kept) == 0 {
		return sig
	}
	lead := sig[:len(sig)-len(strings.TrimLeft(sig, " \t"))]
	return lead + strings.Join(kept, " ") + rest
}

// cutRubyTail shortens a Ruby line for an overview: a trailing comment
// goes ("class Net::HTTPSuccess < Net::HTTPResponse   # 2xx"), so does a
// one-line body ("class ProtocolError < StandardError; end") and a class's
// superclass: the overview names the class, as cutHeritage does for the
// other languages.
func cutRubyTail(sig string) string {
	if i := strings.Index(sig, " #"); i > 0 && !strings.HasPrefix(sig[i+2:], "{") {
		sig = strings.TrimRight(sig[:i], " \t")
	}
	sig = strings.TrimSuffix(sig, "; end")
	if t := strings.TrimLeft(sig, " \t"); strings.HasPrefix(t, "class ") && !strings.HasPrefix(t, "class <<") {
		if i := strings.Index(sig, " < "); i > 0 {
			sig = strings.TrimRight(sig[:i], " \t")
		}
	}
	return sig
}

// cutPythonComment drops a Python line's trailing comment ("class
// Task(futures._PyFuture):  # Inherit Python Task implementation"): a "#"
// after a space, outside a string.
func cutPythonComment(sig string) string {
	var quote byte
	for i := 0; i < len(sig); i++ {
		switch c := sig[i]; {
		case quote != 0 && c == '\\':
			i++
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && i > 0 && (sig[i-1] == ' ' || sig[i-1] == '\t'):
			if t := strings.TrimRight(sig[:i], " \t"); t != "" {
				return t
			}
			return sig
		}
	}
	return sig
}

// cutHeritage removes what a class or interface line says it extends or
// implements (TypeScript/JavaScript "extends"/"implements" clauses, a
// Python class's bases): the overview names the class, its members say what
// it offers.
func cutHeritage(lang, sig string) string {
	switch lang {
	case "typescript", "tsx", "javascript", "java", "csharp":
		// Only a clause outside the type parameters ends the name: Java's
		// "EnumSet<E extends Enum<E>> extends AbstractSet<E>" keeps its
		// bound.
		depth := 0
		for i := 0; i < len(sig); i++ {
			switch c := sig[i]; {
			case c == '<' || c == '(' || c == '[':
				depth++
			case (c == '>' && (i == 0 || sig[i-1] != '=')) || c == ')' || c == ']':
				depth--
			case depth == 0 && c == ' ' && heritageAt(lang, sig[i:]):
				return sig[:i]
			}
		}
	case "python":
		if i := strings.IndexByte(sig, '('); i > 0 && strings.HasPrefix(sig, "class ") && strings.HasSuffix(sig, ":") {
			return sig[:i] + ":"
		}
	}
	return sig
}

// heritageAt reports whether s starts a class line's extends or implements
// clause (C#'s " : " base list).
func heritageAt(lang, s string) bool {
	return strings.HasPrefix(s, " extends ") || strings.HasPrefix(s, " implements ") ||
		lang == "csharp" && strings.HasPrefix(s, " : ")
}

// cutOneLineBody removes a body that opens and closes on the signature's
// line ("func (p P) HTTP1() bool { return p.bits&1 != 0 }"): the line ends
// with "}" whose matching "{" is outside any parentheses.
func cutOneLineBody(sig string) string {
	if !strings.HasSuffix(sig, "}") {
		return sig
	}
	depth := 0
	for i := len(sig) - 1; i >= 0; i-- {
		switch sig[i] {
		case '}':
			depth++
		case '{':
			depth--
			if depth == 0 {
				head := strings.TrimRight(sig[:i], " \t")
				if head == "" || strings.Count(head, "(") != strings.Count(head, ")") {
					return sig
				}
				return head
			}
		}
	}
	return sig
}

// elideTypeArguments replaces the content of each outermost <...> that
// follows a name with "…" ("=>" is no closing bracket). A list still open
// at the end of the line (continued on the next line, or cut at
// maxSignature) is closed; a ">" with no "<" leaves the line unchanged.
func elideTypeArguments(sig string) string {
	var b strings.Builder
	depth, open := 0, 0
	for i := 0; i < len(sig); i++ {
		c := sig[i]
		switch {
		case c == '<' && (depth > 0 || i > 0 && isNameByte(sig[i-1])):
			if depth == 0 {
				open = i
			}
			depth++
			continue
		case c == '>' && sig[i-1] != '=':
			if depth == 0 {
				return sig
			}
			depth--
			if depth == 0 {
				if inner := sig[open+1 : i]; plainTypeParams(inner) {
					b.WriteString(sig[open : i+1])
				} else {
					b.WriteString("<…>")
				}
			}
			continue
		}
		if depth == 0 {
			b.WriteByte(c)
		}
	}
	if depth > 0 {
		b.WriteString("<…>")
	}
	return b.String()
}

// plainTypeParams reports a list of one- or two-letter type parameters or
// Rust lifetimes ("T", "K, V", "'a"): as short as the <…> that would
// replace it, and it says more.
func plainTypeParams(s string) bool {
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimPrefix(strings.TrimSpace(p), "'")
		if p == "" || len(p) > 2 || !isNameByte(p[0]) || len(p) == 2 && !isNameByte(p[1]) {
			return false
		}
	}
	return true
}

func isNameByte(c byte) bool {
	return c == '_' || c == '$' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

type lineKey struct {
	file int32
	line int
}

// item is one rendered line.
type item struct {
	line  int
	depth int
	sig   string
	// member is set for a method in an overview (renderer.compact): its
	// name and whether it takes parameters, "get(…)", "len()", written
	// after the member before it on the same line (writeItems).
	member string
}

// context returns the line of the definition or scope that encloses d as
// its Scope, if it lives in the same file.
func contextOf(t *FileTags, d *Def) (item, bool) {
	if d.Scope() == "" || d.Depth == 0 {
		return item{}, false
	}
	for i := range t.Defs {
		c := &t.Defs[i]
		if c.Name() == d.Scope() && c.Depth == d.Depth-1 && c.Line <= d.Line && d.EndLine <= c.EndLine {
			return item{line: int(c.NameLine), depth: int(c.Depth), sig: c.Signature()}, true
		}
	}
	for _, s := range t.Scopes {
		if s.Name == d.Scope() && s.Depth == int(d.Depth)-1 && s.Line <= int(d.Line) && int(d.EndLine) <= s.EndLine {
			return item{line: s.Line, depth: s.Depth, sig: s.Signature}, true
		}
	}
	return item{}, false
}

// writeItems writes a file's items in line order, each on its line but
// an overview's methods: a run of them at one depth shares a line
// ("331:   capacity(), 359: keys(), 566: len()") up to maxMemberLine.
func writeItems(b *strings.Builder, its []item) {
	width := 0 // of the line of methods being written; 0: none is open
	for i, it := range its {
		if it.member == "" {
			if width > 0 {
				b.WriteByte('\n')
				width = 0
			}
			b.WriteString(formatLine(it))
			continue
		}
		if width > 0 && its[i-1].depth == it.depth && width < maxMemberLine {
			s := memberItem(it)
			b.WriteString(s)
			width += len(s)
			continue
		}
		if width > 0 {
			b.WriteByte('\n')
		}
		s := strings.TrimSuffix(formatLine(item{line: it.line, depth: it.depth, sig: it.member}), "\n")
		b.WriteString(s)
		width = len(s)
	}
	if width > 0 {
		b.WriteByte('\n')
	}
}

// memberItem is a method after the first on a line of methods.
func memberItem(it item) string {
	return ", " + strconv.Itoa(it.line) + ": " + it.member
}

// formatLine is an item's line: its number, unpadded (padding to line
// the numbers up is a token of its own on most lines), the depth's indent
// and the signature. A line starts with its number and a colon; a
// file's name line never does.
func formatLine(it item) string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(it.line))
	b.WriteString(": ")
	for i := 0; i < it.depth; i++ {
		b.WriteString("  ")
	}
	b.WriteString(it.sig)
	b.WriteByte('\n')
	return b.String()
}

func (rd *renderer) tokens(s string) int {
	rd.m.mu.RLock()
	n, ok := rd.m.tokenCache[s]
	rd.m.mu.RUnlock()
	if ok {
		return n
	}
	n = tokencount.Count(s)
	rd.m.mu.Lock()
	if len(rd.m.tokenCache) > 200000 {
		rd.m.tokenCache = map[string]int{}
	}
	rd.m.tokenCache[s] = n
	rd.m.mu.Unlock()
	return n
}

// estimate returns the largest prefix of the definitions in the order
// the renderer takes them whose summed line token counts fit in budget.
func (rd *renderer) estimate(budget int) int {
	return rd.fit(rd.ranked, budget)
}

// fit is estimate for the definitions in the order of ranked.
func (rd *renderer) fit(ranked func(int) []rankedDef, budget int) int {
	files := map[int32]bool{}
	lines := map[lineKey]bool{}
	total := 0
	defs := ranked(rankedPrefix)
	for k := 0; k < rd.r.n; k++ {
		if k == len(defs) {
			defs = ranked(rd.r.n)
		}
		c := rd.lineCostOf(defs[k])
		cost := c.given(files, lines)
		if total+cost > budget {
			return k
		}
		total += cost
		c.take(files, lines)
	}
	return rd.r.n
}

// lineCost is what a definition adds to a rendered map, in tokens: its
// file's name line (when no line of the file is shown yet), the
// enclosing class line (when not shown yet), and its own line or, for a
// method in an overview, its entry on a line of methods (most share a
// line).
type lineCost struct {
	file             int32
	header           int
	ctx, own         lineKey
	hasCtx           bool
	ctxCost, ownCost int
}

func (rd *renderer) lineCostOf(x rankedDef) lineCost {
	t := rd.g.tags[x.file]
	d := &t.Defs[x.def]
	c := lineCost{file: x.file, header: rd.tokens(t.Path + ":\n"), own: lineKey{x.file, int(d.NameLine)}}
	if it, ok := rd.contextItem(t, d); ok {
		c.ctx, c.hasCtx, c.ctxCost = lineKey{x.file, it.line}, true, rd.tokens(formatLine(it))
	}
	if it := rd.defItem(t, d); it.member != "" {
		c.ownCost = rd.tokens(memberItem(it))
	} else {
		c.ownCost = rd.tokens(formatLine(it))
	}
	return c
}

// given returns the tokens c adds to a map that shows files and lines.
func (c *lineCost) given(files map[int32]bool, lines map[lineKey]bool) int {
	n := 0
	if !files[c.file] {
		n += c.header
	}
	if c.hasCtx && !lines[c.ctx] {
		n += c.ctxCost
	}
	if !lines[c.own] {
		n += c.ownCost
	}
	return n
}

// take marks c's file and lines shown.
func (c *lineCost) take(files map[int32]bool, lines map[lineKey]bool) {
	files[c.file] = true
	if c.hasCtx {
		lines[c.ctx] = true
	}
	lines[c.own] = true
}

// fileGroup is one file's part of a rendered map: its items by line.
type fileGroup struct {
	file  int32
	order int
	items map[int]item
}

// render formats the first k ranked definitions.
func (rd *renderer) render(k int) (string, int) {
	defs := rd.ranked(k)
	k = len(defs)
	groups := map[int32]*fileGroup{}
	var order []*fileGroup
	for i := 0; i < k; i++ {
		x := defs[i]
		gr := groups[x.file]
		if gr == nil {
			gr = &fileGroup{file: x.file, order: len(order), items: map[int]item{}}
			groups[x.file] = gr
			order = append(order, gr)
		}
		t := rd.g.tags[x.file]
		d := &t.Defs[x.def]
		if c, ok := rd.contextItem(t, d); ok {
			if _, dup := gr.items[c.line]; !dup {
				gr.items[c.line] = c
			}
		}
		gr.items[int(d.NameLine)] = rd.defItem(t, d)
	}
	if rd.compact {
		rd.dropEmptyReopenings(defs, groups)
	}
	var b strings.Builder
	files := 0
	for _, gr := range order {
		if len(gr.items) == 0 {
			continue
		}
		files++
		b.WriteString(rd.g.tags[gr.file].Path)
		b.WriteString(":\n")
		its := make([]item, 0, len(gr.items))
		for _, it := range gr.items {
			its = append(its, it)
		}
		sort.Slice(its, func(i, j int) bool { return its[i].line < its[j].line })
		writeItems(&b, its)
	}
	return b.String(), files
}

// dropEmptyReopenings leaves out of an overview a Ruby class or module
// that shows nothing inside it when a definition of the same name ranked
// above it is shown: Ruby reopens a namespace in every file that adds to
// it (`module URI` in each of uri's 14 files, version.rb's holding only a
// constant), and its first line is the class; the others say nothing
// more. defs are in rank order, groups hold their files' items.
func (rd *renderer) dropEmptyReopenings(defs []rankedDef, groups map[int32]*fileGroup) {
	shown := map[string]bool{}
	for _, x := range defs {
		t := rd.g.tags[x.file]
		d := &t.Defs[x.def]
		if t.Language != "ruby" || d.Kind() != "class" && d.Kind() != "module" {
			continue
		}
		key := d.Scope() + "::" + d.Name()
		its := groups[x.file].items
		if shown[key] && !holdsItem(its, d) {
			delete(its, int(d.NameLine))
			continue
		}
		shown[key] = true
	}
}

// holdsItem reports whether its has an item inside d (a line of its body,
// deeper than d).
func holdsItem(its map[int]item, d *Def) bool {
	for line, it := range its {
		if line > int(d.NameLine) && line <= int(d.EndLine) && it.depth > int(d.Depth) {
			return true
		}
	}
	return false
}
