package repomap

import (
	"bytes"
	"strings"
)

// Visibility: which definitions a language's own rules keep out of a
// package's public surface (Def.Private), for the languages whose rule is
// written in the code around the name rather than in the name itself (Go,
// Python and TS/JS are judged by isAPI from the name and signature):
//
//   - Java: a member or type without `public` or `protected` (private or
//     package-private), except members of an interface or annotation type,
//     which are public unless marked private;
//   - Rust: an item without a plain `pub` (`pub(crate)` and its kin are
//     not public), except trait items and the items of a trait impl (`impl
//     Read for BufReader`), which are as public as the trait; and an item
//     marked #[unstable] or #[doc(hidden)] (not the stable documented API);
//   - C: in a .c file, a `static` function or variable, and every macro,
//     struct, union, enum or typedef (they are local to the file); in a
//     header, its static (inline) functions and all-caps macros;
//   - Ruby: a method after a bare `private`/`protected` line of its class
//     body, named by `private :name` (or `private_class_method`), written
//     `private def`, and a class, module or method marked `:nodoc:` (RDoc's
//     mark for what is not public API).
//
// A definition inside a private one is private too (the members of a
// package-private Java class); in Ruby, as RDoc reads :nodoc:, only the
// methods and constants directly inside (see markPrivate).

// markPrivate sets Private on ft.Defs, which placeDefs appended from all
// (sorted, scopes included) in order.
func markPrivate(lang string, all []*rawDef, content []byte, ft *FileTags) {
	var rule func(d, parent *rawDef, head []byte) bool
	var lines [][]byte // Ruby's
	switch lang {
	case "java":
		rule = javaPrivate
	case "rust":
		lines := bytes.Split(content, []byte{'\n'})
		whole := rustModuleUnstable(lines)
		rule = func(d, parent *rawDef, head []byte) bool {
			return rustPrivate(d, parent, head) || !d.scope && (whole || rustUnstable(lines, d.line-1))
		}
	case "c":
		if strings.HasSuffix(ft.Path, ".h") {
			rule = cHeaderPrivate
		} else {
			rule = cPrivate
		}
	case "ruby":
		rp := newRubyPrivacy(content)
		lines = rp.lines
		rule = rp.private
	default:
		return
	}
	type frame struct {
		d       *rawDef
		private bool // what it holds is private
		members bool // its methods and constants are (Ruby's :nodoc:)
	}
	var stack []frame
	di := 0
	for _, d := range all {
		for len(stack) > 0 && (d.start >= stack[len(stack)-1].d.end || sameRange(d, stack[len(stack)-1].d)) {
			stack = stack[:len(stack)-1]
		}
		var parent *rawDef
		parentPrivate := false
		if len(stack) > 0 {
			parent = stack[len(stack)-1].d
			parentPrivate = stack[len(stack)-1].private
			if lang == "ruby" && d.kind != "class" && d.kind != "module" {
				parentPrivate = stack[len(stack)-1].members
			}
		}
		head := []byte(nil)
		if d.start <= d.nameStart && int(d.nameStart) <= len(content) {
			from := d.start
			if lang == "c" {
				// From the start of the line: after a macro it cannot
				// expand (`static void __sched notrace f(...)`) the parser
				// may start the definition past its storage class.
				for from > 0 && content[from-1] != '\n' {
					from--
				}
			}
			head = content[from:d.nameStart]
		}
		if d.scope && lang == "rust" {
			// `impl Read for BufReader`: the name is the type after "for".
			d.traitImpl = hasWord(head, "for")
		}
		private := parentPrivate || rule(d, parent, head)
		if !d.scope {
			if di < len(ft.Defs) {
				ft.Defs[di].Private = private
				ft.Defs[di].Override = lang == "java" && (bytes.Contains(head, []byte("@Override")) || objectMethod(&ft.Defs[di]))
			}
			di++
		}
		inherit, members := private, private
		if lang == "ruby" && private {
			// RDoc's :nodoc: hides the class or module itself and the
			// methods and constants documented on its page, not the
			// classes and modules nested in it, unless it says `:nodoc:
			// all` (`module Net #:nodoc:` opens every file of net/http,
			// `class BufferedIO #:nodoc:` hides its methods); nor does a
			// private section reach into a nested class.
			inherit = d.nameRow < len(lines) && bytes.Contains(lines[d.nameRow], []byte(":nodoc: all"))
			members = d.nameRow < len(lines) && bytes.Contains(lines[d.nameRow], []byte(":nodoc:"))
		}
		stack = append(stack, frame{d, inherit, members})
	}
}

