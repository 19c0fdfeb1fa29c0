//go:build !unix

package shell

import (
	"context"
	"errors"
	"time"

	"github.com/cairn-dev/cairn/tools/shell/sandbox"
)

// RunOptions describe one command execution (see the unix version).
type RunOptions struct {
	Dir            string
	Command        string
	Timeout        time.Duration
	MaxOutputBytes int
	Env            []string
	KillGrace      time.Duration
	Sandbox        *sandbox.Policy
}

// RunResult is the outcome of Run.
type RunResult struct {
	Output     string        `json:"output"`
	ExitCode   int           `json:"exitCode"`
	Signal     string        `json:"signal,omitempty"`
	Duration   time.Duration `json:"duration"`
	TimedOut   bool          `json:"timedOut,omitempty"`
	Cancelled  bool          `json:"cancelled,omitempty"`
	Truncated  bool          `json:"truncated,omitempty"`
	TotalBytes int64         `json:"totalBytes"`
}

// Run is only implemented on unix systems.
func Run(ctx context.Context, opts RunOptions) (RunResult, error) {
	return RunResult{}, errors.New("shell.Run: not supported on this platform")
}

// RunInTerminal is only implemented on unix systems.
func RunInTerminal(ctx context.Context, t Terminal, opts RunOptions) (RunResult, bool, error) {
	return RunResult{}, false, ErrTerminalNotStarted
}
