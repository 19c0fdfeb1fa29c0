package repomap

import (
	"go/build/constraint"
	"strings"
	"unicode"
	"unicode/utf8"
)

// isTestFile reports files that hold tests: their definitions are for the
// tests, not the API.
func isTestFile(rel string) bool {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	switch {
	case strings.HasSuffix(base, "_test.go"), strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py"),
		strings.HasSuffix(base, "_test.py"), strings.Contains(base, ".test."), strings.Contains(base, ".spec."):
		return true
	}
	for _, d := range []string{"test/", "tests/", "__tests__/"} {
		if strings.HasPrefix(rel, d) || strings.Contains(rel, "/"+d) {
			return true
		}
	}
	return false
}

// isBuiltinDecl reports Go's builtin package: documentation of the
// predeclared identifiers, referenced by every Go file.
func isBuiltinDecl(rel string) bool {
	return rel == "builtin/builtin.go" || strings.HasSuffix(rel, "/builtin/builtin.go")
}

// isInternal reports a Go internal/ package, not importable from outside,
// and a Java internal package (the JDK's jdk/internal/..., which its
// modules do not export).
func isInternal(rel string) bool {
	return (strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, ".java")) &&
		(strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/"))
}

// isAPI reports whether a definition is part of its package's public
// surface, by the language's own rule where it has one.
func isAPI(lang string, d *Def) bool {
	name := d.Name()
	if name == "" {
		return false
	}
	switch lang {
	case "go":
		upper := func(s string) bool {
			r, _ := utf8.DecodeRuneInString(s)
			return unicode.IsUpper(r)
		}
		// A method is API only on an exported type (fakeLocker.Lock is not).
		return upper(name) && (d.Scope() == "" || upper(d.Scope()))
	case "python":
		return !strings.HasPrefix(name, "_") && (d.Depth == 0 || d.Depth == 1 && !strings.HasPrefix(d.Scope(), "_"))
	case "typescript", "tsx", "javascript":
		if d.Depth == 0 {
			return strings.HasPrefix(d.Signature(), "export ")
		}
		return d.Depth == 1 && !strings.HasPrefix(name, "_") && !strings.HasPrefix(name, "#") &&
			!strings.HasPrefix(d.Signature(), "private ") && !strings.HasPrefix(d.Signature(), "protected ")
	case "java", "rust", "ruby":
		return !d.Private
	case "c":
		return d.TopLevel && !d.Private
	}
	return d.TopLevel
}

// exportedNames returns the names a Python module's __all__ lists (nil
// when it has none).
func exportedNames(t *FileTags) map[string]bool {
	if t.Language != "python" {
		return nil
	}
	var names map[string]bool
	for _, r := range t.Refs {
		if r.Export {
			if names == nil {
				names = map[string]bool{}
			}
			names[r.Name()] = true
		}
	}
	return names
}

// unlisted reports a top-level definition of a Python module with an
// __all__ that the list leaves out: by the module's own word not its API
// (what `from m import *` and the docs take).
func unlisted(t *FileTags, exported map[string]bool, d *Def) bool {
	return exported != nil && d.Scope() == "" && d.TopLevel && !exported[d.Name()]
}

// isEntry reports a package-level definition (a function, type, variable
// or class with no enclosing scope): with API, an entry point of the
// package rather than a member of one.
//
// A Ruby class or module is an entry point at any nesting: Ruby namespaces
// by nesting modules, so Net::HTTP is net/http's own top-level class.
//
// So is a type's own constructor-like function, reached through the type
// rather than an instance: a Java static method (HttpClient.newBuilder), a
// Ruby singleton method (def HTTP.get, def self.start), a Rust associated
// function without a self parameter (HashMap::with_capacity). They are how
// a package's user gets hold of its types.
func isEntry(lang string, d *Def) bool {
	if lang == "ruby" && (d.Kind() == "class" || d.Kind() == "module") {
		return true
	}
	if d.Scope() != "" && d.Depth > 0 && (d.Kind() == "method" || d.Kind() == "function") && typeLevel(lang, d) {
		return true
	}
	return d.Scope() == "" && d.TopLevel
}

