package contextengine

import (
	"fmt"
	"math"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/cairn-dev/cairn/codeindex"
)

// The callee pass. After the budget is allocated, what is left of it (and
// the room of weak search hits) goes to the whole bodies of the functions
// and methods the selection and its enclosing symbol call, when they are
// not in the prompt yet: the definitions source shows a function's head,
// the model answering "what does this do" needs the bodies it runs.
//
// Calls are resolved through the code index, not by name alone: x.m() is
// the method m of x's type when the type can be read from the code around
// the selection (a Go receiver or parameter, a composite literal or a
// constructor's result, a struct field; self/this; a TypeScript or Python
// annotation; a Python instantiation), pkg.F() is F of the package the
// file imports as pkg, a bare f() is the f of this file or package (or the
// one the file imports by that name). A receiver typed by an interface is
// not resolved (the dynamic type decides); one whose type cannot be read
// reaches only a method of that name in this package (at most two: a guess).

// callSite is one call found in the selection or its enclosing symbol.
type callSite struct {
	name  string
	recv  string // "" for a bare call, "?" for an expression we cannot name, else "a" or "a.b"
	line  int    // 1-based line in the file
	inSel bool
}

var (
	callRE    = regexp.MustCompile(`([A-Za-z_$][\w$]*(?:\s*\??\.\s*[A-Za-z_$][\w$]*)*)\s*\(`)
	callNoise = map[string]bool{}
	// indirectCallRE is a call through the comma operator: (0, a.f)(.
	indirectCallRE = regexp.MustCompile(`\(\s*0\s*,\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)\s*\)\s*\(`)
	defPrefix      = regexp.MustCompile(`(?:^|[^\w$])(?:func|def|function|fn|class)\s*\*?$`)
	methodLine     = regexp.MustCompile(`^\s*(?:(?:public|private|protected|static|async|override|readonly|get|set)\s+)*([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\s*\(.*\)\s*(?::\s*[^{]+)?\{\s*$`)
)

func init() {
	for _, w := range strings.Fields(`if for while switch catch return func function def fn new super typeof sizeof
		await yield print println len cap make append copy delete panic recover new isinstance super
		range go defer not and or in is lambda with assert elif except`) {
		callNoise[w] = true // a keyword or builtin before "(" is not a call we can resolve
	}
}

// chainSpaces turns a call chain as written ("a. b?.c") into its dotted
// names ("a.b.c"). (Made once: a Replacer builds its tables on first use.)
var chainSpaces = strings.NewReplacer(" ", "", "\t", "", "?.", ".")

// findCalls lists the calls of lines [from, to] of the file, skipping the
// names of definitions (func name(, def name(, a TypeScript method head).
func findCalls(lines []string, from, to int, selFrom, selTo int) []callSite {
	var out []callSite
	for n := max(1, from); n <= to && n <= len(lines); n++ {
		line := lines[n-1]
		code := stripLineComment(line)
		if m := methodLine.FindStringSubmatch(code); m != nil && !callNoise[m[1]] {
			continue // a method or function head (not if (…) {, for (…) {), not a call
		}
		for _, m := range callRE.FindAllStringSubmatchIndex(code, -1) {
			chain := code[m[2]:m[3]]
			prefix := code[:m[2]]
			if defPrefix.MatchString(prefix) {
				continue
			}
			trimmed := strings.TrimRight(prefix, " \t")
			if strings.HasSuffix(trimmed, ")") && strings.HasPrefix(strings.TrimSpace(code), "func") {
				continue // func (r *T) name(
			}
			parts := strings.Split(chainSpaces.Replace(chain), ".")
			name := parts[len(parts)-1]
			recv := strings.Join(parts[:len(parts)-1], ".")
			if strings.HasSuffix(trimmed, ".") || strings.HasSuffix(trimmed, "?.") {
				recv = "?" // f().name(: the receiver is an expression
			}
			if recv == "" && (callNoise[name] || codeStopIdents[name]) {
				continue
			}
			out = append(out, callSite{name: name, recv: recv, line: n, inSel: n >= selFrom && n <= selTo})
		}
		// TypeScript's CommonJS output calls an imported function as
		// (0, mod_1.f)(…), and one of its own module's as (0, exports.f)(…).
		for _, m := range indirectCallRE.FindAllStringSubmatch(code, -1) {
			parts := strings.Split(m[1], ".")
			recv := strings.Join(parts[:len(parts)-1], ".")
			if recv == "exports" {
				recv = ""
			}
			out = append(out, callSite{name: parts[len(parts)-1], recv: recv, line: n, inSel: n >= selFrom && n <= selTo})
		}
	}
	return out
}

func stripLineComment(s string) string {
	for _, c := range []string{"//", "#"} {
		if i := strings.Index(s, c); i >= 0 && strings.Count(s[:i], `"`)%2 == 0 && strings.Count(s[:i], `'`)%2 == 0 {
			s = s[:i]
		}
	}
	return s
}

// typeEnv maps a variable of the code around the selection to its type's
// name as written ("T" or "pkg.T"); ctor maps a variable to the function
// whose result it holds (its type comes from that function's signature).
type typeEnv struct {
	vars map[string]string
	ctor map[string]string
	self string // the class or receiver type that self/this/cls (and a Go receiver) name
}

