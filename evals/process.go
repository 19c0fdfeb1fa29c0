package evals

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
)

// hostConfig are the environment variables a scripted case's server
// process must not inherit from the host.
var hostConfig = []string{"CAIRN_PROVIDER", "CAIRN_MODEL", "CAIRN_SCRIPT", "CAIRN_APPROVAL", "CAIRN_CONTEXT_WINDOW",
	"CAIRN_STATE_DIR", "OPENAI_", "ANTHROPIC_", "OTEL_", "XDG_CACHE_HOME"}

// startProcess starts `cairn serve` (Options.ServerCommand) on the case's
// workspace and state directory, its model scripted by turns.
func (h *harness) startProcess(turns []model.ScriptTurn, n int) (*serverConn, io.ReadWriteCloser, error) {
	script := filepath.Join(h.root, fmt.Sprintf("script-%d.json", n))
	b, err := json.Marshal(model.Script{Turns: turns})
	if err != nil {
		return nil, nil, err
	}
	if err := os.WriteFile(script, b, 0o600); err != nil {
		return nil, nil, err
	}
	args := h.opts.ServerCommand
	cmd := exec.Command(args[0], args[1:]...)
	for _, kv := range os.Environ() {
		keep := true
		for _, p := range hostConfig {
			if strings.HasPrefix(kv, p) {
				keep = false
			}
		}
		if keep {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, h.opts.ServerEnv...)
	cmd.Env = append(cmd.Env, "CAIRN_STATE_DIR="+h.state, "CAIRN_PROVIDER=scripted", "CAIRN_SCRIPT="+script)
	stderr := &tailBuffer{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting the server %q: %w", args, err)
	}
	sc := &serverConn{done: make(chan error, 1), stderr: stderr}
	waited := make(chan struct{})
	go func() { sc.done <- cmd.Wait(); close(waited) }()
	sc.kill = func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-waited
	}
	sc.stop = func() {
		select {
		case <-waited:
		case <-time.After(3 * time.Second):
			_ = cmd.Process.Kill()
		}
	}
	return sc, &pipeRWC{out, in}, nil
}

type pipeRWC struct {
	io.ReadCloser
	w io.WriteCloser
}

func (p *pipeRWC) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeRWC) Close() error                { return errors.Join(p.w.Close(), p.ReadCloser.Close()) }

// kill stops the server with SIGKILL mid-case, as a crash would.
func (h *harness) kill() error {
	srv := h.server()
	if srv == nil || srv.kill == nil {
		return errors.New("no server process to kill")
	}
	srv.kill()
	h.mu.Lock()
	for _, id := range h.runs {
		h.past[id] = append(h.past[id], srv.ed.Events(id)...)
	}
	h.pastPrompts = append(h.pastPrompts, srv.ed.Prompts()...)
	h.srv = nil
	h.mu.Unlock()
	_ = srv.ed.Conn().Close()
	return nil
}

// resume starts a new server on the same workspace and state directory
// (its model scripted by resumeTurns), waits for it to announce the killed
// run as interrupted, and resumes it with cairn.resume.
func (h *harness) resume() error {
	if h.server() != nil {
		return errors.New("resume follows a kill")
	}
	id := h.current()
	if id == "" {
		return errors.New("no run to resume")
	}
	srv, err := h.start(h.c.ResumeTurns)
	if err != nil {
		return err
	}
	h.mu.Lock()
	h.srv = srv
	h.mu.Unlock()
	if _, err := srv.ed.WaitKind(h.ctx, id, protocol.EventInterrupted); err != nil {
		return fmt.Errorf("the restarted server did not announce %s as interrupted: %w", id, err)
	}
	h.mu.Lock()
	h.resumed[id] = true
	h.mu.Unlock()
	var ref protocol.RunRef
	if err := srv.ed.Execute(h.ctx, protocol.CommandResume, protocol.RunRef{RunID: id}, &ref); err != nil {
		return err
	}
	if ref.RunID != "" && ref.RunID != id {
		h.addRun(ref.RunID, time.Now())
	} else {
		go h.waitRun(id)
	}
	return nil
}

// tailBuffer keeps the last few KB a server process wrote to stderr.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 4096 {
		t.buf = t.buf[len(t.buf)-4096:]
	}
	return len(p), nil
}

// tail returns the buffer as a suffix for an error message ("" if empty).
func (t *tailBuffer) tail() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) == 0 {
		return ""
	}
	return "\nserver stderr:\n" + string(t.buf)
}
