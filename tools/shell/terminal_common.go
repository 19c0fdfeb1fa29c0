package shell

import (
	"context"
	"errors"
)

// RunSpecEnv names the spec file of a command run in a terminal.
const RunSpecEnv = "CAIRN_RUN_SPEC"

// TerminalArg is the terminal process's only argument, for whoever reads
// the terminal's command line.
const TerminalArg = "sandbox-run"

// Terminal runs a process where the user sees its output.
type Terminal interface {
	// Run runs argv (argv[0] absolute) with env added to the terminal's
	// environment, in dir, and returns once it has exited. An error
	// wrapping ErrTerminalNotStarted means nothing ran.
	Run(ctx context.Context, argv, env []string, dir string) error
}

// ErrTerminalNotStarted is a Terminal's error when it could not start the
// process (the caller may run the command itself instead).
var ErrTerminalNotStarted = errors.New("the terminal did not start the command")
