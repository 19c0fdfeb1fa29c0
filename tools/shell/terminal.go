//go:build unix

package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

// A command can run in a process the user watches (an editor's terminal)
// rather than under the server: the server writes the complete RunOptions
// (sandbox policy, environment, limits) to a private spec file and asks the
// terminal to run this same binary with RunSpecEnv naming it. That process
// does exactly what Run does in the server (sandbox launcher, timeout,
// protected paths), shows the output as it comes, and writes the RunResult
// for the server. The terminal runs Cairn's launcher, never the command
// line itself: the sandbox stays the boundary.

type runSpec struct {
	Options RunOptions `json:"options"`
	Result  string     `json:"result"`
}

// RunInTerminal runs opts through t (see above). started is false when t
// ran nothing, so the caller may fall back to Run.
func RunInTerminal(ctx context.Context, t Terminal, opts RunOptions) (res RunResult, started bool, err error) {
	exe, err := os.Executable()
	if err != nil {
		return res, false, fmt.Errorf("finding Cairn's executable: %w", err)
	}
	dir, err := os.MkdirTemp("", "cairn-term-*")
	if err != nil {
		return res, false, fmt.Errorf("creating the terminal spec's directory: %w", err)
	}
	defer os.RemoveAll(dir)
	spec := filepath.Join(dir, "spec.json")
	result := filepath.Join(dir, "result.json")
	opts.Live = nil
	b, err := json.Marshal(runSpec{Options: opts, Result: result})
	if err != nil {
		return res, false, fmt.Errorf("encoding the terminal spec: %w", err)
	}
	if err := os.WriteFile(spec, b, 0o600); err != nil {
		return res, false, fmt.Errorf("writing the terminal spec: %w", err)
	}
	terr := t.Run(ctx, []string{exe, TerminalArg}, []string{RunSpecEnv + "=" + spec}, opts.Dir)
	if errors.Is(terr, ErrTerminalNotStarted) {
		return res, false, terr
	}
	out, rerr := os.ReadFile(result)
	if rerr != nil {
		if ctx.Err() != nil {
			return RunResult{Cancelled: true, ExitCode: -1}, true, nil
		}
		return res, true, fmt.Errorf("the terminal's process ended without a result (%v): %w", terr, rerr)
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return res, true, fmt.Errorf("reading the terminal's result: %w", err)
	}
	if ctx.Err() != nil {
		res.Cancelled = true
	}
	return res, true, nil
}

func init() {
	path, ok := os.LookupEnv(RunSpecEnv)
	if !ok {
		return
	}
	os.Exit(runSpecMain(path))
}

// runSpecMain is the terminal's process: it runs the spec and writes the
// result; its exit status is the command's (1 when it could not run).
func runSpecMain(path string) int {
	b, err := os.ReadFile(path)
	os.Remove(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cairn: reading the command's spec: %v\n", err)
		return 1
	}
	var spec runSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		fmt.Fprintf(os.Stderr, "cairn: reading the command's spec: %v\n", err)
		return 1
	}
	// Killed or interrupted by the terminal: the command's group goes too.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	opts := spec.Options
	opts.Live = os.Stdout
	res, err := Run(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cairn: %v\n", err)
		return 1
	}
	out, err := json.Marshal(res)
	if err == nil {
		err = os.WriteFile(spec.Result, out, 0o600)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cairn: writing the command's result: %v\n", err)
		return 1
	}
	switch {
	case res.ExitCode >= 0 && res.ExitCode < 256:
		return res.ExitCode
	default:
		return 1
	}
}
