package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

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
	text, exists, err := env.Drafts.Read(abs)
	if err != nil {
		return errorResult("cannot read %q: %v", in.Path, err), nil
	}
	if !exists {
		return errorResult("%s does not exist", in.Path), nil
	}
	if workspace.IsBinary([]byte(text)) {
		return errorResult("%s is a binary file", in.Path), nil
	}
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	from, to := 1, len(lines)
	if in.StartLine > 0 {
		from = in.StartLine
	}
	if in.EndLine > 0 && in.EndLine < to {
		to = in.EndLine
	}
	if from > len(lines) && len(lines) > 0 {
		return errorResult("%s has %d lines; startLine %d is past the end", in.Path, len(lines), from), nil
	}
	var b strings.Builder
	for i := from; i <= to && i <= len(lines); i++ {
		fmt.Fprintf(&b, "%5d\t%s", i, lines[i-1])
		if !strings.HasSuffix(lines[i-1], "\n") {
			b.WriteByte('\n')
		}
	}
	rel := env.WS.Rel(abs)
	return Result{Content: b.String(), Summary: fmt.Sprintf("read %s:%d-%d", rel, from, min(to, len(lines)))}, nil
}

func errorResult(format string, args ...any) Result {
	msg := fmt.Sprintf(format, args...)
	return Result{Content: msg, IsError: true, Summary: msg}
}
