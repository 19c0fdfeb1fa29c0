package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

const editFileDescription = `Propose a change to one file: replace oldText, which must occur exactly once in the file (include enough surrounding lines to make it unique), with newText. To create a new file, give its path, an empty oldText and the whole content as newText. Nothing is written to disk: the change is shown to the user, who accepts or rejects it. Later read_file calls in this run see your proposal.`

// EditFile is the edit_file tool.
func EditFile() *Tool {
	return &Tool{
		Name:        "edit_file",
		Description: editFileDescription,
		Schema: json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string","description":"workspace-relative path"},
			"oldText":{"type":"string","description":"exact text to replace; empty to create a new file"},
			"newText":{"type":"string"}},
			"required":["path","oldText","newText"],"additionalProperties":false}`),
		Risk:       RiskWrite,
		Idempotent: false,
		Run:        runEditFile,
	}
}

func runEditFile(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	var in struct {
		Path    string `json:"path"`
		OldText string `json:"oldText"`
		NewText string `json:"newText"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return errorResult("invalid input: %v", err), nil
	}
	abs, err := env.WS.ResolveWritable(in.Path)
	if err != nil {
		return errorResult("cannot edit %q: %v", in.Path, err), nil
	}
	if env.WS.CairnIgnored(env.WS.Rel(abs)) {
		return errorResult("%s is excluded by .cairnignore; the user keeps it out of Cairn's reach", in.Path), nil
	}
	rel := env.WS.Rel(abs)
	cur, exists, err := env.Drafts.Read(abs)
	if err != nil {
		return errorResult("cannot read %q: %v", in.Path, err), nil
	}
	var next string
	created := false
	switch {
	case in.OldText == "" && !exists:
		next, created = in.NewText, true
	case in.OldText == "" && exists && cur == "":
		next = in.NewText
	case in.OldText == "":
		return errorResult("%s already exists; to change it, give the exact oldText to replace", rel), nil
	case !exists:
		return errorResult("%s does not exist; to create it, send an empty oldText", rel), nil
	default:
		n := strings.Count(cur, in.OldText)
		if n == 0 {
			return errorResult("oldText was not found in %s; read the file again and copy the text exactly (whitespace included)", rel), nil
		}
		if n > 1 {
			return errorResult("oldText occurs %d times in %s; include more surrounding lines so it matches once", n, rel), nil
		}
		next = strings.Replace(cur, in.OldText, in.NewText, 1)
	}
	if next == cur && exists {
		return errorResult("the edit changes nothing in %s", rel), nil
	}
	if _, _, err := env.Drafts.Write(abs, next); err != nil {
		return errorResult("cannot record the edit of %s: %v", rel, err), nil
	}
	verb := "proposed an edit to"
	if created {
		verb = "proposed creating"
	}
	return Result{
		Content: fmt.Sprintf("Proposed edit to %s recorded; the user will review it. Later reads in this run show the proposed text.", rel),
		Summary: fmt.Sprintf("%s %s", verb, rel),
		Change:  &FileChange{Abs: abs, Rel: rel, Before: cur, BeforeOK: exists, After: next, Created: created},
	}, nil
}
