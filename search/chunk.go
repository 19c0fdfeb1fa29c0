package search

import (
	"bytes"
	"sort"
)

// Decl is one top-level declaration of a file, as a parser (the repo map's
// tree-sitter pass) found it. Lines are 1-based and inclusive.
type Decl struct {
	Symbol    string // e.g. "ServeHTTP" or "Server.ServeHTTP"
	Kind      string // e.g. "func", "method", "type", "class"
	StartLine int
	EndLine   int
}

// DeclsFunc returns the top-level declarations of one file, or nil when it has
// no grammar for lang (the file is then chunked in overlapping line windows).
// It is called concurrently from several goroutines.
type DeclsFunc func(rel, lang string, content []byte) []Decl

// Chunking parameters.
const (
	windowLines   = 60  // lines per window for files without declarations
	windowOverlap = 10  // lines shared by consecutive windows
	maxDeclLines  = 300 // declarations longer than this are split in windows
	maxChunkBytes = 32 << 10
)

// chunk is one indexed document.
type chunk struct {
	Start, End int // 1-based inclusive lines
	Symbol     string
	Kind       string
	Text       []byte
	Head       []byte // doc comment and declaration line, for declarations
	// DeclLine is the first line of the chunk's own declaration, when the
	// chunk starts one (0 for windows and a large declaration's later windows).
	DeclLine int
	// Docs are the documented declarations the chunk starts (its own and
	// nested ones), for the vocabulary (vocab.go).
	Docs []symDoc
}

