package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/tools/shell/sandbox"
)

// TestCommandsRunSandboxed: through the real server, a read command that
// tries to read a file outside the workspace runs read-only and gets
// nothing, and a write command cannot write outside the workspace.
func TestCommandsRunSandboxed(t *testing.T) {
	if st := sandbox.Probe(); !st.Available() {
		t.Skipf("SKIP: the Landlock sandbox is not available here: %v", st.Err)
	}
	outside := t.TempDir()
	canary := filepath.Join(outside, "id_rsa")
	if err := os.WriteFile(canary, []byte("SERVER-CANARY-3141\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := `
turns:
  - toolCalls: [{name: run_command, arguments: {command: "cat ` + canary + `"}}]
  - toolCalls: [{name: run_command, arguments: {command: "echo x > ` + filepath.Join(outside, "new") + `"}}]
  - text: done
`
	e := newEnv(t, greetWS, withScript(script))
	e.waitRun(e.ask("greet/greet.go", 0, 0, "read the key"))
	msgs := e.toolMessages(3)
	if out := msgs[0].Content; strings.Contains(out, "SERVER-CANARY") || !strings.Contains(out, "read-only sandbox") {
		t.Errorf("read command output: %q", out)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Errorf("a command wrote outside the workspace (%q)", msgs[1].Content)
	}
}

// TestOutsideSandboxIsNeverPolicyAllowed: in approval mode policy a
// request to run outside the sandbox is denied, even for a read command.
func TestOutsideSandboxIsNeverPolicyAllowed(t *testing.T) {
	script := `
turns:
  - toolCalls: [{name: run_command, arguments: {command: "ls", withoutSandbox: true, reason: "the sandbox hides ~/.config"}}]
  - text: done
`
	e := newEnv(t, greetWS, withScript(script), withEnv(map[string]string{"CAIRN_APPROVAL": "policy"}))
	e.waitRun(e.ask("greet/greet.go", 0, 0, "list"))
	if out := e.toolMessages(2)[0].Content; !strings.Contains(out, "denied") {
		t.Errorf("a run outside the sandbox was not denied: %q", out)
	}
}

// TestSandboxOffIsAnnounced: with sandbox.mode off the user is told once.
func TestSandboxOffIsAnnounced(t *testing.T) {
	e := newEnv(t, greetWS, withSettings(map[string]any{"sandbox": map[string]any{"mode": "off"}}))
	var found []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		found = nil
		for _, m := range e.ed.Messages() {
			if strings.Contains(m, "not sandboxed (sandbox.mode is off)") {
				found = append(found, m)
			}
		}
		if len(found) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(found) == 0 {
		t.Fatalf("no message about the sandbox being off: %q", e.ed.Messages())
	}
}
