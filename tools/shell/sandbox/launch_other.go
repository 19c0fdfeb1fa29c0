//go:build !linux

package sandbox

import (
	"errors"
	"os/exec"
	"syscall"
)

// LaunchFailed is the exit status of a launcher that could not confine
// itself.
const LaunchFailed = 125

// LaunchPrefix starts the launcher's own error message.
const LaunchPrefix = "cairn sandbox: "

// Failed reports whether a run's exit status and output are the
// launcher's failure rather than the command's.
func Failed(exitCode int, output string) bool {
	return exitCode == LaunchFailed && len(output) >= len(LaunchPrefix) && output[:len(LaunchPrefix)] == LaunchPrefix
}

// Status says what confinement this system gives.
type Status struct {
	ABI   int
	NetNS bool
	Err   error
}

// Available reports whether commands can be sandboxed.
func (s Status) Available() bool { return s.Err == nil }

// BlocksTCP, BlocksUDP and BlocksSignals report what the sandbox keeps a
// command from doing: nothing here.
func (s Status) BlocksTCP() bool     { return false }
func (s Status) BlocksUDP() bool     { return false }
func (s Status) BlocksSignals() bool { return false }

// Describe is one line for the user.
func (s Status) Describe() string { return "commands are not sandboxed: " + s.Err.Error() }

var errUnsupported = errors.New("the OS sandbox is only implemented on Linux (Landlock)")

// Probe reports that this system has no sandbox.
func Probe() Status { return Status{Err: errUnsupported} }

// Isolated and Limited report the namespaces and cgroup layers: none here.
func (s Status) Isolated() bool { return false }
func (s Status) Limited() bool  { return false }

// Cmd is a command (see the Linux version).
type Cmd struct {
	Cmd *exec.Cmd
}

// Start starts the command.
func (c *Cmd) Start() error { return c.Cmd.Start() }

// Wait waits for it.
func (c *Cmd) Wait() error { return c.Cmd.Wait() }

// CombinedOutput runs it and returns its output.
func (c *Cmd) CombinedOutput() ([]byte, error) { return c.Cmd.CombinedOutput() }

// Signal is never reported here.
func (c *Cmd) Signal() (syscall.Signal, bool) { return 0, false }

// Command only runs the Full profile here.
func Command(p Policy, argv []string, env []string) (*Cmd, error) {
	if p.Profile != Full {
		return nil, errUnsupported
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	return &Cmd{Cmd: cmd}, nil
}