// lineStarts returns the byte offset of each line's start; a final line
// without a newline counts.
func lineStarts(content []byte) []int {
	starts := make([]int, 1, bytes.Count(content, []byte{'\n'})+1)
	for i, c := range content {
		if c == '\n' && i+1 < len(content) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineText returns lines [from, to] (1-based inclusive) of content.
func lineText(content []byte, starts []int, from, to int) []byte {
	if from < 1 {
		from = 1
	}
	if to > len(starts) {
		to = len(starts)
	}
	if from > to {
		return nil
	}
	b := starts[from-1]
	e := len(content)
	if to < len(starts) {
		e = starts[to]
	}
	return content[b:e]
}

// chunkFile splits content into documents: one per declaration (with the
// comment lines right above it), the lines between declarations in windows,
// and everything in windows when decls is empty.
func chunkFile(content []byte, decls []Decl) []chunk {
	if len(content) == 0 {
		return nil
	}
	starts := lineStarts(content)
	n := len(starts)
	line := func(i int) []byte { // 1-based, without newline
		t := lineText(content, starts, i, i)
		return bytes.TrimRight(t, "\r\n")
	}
	var out []chunk
	windows := func(from, to int, sym, kind string) {
		// Skip blank edges.
		for from <= to && len(bytes.TrimSpace(line(from))) == 0 {
			from++
		}
		for to >= from && len(bytes.TrimSpace(line(to))) == 0 {
			to--
		}
		if from > to {
			return
		}
		for s := from; ; s += windowLines - windowOverlap {
			e := s + windowLines - 1
			if e > to {
				e = to
			}
			out = append(out, chunk{Start: s, End: e, Symbol: sym, Kind: kind, Text: clip(lineText(content, starts, s, e))})
			if e >= to {
				return
			}
		}
	}
	ds := make([]Decl, 0, len(decls))
	for _, d := range decls {
		if d.StartLine < 1 || d.StartLine > n {
			continue
		}
		if d.EndLine < d.StartLine {
			d.EndLine = d.StartLine
		}
		if d.EndLine > n {
			d.EndLine = n
		}
		ds = append(ds, d)
	}
	sort.SliceStable(ds, func(i, j int) bool { return ds[i].StartLine < ds[j].StartLine })
	next := 1 // first line not yet covered
	for _, d := range ds {
		s := d.StartLine
		if s < next { // nested or overlapping: index within the outer one
			if d.EndLine < next {
				continue
			}
			s = next
		}
		// Take the doc comment right above.
		for s > next && isCommentLine(line(s-1)) {
			s--
		}
		if s > next {
			windows(next, s-1, "", "text")
		}
		if d.EndLine-s+1 > maxDeclLines {
			first := len(out)
			windows(s, d.EndLine, d.Symbol, d.Kind)
			if first < len(out) {
				out[first].Head = clip(lineText(content, starts, s, d.StartLine))
				out[first].DeclLine = d.StartLine
			}
		} else {
			out = append(out, chunk{Start: s, End: d.EndLine, Symbol: d.Symbol, Kind: d.Kind, Text: clip(lineText(content, starts, s, d.EndLine)), DeclLine: d.StartLine})
		}
		out[len(out)-1].Head = clip(lineText(content, starts, s, d.StartLine))
		next = d.EndLine + 1
	}
	if next <= n {
		windows(next, n, "", "text")
	}
	addDocs(out, ds, line, n)
	return out
}

// maxHeadBytes bounds the documentation a chunk's Head collects (a window of
// a large class with many documented members), so one chunk's meta field
// stays a summary rather than a second body.
const maxHeadBytes = 8 << 10

// addDocs completes the chunks' Heads with the documentation that the
// chunking alone leaves in the body, where it counts as code: a Python
// docstring under its def or class; the doc comments (and docstrings) of
// declarations nested in a chunk (a Java class's methods, a Ruby module's
// defs, a Python class's methods), each with its declaration line; and the
// file's own documentation (Go's package comment, Rust's //!, a module
// docstring, a C or Ruby file's header comment) for the chunk holding it.
// ds is sorted by start line.
func addDocs(out []chunk, ds []Decl, line func(int) []byte, n int) {
	if len(out) == 0 {
		return
	}
	j := 0 // first decl not before the chunk
	for i := range out {
		c := &out[i]
		// Head slices the file's content: appending must copy, not
		// write over the lines after it.
		c.Head = c.Head[:len(c.Head):len(c.Head)]
		for j < len(ds) && ds[j].StartLine < c.Start {
			j++
		}
		for k := j; k < len(ds) && ds[k].StartLine <= c.End && len(c.Head) < maxHeadBytes; k++ {
			d := ds[k]
			mark := len(c.Head)
			if d.StartLine == c.DeclLine {
				// The chunk's own declaration: its comment is in Head already.
				mark = 0
				c.Head = appendDocstring(c.Head, line, d.StartLine, d.EndLine, 60)
			} else {
				// Only a documented nested declaration adds anything: its
				// doc's summary with its declaration line, which says what
				// the doc is about. The lines of undocumented members would
				// make the meta field a list of the body's signatures,
				// whose parameter names score as names, and would lengthen
				// it, which lowers the score of the chunk's own doc.
				above := appendCommentAbove(nil, line, d.StartLine, 1) // the comment may begin in the window before
				below := appendDocstring(nil, line, d.StartLine, d.EndLine, nestedDocLines)
				if len(above) == 0 && len(below) == 0 {
					continue
				}
				c.Head = append(c.Head, above...)
				c.Head = append(append(c.Head, bytes.TrimSpace(line(d.StartLine))...), '\n')
				c.Head = append(c.Head, below...)
			}
			if doc := c.Head[mark:]; bytes.IndexByte(doc, '\n') < len(doc)-1 { // more than the declaration line
				c.Docs = append(c.Docs, symDoc{Sym: d.Symbol, Doc: doc[:len(doc):len(doc)]})
			}
		}
		if len(c.Head) > maxHeadBytes {
			c.Head = c.Head[:maxHeadBytes]
		}
	}
	if out[0].Kind == "text" {
		out[0].Head = out[0].Head[:len(out[0].Head):len(out[0].Head)]
		// The file's header runs over its leading windows.
		end := out[0].End
		for i := 1; i < len(out) && out[i].Kind == "text"; i++ {
			end = out[i].End
		}
		out[0].Head = append(out[0].Head, fileDoc(line, min(n, end))...)
	}
}

// appendCommentAbove appends the comment lines right above line at (not
// above from) to head.
func appendCommentAbove(head []byte, line func(int) []byte, at, from int) []byte {
	s := at
	for s > from && s > at-40 && isDocLine(line(s-1)) {
		s--
	}
	n := 0
	for l := s; l < at && n < nestedDocLines; l++ {
		t := bytes.TrimSpace(line(l))
		if d := bytes.Trim(t, "/*#! \t"); len(d) == 0 || d[0] == '@' {
			// Blank, or a tag (@param, @deprecated, @see): markup, not
			// the summary.
			continue
		}
		head = append(append(head, t...), '\n')
		n++
	}
	return head
}

// nestedDocLines are the lines of a nested declaration's doc comment that
// its enclosing chunk's Head takes: its summary. A window of a large class
// holds many members; their whole docs made its meta field a second body.
var nestedDocLines = 1

// appendDocstring appends the docstring of the def or class at line at (a
// Python string literal first in its body, after a signature ending in a
// colon), at most max lines of it, to head.
func appendDocstring(head []byte, line func(int) []byte, at, end, max int) []byte {
	l := at
	for ; l <= end && l < at+10; l++ {
		if bytes.HasSuffix(bytes.TrimRight(line(l), " \t\r"), []byte(":")) {
			break
		}
	}
	if l >= end || l >= at+10 {
		return head
	}
	l++
	for l <= end && len(bytes.TrimSpace(line(l))) == 0 {
		l++
	}
	if l > end {
		return head
	}
	doc, _ := stringLiteral(line, l, end)
	for i, n := 0, 0; i < len(doc); i++ {
		if doc[i] == '\n' {
			if n++; n == max {
				doc = doc[:i+1]
				break
			}
		}
	}
	return append(head, doc...)
}

// stringLiteral returns the lines of a triple-quoted string starting at
// line at (nil when none starts there) and the line after it.
func stringLiteral(line func(int) []byte, at, end int) ([]byte, int) {
	t := bytes.TrimLeft(bytes.TrimSpace(line(at)), "rRbBuU")
	var q []byte
	switch {
	case bytes.HasPrefix(t, []byte(`"""`)):
		q = []byte(`"""`)
	case bytes.HasPrefix(t, []byte(`'''`)):
		q = []byte(`'''`)
	default:
		return nil, at
	}
	var doc []byte
	for l := at; l <= end && l < at+60; l++ {
		t := bytes.TrimSpace(line(l))
		doc = append(append(doc, t...), '\n')
		if bytes.Count(t, q) >= 2 || (l > at && bytes.Contains(t, q)) {
			return doc, l + 1
		}
	}
	return doc, at + 60
}

// fileDoc is a file's documentation: the comment blocks and the module
// docstring before its first line of code (up to to), without licence
// boilerplate.
func fileDoc(line func(int) []byte, to int) []byte {
	var doc, block []byte
	license := false
	flush := func() {
		if !license {
			doc = append(doc, block...)
		}
		block, license = block[:0:0], false
	}
	inBlock := false // inside a /* */ comment
	for l := 1; l <= to && len(doc) < maxHeadBytes; l++ {
		t := bytes.TrimSpace(line(l))
		switch {
		case inBlock:
			if bytes.Contains(t, []byte("*/")) {
				inBlock = false
			}
		case len(t) == 0:
			flush()
			continue
		case bytes.HasPrefix(t, []byte("/*")):
			flush()
			inBlock = !bytes.Contains(t[2:], []byte("*/"))
		case isDocLine(t) || bytes.HasPrefix(t, []byte("#!")) || bytes.HasPrefix(t, []byte("#[")):
		default:
			if s, next := stringLiteral(line, l, to); s != nil {
				flush()
				doc = append(doc, s...)
				l = next - 1
				continue
			}
			if bytes.HasPrefix(t, []byte("package ")) || bytes.HasPrefix(t, []byte("import ")) ||
				bytes.HasPrefix(t, []byte("#include")) || bytes.HasPrefix(t, []byte("require")) ||
				bytes.HasPrefix(t, []byte("use ")) || bytes.HasPrefix(t, []byte("from ")) {
				// Declarations of what the file uses: the doc may follow
				// (a Python docstring after imports does not count; a C
				// file's comment after its includes does).
				flush()
				continue
			}
			flush()
			return doc
		}
		lt := bytes.ToLower(t)
		if bytes.Contains(lt, []byte("copyright")) || bytes.Contains(lt, []byte("license")) ||
			bytes.Contains(lt, []byte("spdx-")) || bytes.Contains(lt, []byte("frozen_string_literal")) {
			license = true
		}
		block = append(append(block, t...), '\n')
	}
	flush()
	return doc
}

// isDocLine reports whether a line is a comment that may document what
// follows: //, /* and * lines (Go, C, Java, Rust, JavaScript), # lines
// that are comments rather than directives (Python, Ruby, shell).
func isDocLine(l []byte) bool {
	t := bytes.TrimSpace(l)
	if bytes.HasPrefix(t, []byte("#")) {
		// "#include", "#define" (C), "#!" and "#[" (Rust attributes) are no comments.
		return len(t) == 1 || !(t[1] >= 'a' && t[1] <= 'z' || t[1] == '!' || t[1] == '[')
	}
	return bytes.HasPrefix(t, []byte("//")) || bytes.HasPrefix(t, []byte("/*")) ||
		bytes.HasPrefix(t, []byte("*")) || bytes.HasPrefix(t, []byte("--"))
}

func clip(b []byte) []byte {
	if len(b) > maxChunkBytes {
		return b[:maxChunkBytes]
	}
	return b
}

func isCommentLine(l []byte) bool {
	t := bytes.TrimSpace(l)
	return bytes.HasPrefix(t, []byte("//")) || bytes.HasPrefix(t, []byte("#")) ||
		bytes.HasPrefix(t, []byte("/*")) || bytes.HasPrefix(t, []byte("*")) ||
		bytes.HasPrefix(t, []byte("--")) || bytes.HasPrefix(t, []byte(";"))
}
