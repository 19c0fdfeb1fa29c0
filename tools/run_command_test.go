package tools

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/tools/shell/sandbox"
)

func TestRunCommandIsSandboxed(t *testing.T) {
	needSandbox(t)
	env := testEnv(t, map[string]string{"a.txt": "hello\n"})
	outside := t.TempDir()
	canary := filepath.Join(outside, "canary")
	if err := os.WriteFile(canary, []byte("CANARY-OUTSIDE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A read command runs read-only: it reads the workspace, not outside.
	r := call(t, env, &Tool{Name: "run_command"}, `{"command":"cat a.txt `+canary+`"}`)
	if !strings.Contains(r.Content, "hello") || strings.Contains(r.Content, "CANARY") || !strings.Contains(r.Content, "read-only") {
		t.Errorf("read command: %+v", r)
	}
	if !strings.Contains(r.Content, "withoutSandbox") {
		t.Errorf("a sandbox denial should say how to ask to run outside: %s", r.Content)
	}
	// A write command runs workspace-write: the workspace, not outside.
	// (New entries directly in the workspace root cannot be made: that is
	// where protected names like .vscode or .envrc would appear.)
	r = call(t, env, &Tool{Name: "run_command"}, `{"command":"echo made >> a.txt; echo x > `+canary+`"}`)
	if b, err := os.ReadFile(filepath.Join(env.WS.Root(), "a.txt")); err != nil || string(b) != "hello\nmade\n" {
		t.Errorf("workspace write failed: %v %q (%s)", err, b, r.Content)
	}
	if b, _ := os.ReadFile(canary); string(b) != "CANARY-OUTSIDE\n" {
		t.Errorf("the canary outside the workspace was written: %q", b)
	}
}

func TestOutsideSandboxAlwaysAsks(t *testing.T) {
	root := t.TempDir()
	sb := NewCommandSandbox(root)
	tool := RunCommandWith(root, sb)
	risk, detail := tool.RiskOf(json.RawMessage(`{"command":"ls","withoutSandbox":true,"reason":"needs ~/.config"}`))
	if risk != RiskRead || !strings.HasPrefix(detail, OutsideSandbox) || !strings.Contains(detail, "needs ~/.config") {
		t.Fatalf("risk %s detail %q", risk, detail)
	}
	p := DefaultPolicy()
	p.Commands = map[string]Action{"ls": Allow}
	g := NewGate(p, false, nil, nil)
	d, err := g.Decide(context.Background(), ApprovalRequest{Tool: "run_command", Risk: risk, Detail: detail}, 1, "")
	if err != nil || d.Allowed() {
		t.Fatalf("a run outside the sandbox was allowed by policy: %s %v", d, err)
	}
	// Sandbox off: a write command asks even when policy allows writes.
	sb.Configure(SandboxSettings{Mode: SandboxOff}, "")
	risk, detail = tool.RiskOf(json.RawMessage(`{"command":"touch x"}`))
	p.Risk[RiskWrite] = Allow
	g.SetPolicy(p, false)
	if d, _ := g.Decide(context.Background(), ApprovalRequest{Tool: "run_command", Risk: risk, Detail: detail}, 1, ""); d.Allowed() {
		t.Fatalf("unsandboxed write allowed by policy: %s (%q)", d, detail)
	}
	// A read command still runs without asking.
	risk, detail = tool.RiskOf(json.RawMessage(`{"command":"ls"}`))
	if d, _ := g.Decide(context.Background(), ApprovalRequest{Tool: "run_command", Risk: risk, Detail: detail}, 1, ""); !d.Allowed() {
		t.Fatalf("read command denied: %s", d)
	}
	if problems := sb.Configure(SandboxSettings{Mode: "sometimes", WritableRoots: []string{"rel"}}, ""); len(problems) != 2 {
		t.Errorf("problems: %q", problems)
	}
}

// TestNoSandboxHere: where the system has no sandbox, read commands still
// run, every other command's prompt says it runs outside the sandbox, and
// mode required refuses to run anything.
func TestNoSandboxHere(t *testing.T) {
	env := testEnv(t, map[string]string{"a.txt": "hello\n"})
	sb := NewCommandSandbox(env.WS.Root())
	sb.probe = func() sandbox.Status {
		return sandbox.Status{Err: errors.New("Landlock is not enabled in this kernel")}
	}
	tool := RunCommandWith(env.WS.Root(), sb)
	if _, detail := tool.RiskOf(json.RawMessage(`{"command":"cat a.txt"}`)); strings.HasPrefix(detail, OutsideSandbox) {
		t.Errorf("read command marked: %q", detail)
	}
	if _, detail := tool.RiskOf(json.RawMessage(`{"command":"touch b"}`)); !strings.HasPrefix(detail, OutsideSandbox) || !strings.Contains(detail, "cannot be sandboxed") {
		t.Errorf("write command not marked: %q", detail)
	}
	res, err := tool.Invoke(context.Background(), env, json.RawMessage(`{"command":"cat a.txt"}`))
	if err != nil || !strings.Contains(res.Content, "hello") || !strings.Contains(res.Content, "no sandbox") {
		t.Errorf("read command without a sandbox: %+v %v", res, err)
	}
	sb.Configure(SandboxSettings{Mode: SandboxRequired}, "")
	res, err = tool.Invoke(context.Background(), env, json.RawMessage(`{"command":"cat a.txt"}`))
	if err != nil || !res.IsError || strings.Contains(res.Content, "hello") || !strings.Contains(res.Content, "required") {
		t.Errorf("mode required ran a command without a sandbox: %+v %v", res, err)
	}
}