var (
	goRecvRE  = regexp.MustCompile(`^func\s*\(\s*(\w+)\s+\*?(\w+)`)
	goParamRE = regexp.MustCompile(`[(,]\s*(\w+)\s+(?:\.\.\.)?\*?((?:\w+\.)?[A-Za-z_]\w*)\s*[,)]`)
	goVarRE   = regexp.MustCompile(`\bvar\s+(\w+)\s+\*?((?:\w+\.)?[A-Za-z_]\w*)`)
	goVarLine = regexp.MustCompile(`^(\w+)\s+(?:\[\])?\*?((?:\w+\.)?[A-Za-z_]\w*)$`) // in a var ( … ) block
	goLitRE   = regexp.MustCompile(`(\w+)\s*:?=\s*&?((?:\w+\.)?[A-Za-z_]\w*)\s*\{`)
	goNewRE   = regexp.MustCompile(`(\w+)\s*:?=\s*new\(\s*((?:\w+\.)?\w+)\s*\)`)
	goCtorRE  = regexp.MustCompile(`(\w+)(?:\s*,\s*\w+)*\s*:?=\s*((?:\w+\.)?[A-Za-z_]\w*)\(`)
	annotRE   = regexp.MustCompile(`([A-Za-z_$][\w$]*)\s*\??\s*:\s*((?:[A-Za-z_$][\w$]*\.)?[A-Z][\w$]*)`)
	tsNewRE   = regexp.MustCompile(`(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*new\s+((?:[\w$]+\.)?[\w$]+)`)
	pyInstRE  = regexp.MustCompile(`(?m)^\s*([A-Za-z_]\w*)\s*=\s*((?:\w+\.)?[A-Z]\w*)\(`)
)

// goLiterals are what a line must hold for each of buildEnv's Go
// patterns to match it. A pattern runs only on the lines holding its
// literals: most lines of a file hold none of them, and running every
// pattern on every line took 40-70 ms on a large file (exec.go,
// server.go, proc.go, check.go of the Go tree together), 6-9 ms this way.
var goLiterals = map[*regexp.Regexp][]string{
	goRecvRE: {"func"},
	goVarRE:  {"var"},
	goLitRE:  {"=", "{"},
	goNewRE:  {"=", "new("},
	goCtorRE: {"=", "("},
}

// mayMatch reports whether line holds every literal of re (goLiterals).
func mayMatch(re *regexp.Regexp, line string) bool {
	for _, l := range goLiterals[re] {
		if !strings.Contains(line, l) {
			return false
		}
	}
	return true
}

// buildEnv reads variable types from text (the enclosing definition and the
// selection) in the file's language.
func buildEnv(lang, text string) typeEnv {
	env := typeEnv{vars: map[string]string{}, ctor: map[string]string{}}
	set := func(v, t string) {
		if v != "" && t != "" && !codeStopIdents[t] && env.vars[v] == "" {
			env.vars[v] = t
		}
	}
	switch lang {
	case "go":
		inVar := false
		for _, line := range strings.Split(text, "\n") {
			tl := strings.TrimSpace(stripLineComment(line))
			switch {
			case strings.HasPrefix(tl, "var ("):
				inVar = true
			case inVar && tl == ")":
				inVar = false
			case inVar:
				if m := goVarLine.FindStringSubmatch(tl); m != nil && !codeStopIdents[m[1]] {
					set(m[1], m[2])
				}
			}
			if mayMatch(goRecvRE, tl) {
				if m := goRecvRE.FindStringSubmatch(tl); m != nil {
					set(m[1], m[2])
					if env.self == "" {
						env.self = m[2]
					}
				}
			}
			if strings.HasPrefix(tl, "func") || strings.Contains(tl, "func(") {
				for _, m := range goParamRE.FindAllStringSubmatch(tl, -1) {
					set(m[1], m[2])
				}
			}
			for _, re := range []*regexp.Regexp{goVarRE, goLitRE, goNewRE} {
				if mayMatch(re, tl) {
					for _, m := range re.FindAllStringSubmatch(tl, -1) {
						set(m[1], m[2])
					}
				}
			}
			if mayMatch(goCtorRE, tl) {
				for _, m := range goCtorRE.FindAllStringSubmatch(tl, -1) {
					if _, ok := env.vars[m[1]]; !ok && env.ctor[m[1]] == "" {
						env.ctor[m[1]] = m[2]
					}
				}
			}
		}
	case "typescript", "tsx", "javascript":
		for _, m := range annotRE.FindAllStringSubmatch(text, -1) {
			set(m[1], m[2])
		}
		for _, m := range tsNewRE.FindAllStringSubmatch(text, -1) {
			set(m[1], m[2])
		}
	case "python":
		for _, m := range annotRE.FindAllStringSubmatch(text, -1) {
			set(m[1], m[2])
		}
		for _, m := range pyInstRE.FindAllStringSubmatch(text, -1) {
			set(m[1], m[2])
		}
	}
	return env
}

// calleePass turns the callee bodies on; BenchmarkCalleePass turns it off
// on alternate rounds to measure what it costs, side by side.
var calleePass = true

// calleeKinds are the definitions that have a body worth sending.
var calleeKinds = map[string]bool{"function": true, "method": true, "constructor": true}

