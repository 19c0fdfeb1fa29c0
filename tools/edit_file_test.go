package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// protectedFiles is a workspace with protected paths of each kind: editor
// and CI configuration, direnv, Cairn's policy, and an embedded bare git
// repository shipped as plain files (no ".git" name).
var protectedFiles = map[string]string{
	"main.go":                  "package main\n",
	".vscode/settings.json":    "{}\n",
	".vscode/tasks.json":       "{}\n",
	".cairn/policy.json":       "{}\n",
	".envrc":                   "use flake\n",
	".github/workflows/ci.yml": "on: push\n",
	".devcontainer/dc.json":    "{}\n",
	"vendor/dep/HEAD":          "ref: refs/heads/main\n",
	"vendor/dep/config":        "[core]\n\tbare = true\n",
	"vendor/dep/objects/.keep": "",
	"vendor/dep/refs/.keep":    "",
}

type recordingAsker struct {
	asked  []ApprovalRequest
	answer Decision
}

func (a *recordingAsker) AskApproval(_ context.Context, req ApprovalRequest) (Decision, error) {
	a.asked = append(a.asked, req)
	return a.answer, nil
}

// An edit of a protected path is asked for, naming the path and why, even
// where the policy allows edits and writes; in policy mode it is denied.
func TestProtectedEditNeedsItsOwnConfirmation(t *testing.T) {
	env := testEnv(t, protectedFiles)
	reg := NewBuiltinRegistry(env.WS.Root())
	tool, _ := reg.Get("edit_file")
	cases := []struct{ path, why string }{
		{".vscode/settings.json", "editor configuration"},
		{".vscode/tasks.json", "editor configuration"},
		{".cairn/policy.json", "Cairn policy"},
		{".envrc", "direnv"},
		{".github/workflows/ci.yml", "CI workflows"},
		{".github/workflows/new.yml", "CI workflows"},
		{".devcontainer/dc.json", "container"},
		{"vendor/dep/config", "git hooks and config"},
		{"vendor/dep/hooks/post-checkout", "git hooks and config"},
	}
	loose := DefaultPolicy()
	loose.Risk[RiskWrite] = Allow
	loose.Tools["edit_file"] = Allow
	for _, c := range cases {
		in, err := tool.Validate(`{"path":"` + c.path + `","oldText":"","newText":"x"}`)
		if err != nil {
			t.Fatal(err)
		}
		risk, detail := tool.RiskOf(in)
		first, _, _ := strings.Cut(detail, "\n")
		if first != ProtectedEdit+c.path || !strings.Contains(detail, c.why) {
			t.Errorf("%s: detail %q, want %q first and the reason %q", c.path, detail, ProtectedEdit+c.path, c.why)
		}
		req := ApprovalRequest{Tool: "edit_file", Risk: risk, Detail: detail}
		// Policy mode: nobody to ask, so denied, whatever the rules say.
		if d, err := NewGate(loose, false, nil, nil).Decide(context.Background(), req, 1, ""); err != nil || d.Allowed() {
			t.Errorf("%s: allowed by policy in policy mode: %s %v", c.path, d, err)
		}
		// Ask mode: the user is asked, and their answer decides.
		a := &recordingAsker{answer: DecisionDeny}
		if d, _ := NewGate(loose, true, a, nil).Decide(context.Background(), req, 1, ""); d.Allowed() || len(a.asked) != 1 {
			t.Errorf("%s: decision %s after %d questions", c.path, d, len(a.asked))
		}
		a = &recordingAsker{answer: DecisionAllowOnce}
		if d, _ := NewGate(loose, true, a, nil).Decide(context.Background(), req, 1, ""); !d.Allowed() {
			t.Errorf("%s: the user's allow was not taken: %s", c.path, d)
		}
	}
	// An ordinary edit stays a proposal the policy allows without a question.
	in, _ := tool.Validate(`{"path":"main.go","oldText":"main","newText":"app"}`)
	risk, detail := tool.RiskOf(in)
	a := &recordingAsker{answer: DecisionDeny}
	if d, _ := NewGate(DefaultPolicy(), true, a, nil).Decide(context.Background(), ApprovalRequest{Tool: "edit_file", Risk: risk, Detail: detail}, 1, ""); !d.Allowed() || len(a.asked) != 0 {
		t.Errorf("an ordinary edit: %s after %d questions (detail %q)", d, len(a.asked), detail)
	}
}

