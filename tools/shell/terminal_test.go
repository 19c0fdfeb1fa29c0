//go:build unix

package shell

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// execTerminal runs what it is given as an editor's terminal would.
type execTerminal struct {
	argv, env []string
	shown     bytes.Buffer
}

func (e *execTerminal) Run(ctx context.Context, argv, env []string, dir string) error {
	e.argv, e.env = argv, env
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &e.shown, &e.shown
	if err := cmd.Start(); err != nil {
		return errors.Join(err, ErrTerminalNotStarted)
	}
	_ = cmd.Wait()
	return nil
}

func TestRunInTerminal(t *testing.T) {
	dir := t.TempDir()
	term := &execTerminal{}
	res, started, err := RunInTerminal(context.Background(), term, RunOptions{Dir: dir, Command: "echo live-out; echo err-out >&2; exit 3",
		Timeout: time.Minute, Env: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil || !started {
		t.Fatalf("RunInTerminal: started %v, %v", started, err)
	}
	exe, _ := os.Executable()
	if len(term.argv) != 2 || term.argv[0] != exe || term.argv[1] != TerminalArg {
		t.Errorf("the terminal ran %q", term.argv)
	}
	if len(term.env) != 1 || !strings.HasPrefix(term.env[0], RunSpecEnv+"=") {
		t.Errorf("the terminal env = %q", term.env)
	}
	if res.ExitCode != 3 || !strings.Contains(res.Output, "live-out") || !strings.Contains(res.Output, "err-out") {
		t.Errorf("result = %+v", res)
	}
	if !strings.Contains(term.shown.String(), "live-out") {
		t.Errorf("the terminal showed %q", term.shown.String())
	}
	spec := strings.TrimPrefix(term.env[0], RunSpecEnv+"=")
	if _, err := os.Stat(spec); err == nil {
		t.Error("the spec file is left behind")
	}
}

type refusingTerminal struct{}

func (refusingTerminal) Run(context.Context, []string, []string, string) error {
	return ErrTerminalNotStarted
}

func TestRunInTerminalNotStarted(t *testing.T) {
	_, started, err := RunInTerminal(context.Background(), refusingTerminal{}, RunOptions{Dir: t.TempDir(), Command: "true"})
	if started || !errors.Is(err, ErrTerminalNotStarted) {
		t.Errorf("started %v, err %v", started, err)
	}
}
