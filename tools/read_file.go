package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/workspace"
)

const readFileDescription = `Read a text file of the workspace. Lines are returned numbered (1-based) so you can cite them. Give startLine/endLine (inclusive) to read part of a large file. Paths are workspace-relative. You see your own proposed edits from earlier in this run.`

// ReadFile is the read_file tool.
func ReadFile() *Tool {
	return &Tool{
		Name:        "read_file",
		Description: readFileDescription,
		Schema: json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string","description":"workspace-relative path"},
			"startLine":{"type":"integer","minimum":1},
			"endLine":{"type":"integer","minimum":1}},
			"required":["path"],"additionalProperties":false}`),
		Risk:           RiskRead,
		Idempotent:     true,
		MaxOutputBytes: 64 << 10,
		Run:            runReadFile,
	}
}

func runReadFile(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	var in struct {
		Path      string `json:"path"`
		StartLine int    `json:"startLine"`
		EndLine   int    `json:"endLine"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return errorResult("invalid input: %v", err), nil
	}
	abs, err := env.WS.Resolve(in.Path)
	if err != nil {
		return errorResult("cannot read %q: %v", in.Path, err), nil
	}
	if env.WS.CairnIgnored(env.WS.Rel(abs)) {
		return errorResult("%s is excluded by .cairnignore; the user keeps it out of Cairn's reach", in.Path), nil
	}
	if in.EndLine > 0 && in.EndLine < in.StartLine {
		return errorResult("endLine %d is before startLine %d", in.EndLine, in.StartLine), nil
	}
	src, exists, err := env.Drafts.Open(abs)
	if err != nil {
		return errorResult("cannot read %q: %v", in.Path, err), nil
	}
	if !exists {
		return errorResult("%s does not exist", in.Path), nil
	}
	defer src.Close()
	rel := env.WS.Rel(abs)
	page, err := readLines(src, in.StartLine, in.EndLine, readFileMaxOutput)
	switch {
	case errors.Is(err, errBinary):
		return errorResult("%s is a binary file", in.Path), nil
	case err != nil:
		return errorResult("cannot read %q: %v", in.Path, err), nil
	case page.pastEnd:
		return errorResult("%s has %d lines; startLine %d is past the end", in.Path, page.lines, page.from), nil
	}
	content := page.text
	if page.stopped {
		content += fmt.Sprintf("[read_file stopped after line %d: it returns at most %d KB per call; continue with startLine %d]\n",
			page.to, readFileMaxOutput>>10, page.to+1)
	}
	if page.cutLines > 0 {
		content += fmt.Sprintf("[%d line(s) longer than %d KB were cut; the rest of each is not shown]\n", page.cutLines, readFileMaxLine>>10)
	}
	return Result{Content: content, Summary: fmt.Sprintf("read %s:%d-%d", rel, page.from, page.to)}, nil
}

// Limits of read_file. A file is read as a stream, line by line, and never
// past what the call returns: a line range of a huge file costs only the
// bytes up to it.
const (
	readFileMaxOutput = 60 << 10 // of numbered text per call (under the tool's 64 KB cap)
	readFileMaxLine   = 8 << 10  // shown of one line
)

var errBinary = errors.New("binary file")

// linePage is what readLines read: numbered lines from..to.
type linePage struct {
	text     string
	from, to int
	lines    int  // lines in the file, when it was read to the end
	pastEnd  bool // from lies past the last line
	stopped  bool // the output limit ended the page before to
	cutLines int
}

// readLines streams r and returns lines from..to (1-based, inclusive; 0 =
// from the start / to the end), numbered, at most maxOut bytes of them, each
// line cut at readFileMaxLine. A NUL byte in the first 8000 bytes makes it
// errBinary.
func readLines(r io.Reader, from, to, maxOut int) (linePage, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(8000); workspace.IsBinary(head) {
		return linePage{}, errBinary
	}
	if from < 1 {
		from = 1
	}
	p := linePage{from: from}
	var b strings.Builder
	var key pemKeyState
	n := 0
	for {
		line, cut, err := readLine(br)
		if len(line) == 0 && err != nil {
			if err == io.EOF {
				break
			}
			return p, err
		}
		n++
		inKey := key.next(line)
		if n >= from && (to < 1 || n <= to) {
			text := strings.TrimSuffix(string(line), "\n")
			if inKey {
				text = redact.Marker("private-key")
			}
			entry := fmt.Sprintf("%5d\t%s", n, text)
			if b.Len()+len(entry)+1 > maxOut && b.Len() > 0 {
				p.stopped = true
				break
			}
			b.WriteString(entry)
			b.WriteByte('\n')
			p.to = n
			if cut {
				p.cutLines++
			}
		}
		if to > 0 && n >= to {
			break
		}
		if err == io.EOF {
			break
		}
	}
	p.text = b.String()
	if p.to == 0 {
		p.lines = n
		if n > 0 || from > 1 {
			p.pastEnd = true
		}
		p.to = from - 1
	}
	return p, nil
}

// pemKeyState follows a file line by line through PEM private key blocks,
// from the first line, whatever window is shown: a window that starts or
// ends inside a key's body has no BEGIN or END line for the redactor to
// anchor on, so read_file masks every line of the block itself.
type pemKeyState struct {
	in    bool
	lines int // of the block so far
}

// pemKeyMaxLines ends a block that never ends (an 8192-bit RSA key in PEM
// has about 100 lines).
const pemKeyMaxLines = 400

// next reports whether line belongs to a private key block (its BEGIN and
// END lines included).
func (k *pemKeyState) next(line []byte) bool {
	if !k.in {
		i := bytes.Index(line, []byte("-----BEGIN "))
		if i < 0 || !bytes.Contains(line[i:], []byte("PRIVATE KEY")) || bytes.Contains(line[i:], []byte("-----END ")) {
			return false
		}
		k.in, k.lines = true, 0
	}
	k.lines++
	if bytes.Contains(line, []byte("-----END ")) || k.lines >= pemKeyMaxLines {
		k.in = false
	}
	return true
}

// readLine reads one line (its newline included), keeping at most
// readFileMaxLine bytes and skipping the rest of a longer one.
func readLine(br *bufio.Reader) ([]byte, bool, error) {
	var line []byte
	cut := false
	for {
		chunk, err := br.ReadSlice('\n')
		if room := readFileMaxLine - len(line); room > 0 {
			line = append(line, chunk[:min(len(chunk), room)]...)
			cut = cut || len(chunk) > room
		} else if len(chunk) > 0 {
			cut = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, cut, err
	}
}

func errorResult(format string, args ...any) Result {
	msg := fmt.Sprintf(format, args...)
	return Result{Content: msg, IsError: true, Summary: msg}
}