// maxHops is the farthest hop from the selection whose callees come in
// (1: what the selection calls), and maxHopParents bounds the callees of
// one hop whose own callees the next hop adds.
const (
	maxHops       = 3
	maxHopParents = 12
)

// maxCalleeLines bounds one callee body: a longer function is left to the
// definitions source (its head) and the model's read_file.
const maxCalleeLines = 200

// weakSearchScore: a search hit scoring below it (not among the first
// query's top three), or one that got in only on the room the caps left,
// may give its room to a callee body resolved exactly.
const weakSearchScore = 0.34

// resolver resolves call sites and selector qualifiers to definitions.
type resolver struct {
	req     Request
	dir     string // path.Dir of req.File
	ix      codeindex.Index
	lang    string
	imps    fileImports
	env     typeEnv
	cache   map[string][]codeindex.Symbol    // by name (defs)
	members map[[2]string][]codeindex.Symbol // by type and name (memberDefs)
	files   map[string][]string              // lines of the files read in this build
}

// fileLines returns the lines of a workspace file (the request's text for
// the current file), read once per build.
func (r *resolver) fileLines(rel string) ([]string, bool) {
	if ls, ok := r.files[rel]; ok {
		return ls, ls != nil
	}
	var text string
	switch {
	case rel == r.req.File && r.req.FileText != "":
		text = r.req.FileText
	case r.req.WS != nil:
		f := r.req.files.get(rel)
		if !f.ok || f.binary {
			r.files[rel] = nil
			return nil, false
		}
		r.files[rel] = f.lines
		return f.lines, true
	default:
		return nil, false
	}
	ls := strings.SplitAfter(text, "\n")
	r.files[rel] = ls
	return ls, true
}

// rawLines returns lines [from, to] of a workspace file, unnumbered.
func (r *resolver) rawLines(rel string, from, to int) (string, bool) {
	ls, ok := r.fileLines(rel)
	if !ok || from > len(ls) {
		return "", false
	}
	return strings.Join(ls[from-1:min(to, len(ls))], ""), true
}

func (r *resolver) defs(name string) []codeindex.Symbol {
	if ds, ok := r.cache[name]; ok {
		return ds
	}
	ds := r.keepDefs(r.ix.Definitions([]string{name}), "")
	r.cache[name] = ds
	return ds
}

// memberDefs is defs of name, only the members of types named t: looked
// up as "t.name", which lists only those (a method name such as String
// or Close has thousands of definitions in a large tree).
func (r *resolver) memberDefs(t, name string) []codeindex.Symbol {
	k := [2]string{t, name}
	if ds, ok := r.members[k]; ok {
		return ds
	}
	var ds []codeindex.Symbol
	if t == "" { // top level: no "t.name" to ask for
		for _, d := range r.defs(name) {
			if d.Scope() == "" {
				ds = append(ds, d)
			}
		}
	} else {
		ds = r.keepDefs(r.ix.Definitions([]string{t + "." + name}), t)
	}
	r.members[k] = ds
	return ds
}

// keepDefs filters ds in place to the definitions of the file's language
// (family), not in tests unless the file is one, and, with scope, members
// of that scope.
func (r *resolver) keepDefs(ds []codeindex.Symbol, scope string) []codeindex.Symbol {
	// In place: the slice is ours, and a common name has thousands of
	// definitions in a large tree.
	keep := ds[:0]
	testFile := isTestPath(r.req.File)
	for i := range ds {
		d := &ds[i]
		if r.lang != "" && d.Language != r.lang && !sameFamily(r.lang, d.Language) {
			continue
		}
		if !testFile && isTestPath(d.Path) || scope != "" && d.Scope() != scope {
			continue
		}
		keep = append(keep, *d)
	}
	clear(ds[len(keep):]) // the rest's strings are garbage
	return keep
}

// splitQual splits "pkg.T" into its qualifier and name.
func splitQual(t string) (qual, name string) {
	if i := strings.LastIndexByte(t, '.'); i > 0 {
		return t[:i], t[i+1:]
	}
	return "", t
}

// place scores how near a definition is: this file, this package, the
// package qual names (an import alias), an imported file or package.
func (r *resolver) place(d codeindex.Symbol, qual string) float64 {
	return r.placeOf(d, qual) - otherOSPenalty(d.Path)
}

// otherOSPenalty prefers the Unix variant of a Go file split by
// operating system (lp_unix.go over lp_plan9.go and lp_windows.go).
// A name's part after an underscore names the system (exec_windows.go,
// zerrors_plan9_386.go); the first part never does. It runs for every
// definition of a name a build places.
func otherOSPenalty(rel string) float64 {
	base, ok := strings.CutSuffix(path.Base(rel), ".go")
	if !ok {
		return 0
	}
	for {
		i := strings.IndexByte(base, '_')
		if i < 0 {
			return 0
		}
		base = base[i+1:]
		part, _, _ := strings.Cut(base, "_")
		switch part {
		case "windows", "plan9", "wasm", "js", "wasip1", "darwin", "freebsd", "openbsd", "netbsd", "dragonfly", "solaris", "aix", "illumos", "ios", "android", "zos":
			return 0.5
		}
	}
}

