package repomap

import (
	"bytes"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn/workspace"
)

// Documentation examples: the code a package's authors put in its
// documentation to show how it is used — rustdoc's fenced blocks, a
// Javadoc <pre> block, JSDoc's @example, a docstring's >>> lines, RDoc's
// indented verbatim lines. Like Go's Example functions (facts.go), they
// are the package's own account of its use from outside, where the
// references inside a package only see its plumbing: nothing in
// java.net.http calls HttpRequest.Builder.POST, but its documentation's
// example does. FileTags.Examples lists the names an example calls or
// names (score.go weighs the definitions of them when nothing is focused).

// exampleLangs are the languages whose documentation examples are read.
// Go has its Example functions; C's kernel-doc has no example convention.
var exampleLangs = map[string]bool{
	"rust": true, "java": true, "javascript": true, "typescript": true, "tsx": true,
	"python": true, "ruby": true,
}

// exampleNames returns the names the documentation examples of content
// (in language lang) call or name, each once, sorted, with the number of
// example lines that name it (nil when none).
func exampleNames(lang string, content []byte) []Ref {
	if !exampleLangs[lang] {
		return nil
	}
	var c exampleLines
	exampleCode(lang, content, func(code []byte) { c.add(lang, code) })
	return c.refs()
}

// exampleLines counts, per name, the lines of example code naming it.
type exampleLines struct {
	names []str // each line's distinct names, one after the other
	line  []str
}

// add takes one line of example code in language lang.
func (c *exampleLines) add(lang string, code []byte) {
	c.line = c.line[:0]
	codeNames(lang, code, func(name []byte) {
		c.line = append(c.line, internStr(string(name)))
	})
	slices.Sort(c.line)
	c.names = append(c.names, slices.Compact(c.line)...)
}

// refs returns the names counted, each once, sorted, with its lines as
// its Count (nil for none).
func (c *exampleLines) refs() []Ref {
	names := c.names
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	var out []Ref
	for i := 0; i < len(names); {
		j := i + 1
		for j < len(names) && names[j] == names[i] {
			j++
		}
		out = append(out, Ref{name: names[i], Count: refCount(int64(j - i))})
		i = j
	}
	return out
}

// Markdown: a package's README and guides show it in use in fenced code
// (zod's README: z.string(), schema.safeParse(data), .optional()). The
// map reads the Markdown files nearest the root (at most maxDocFiles, each
// at most maxDocFileSize; a monorepo's thousands of pages are not all
// read on every build) and counts the names in their code fences of a
// language it tags, as in a doc comment's example.
const (
	maxDocFiles    = 64
	maxDocFileSize = 256 << 10
)

// IsMarkdown reports a Markdown file (by workspace.LanguageOf): its code
// fences are examples (markdownExamples), read again when one changes
// (Refresh).
func IsMarkdown(rel string) bool {
	return workspace.LanguageOf(rel) == "markdown"
}

// markdownExamples returns the names the code fences of docs (Markdown
// files of the walk, read with read) use, each once, sorted, with the
// lines naming it.
func (m *Map) markdownExamples(docs []workspace.File, read func(abs string) ([]byte, error)) []Ref {
	slices.SortStableFunc(docs, func(a, b workspace.File) int {
		return strings.Count(a.Rel, "/") - strings.Count(b.Rel, "/")
	})
	var c exampleLines
	n := 0
	for _, f := range docs {
		if n == maxDocFiles {
			break
		}
		if f.Size > maxDocFileSize || m.opts.Exclude != nil && m.opts.Exclude(f.Rel) {
			continue
		}
		b, err := read(f.Abs)
		if err != nil {
			continue
		}
		n++
		fence := "" // the open fence's language; "-" for one of another language
		for l := range bytes.Lines(b) {
			t := bytes.TrimSpace(l)
			if info, ok := bytes.CutPrefix(t, []byte("```")); ok {
				if fence != "" {
					fence = ""
				} else if fence = markdownFenceLang(info); fence == "" {
					fence = "-"
				}
				continue
			}
			if fence == "" || fence == "-" {
				continue
			}
			c.add(fence, t)
		}
	}
	return c.refs()
}

// markdownFenceLang is the language of a code fence's info string whose
// names count ("" for another: a shell session, JSON, text).
func markdownFenceLang(info []byte) string {
	f := strings.Fields(string(info))
	if len(f) == 0 {
		return ""
	}
	switch strings.ToLower(f[0]) {
	case "ts", "typescript", "tsx", "js", "javascript", "jsx", "mjs":
		return "typescript"
	case "rust", "rs":
		return "rust"
	case "java":
		return "java"
	case "ruby", "rb":
		return "ruby"
	case "python", "py", "pycon":
		return "python"
	case "go":
		return "go"
	case "c", "cpp", "c++":
		return "c"
	}
	return ""
}

