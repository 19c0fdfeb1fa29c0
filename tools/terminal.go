package tools

import (
	"context"

	"github.com/cairn-dev/cairn/tools/shell"
)

type terminalKey struct{}

// WithTerminal makes run_command run its sandboxed launcher in t (an
// editor's terminal, where the user watches the output) for calls made
// under ctx. Approval and the sandbox decide exactly as without it.
func WithTerminal(ctx context.Context, t Terminal) context.Context {
	return context.WithValue(ctx, terminalKey{}, t)
}

func terminalFrom(ctx context.Context) shell.Terminal {
	t, _ := ctx.Value(terminalKey{}).(shell.Terminal)
	return t
}

// runShell runs opts in ctx's terminal when there is one, else here (also
// when the terminal could not start anything).
func runShell(ctx context.Context, opts shell.RunOptions) (shell.RunResult, error) {
	if t := terminalFrom(ctx); t != nil {
		res, started, err := shell.RunInTerminal(ctx, t, opts)
		if started {
			return res, err
		}
	}
	return shell.Run(ctx, opts)
}

// Terminal runs run_command's launcher where the user watches it (see
// shell.Terminal).
type Terminal = shell.Terminal

// ErrTerminalNotStarted is a Terminal's error when nothing ran.
var ErrTerminalNotStarted = shell.ErrTerminalNotStarted