func (r *resolver) placeOf(d codeindex.Symbol, qual string) float64 {
	if d.Path == r.req.File {
		return 3
	}
	names := importNamesOf(d.Path)
	if alias := r.imps.byAlias[qual]; qual != "" && alias != "" {
		if m := names.match(alias, r.req.File); m > 0 {
			return 3 * m
		}
	}
	if qual == "" && r.req.File != "" && names[1] == r.dir {
		return 2
	}
	best := 0.0
	for _, p := range r.imps.paths {
		if best = max(best, names.match(p, r.req.File)); best == 1 {
			break
		}
	}
	return best
}

// nearest keeps the best-placed definitions (ties: at most two); with
// needPlace, only those in this file, package or an import.
func (r *resolver) nearest(ds []codeindex.Symbol, qual string, needPlace bool) []codeindex.Symbol {
	return r.nearestOf(ds, nil, qual, needPlace)
}

// nearestOf is nearest among the definitions of ds that keep accepts (all
// when keep is nil); it copies only those it returns.
func (r *resolver) nearestOf(ds []codeindex.Symbol, keep func(*codeindex.Symbol) bool, qual string, needPlace bool) []codeindex.Symbol {
	// The first two (in ds's order) of those at the best place.
	places := make([]float64, len(ds))
	best := math.Inf(-1)
	for i := range ds {
		if keep != nil && !keep(&ds[i]) {
			places[i] = math.NaN() // equal to nothing
			continue
		}
		places[i] = r.place(ds[i], qual)
		best = max(best, places[i])
	}
	if math.IsInf(best, -1) || needPlace && best <= 0 {
		return nil
	}
	var out []codeindex.Symbol
	for i, p := range places {
		if p == best {
			if out = append(out, ds[i]); len(out) == 2 {
				break
			}
		}
	}
	return out
}

// typeOf resolves a receiver expression ("c", "self", "c.conn") to a type
// name as written ("T" or "pkg.T"); "" when it cannot be read.
func (r *resolver) typeOf(recv string) string {
	if recv == "" || recv == "?" {
		return ""
	}
	parts := strings.Split(recv, ".")
	var t string
	switch first := parts[0]; {
	case first == "self" || first == "this" || first == "cls":
		t = r.env.self
	case r.env.vars[first] != "":
		t = r.env.vars[first]
	case r.env.ctor[first] != "":
		t = r.resultType(r.env.ctor[first])
	}
	for _, f := range parts[1:] {
		if t == "" {
			return ""
		}
		t = r.fieldType(t, f)
	}
	return t
}

// goResultRE reads a Go function's first result type, named or not.
var goResultRE = regexp.MustCompile(`\)\s*\(?\s*(?:\w+\s+)?\*?((?:\w+\.)?[A-Za-z_]\w*)`)

// resultType reads the type a constructor-like function returns from its
// signature (Go: func NewT(...) (*T, error); a Python or TypeScript class
// called as a function is its own type).
func (r *resolver) resultType(fn string) string {
	qual, name := splitQual(fn)
	for _, d := range r.nearest(r.defs(name), qual, true) {
		switch d.Kind() {
		case "class", "struct", "type", "interface":
			return fn
		case "function":
			sig := d.Signature()
			if i := strings.Index(sig, name+"("); i >= 0 {
				sig = sig[i+len(name):]
			}
			// Skip the parameter list (balanced parentheses).
			depth := 0
			for i, c := range sig {
				if c == '(' {
					depth++
				} else if c == ')' {
					depth--
					if depth == 0 {
						if m := goResultRE.FindStringSubmatch(sig[i:]); m != nil && !codeStopIdents[m[1]] {
							t := m[1]
							if q, n := splitQual(t); q == "" && qual != "" {
								t = qual + "." + n // pkg.NewT returns pkg's T
							}
							return t
						}
						return ""
					}
				}
			}
		}
	}
	return ""
}

// typeDef finds the definition of a type written as t.
func (r *resolver) typeDef(t string) (codeindex.Symbol, bool) {
	qual, name := splitQual(t)
	best := r.nearestOf(r.defs(name), func(d *codeindex.Symbol) bool {
		switch d.Kind() {
		case "class", "struct", "type", "interface":
			return true
		}
		return false
	}, qual, false)
	if len(best) == 0 {
		return codeindex.Symbol{}, false
	}
	return best[0], true
}

// fieldType reads the type of field f of type t from t's definition.
func (r *resolver) fieldType(t, f string) string {
	td, ok := r.typeDef(t)
	if !ok || td.EndLine-td.Line > 600 {
		return ""
	}
	text, ok := r.rawLines(td.Path, td.Line, td.EndLine)
	if !ok {
		return ""
	}
	m := fieldTypeRE(td.Language, f).FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	for _, g := range m[1:] {
		if g != "" && !codeStopIdents[g] {
			if q, n := splitQual(g); q == "" {
				if tq, _ := splitQual(t); tq != "" {
					return tq + "." + n
				}
			}
			return g
		}
	}
	return ""
}

// fieldTypeREs are fieldTypeRE's expressions by language and field, kept
// between builds: compiling one per lookup was a build's largest source
// of garbage after the file reads. Bounded: cleared when full.
var fieldTypeREs = struct {
	sync.Mutex
	m map[[2]string]*regexp.Regexp
}{m: map[[2]string]*regexp.Regexp{}}