// exampleCode calls emit with each line of example code in the
// documentation of content.
func exampleCode(lang string, content []byte, emit func(code []byte)) {
	// In a /** comment; in a ``` fence; in example code.
	var inDoc, inFence, inCode bool
	for line := range bytes.Lines(content) {
		t := bytes.TrimSpace(line)
		switch lang {
		case "rust":
			// /// and //! lines; code inside ``` fences, unless the fence
			// names another language (```text, ```console).
			text, ok := cutAny(t, "///", "//!")
			if !ok {
				inFence, inCode = false, false
				continue
			}
			text = bytes.TrimSpace(text)
			if info, ok := bytes.CutPrefix(text, []byte("```")); ok {
				inFence = !inFence
				inCode = inFence && rustCodeFence(info)
				continue
			}
			if inCode {
				emit(bytes.TrimPrefix(text, []byte("# "))) // a hidden line runs too
			}
		case "java", "javascript", "typescript", "tsx":
			if !inDoc {
				if !bytes.HasPrefix(t, []byte("/**")) {
					continue
				}
				inDoc, inFence, inCode = true, false, false
				t = t[3:]
			}
			end := bytes.Contains(t, []byte("*/"))
			if end {
				t, _, _ = bytes.Cut(t, []byte("*/"))
				inDoc = false
			}
			t = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(t), []byte("*")))
			if lang == "java" {
				// <pre>{@code ... }</pre> and <pre> ... </pre>.
				if _, after, ok := bytes.Cut(t, []byte("<pre>")); ok {
					inCode = true
					t = bytes.TrimPrefix(bytes.TrimSpace(after), []byte("{@code"))
				}
				if before, _, ok := bytes.Cut(t, []byte("</pre>")); ok {
					if inCode {
						emit(before)
					}
					inCode = false
					continue
				}
			} else {
				// A ``` fence of code (rxjs's "## Example" sections), and
				// JSDoc's @example up to the next tag.
				if info, ok := bytes.CutPrefix(t, []byte("```")); ok {
					inFence = !inFence
					inCode = inFence && (len(bytes.TrimSpace(info)) == 0 || markdownFenceLang(info) == "typescript")
					continue
				}
				if !inFence && bytes.HasPrefix(t, []byte("@")) {
					inCode = bytes.HasPrefix(t, []byte("@example"))
					continue
				}
			}
			if inCode {
				emit(t)
			}
			if end {
				inCode = false
			}
		case "python":
			// A docstring's doctest lines.
			if code, ok := cutAny(t, ">>> ", "... "); ok {
				emit(code)
			}
		case "ruby":
			// RDoc's verbatim text: a comment line indented past the
			// paragraph's ("#   http = Net::HTTP.new(host)").
			if text, ok := bytes.CutPrefix(t, []byte("#")); ok && bytes.HasPrefix(text, []byte("   ")) {
				emit(bytes.TrimSpace(text))
			}
		}
	}
}

// rustCodeFence reports whether a rustdoc fence's info string (after the
// backticks) opens Rust code: none, or rust's attributes (ignore, no_run,
// should_panic, compile_fail, edition2021, ...), not another language.
func rustCodeFence(info []byte) bool {
	info = bytes.TrimSpace(info)
	if len(info) == 0 {
		return true
	}
	for _, a := range bytes.Split(info, []byte(",")) {
		switch a := string(bytes.TrimSpace(a)); {
		case a == "rust" || a == "ignore" || a == "no_run" || a == "should_panic" || a == "compile_fail":
		case len(a) > 7 && a[:7] == "edition":
		default:
			return false
		}
	}
	return true
}

// cutAny cuts the first of prefixes that b starts with.
func cutAny(b []byte, prefixes ...string) ([]byte, bool) {
	for _, p := range prefixes {
		if rest, ok := bytes.CutPrefix(b, []byte(p)); ok {
			return rest, true
		}
	}
	return nil, false
}

// codeNames calls name with each name a line of example code calls or
// names: a name called (f(…)), reached as a member or path (x.f, T::f,
// Net::HTTP) or capitalized (a type, class or constant: HashMap). Strings
// and trailing comments are skipped. Ruby's x.attr = v names the setter
// attr=, and its names may end in ? or !.
func codeNames(lang string, code []byte, name func([]byte)) {
	var buf [64]byte
	prev := byte(0) // the last byte before the name that is not a space
	for i := 0; i < len(code); {
		c := code[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			if c == '\'' && (lang == "rust" || lang == "java") {
				// A Rust lifetime or char, a Java char: skip the quote only.
				i++
				prev = c
				continue
			}
			j := i + 1
			for j < len(code) && code[j] != c {
				if code[j] == '\\' {
					j++
				}
				j++
			}
			i, prev = j+1, c
		case c == '/' && i+1 < len(code) && code[i+1] == '/' && lang != "python" && lang != "ruby",
			c == '#' && (lang == "python" || lang == "ruby") && !(i+1 < len(code) && code[i+1] == '{'):
			return
		case isIdentStart(c):
			j := i + 1
			for j < len(code) && isNameByte(code[j]) {
				j++
			}
			if lang == "ruby" && j < len(code) && (code[j] == '?' || code[j] == '!') {
				j++
			}
			id := code[i:j]
			k := j
			for k < len(code) && code[k] == ' ' {
				k++
			}
			next := byte(0)
			if k < len(code) {
				next = code[k]
			}
			member := prev == '.' || prev == ':'
			switch {
			case lang == "ruby" && prev == '.' && next == '=' && (k+1 >= len(code) || code[k+1] != '=' && code[k+1] != '~'):
				if len(id) < len(buf) {
					name(append(append(buf[:0], id...), '='))
				}
			case member || next == '(' || id[0] >= 'A' && id[0] <= 'Z':
				name(id)
			}
			i, prev = j, 'a'
		case c == ' ' || c == '\t':
			i++
		default:
			i, prev = i+1, c
		}
	}
}

// isIdentStart reports a byte that may begin an identifier.
func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
