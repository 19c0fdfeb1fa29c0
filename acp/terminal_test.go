package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// termHost is a client's terminal/*, done as an editor does it: the
// requested program is spawned, its output kept.
type termHost struct {
	mu       sync.Mutex
	created  []sdk.CreateTerminalRequest
	released []string
	procs    map[string]*termProc
}

type termProc struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	done chan struct{}
	err  error
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newTermHost() *termHost { return &termHost{procs: map[string]*termProc{}} }

func (h *termHost) create(p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	cmd := exec.Command(p.Command, p.Args...)
	cmd.Env = os.Environ()
	for _, e := range p.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	if p.Cwd != nil {
		cmd.Dir = *p.Cwd
	}
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return sdk.CreateTerminalResponse{}, err
	}
	tp := &termProc{cmd: cmd, out: out, done: make(chan struct{})}
	go func() { tp.err = cmd.Wait(); close(tp.done) }()
	h.mu.Lock()
	defer h.mu.Unlock()
	id := fmt.Sprintf("term-%d", len(h.created)+1)
	h.created = append(h.created, p)
	h.procs[id] = tp
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (h *termHost) proc(id string) (*termProc, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tp, ok := h.procs[id]
	if !ok {
		return nil, errors.New("no terminal " + id)
	}
	return tp, nil
}

func (h *termHost) wait(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	tp, err := h.proc(p.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-tp.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	code := tp.cmd.ProcessState.ExitCode()
	return sdk.WaitForTerminalExitResponse{ExitCode: &code}, nil
}

func (h *termHost) output(p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	tp, err := h.proc(p.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	return sdk.TerminalOutputResponse{Output: tp.out.String()}, nil
}

func (h *termHost) kill(p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	tp, err := h.proc(p.TerminalId)
	if err == nil {
		_ = tp.cmd.Process.Kill()
	}
	return sdk.KillTerminalResponse{}, err
}

func (h *termHost) release(p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	h.mu.Lock()
	h.released = append(h.released, p.TerminalId)
	h.mu.Unlock()
	return sdk.ReleaseTerminalResponse{}, nil
}

// With a client terminal, an allowed command runs there as Cairn's
// sandboxed launcher (never the raw line), its output shows in the
// terminal, the card holds the terminal, and the model gets the output; a
// denied command never reaches terminal/create.
func TestCommandInClientTerminal(t *testing.T) {
	outside := t.TempDir() // not the workspace: the sandbox keeps it read-only
	script := `turns:
  - toolCalls:
      - {id: c1, name: run_command, arguments: {command: "sh d/s.sh"}}
      - {id: c2, name: run_command, arguments: {command: "touch d/denied.txt"}}
  - text: done
`
	files := map[string]string{"d/a.txt": "a\n",
		"d/s.sh": "echo hello-term\ntouch d/made.txt\ntouch " + outside + "/escaped 2>/dev/null || echo outside-denied\n"}
	h := newHarness(t, files, script, harnessConfig{interactive: true, terminal: true})
	h.client.answer = func(p sdk.RequestPermissionRequest) string {
		if strings.Contains(*p.ToolCall.Title, "denied.txt") {
			return optRejectOnce
		}
		return optAllowOnce
	}
	h.mustPrompt(sdk.TextBlock("run"))
	updates, _, _ := h.client.snapshot()
	term := h.client.term
	term.mu.Lock()
	created := append([]sdk.CreateTerminalRequest(nil), term.created...)
	released := append([]string(nil), term.released...)
	term.mu.Unlock()
	for _, id := range []string{"c1", "c2"} {
		t.Logf("%s: %q %q", id, lastStatus(updates, id), cardText(updates, id))
	}
	if len(created) != 1 {
		t.Fatalf("terminal/create calls = %d, want 1 (the denied command must not reach it): %+v", len(created), created)
	}
	exe, _ := os.Executable()
	c := created[0]
	if c.Command != exe || !slices.Equal(c.Args, []string{"sandbox-run"}) {
		t.Errorf("the terminal runs %q %q, want Cairn's launcher %q %q", c.Command, c.Args, exe, "sandbox-run")
	}
	if len(c.Env) != 1 || c.Env[0].Name != "CAIRN_RUN_SPEC" {
		t.Errorf("terminal env = %+v", c.Env)
	}
	if c.Cwd == nil || *c.Cwd != h.root {
		t.Errorf("terminal cwd = %v", c.Cwd)
	}
	all := fmt.Sprintf("%s %q %+v", c.Command, c.Args, c.Env)
	if strings.Contains(all, "hello-term") {
		t.Errorf("the raw command line reached the client: %s", all)
	}
	tp, _ := term.proc("term-1")
	shown := tp.out.String()
	if !strings.Contains(shown, "hello-term") || !strings.Contains(shown, "outside-denied") {
		t.Errorf("the terminal showed %q", shown)
	}
	if len(released) != 1 || released[0] != "term-1" {
		t.Errorf("released = %v", released)
	}
	if _, err := os.Stat(h.abs("d/made.txt")); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
	if _, err := os.Stat(h.abs("d/denied.txt")); err == nil {
		t.Error("the denied command ran")
	}
	if _, err := os.Stat(outside + "/escaped"); err == nil {
		t.Error("the command wrote outside the workspace: it was not sandboxed")
	}
	// The card holds the terminal.
	var hasTerm bool
	for _, tu := range toolUpdates(updates, "c1") {
		for _, ct := range tu.Content {
			if ct.Terminal != nil && ct.Terminal.TerminalId == "term-1" {
				hasTerm = true
			}
		}
	}
	if !hasTerm {
		t.Error("no tool call content of type terminal on the card")
	}
	// The model got the output and the profile from Cairn's capture.
	var toModel string
	for _, req := range h.provider.Received() {
		for _, m := range req.Messages {
			toModel += m.Content + "\n"
		}
	}
	if !strings.Contains(toModel, "hello-term") || !strings.Contains(toModel, "sandbox") {
		t.Errorf("the model did not get the command's output:\n%s", toModel)
	}
}

// Cancelling the turn kills the client's terminal, and the prompt ends
// cancelled.
func TestCancelKillsClientTerminal(t *testing.T) {
	script := `turns:
  - toolCalls:
      - {id: c1, name: run_command, arguments: {command: "sh d/slow.sh"}}
  - text: done
`
	files := map[string]string{"d/slow.sh": "echo started-slow\nsleep 120\n"}
	h := newHarness(t, files, script, harnessConfig{interactive: true, terminal: true})
	done := make(chan sdk.PromptResponse, 1)
	go func() {
		resp, _ := h.prompt(sdk.TextBlock("run"))
		done <- resp
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if tp, err := h.client.term.proc("term-1"); err == nil && strings.Contains(tp.out.String(), "started-slow") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started in the terminal")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := h.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: h.session}); err != nil {
		t.Fatal(err)
	}
	select {
	case resp := <-done:
		if resp.StopReason != sdk.StopReasonCancelled {
			t.Errorf("stop reason %q", resp.StopReason)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the prompt did not end after session/cancel")
	}
	tp, _ := h.client.term.proc("term-1")
	select {
	case <-tp.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the terminal's process was not killed")
	}
}
