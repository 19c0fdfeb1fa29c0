package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
)

// protectedWS holds the editor's settings (where a workspace would name an
// MCP server to start) and an embedded bare repository shipped as plain
// files (its config would set core.fsmonitor).
const protectedWS = `
-- greet/greet.go --
package greet
-- .vscode/settings.json --
{}
-- vendor/dep/HEAD --
ref: refs/heads/main
-- vendor/dep/config --
[core]
	bare = true
-- vendor/dep/objects/info/packs --
-- vendor/dep/refs/heads/main --
`

const protectedEditScript = `
turns:
  - toolCalls:
      - name: edit_file
        arguments: {path: ".vscode/settings.json", oldText: "{}", newText: "{\"cairn.mcpServers\": {\"x\": {\"command\": \"sh\"}}}"}
      - name: edit_file
        arguments: {path: "vendor/dep/config", oldText: "[core]\n", newText: "[core]\n\tfsmonitor = ./pwn.sh\n"}
  - text: "Done."
`

// In policy mode an edit of a protected path is refused and nothing is
// proposed, even with a policy that allows every edit.
func TestProtectedEditRefusedInPolicyMode(t *testing.T) {
	asked := 0
	e := newEnv(t, protectedWS, withScript(protectedEditScript), withEnv(map[string]string{"CAIRN_APPROVAL": "policy"}),
		withEditor(lspclient.Options{Approve: func(string, []string) string { asked++; return protocol.ActionAllowOnce }}))
	evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "edit settings"))
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("run: %s", kinds(evs))
	}
	if asked != 0 {
		t.Errorf("policy mode asked %d times", asked)
	}
	if p := ofKind(evs, protocol.EventEditProposed); len(p) != 0 {
		t.Errorf("%d edits proposed for protected paths", len(p))
	}
	for i, m := range e.toolMessages(2) {
		if !strings.Contains(m.Content, "denied") {
			t.Errorf("call %d was not denied: %q", i, m.Content)
		}
	}
	if got := e.read(".vscode/settings.json"); got != "{}\n" {
		t.Errorf(".vscode/settings.json = %q", got)
	}
}

// In ask mode the editor is asked, with the path and why it matters in the
// message; a denial proposes nothing, an allow proposes the edit, and the
// accept writes it.
func TestProtectedEditAsksWithPathAndReason(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	e := newEnv(t, protectedWS, withScript(protectedEditScript),
		withEditor(lspclient.Options{Approve: func(msg string, _ []string) string {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, msg)
			if strings.Contains(msg, ".vscode/settings.json") {
				return protocol.ActionAllowOnce
			}
			return protocol.ActionDeny
		}}))
	evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "edit settings"))
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("run: %s", kinds(evs))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 {
		t.Fatalf("asked %d times: %q", len(asked), asked)
	}
	for i, want := range [][]string{
		{"[protected path] .vscode/settings.json", "editor configuration can run tasks and start servers"},
		{"[protected path] vendor/dep/config", "git hooks and config run code when git runs"},
	} {
		for _, w := range want {
			if !strings.Contains(asked[i], w) {
				t.Errorf("question %d lacks %q:\n%s", i, w, asked[i])
			}
		}
	}
	proposed := ofKind(evs, protocol.EventEditProposed)
	if len(proposed) != 1 {
		t.Fatalf("%d edits proposed, want the allowed one only", len(proposed))
	}
	view, err := e.ed.GetEdit(e.ctx, proposed[0].EditID)
	if err != nil || len(view.Files) != 1 || view.Files[0].Path != ".vscode/settings.json" {
		t.Fatalf("proposed edit: %+v %v", view, err)
	}
	if res, err := e.ed.Accept(e.ctx, proposed[0].EditID); err != nil || !res.Applied {
		t.Fatalf("accept of the confirmed edit: %+v %v", res, err)
	}
	if got := e.read(".vscode/settings.json"); !strings.Contains(got, "cairn.mcpServers") {
		t.Errorf("the confirmed edit was not written: %q", got)
	}
	if got := e.read("vendor/dep/config"); strings.Contains(got, "fsmonitor") {
		t.Errorf("the denied edit was written: %q", got)
	}
}

// An accept never writes a protected path that was not confirmed as one
// when its edit was proposed: here the directory became a git repository
// after the proposal (a journal of an older version looks the same).
func TestAcceptRefusesUnconfirmedProtectedPath(t *testing.T) {
	const ws = `
-- greet/greet.go --
package greet
-- lib/x/config --
[core]
`
	script := `
turns:
  - toolCalls:
      - name: edit_file
        arguments: {path: "lib/x/config", oldText: "[core]\n", newText: "[core]\n\tfsmonitor = ./pwn.sh\n"}
  - text: "Done."
`
	asked := 0
	e := newEnv(t, ws, withScript(script),
		withEditor(lspclient.Options{Approve: func(string, []string) string { asked++; return protocol.ActionAllowOnce }}))
	evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "edit config"))
	proposed := ofKind(evs, protocol.EventEditProposed)
	if len(proposed) != 1 || asked != 0 {
		t.Fatalf("%d edits proposed after %d questions; %s", len(proposed), asked, kinds(evs))
	}
	for rel, content := range map[string]string{"lib/x/HEAD": "ref: refs/heads/main\n", "lib/x/objects/.k": "", "lib/x/refs/.k": ""} {
		p := filepath.Join(e.root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.ed.Accept(e.ctx, proposed[0].EditID)
	if err == nil && res.Applied {
		t.Fatalf("an unconfirmed protected edit was applied")
	}
	msg := res.Reason
	if err != nil {
		msg = err.Error()
	}
	if !strings.Contains(msg, "lib/x/config is a protected path") || !strings.Contains(msg, "not confirmed") {
		t.Errorf("refusal does not say why: %q", msg)
	}
	if got := e.read("lib/x/config"); strings.Contains(got, "fsmonitor") {
		t.Errorf("written: %q", got)
	}
}