// fieldTypeRE returns the expression that finds field f's declaration
// with its type in a type's definition in language lang: the type is the
// first non-empty group.
func fieldTypeRE(lang, f string) *regexp.Regexp {
	k := [2]string{lang, f}
	if lang != "go" && lang != "python" {
		k[0] = ""
	}
	fieldTypeREs.Lock()
	defer fieldTypeREs.Unlock()
	if re, ok := fieldTypeREs.m[k]; ok {
		return re
	}
	var re *regexp.Regexp
	switch k[0] {
	case "go":
		re = regexp.MustCompile(`(?m)^\s*(?:\w+\s*,\s*)*` + regexp.QuoteMeta(f) + `(?:\s*,\s*\w+)*\s+\*?((?:\w+\.)?[A-Za-z_]\w*)`)
	case "python":
		re = regexp.MustCompile(`self\.` + regexp.QuoteMeta(f) + `\s*(?::\s*((?:\w+\.)?[A-Z]\w*))?\s*=\s*((?:\w+\.)?[A-Z]\w*)\(`)
	default:
		re = regexp.MustCompile(`(?:^|[\s(,;{])` + regexp.QuoteMeta(f) + `\s*[?!]?\s*:\s*((?:[\w$]+\.)?[A-Z][\w$]*)`)
	}
	if len(fieldTypeREs.m) >= 4096 {
		clear(fieldTypeREs.m)
	}
	fieldTypeREs.m[k] = re
	return re
}

var (
	pyBasesRE = regexp.MustCompile(`^\s*class\s+\w+\s*\(([^)]*)\)`)
	tsBaseRE  = regexp.MustCompile(`\bextends\s+((?:[\w$]+\.)?[\w$]+)`)
)

