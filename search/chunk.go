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
			}
		} else {
			out = append(out, chunk{Start: s, End: d.EndLine, Symbol: d.Symbol, Kind: d.Kind, Text: clip(lineText(content, starts, s, d.EndLine))})
		}
		out[len(out)-1].Head = clip(lineText(content, starts, s, d.StartLine))
		next = d.EndLine + 1
	}
	if next <= n {
		windows(next, n, "", "text")
	}
	return out
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
