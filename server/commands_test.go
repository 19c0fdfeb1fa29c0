package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
)

const cmdScript = `
turns:
  - toolCalls:
      - name: run_command
        arguments: {command: "ls greet"}
      - name: run_command
        arguments: {command: "echo run >> greet/counter.txt"}
      - name: run_command
        arguments: {command: "rm -rf greet"}
      - name: run_command
        arguments: {command: "curl -s http://127.0.0.1:1/"}
  - toolCalls:
      - name: run_command
        arguments: {command: "echo again >> greet/counter.txt"}
  - text: done
`

func TestRunCommandApprovals(t *testing.T) {
	var asked []string
	e := newEnv(t, greetWS, withScript(cmdScript), withEditor(lspclient.Options{Approve: func(msg string, actions []string) string {
		asked = append(asked, msg)
		switch {
		case strings.Contains(msg, "counter.txt"):
			return protocol.ActionAllowSession
		default:
			return protocol.ActionDeny
		}
	}}))
	evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "run things"))
	checkSeq(t, evs)
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("%+v", last(evs))
	}
	tm := e.toolMessages(3)
	if !strings.Contains(tm[0].Content, "greet.go") || !strings.Contains(tm[0].Content, "exit status 0") {
		t.Errorf("ls: %q", tm[0].Content)
	}
	if strings.HasPrefix(tm[1].Content, "error") {
		t.Errorf("allowed write failed: %q", tm[1].Content)
	}
	if !strings.Contains(tm[2].Content, "denied") || !strings.Contains(tm[2].Content, "policy_deny") {
		t.Errorf("rm -rf should be denied by policy without asking: %q", tm[2].Content)
	}
	if !strings.Contains(tm[3].Content, "denied") {
		t.Errorf("curl should be denied by the user: %q", tm[3].Content)
	}
	if _, err := os.Stat(filepath.Join(e.root, "greet/greet.go")); err != nil {
		t.Fatal("rm -rf ran")
	}
	// (In greet/: a sandboxed command cannot create entries directly in
	// the workspace root, where protected names would appear.)
	b, _ := os.ReadFile(filepath.Join(e.root, "greet", "counter.txt"))
	if string(b) != "run\nagain\n" {
		t.Errorf("counter.txt = %q", b)
	}
	// Asked: the first write (Allow for session), curl (Deny). The second
	// write is a different command, so it is asked again; rm -rf never is.
	if len(asked) != 3 {
		t.Errorf("asked %d times: %q", len(asked), asked)
	}
	for _, a := range asked {
		if strings.Contains(a, "rm -rf") {
			t.Error("a destructive command reached the user instead of being denied by policy")
		}
	}
	decisions := map[string]string{}
	for _, ev := range ofKind(evs, protocol.EventApproval) {
		decisions[ev.CallID] = ev.Decision
	}
	if len(decisions) != 4 {
		t.Errorf("approval events: %v", decisions)
	}
}

func TestPolicyModeNeverAsks(t *testing.T) {
	asked := 0
	e := newEnv(t, greetWS, withScript(cmdScript), withEnv(map[string]string{"CAIRN_APPROVAL": "policy"}),
		withEditor(lspclient.Options{Approve: func(string, []string) string { asked++; return protocol.ActionAllowOnce }}))
	evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "run things"))
	if last(evs).Kind != protocol.EventFinished || asked != 0 {
		t.Fatalf("policy mode asked %d times; %s", asked, kinds(evs))
	}
	tm := e.toolMessages(2)
	if !strings.Contains(tm[0].Content, "exit status 0") {
		t.Errorf("read command should run: %q", tm[0].Content)
	}
	for i := 2; i < 4; i++ {
		if !strings.Contains(tm[i].Content, "denied") {
			t.Errorf("call %d should be denied in policy mode: %q", i, tm[i].Content)
		}
	}
}

func TestRunCommandEnvHasNoSecrets(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-should-not-leak-123456")
	script := `
turns:
  - toolCalls: [{name: run_command, arguments: {command: "env"}}]
  - text: ok
`
	e := newEnv(t, greetWS, withScript(script))
	e.waitRun(e.ask("greet/greet.go", 0, 0, "env"))
	if out := e.toolMessages(2)[0].Content; strings.Contains(out, "sk-should-not-leak") || !strings.Contains(out, "PATH=") {
		t.Fatalf("command environment: %q", out)
	}
}

func TestCancelKillsRunningCommand(t *testing.T) {
	// The command sleeps an hour: a run that ends at all was cancelled, and
	// its sleeps must be gone. No bound on how long the cancel took: the
	// machine running this may be loaded.
	script := `
turns:
  - toolCalls: [{name: run_command, arguments: {command: "ls; sleep 3737 & sleep 3737; echo never > never.txt"}}]
  - text: unreachable
`
	e := newEnv(t, greetWS, withScript(script))
	run := e.ask("greet/greet.go", 0, 0, "sleep")
	if _, err := e.ed.WaitKind(e.ctx, run, protocol.EventApproval); err != nil {
		t.Fatal(err)
	}
	sleeps := func() string {
		out, _ := exec.Command("pgrep", "-f", "^sleep 3737$").Output()
		return strings.TrimSpace(string(out))
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waited a minute for %s", what)
			}
		}
	}
	waitFor("the command to start", func() bool { return sleeps() != "" })
	if err := e.ed.Cancel(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	if evs := e.waitRun(run); last(evs).Kind != protocol.EventCancelled {
		t.Fatalf("want cancelled: %s", kinds(evs))
	}
	// The group gets SIGTERM (then SIGKILL after a grace period): poll
	// rather than race the kernel's reaping.
	waitFor("the command's process group to die", func() bool { return sleeps() == "" })
	if _, err := os.Stat(filepath.Join(e.root, "never.txt")); err == nil {
		t.Error("the command went on after the cancel: never.txt written")
	}
}