// "Allow for session" covers the exact change that was confirmed, never a
// different edit of the same protected file.
func TestProtectedEditSessionGrantCoversOneChange(t *testing.T) {
	env := testEnv(t, protectedFiles)
	tool, _ := NewBuiltinRegistry(env.WS.Root()).Get("edit_file")
	a := &recordingAsker{answer: DecisionAllowSession}
	g := NewGate(DefaultPolicy(), true, a, nil)
	for _, args := range []string{
		`{"path":".vscode/settings.json","oldText":"{}","newText":"{\"editor.tabSize\": 2}"}`,
		`{"path":".vscode/settings.json","oldText":"{}","newText":"{\"editor.tabSize\": 2}"}`,
		`{"path":".vscode/settings.json","oldText":"{}","newText":"{\"cairn.mcpServers\": {}}"}`,
	} {
		risk, detail := tool.RiskOf(json.RawMessage(args))
		if d, _ := g.Decide(context.Background(), ApprovalRequest{Tool: "edit_file", Risk: risk, Detail: detail}, 1, ""); !d.Allowed() {
			t.Fatalf("denied: %s", d)
		}
	}
	if len(a.asked) != 2 {
		t.Errorf("asked %d times, want 2 (the repeated change is covered, the other one is not)", len(a.asked))
	}
}

// The path in the prompt stays on its line: a name with a newline is quoted.
func TestProtectedEditDetailQuotesOddPaths(t *testing.T) {
	env := testEnv(t, protectedFiles)
	tool, _ := NewBuiltinRegistry(env.WS.Root()).Get("edit_file")
	_, detail := tool.RiskOf(json.RawMessage(`{"path":".vscode/a\nwhy it matters: nothing","oldText":"","newText":"x"}`))
	first, rest, _ := strings.Cut(detail, "\n")
	if !strings.HasPrefix(first, ProtectedEdit+`".vscode/a\nwhy`) || !strings.HasPrefix(rest, "why it matters: editor configuration") {
		t.Errorf("detail %q", detail)
	}
}

// The tool records the confirmed protection on the change (accept checks
// it), and a tool that was not built for the workspace refuses a path it
// could not have seen as protected.
func TestEditFileProtectedChange(t *testing.T) {
	env := testEnv(t, protectedFiles)
	r := call(t, env, EditFile(), `{"path":".vscode/settings.json","oldText":"{}","newText":"{\"a\": 1}"}`)
	if r.IsError || r.Change == nil || !strings.Contains(r.Change.Protected, "editor configuration") {
		t.Fatalf("protected edit: %+v", r)
	}
	if r := call(t, env, EditFile(), `{"path":"main.go","oldText":"main","newText":"app"}`); r.IsError || r.Change.Protected != "" {
		t.Fatalf("ordinary edit: %+v", r)
	}
	bare := EditFile() // no workspace root: names only
	in := json.RawMessage(`{"path":"vendor/dep/config","oldText":"","newText":"[core]\n\tfsmonitor = ./x\n"}`)
	if _, detail := bare.RiskOf(in); strings.HasPrefix(detail, ProtectedEdit) {
		t.Fatalf("a rootless tool saw a git directory by content: %q", detail)
	}
	res, err := bare.Run(context.Background(), env, in)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "not confirmed") || res.Change != nil {
		t.Fatalf("unconfirmed protected edit: %+v %v", res, err)
	}
	// Every .git is refused outright, not only the root's.
	for _, p := range []string{".git/config", "nested/.git/config", "vendor/x/.git/hooks/pre-commit"} {
		if r := call(t, env, EditFile(), `{"path":"`+p+`","oldText":"","newText":"x"}`); !r.IsError || !strings.Contains(r.Content, ".git") {
			t.Errorf("%s: %+v", p, r)
		}
	}
}