// typeLevel reports a method called on its type, not on an instance.
func typeLevel(lang string, d *Def) bool {
	sig := d.Signature()
	switch lang {
	case "java":
		head, _, _ := strings.Cut(sig, "(")
		return hasWord([]byte(head), "static")
	case "ruby":
		rest, ok := strings.CutPrefix(sig, "def ")
		if !ok {
			return false
		}
		recv, _, ok := strings.Cut(rest, ".")
		return ok && (recv == "self" || recv == d.Scope())
	case "rust":
		_, params, ok := strings.Cut(sig, d.Name()+"(")
		if !ok {
			_, params, ok = strings.Cut(sig, d.Name()+"<")
			if !ok {
				return false
			}
			if _, params, ok = strings.Cut(params, "("); !ok {
				return false
			}
		}
		params = strings.TrimSpace(params)
		if params == "" {
			return false // the parameters continue on the next line
		}
		params = strings.TrimPrefix(params, "&")
		if strings.HasPrefix(params, "'") { // &'a self
			_, params, _ = strings.Cut(params, " ")
		}
		params = strings.TrimPrefix(params, "mut ")
		return !strings.HasPrefix(params, "self")
	}
	return false
}

// isExperimental reports a Go file built only with a GOEXPERIMENT on
// (//go:build goexperiment.jsonv2): not part of the package as the default
// toolchain builds it. Its //go:build expression is false with every
// goexperiment tag off and true with them on (other tags count as set, so
// GOOS- and GOARCH-specific files are not experimental).
func isExperimental(t *FileTags) bool {
	if t.Constraint == "" {
		return false
	}
	expr, err := constraint.Parse("//go:build " + t.Constraint)
	if err != nil {
		return false
	}
	with := func(on bool) func(string) bool {
		return func(tag string) bool {
			if strings.HasPrefix(tag, "goexperiment.") {
				return on
			}
			return true
		}
	}
	return !expr.Eval(with(false)) && expr.Eval(with(true))
}

// isFixture reports test data: testdata/, fixtures/ and __fixtures__/
// directories hold inputs for tests, not the code a question is about.
func isFixture(rel string) bool {
	for _, d := range []string{"testdata/", "fixtures/", "__fixtures__/"} {
		if strings.HasPrefix(rel, d) || strings.Contains(rel, "/"+d) {
			return true
		}
	}
	return false
}

// fileFacts are what the ranking needs to know of one file that no other
// file changes: computed once per parse (symtab.resolve, or when the graph
// takes new tags of the same shape), not once per ranking.
type fileFacts struct {
	fixture      bool // test data, or Go's builtin package
	test         bool // isTestFile
	internal     bool // isInternal
	experimental bool // isExperimental
	depth        int  // directory levels below the workspace root
	defs         []defFacts
	scored       int // definitions a ranking scores (not local, not an overload)
	api          int // of those, API (factAPI)
	exports      int // names its export lists name (Ref.Export)
}

// defFacts are one definition's static facts.
type defFacts struct {
	kept  int32 // definitions of its name in the file once overloads are collapsed
	flags uint8
}

const (
	factAPI       = 1 << iota // isAPI
	factMember                // isMember
	factOverload              // overload: the first definition of the name and scope stands for it
	factEntry                 // isEntry
	factSecondary             // isConstructor, inTraitImpl, Override or Deprecated: the class line, the trait or the replacement stands for it in an overview
)