// bases lists the types t inherits or embeds (one level).
func (r *resolver) bases(t string) []string {
	td, ok := r.typeDef(t)
	if !ok {
		return nil
	}
	var out []string
	switch td.Language {
	case "python":
		if m := pyBasesRE.FindStringSubmatch(td.Signature()); m != nil {
			for _, b := range strings.Split(m[1], ",") {
				b = strings.TrimSpace(b)
				if b != "" && !strings.Contains(b, "=") && b != "object" {
					out = append(out, b)
				}
			}
		}
	case "go":
		if td.EndLine-td.Line > 300 {
			return nil
		}
		text, ok := r.rawLines(td.Path, td.Line+1, td.EndLine)
		if !ok {
			return nil
		}
		for _, l := range strings.Split(text, "\n") {
			l = strings.TrimSpace(stripLineComment(l))
			if f := strings.Fields(l); len(f) == 1 && f[0] != "}" && f[0] != "{" {
				out = append(out, strings.TrimPrefix(f[0], "*"))
			}
		}
	default:
		if m := tsBaseRE.FindStringSubmatch(td.Signature()); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// maxOverrides bounds the overrides a call through a base class reaches.
const maxOverrides = 4

// overrides lists the methods name of the classes that inherit from t (up
// to three levels down).
func (r *resolver) overrides(t, name string) []codeindex.Symbol {
	var out []codeindex.Symbol
	for _, d := range r.defs(name) {
		if d.Scope() != "" && d.Scope() != t && r.inherits(d.Scope(), t, 3) {
			out = append(out, d)
		}
	}
	return out
}

// inherits says whether type s has t among its bases, depth levels up.
func (r *resolver) inherits(s, t string, depth int) bool {
	for _, b := range r.bases(s) {
		_, bn := splitQual(b)
		if bn == t || depth > 1 && bn != s && r.inherits(bn, t, depth-1) {
			return true
		}
	}
	return false
}

// isInterface says whether t names an interface: its methods have no body,
// and the value's dynamic type decides which method runs.
func (r *resolver) isInterface(t string) bool {
	td, ok := r.typeDef(t)
	return ok && td.Kind() == "interface"
}

// method resolves method name of type t (and, failing that, of its bases).
// An interface's method resolves to nothing: the call reaches whichever
// type the value holds.
func (r *resolver) method(t, name string) []codeindex.Symbol {
	if r.isInterface(t) {
		return nil
	}
	for depth, ts := 0, []string{t}; depth < 3 && len(ts) > 0; depth++ {
		var next []string
		for _, t := range ts {
			qual, tn := splitQual(t)
			if best := r.nearest(r.memberDefs(tn, name), qual, false); len(best) > 0 {
				return best
			}
			next = append(next, r.bases(t)...)
		}
		ts = next
	}
	return nil
}

// resolution is how a call was resolved (for the report and the order).
type resolution struct {
	defs []codeindex.Symbol
	how  string
	// exact: by the receiver's type, the package qualifier or this
	// file/package (else a guess among methods of that name nearby).
	exact bool
}

// resolve finds the definitions a call site means.
func (r *resolver) resolve(c callSite) resolution {
	if c.recv == "" {
		var ds []codeindex.Symbol
		for _, d := range r.defs(c.name) {
			if d.Scope() == "" || r.lang != "go" && d.Kind() == "class" {
				ds = append(ds, d)
			}
		}
		if orig, ok := r.imps.renamed[c.name]; ok {
			for _, d := range r.defs(orig) {
				if d.Scope() == "" {
					ds = append(ds, d)
				}
			}
		}
		best := r.nearest(ds, "", true)
		if len(best) == 0 {
			return resolution{}
		}
		// Go: an unqualified call is this package's.
		if r.lang == "go" && path.Dir(best[0].Path) != path.Dir(r.req.File) {
			return resolution{}
		}
		if r.lang != "go" && best[0].Path != r.req.File && r.place(best[0], "") < 1 {
			return resolution{}
		}
		return resolution{defs: r.ctorOf(best), how: "called by name", exact: true}
	}
	first := strings.SplitN(c.recv, ".", 2)[0]
	if p, ok := r.imps.byAlias[first]; ok && !strings.Contains(c.recv, ".") && r.env.vars[first] == "" {
		var ds []codeindex.Symbol
		for _, d := range r.defs(c.name) {
			if d.Scope() == "" && importMatch(p, d.Path, r.req.File) > 0 {
				ds = append(ds, d)
			}
		}
		if len(ds) > 0 {
			return resolution{defs: r.nearest(ds, first, false), how: "package " + first, exact: true}
		}
		return resolution{}
	}
	if t := r.typeOf(c.recv); t != "" {
		if r.isInterface(t) {
			return resolution{} // the value's dynamic type decides
		}
		if ds := r.method(t, c.name); len(ds) > 0 {
			return resolution{defs: ds, how: c.recv + " is a " + t, exact: true}
		}
		return resolution{}
	}
	// Go: x.T.m() where x's type is unknown is, by convention, the method
	// m of an embedded T of this package (a field named after its type).
	if parts := strings.Split(c.recv, "."); r.lang == "go" && len(parts) > 1 {
		last := parts[len(parts)-1]
		if td, ok := r.typeDef(last); ok && path.Dir(td.Path) == path.Dir(r.req.File) && td.Name() == last {
			if ds := r.method(last, c.name); len(ds) > 0 && path.Dir(ds[0].Path) == path.Dir(r.req.File) {
				return resolution{defs: ds, how: c.recv + " is an embedded " + last, exact: true}
			}
		}
	}
	// Python, TypeScript: x.policy.m() where the attribute's type cannot be
	// read, and a class of this package is named after it (policy →
	// Policy), is taken to be that class's m or an override of it in a
	// subclass: the object's class decides which runs, so both are a guess.
	if parts := strings.Split(c.recv, "."); r.lang != "go" && parts[len(parts)-1] != "?" && parts[len(parts)-1] != "" {
		last := parts[len(parts)-1]
		if tn := strings.ToUpper(last[:1]) + last[1:]; tn != last {
			if td, ok := r.typeDef(tn); ok && td.Name() == tn && path.Dir(td.Path) == path.Dir(r.req.File) {
				ds := append(r.method(tn, c.name), r.overrides(tn, c.name)...)
				if len(ds) > 0 && len(ds) <= maxOverrides+1 {
					return resolution{defs: ds, how: c.recv + " named after " + tn}
				}
			}
		}
	}
	// Unknown receiver: a method of that name in this package.
	var ds []codeindex.Symbol
	for _, d := range r.defs(c.name) {
		if d.Scope() != "" && path.Dir(d.Path) == path.Dir(r.req.File) {
			ds = append(ds, d)
		}
	}
	if len(ds) == 0 || len(ds) > 2 {
		return resolution{}
	}
	return resolution{defs: ds, how: "a method named " + c.name + " nearby"}
}

// ctorOf turns a called class into its constructor (Python __init__,
// TypeScript constructor); other definitions stay.
func (r *resolver) ctorOf(ds []codeindex.Symbol) []codeindex.Symbol {
	var out []codeindex.Symbol
	for _, d := range ds {
		if d.Kind() != "class" {
			out = append(out, d)
			continue
		}
		for _, ctor := range []string{"__init__", "constructor"} {
			for _, m := range r.defs(ctor) {
				if m.Scope() == d.Name() && m.Path == d.Path {
					out = append(out, m)
				}
			}
		}
	}
	return out
}

// newResolver reads the types around the selection: the outermost
// function around it (its parameters, receiver and locals) and the class
// or receiver type that self/this name.
func newResolver(req Request, ix codeindex.Index, lines []string, sel *Selection) *resolver {
	return newResolverImports(req, ix, lines, sel, importsOf(req.files, req.File, req.FileText))
}

// newResolverImports is newResolver with the file's imports already read.
func newResolverImports(req Request, ix codeindex.Index, lines []string, sel *Selection, imps fileImports) *resolver {
	r := &resolver{req: req, dir: dirOf(req.File), ix: ix, lang: codeindex.LanguageOf(req.File), imps: imps,
		cache: map[string][]codeindex.Symbol{}, members: map[[2]string][]codeindex.Symbol{}, files: map[string][]string{}}
	text := ""
	self := ""
	if sel != nil && sel.StartLine <= len(lines) {
		end := min(sel.EndLine, len(lines))
		from, to := sel.StartLine, end
		if defs, ok := ix.FileSymbols(req.File); ok {
			var outer *codeindex.Symbol
			for i := range defs {
				d := &defs[i]
				if d.Line > sel.StartLine || d.EndLine < sel.StartLine {
					continue
				}
				switch d.Kind() {
				case "class", "struct", "interface", "impl", "module", "trait":
					if d.EndLine-d.Line < 5000 && (self == "" || d.Depth >= 0) {
						self = d.Name() // the innermost class wins: defs come in source order
					}
					continue
				}
				if calleeKinds[d.Kind()] && (outer == nil || d.Line < outer.Line) && d.EndLine-d.Line < 1000 {
					outer = d
				}
				if d.Scope() != "" && calleeKinds[d.Kind()] && self == "" {
					self = d.Scope()
				}
			}
			if outer != nil {
				from, to = outer.Line, max(end, outer.EndLine)
				if outer.Scope() != "" {
					self = outer.Scope()
				}
			}
		}
		text = strings.Join(lines[from-1:min(to, len(lines))], "")
	}
	r.env = buildEnv(r.lang, text)
	if self != "" {
		r.env.self = self
	}
	return r
}

// calleeSources finds the callees of the selection and of its enclosing
// symbol and makes an item of each body, ordered nearest and most specific
// first: calls in the selection before calls elsewhere in the enclosing
// symbol, calls resolved exactly (receiver type, package, this package)
// before guesses, then by distance from the selection. The items are not
// allocated with the others: spendOnCallees adds them at the end with what
// is left.
func calleeSources(req Request, r *resolver, lines []string, sel *Selection, encl *codeindex.Symbol, add func(*Item)) {
	if sel == nil || sel.StartLine > len(lines) {
		return
	}
	end := min(sel.EndLine, len(lines))
	from, to := sel.StartLine, end
	enclName := ""
	if encl != nil && encl.EndLine-encl.Line < 400 {
		from, to = min(from, encl.Line), max(to, encl.EndLine)
		enclName = qualified(*encl)
	}
	calls := findCalls(lines, from, to, sel.StartLine, end)
	type cand struct {
		d     codeindex.Symbol
		c     callSite
		how   string
		exact bool
		tier  int
		dist  int
		order int
	}
	var cands []cand
	seen := map[string]bool{}
	for i, c := range calls {
		res := r.resolve(c)
		for _, d := range res.defs {
			if !calleeKinds[d.Kind()] || d.Local {
				continue
			}
			if d.Path == req.File && d.Line <= to && d.EndLine >= from {
				continue // the selection or its enclosing symbol itself
			}
			key := d.Path + ":" + strconv.Itoa(d.Line)
			if seen[key] {
				continue
			}
			seen[key] = true
			tier := 0
			if !c.inSel {
				tier++
			}
			if !res.exact {
				tier += 2
			}
			dist := 0
			if c.line < sel.StartLine {
				dist = sel.StartLine - c.line
			} else if c.line > end {
				dist = c.line - end
			}
			cands = append(cands, cand{d, c, res.how, res.exact, tier, dist, i})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].tier != cands[j].tier {
			return cands[i].tier < cands[j].tier
		}
		return cands[i].dist < cands[j].dist
	})
	// The next hops, each after every callee of the one before: what the
	// nearest callees resolved exactly call in turn (readRequest's
	// parseRequestLine when the selection calls readRequest), up to maxHops
	// from the selection. They only take what the budget has left, never a
	// search hit's room (not exact), and a nearer hop's bodies come first.
	var parents []codeindex.Symbol
	for _, c := range cands {
		if c.exact && c.d.EndLine-c.d.Line+1 <= maxCalleeLines && len(parents) < maxHopParents {
			parents = append(parents, c.d)
		}
	}
	imports := map[string]fileImports{} // by file, read once for all its callees
	for hop := 2; hop <= maxHops && len(parents) > 0; hop++ {
		var next []codeindex.Symbol
		for _, p := range parents {
			fl, ok := r.fileLines(p.Path)
			if !ok || p.Line > len(fl) {
				continue
			}
			preq := req
			preq.File, preq.FileText = p.Path, ""
			imps, ok := imports[p.Path]
			if !ok {
				imps = importsOf(req.files, p.Path, strings.Join(fl, ""))
				imports[p.Path] = imps
			}
			psel := &Selection{StartLine: p.Line, EndLine: min(p.EndLine, len(fl))}
			pr := newResolverImports(preq, r.ix, fl, psel, imps)
			pr.files = r.files
			if pr.lang == r.lang && isTestPath(p.Path) == isTestPath(req.File) {
				pr.cache = r.cache // the same definitions pass its filter
			}
			for _, c := range findCalls(fl, psel.StartLine, psel.EndLine, psel.StartLine, psel.EndLine) {
				res := pr.resolve(c)
				if !res.exact {
					continue
				}
				for _, d := range res.defs {
					if !calleeKinds[d.Kind()] || d.Local || d.Path == p.Path && d.Line == p.Line ||
						d.Path == req.File && d.Line <= to && d.EndLine >= from {
						continue
					}
					key := d.Path + ":" + strconv.Itoa(d.Line)
					if seen[key] {
						continue
					}
					seen[key] = true
					c.inSel = false
					cands = append(cands, cand{d: d, c: c, how: res.how + "; called by " + qualified(p) + " (" + p.Path + ")", tier: 2 + hop, order: len(cands)})
					if d.EndLine-d.Line+1 <= maxCalleeLines && len(next) < maxHopParents {
						next = append(next, d)
					}
				}
			}
		}
		parents = next
	}
	for rank, c := range cands {
		d := c.d
		loc := fmt.Sprintf("%s:%d-%d %s", d.Path, d.Line, d.EndLine, qualified(d))
		it := &Item{Source: SourceCallees, Location: loc, Priority: prioDefinitions, Score: 1 / float64(1+rank), late: true, exact: c.exact}
		if d.EndLine-d.Line+1 > maxCalleeLines {
			it.Reason = fmt.Sprintf("callee body longer than %d lines (%d): left to the definitions source", maxCalleeLines, d.EndLine-d.Line+1)
			add(it)
			continue
		}
		fl, ok := r.fileLines(d.Path)
		if !ok || d.Line > len(fl) {
			continue
		}
		text := numbered(fl, d.Line, min(d.EndLine, len(fl)))
		where := "the selection"
		switch {
		case c.tier >= 4:
			where = "a callee"
		case !c.c.inSel:
			where = "the enclosing " + enclName
		}
		how := ""
		if c.how != "" {
			how = "; " + c.how
		}
		it.Text = fmt.Sprintf("## Callee body: %s (%s), called from %s at line %d%s: %s lines %d-%d\n%s",
			qualified(d), d.Kind(), where, c.c.line, how, d.Path, d.Line, d.EndLine, text)
		add(it)
	}
}

// spendOnCallees adds the callee bodies that are not in the prompt yet,
// nearest first, while they fit in what the budget has left. An included
// item that lies wholly inside a callee's body (its head, cut to fit) gives
// its tokens to it; weak search hits and open documents give theirs, lowest
// score first, when that makes a body fit. It
// returns the tokens used.
//
// A callee resolved exactly (not a guess among same-named methods) may
// also take the room of weak search hits and open documents.
func spendOnCallees(items []*Item, avail, used int, report *Report) int {
	type held struct {
		it         *Item
		rel        string
		start, end int
	}
	heldOf := func() []held {
		var out []held
		for _, it := range items {
			if !it.Included {
				continue
			}
			rel, a, b, ok := spanOf(it.Location)
			if !ok {
				continue
			}
			out = append(out, held{it, rel, a, b})
		}
		return out
	}
	var cands []*Item
	for _, it := range items {
		if it.late && it.Source == SourceCallees && !it.Included && it.Text != "" &&
			!strings.Contains(it.Reason, "duplicate") && !strings.Contains(it.Reason, "longer than") && !strings.Contains(it.Reason, "merged into") {
			cands = append(cands, it)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].Score > cands[j].Score })
	for _, c := range cands {
		base := c.Reason // "redacted …; " when a secret was masked
		if i := strings.Index(base, "callee body"); i >= 0 {
			base = base[:i]
		}
		rel, start, end, _ := spanOf(c.Location) // callee candidates always carry a range
		hs := heldOf()
		var inside, weak []*Item
		dup := ""
		for _, h := range hs {
			if h.rel != rel {
				continue
			}
			whole := !strings.Contains(h.it.Reason, "cut to") && !strings.Contains(h.it.Reason, "shortened")
			if h.start <= start && h.end >= end && whole {
				dup = h.it.Location
				break
			}
			if h.start >= start && h.end <= end && !h.it.Required {
				inside = append(inside, h.it)
			}
		}
		if dup != "" {
			c.Reason = base + "duplicate: already in the prompt in " + dup
			continue
		}
		need := c.Tokens
		for _, it := range inside {
			need -= it.Tokens
		}
		room := avail - used
		if need > room && c.exact {
			for _, it := range items {
				weakHit := it.Source == SourceSearch && (it.Score < weakSearchScore || strings.Contains(it.Reason, "caps left unused"))
				if it.Included && !it.Required && (weakHit || it.Source == SourceOpenDocs) {
					weak = append(weak, it)
				}
			}
			sort.SliceStable(weak, func(i, j int) bool { return weak[i].Score < weak[j].Score })
			freed, k := 0, 0
			for k < len(weak) && need > room+freed {
				freed += weak[k].Tokens
				k++
			}
			if need > room+freed {
				weak = nil
			} else {
				weak = weak[:k]
			}
		}
		victims := 0
		for _, it := range weak {
			victims += it.Tokens
		}
		if need > room+victims {
			c.Reason = base + fmt.Sprintf("callee body; no room: %d tokens, %d left", need, room)
			continue
		}
		for _, it := range inside {
			it.Included = false
			it.Reason = "duplicate: already in the prompt in " + c.Location
		}
		for _, it := range weak {
			it.Included = false
			why := ""
			if strings.Contains(it.Reason, "caps left unused") {
				why = "; it was in on the room the caps left"
			}
			it.Reason = "displaced by the callee body " + c.Location + why
			report.Degraded = true
		}
		c.Included = true
		switch {
		case len(weak) > 0:
			c.Reason = base + fmt.Sprintf("callee body; in the room of %d weak search hit(s) or open document(s)", len(weak))
		case len(inside) > 0:
			c.Reason = base + "callee body; replaces its head and fits in the budget left"
		default:
			c.Reason = base + "callee body; fits in the budget left"
		}
		used += need - victims
	}
	return used
}
