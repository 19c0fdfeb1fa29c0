package repomap

import "bytes"

// Documentation: how many lines of documentation a definition carries
// (Def.docLines). A package's authors document what they offer its users —
// Javadoc on a public class, kernel-doc on an exported function, rustdoc
// with examples on a collection's methods, RDoc on a library's entry
// points — and leave their helpers a line or none, so with no focus the
// amount of it is a ranking input that reads the authors' intent in every
// language (score.go), where references inside the package only see its
// own plumbing.
//
// The lines counted are the comment lines just above the definition (past
// its attributes and annotations: Rust's #[...], Java's @Override) and, in
// Python, its docstring. A blank line ends a comment block (a licence
// header or a section comment separated from the definition is not its
// documentation), except after a /** comment, which documents what follows
// it however spaced (the JDK leaves a blank line before many classes).

// maxDocLines caps a definition's count: beyond a screenful, more
// documentation says nothing more about how central a name is.
const maxDocLines = 200

// docLines returns the documentation lines of the definition whose first
// line is the 0-based row (and whose name is on nameRow) in content, and
// whether they, its annotations or its attributes mark it deprecated
// (deprecationMarks).
func docLines(lang string, content []byte, li *lineIndex, row, nameRow int) (n uint16, deprecated bool) {
	for r := row; r <= nameRow && r < len(li.starts); r++ {
		// Java's annotations are modifiers of the declaration itself.
		deprecated = deprecated || isDeprecationMark(lineAt(content, li, r))
	}
	if lang == "python" {
		lines, dep := pythonDocstring(content, li, nameRow)
		return uint16(min(lines, maxDocLines)), deprecated || dep
	}
	hash := lang == "ruby"
	for r := row - 1; r >= 0 && n < maxDocLines; r-- {
		l := bytes.TrimSpace(lineAt(content, li, r))
		switch {
		case len(l) == 0:
			if n == 0 && !hash && docCommentEndsAbove(content, li, r) {
				continue
			}
			return n, deprecated
		case isCommentLine(l, hash):
			n++
		case n == 0 && isAttributeLine(l):
			// Attributes and annotations sit between a definition and its
			// documentation.
		default:
			return n, deprecated
		}
		deprecated = deprecated || isDeprecationMark(l)
	}
	return n, deprecated
}

// deprecationMarks are how authors mark a definition deprecated, in the
// languages' own conventions: Java's annotation, the @deprecated tag of
// Javadoc, JSDoc and YARD, Rust's attribute, the "Deprecated:" paragraph
// of Go doc comments, Sphinx's directive in a Python docstring, and the
// kernel's attribute.
var deprecationMarks = [][]byte{
	[]byte("@Deprecated"), []byte("@deprecated"), []byte("#[deprecated"), []byte("Deprecated: "),
	[]byte(".. deprecated::"), []byte("__deprecated"),
}

// isDeprecationMark reports a line that carries a deprecationMark. It
// runs on every documentation line while tagging: one search for what
// every mark contains comes first.
func isDeprecationMark(l []byte) bool {
	if !bytes.Contains(l, []byte("eprecated")) {
		return false
	}
	for _, m := range deprecationMarks {
		if bytes.Contains(l, m) {
			return true
		}
	}
	return false
}

// docCommentEndsAbove reports whether the nearest non-blank line above the
// 0-based row (within two lines) closes a /** documentation comment (not a
// plain /* section comment).
func docCommentEndsAbove(content []byte, li *lineIndex, row int) bool {
	for r := row - 1; r >= 0 && r >= row-2; r-- {
		l := bytes.TrimSpace(lineAt(content, li, r))
		if len(l) == 0 {
			continue
		}
		if !bytes.HasSuffix(l, []byte("*/")) {
			return false
		}
		for ; r >= 0 && r >= row-maxDocLines; r-- {
			l := bytes.TrimSpace(lineAt(content, li, r))
			if i := bytes.Index(l, []byte("/*")); i >= 0 {
				return bytes.HasPrefix(l[i:], []byte("/**"))
			}
		}
		return false
	}
	return false
}

// isCommentLine reports a trimmed line that is (part of) a comment: //,
// /* ... */ and its * continuation lines, or # in Ruby.
func isCommentLine(l []byte, hash bool) bool {
	if hash {
		return l[0] == '#'
	}
	return bytes.HasPrefix(l, []byte("//")) || bytes.HasPrefix(l, []byte("/*")) ||
		l[0] == '*' || bytes.HasSuffix(l, []byte("*/"))
}

// isAttributeLine reports a Rust attribute or a Java annotation line (not
// a whole annotated declaration: "@Deprecated public void f() {}").
func isAttributeLine(l []byte) bool {
	return (bytes.HasPrefix(l, []byte("#[")) || l[0] == '@') && !bytes.ContainsAny(l[len(l)-1:], "{};")
}

// pythonDocstring counts the lines of the docstring that opens the body
// after the signature on nameRow, 0 for none, and reports whether one of
// them marks the definition deprecated.
func pythonDocstring(content []byte, li *lineIndex, nameRow int) (int, bool) {
	r := nameRow + 1
	// The signature may continue over lines: the body starts after the
	// line ending in a colon.
	for s := nameRow; s < len(li.starts) && s < nameRow+20; s++ {
		if bytes.HasSuffix(bytes.TrimSpace(stripHashComment(lineAt(content, li, s))), []byte(":")) {
			r = s + 1
			break
		}
	}
	for r < len(li.starts) && len(bytes.TrimSpace(lineAt(content, li, r))) == 0 {
		r++
	}
	if r >= len(li.starts) {
		return 0, false
	}
	l := bytes.TrimLeft(bytes.TrimSpace(lineAt(content, li, r)), "rRuUbB")
	var quote []byte
	switch {
	case bytes.HasPrefix(l, []byte(`"""`)):
		quote = []byte(`"""`)
	case bytes.HasPrefix(l, []byte(`'''`)):
		quote = []byte(`'''`)
	default:
		return 0, false
	}
	deprecated := isDeprecationMark(l)
	if bytes.Contains(l[3:], quote) {
		return 1, deprecated
	}
	for n := 2; r+n-1 < len(li.starts) && n <= maxDocLines; n++ {
		l := lineAt(content, li, r+n-1)
		deprecated = deprecated || isDeprecationMark(l)
		if bytes.Contains(l, quote) {
			return n, deprecated
		}
	}
	return maxDocLines, deprecated
}

// stripHashComment cuts a trailing # comment (roughly: a # inside a string
// on a signature line is rare).
func stripHashComment(l []byte) []byte {
	if i := bytes.IndexByte(l, '#'); i >= 0 {
		return l[:i]
	}
	return l
}

// lineAt returns the 0-based row of content, without its newline.
func lineAt(content []byte, li *lineIndex, row int) []byte {
	start := int(li.starts[row])
	end := len(content)
	if row+1 < len(li.starts) {
		end = int(li.starts[row+1])
	}
	if start > len(content) {
		return nil
	}
	return bytes.TrimRight(content[start:end], "\r\n")
}
