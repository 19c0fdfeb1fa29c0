package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/cairn-dev/cairn/workspace"
)

// ProtectedEdit starts the approval detail of an edit_file call on a
// protected path (workspace.Protected): git's directories, Cairn's policy,
// editor, CI and direnv configuration. The gate always asks for it, whatever
// the policy says, and denies it when it cannot ask (approval mode policy);
// "cairn ask" proposes one only when --apply-protected names its path. The
// rest of the first line is the path (quoted when it holds control or
// space characters at its ends); the next line says why it matters.
const ProtectedEdit = "[protected path] "

const editFileDescription = `Propose a change to one file: replace oldText, which must occur exactly once in the file (include enough surrounding lines to make it unique), with newText. To create a new file, give its path, an empty oldText and the whole content as newText. Nothing is written to disk: the change is shown to the user, who accepts or rejects it. Later read_file calls in this run see your proposal. Protected paths (git hooks and config, .cairn/, .vscode/ and other editor configuration, CI workflows, .devcontainer/, .envrc) are proposed only after the user confirms that one edit; inside any .git directory nothing can be edited.`

// EditFile is the edit_file tool of a registry that does not know its
// workspace: protected paths are recognized by name only when the call is
// classified, and an edit that turns out to touch a protected location of
// the workspace it runs in (a git directory by content) is refused, since
// nobody confirmed it. Registries use EditFileIn.
func EditFile() *Tool { return EditFileIn("") }

// EditFileIn is the edit_file tool for the workspace at root. A call on a
// protected path is classified with a ProtectedEdit detail, so it is
// proposed only after a confirmation naming the path and why it matters.
func EditFileIn(root string) *Tool {
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
		Classify:   func(input json.RawMessage) (Risk, string) { return classifyEdit(root, input) },
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
			return runEditFile(ctx, env, input, root)
		},
	}
}

// classifyEdit describes an edit of a protected path for its confirmation:
// the path, why it matters and a digest of the change (so an "Allow for
// session" answer covers this exact change only, never another edit of the
// same file). Other edits have no detail: they are proposals the user
// reviews in the diff view.
func classifyEdit(root string, input json.RawMessage) (Risk, string) {
	var in editFileInput
	if err := json.Unmarshal(input, &in); err != nil {
		return RiskWrite, ""
	}
	if workspace.InDotGit(in.Path) {
		return RiskWrite, "" // refused outright when it runs: nothing to confirm
	}
	why, ok := protectedEditPath(root, in.Path)
	if !ok {
		return RiskWrite, ""
	}
	sum := sha256.Sum256([]byte(in.Path + "\x00" + in.OldText + "\x00" + in.NewText))
	return RiskWrite, fmt.Sprintf("%s%s\nwhy it matters: %s\nthe change replaces %s with %s (digest %s); review it in the diff before you accept it",
		ProtectedEdit, showPath(in.Path), why, lineCount(in.OldText), lineCount(in.NewText), hex.EncodeToString(sum[:6]))
}

// protectedEditPath reports whether the model-supplied path p names a
// protected location. With no root, only the names count. The path is
// checked as given and as the workspace resolves it.
func protectedEditPath(root, p string) (string, bool) {
	rel := filepath.ToSlash(p)
	if root == "" {
		return workspace.Protected(filepath.Join(string(filepath.Separator), "nonexistent-root"), strings.TrimPrefix(rel, "/"))
	}
	return workspace.Protected(root, rel)
}

// showPath renders a model-supplied path on one line: quoted when it holds
// control characters or spaces at its ends, so it cannot add lines to the
// prompt or hide its real spelling.
func showPath(p string) string {
	if p != strings.TrimSpace(p) || strings.ContainsFunc(p, func(r rune) bool { return unicode.IsControl(r) || r == 0x2028 || r == 0x2029 }) {
		return strconv.Quote(p)
	}
	return p
}

func lineCount(s string) string {
	if s == "" {
		return "nothing"
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

type editFileInput struct {
	Path    string `json:"path"`
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

func runEditFile(ctx context.Context, env *Env, input json.RawMessage, root string) (Result, error) {
	var in editFileInput
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
	// A protected path was confirmed when the call was classified (the
	// gate asks for every ProtectedEdit detail). The resolved path is
	// checked again: one the classification did not see as protected (a
	// registry without the workspace's root) is refused, not proposed.
	why, protected := env.WS.Protected(rel)
	if protected {
		if _, confirmed := protectedEditPath(root, in.Path); !confirmed {
			return errorResult("cannot edit %s: it is a protected path (%s) and this call was not confirmed as one", rel, why), nil
		}
	}
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
		Change:  &FileChange{Abs: abs, Rel: rel, Before: cur, BeforeOK: exists, After: next, Created: created, Protected: why},
	}, nil
}