// hasWord reports whether head holds w as a whole word.
func hasWord(head []byte, w string) bool {
	for i := 0; ; {
		j := bytes.Index(head[i:], []byte(w))
		if j < 0 {
			return false
		}
		j += i
		end := j + len(w)
		if (j == 0 || !isWordByte(head[j-1])) && (end == len(head) || !isWordByte(head[end])) {
			return true
		}
		i = j + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

func javaPrivate(d, parent *rawDef, head []byte) bool {
	if d.scope {
		return false
	}
	if hasWord(head, "private") {
		return true
	}
	if hasWord(head, "public") || hasWord(head, "protected") {
		return false
	}
	// Interface members are public by default.
	return parent == nil || parent.kind != "interface"
}

func rustPrivate(d, parent *rawDef, head []byte) bool {
	if d.scope {
		return false // an impl block: its items say for themselves
	}
	if i := bytes.Index(head, []byte("pub")); i >= 0 && hasWord(head, "pub") {
		rest := bytes.TrimLeft(head[i+3:], " \t")
		return len(rest) > 0 && rest[0] == '('
	}
	if parent == nil {
		return true
	}
	if parent.kind == "trait" {
		return false
	}
	// In an impl: public when it implements a trait.
	return !parent.scope || !parent.traitImpl
}

// cHeaderPrivate: a header's static functions are its own inline helpers,
// not the entry points it declares.
func cHeaderPrivate(d, _ *rawDef, head []byte) bool {
	switch d.kind {
	case "function":
		return hasWord(head, "static")
	case "macro":
		// By C's convention an all-caps macro is a constant or a helper
		// (EXT4_SB, CHECK_FLAG_VALUE); one named like a function
		// (ext4_iget) stands for one.
		return strings.ToUpper(d.name) == d.name
	}
	return false
}

// rustUnstable reports an item whose attributes (the lines just above
// row, up to the previous item) mark it #[unstable] or #[doc(hidden)]: not
// part of the stable, documented API.
func rustUnstable(lines [][]byte, row int) bool {
	for r := row - 1; r >= 0 && r >= row-12; r-- {
		l := bytes.TrimSpace(lines[r])
		if len(l) == 0 || l[len(l)-1] == '}' || l[len(l)-1] == '{' || l[len(l)-1] == ';' && !bytes.HasPrefix(l, []byte("//")) {
			return false
		}
		if bytes.HasPrefix(l, []byte("#[unstable(")) || bytes.HasPrefix(l, []byte("#[doc(hidden)]")) {
			return true
		}
	}
	return false
}

// rustModuleUnstable reports a file whose inner attributes, before its
// first item, mark the whole module #![unstable] or #![doc(hidden)]
// (std's io/readbuf.rs): none of its items is stable, documented API.
func rustModuleUnstable(lines [][]byte) bool {
	for _, l := range lines {
		l = bytes.TrimSpace(l)
		switch {
		case bytes.HasPrefix(l, []byte("#![unstable(")) || bytes.HasPrefix(l, []byte("#![doc(hidden)]")):
			return true
		case len(l) == 0 || bytes.HasPrefix(l, []byte("//")) || bytes.HasPrefix(l, []byte("#![")):
			continue
		}
		return false
	}
	return false
}

func cPrivate(d, _ *rawDef, head []byte) bool {
	switch d.kind {
	case "function", "variable":
		return hasWord(head, "static")
	}
	return true
}

// rubyPrivacy answers for the methods of one Ruby file.
type rubyPrivacy struct {
	content []byte
	lines   [][]byte
	listed  map[*rawDef]map[string]bool // per class body: the names its `private :name` lines list
}

func newRubyPrivacy(content []byte) *rubyPrivacy {
	return &rubyPrivacy{content: content, lines: bytes.Split(content, []byte{'\n'}), listed: map[*rawDef]map[string]bool{}}
}

func indentOf(l []byte) int { return len(l) - len(bytes.TrimLeft(l, " \t")) }

func (rp *rubyPrivacy) private(d, parent *rawDef, head []byte) bool {
	if d.scope || d.nameRow >= len(rp.lines) {
		return false
	}
	line := rp.lines[d.nameRow]
	if bytes.Contains(line, []byte(":nodoc:")) {
		return true
	}
	trimmed := bytes.TrimLeft(line, " \t")
	for _, kw := range []string{"private ", "protected ", "private_class_method "} {
		if bytes.HasPrefix(trimmed, []byte(kw)) {
			return true
		}
	}
	if d.kind != "method" || parent == nil || parent.scope {
		return false
	}
	indent := indentOf(line)
	// Scan the class body upward for a section keyword at the method's
	// indentation, and the whole body for `private :name` lists.
	for row := d.nameRow - 1; row >= parent.line; row-- {
		l := rp.lines[row]
		if indentOf(l) != indent {
			continue
		}
		w := bytes.TrimSpace(l)
		if i := bytes.IndexByte(w, '#'); i >= 0 {
			w = bytes.TrimSpace(w[:i])
		}
		switch string(w) {
		case "private", "protected":
			return true
		case "public", "module_function":
			row = -1 // ends the scan; a :name list may still apply
		}
	}
	return rp.listedIn(parent)[d.name]
}

// listedIn returns the names a class body's `private :a, :b` (protected,
// private_class_method) lines list.
func (rp *rubyPrivacy) listedIn(parent *rawDef) map[string]bool {
	if l, ok := rp.listed[parent]; ok {
		return l
	}
	l := map[string]bool{}
	for row := parent.line; row < parent.endL && row < len(rp.lines); row++ {
		w := bytes.TrimLeft(rp.lines[row], " \t")
		for _, kw := range []string{"private ", "protected ", "private_class_method "} {
			if !bytes.HasPrefix(w, []byte(kw)) || !bytes.HasPrefix(bytes.TrimSpace(w[len(kw):]), []byte(":")) {
				continue
			}
			for _, f := range bytes.FieldsFunc(w[len(kw):], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
				if n, ok := bytes.CutPrefix(f, []byte(":")); ok {
					l[string(n)] = true
				}
			}
		}
	}
	rp.listed[parent] = l
	return l
}

// objectMethod reports a Java method that overrides java.lang.Object's
// whether or not it says @Override: equals(Object), hashCode(),
// toString(). Every class has them; an overview names what it adds.
func objectMethod(d *Def) bool {
	if d.Kind() != "method" || d.Scope() == "" {
		return false
	}
	switch d.Name() {
	case "hashCode", "toString":
		return strings.Contains(d.Signature(), d.Name()+"()")
	case "equals":
		return strings.Contains(d.Signature(), "equals(Object ")
	}
	return false
}