// computeFacts derives a file's fileFacts from its tags and definition
// idents (-1 for definitions the graph leaves out).
func computeFacts(t *FileTags, ids, same []int32) *fileFacts {
	f := &fileFacts{
		fixture:      isFixture(t.Path) || isBuiltinDecl(t.Path),
		test:         isTestFile(t.Path),
		internal:     isInternal(t.Path),
		experimental: isExperimental(t),
		depth:        strings.Count(t.Path, "/"),
		defs:         make([]defFacts, len(ids)),
	}
	for i := range t.Refs {
		if t.Refs[i].Export {
			f.exports++
		}
	}
	if t.Language == "go" && f.test {
		// Go's examples (func ExampleX in a _test.go file, shown by go
		// doc) are the package's own account of how it is used.
		for i := range t.Defs {
			if d := &t.Defs[i]; d.TopLevel && d.Kind() == "function" && strings.HasPrefix(d.Name(), "Example") {
				f.exports++
			}
		}
	}
	exported := exportedNames(t)
	for di, id := range ids {
		if id < 0 {
			continue
		}
		def := &t.Defs[di]
		df := &f.defs[di]
		if isAPI(t.Language, def) && !unlisted(t, exported, def) {
			df.flags |= factAPI
		}
		if isMember(t.Language, def) {
			df.flags |= factMember
		}
		if isEntry(t.Language, def) {
			df.flags |= factEntry
		}
		if isConstructor(def) || inTraitImpl(t, def) || def.Override || def.Deprecated {
			df.flags |= factSecondary
		}
		if same[di] > 1 && overload(t, ids, di) {
			df.flags |= factOverload
		}
		if df.flags&factOverload == 0 {
			f.scored++
			if df.flags&factAPI != 0 {
				f.api++
			}
		}
		df.kept = same[di]
		if df.kept > 1 {
			// A constructor named after its class (Java's, C#'s) shares
			// the class's flow without dividing it: a use of the name is a
			// use of the class, whichever the map shows.
			ctor := isConstructor(def)
			df.kept = 0
			for j := range ids {
				if ids[j] == id && !overload(t, ids, j) && isConstructor(&t.Defs[j]) == ctor {
					df.kept++
				}
			}
		}
	}
	return f
}

// inTraitImpl reports an item of a Rust `impl Trait for Type` block: API
// as public as the trait, documented by the trait (fmt, from_iter, next).
func inTraitImpl(t *FileTags, d *Def) bool {
	if t.Language != "rust" || d.Depth == 0 {
		return false
	}
	for i := range t.Scopes {
		s := &t.Scopes[i]
		if s.Depth == int(d.Depth)-1 && s.Line <= int(d.Line) && int(d.EndLine) <= s.EndLine {
			return hasWord([]byte(strings.TrimPrefix(s.Signature, "impl")), "for")
		}
	}
	return false
}

// isConstructor reports a constructor named after its class.
func isConstructor(d *Def) bool { return d.Kind() == "constructor" && d.Name() == d.Scope() }

// overload reports whether definition di repeats the name and scope of an
// earlier definition of its file (TypeScript overload signatures, Python
// property setters): the map shows the first.
func overload(t *FileTags, ids []int32, di int) bool {
	for j := 0; j < di; j++ {
		if ids[j] == ids[di] && t.Defs[j].Scope() == t.Defs[di].Scope() {
			return true
		}
	}
	return false
}

// twinOf reports build output beside its declaration or source: compiled
// JavaScript next to a .d.ts of the same stem (the declaration names the
// same API with its types), or a .d.ts next to the .ts it was generated
// from. Its definitions would double every name; its references still count.
func twinOf(rel string, has func(string) bool) bool {
	for _, ext := range []string{".js", ".mjs", ".cjs"} {
		if stem, ok := strings.CutSuffix(rel, ext); ok {
			for _, d := range []string{".d.ts", ".d.mts", ".d.cts"} {
				if has(stem + d) {
					return true
				}
			}
			return false
		}
	}
	if stem, ok := strings.CutSuffix(rel, ".d.ts"); ok {
		return has(stem+".ts") || has(stem+".tsx")
	}
	return false
}
