package search

import (
	"bytes"
	"path"
	"sort"
	"strings"
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

// LangOf names the language of a file from its name, "" when unknown.
func LangOf(rel string) string {
	base := path.Base(rel)
	switch base {
	case "Makefile", "makefile", "GNUmakefile":
		return "make"
	case "Dockerfile":
		return "dockerfile"
	case "go.mod", "go.sum", "go.work":
		return "gomod"
	}
	ext := strings.ToLower(path.Ext(base))
	if l, ok := extLang[ext]; ok {
		return l
	}
	return ""
}

var extLang = map[string]string{
	".go": "go", ".s": "asm", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
	".hpp": "cpp", ".hh": "cpp", ".py": "python", ".js": "javascript", ".mjs": "javascript",
	".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".tsx": "typescript",
	".java": "java", ".kt": "kotlin", ".rs": "rust", ".rb": "ruby", ".php": "php", ".cs": "csharp",
	".swift": "swift", ".scala": "scala", ".lua": "lua", ".sh": "bash", ".bash": "bash",
	".zsh": "bash", ".md": "markdown", ".txt": "text", ".json": "json", ".yaml": "yaml",
	".yml": "yaml", ".toml": "toml", ".html": "html", ".css": "css", ".sql": "sql",
	".proto": "protobuf", ".xml": "xml", ".el": "elisp", ".ml": "ocaml", ".ex": "elixir",
	".exs": "elixir", ".erl": "erlang", ".hs": "haskell", ".vim": "vim", ".scm": "scheme",
	".tmpl": "template", ".rst": "rst",
}

// HeuristicDecls finds top-level declarations without a parser, for Go
// (gofmt'd: declarations start in column 0 and close with "}" or ")" in
// column 0) and Python (def/class in column 0). Other languages return nil.
// It is the default DeclsFunc; the repo map's tree-sitter parser replaces it.
func HeuristicDecls(rel, lang string, content []byte) []Decl {
	switch lang {
	case "go":
		return goDecls(content)
	case "python":
		return pyDecls(content)
	}
	return nil
}

func splitLines(content []byte) [][]byte {
	ls := bytes.Split(content, []byte{'\n'})
	if len(ls) > 0 && len(ls[len(ls)-1]) == 0 {
		ls = ls[:len(ls)-1]
	}
	return ls
}

func goDecls(content []byte) []Decl {
	lines := splitLines(content)
	var out []Decl
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		var kind string
		switch {
		case bytes.HasPrefix(l, []byte("func ")):
			kind = "func"
		case bytes.HasPrefix(l, []byte("type ")):
			kind = "type"
		case bytes.HasPrefix(l, []byte("var ")):
			kind = "var"
		case bytes.HasPrefix(l, []byte("const ")):
			kind = "const"
		default:
			continue
		}
		sym, k := goSymbol(l, kind)
		end := i
		t := bytes.TrimRight(l, " \t\r")
		block := bytes.HasSuffix(t, []byte("{")) || bytes.HasSuffix(t, []byte("("))
		if kind == "func" && bytes.HasSuffix(t, []byte(",")) {
			block = true // multi-line signature
		}
		if block {
			end = len(lines) - 1
			for j := i + 1; j < len(lines); j++ {
				lj := lines[j]
				if len(lj) == 0 {
					continue
				}
				if lj[0] == '}' || lj[0] == ')' {
					end = j
					break
				}
				if lj[0] != ' ' && lj[0] != '\t' && lj[0] != '\r' && lj[0] != '/' && lj[0] != '*' {
					// Another top-level line: the declaration ended before.
					end = j - 1
					for end > i && (len(bytes.TrimSpace(lines[end])) == 0 || isCommentLine(lines[end])) {
						end--
					}
					break
				}
			}
		}
		out = append(out, Decl{Symbol: sym, Kind: k, StartLine: i + 1, EndLine: end + 1})
		i = end
	}
	return out
}

func goSymbol(l []byte, kind string) (string, string) {
	rest := string(l[len(kind)+1:])
	if kind == "func" && strings.HasPrefix(rest, "(") {
		// Method: func (r *Recv[T]) Name(
		close := strings.Index(rest, ")")
		if close < 0 {
			return "", "method"
		}
		recv := strings.Fields(rest[1:close])
		rt := ""
		if len(recv) > 0 {
			rt = strings.TrimLeft(recv[len(recv)-1], "*")
			if k := strings.IndexByte(rt, '['); k >= 0 {
				rt = rt[:k]
			}
		}
		name := identPrefix(strings.TrimSpace(rest[close+1:]))
		if rt != "" {
			return rt + "." + name, "method"
		}
		return name, "method"
	}
	return identPrefix(rest), kind
}

func identPrefix(s string) string {
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c > 127) {
			return s[:i]
		}
	}
	return s
}

func pyDecls(content []byte) []Decl {
	lines := splitLines(content)
	var out []Decl
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		var kind, rest string
		switch {
		case bytes.HasPrefix(l, []byte("def ")):
			kind, rest = "function", string(l[4:])
		case bytes.HasPrefix(l, []byte("async def ")):
			kind, rest = "function", string(l[10:])
		case bytes.HasPrefix(l, []byte("class ")):
			kind, rest = "class", string(l[6:])
		default:
			continue
		}
		end := i
		for j := i + 1; j < len(lines); j++ {
			lj := lines[j]
			if len(bytes.TrimSpace(lj)) == 0 {
				continue
			}
			if lj[0] != ' ' && lj[0] != '\t' && lj[0] != '#' && lj[0] != ')' {
				break
			}
			end = j
		}
		out = append(out, Decl{Symbol: identPrefix(rest), Kind: kind, StartLine: i + 1, EndLine: end + 1})
		i = end
	}
	return out
}
