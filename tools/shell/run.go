//go:build unix

package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairn-dev/cairn/tools/shell/sandbox"
)

// RunOptions describe one command execution.
type RunOptions struct {
	// Dir is the working directory (the workspace root). Required.
	Dir string
	// Command is the shell command line, run with `bash -c` (or `/bin/sh
	// -c` when bash is missing).
	Command string
	// Timeout bounds the run; 0 means no limit beyond ctx.
	Timeout time.Duration
	// MaxOutputBytes caps the captured combined output; 0 means
	// DefaultMaxOutputBytes. When exceeded, the head and the tail are kept
	// (half each) with a note saying how many bytes were cut.
	MaxOutputBytes int
	// Env is the complete environment of the command. Nil means
	// StripSecrets(os.Environ()). The caller should pass it through
	// StripSecrets itself when building its own.
	Env []string
	// KillGrace is how long the process group gets between SIGTERM and
	// SIGKILL; 0 means DefaultKillGrace.
	KillGrace time.Duration
	// RevertProtected removes, once the command has ended, the protected
	// paths of the workspace it created (RunResult.Protected says which).
	// Only with a workspace-write Sandbox whose Protected is the complete
	// walk of the workspace from before the command: a path that walk
	// missed would be taken for the command's.
	RevertProtected bool
	// Sandbox, when set, confines the command (see package sandbox).
	// Workspace defaults to Dir; an empty TempDir gets a private
	// directory, set as $TMPDIR and removed after the command. Nil runs
	// the command unconfined.
	Sandbox *sandbox.Policy
	// Live, when set, also gets the output as it comes (a terminal the
	// user watches); the result keeps its capped copy.
	Live io.Writer `json:"-"`
}

// RunResult is the outcome of Run.
type RunResult struct {
	// Output is the combined stdout and stderr, capped (see Truncated).
	Output string `json:"output"`
	// ExitCode is the shell's exit status; -1 when it was killed by a signal.
	ExitCode int `json:"exitCode"`
	// Signal names the signal that ended the shell, if any.
	Signal   string        `json:"signal,omitempty"`
	Duration time.Duration `json:"duration"`
	TimedOut bool          `json:"timedOut,omitempty"`
	// Cancelled is set when ctx was done before the command finished.
	Cancelled bool `json:"cancelled,omitempty"`
	// Truncated is set when output was cut; TotalBytes is what the
	// command wrote in all.
	Truncated  bool  `json:"truncated,omitempty"`
	TotalBytes int64 `json:"totalBytes"`
	// Protected lists the protected paths the command created (see
	// RunOptions.RevertProtected).
	Protected []ProtectedCreation `json:"protected,omitempty"`
}

const (
	// DefaultMaxOutputBytes is the output cap when RunOptions leave it 0.
	DefaultMaxOutputBytes = 64 << 10
	// DefaultKillGrace is the SIGTERM→SIGKILL delay.
	DefaultKillGrace = 2 * time.Second
	// drainWait bounds how long Run waits for the output pipe to close
	// after the process group is gone (a daemon that escaped the group may
	// hold it).
	drainWait = 2 * time.Second
)

// Shell returns the shell Run uses.
func Shell() string {
	if _, err := os.Stat("/bin/bash"); err == nil {
		return "/bin/bash"
	}
	return "/bin/sh"
}

// Run executes opts.Command in opts.Dir in a new process group. On timeout
// or ctx cancellation the whole group gets SIGTERM, then SIGKILL after
// KillGrace. When the shell exits, processes it left behind in its group
// (background jobs) are killed too. A non-zero exit is not an error; the
// error is for commands that could not be started.
func Run(ctx context.Context, opts RunOptions) (RunResult, error) {
	var res RunResult
	if opts.Dir == "" {
		return res, errors.New("shell.Run: Dir is required")
	}
	if fi, err := os.Stat(opts.Dir); err != nil || !fi.IsDir() {
		return res, fmt.Errorf("shell.Run: working directory %q is not a directory", opts.Dir)
	}
	if err := ctx.Err(); err != nil {
		res.Cancelled = true
		res.ExitCode = -1
		return res, nil
	}
	max := opts.MaxOutputBytes
	if max <= 0 {
		max = DefaultMaxOutputBytes
	}
	grace := opts.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	env := opts.Env
	if env == nil {
		env = StripSecrets(os.Environ())
	}

	var cmd *exec.Cmd
	// sb starts and waits for a sandboxed command (its launcher waits to
	// be put in the command's cgroup, and kills what is left of it).
	var sb *sandbox.Cmd
	if opts.Sandbox == nil {
		cmd = exec.Command(Shell(), "-c", opts.Command)
		cmd.Env = env
	} else {
		pol := *opts.Sandbox
		if pol.Workspace == "" {
			pol.Workspace = opts.Dir
		}
		if pol.TempDir == "" && pol.Profile != sandbox.Full {
			tmp, err := newCmdTemp("")
			if err != nil {
				return res, fmt.Errorf("creating the command's temporary directory: %w", err)
			}
			defer os.RemoveAll(tmp)
			pol.TempDir = tmp
			env = append(withoutVar(env, "TMPDIR"), "TMPDIR="+tmp)
		}
		var err error
		sb, err = sandbox.Command(pol, []string{Shell(), "-c", opts.Command}, env)
		if err != nil {
			return res, fmt.Errorf("setting up the %s sandbox: %w", pol.Profile, err)
		}
		cmd = sb.Cmd
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return res, err
	}
	cmd.Dir = opts.Dir
	cmd.Stdin = nil // /dev/null
	cmd.Stdout = pw
	cmd.Stderr = pw
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true

	out := newCapBuffer(max)
	start := time.Now()
	startCmd, waitCmd := cmd.Start, cmd.Wait
	if sb != nil {
		startCmd, waitCmd = sb.Start, sb.Wait
	}
	if err := startCmd(); err != nil {
		pr.Close()
		pw.Close()
		return res, err
	}
	pw.Close() // the children hold the only write ends now
	pgid := cmd.Process.Pid

	copied := make(chan struct{})
	go func() {
		var w io.Writer = out
		if opts.Live != nil {
			w = io.MultiWriter(out, liveWriter{opts.Live})
		}
		_, _ = io.Copy(w, pr)
		close(copied)
	}()
	waited := make(chan error, 1)
	go func() { waited <- waitCmd() }()

	var timeout <-chan time.Time
	if opts.Timeout > 0 {
		t := time.NewTimer(opts.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	var werr error
	select {
	case werr = <-waited:
	case <-timeout:
		res.TimedOut = true
		werr = terminate(pgid, grace, waited)
	case <-ctx.Done():
		res.Cancelled = true
		werr = terminate(pgid, grace, waited)
	}
	res.Duration = time.Since(start)
	// Kill leftovers (background jobs) still in the group.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)

	select {
	case <-copied:
	case <-time.After(drainWait):
		pr.Close() // unblocks io.Copy
		<-copied
	}
	pr.Close()
	if sb != nil && opts.RevertProtected && opts.Sandbox.Profile == sandbox.WorkspaceWrite {
		root := opts.Sandbox.Workspace
		if root == "" {
			root = opts.Dir
		}
		res.Protected = revertProtected(root, opts.Sandbox.Protected, start)
	}

	res.Output, res.TotalBytes, res.Truncated = out.result()
	res.ExitCode = -1
	if ps := cmd.ProcessState; ps != nil {
		res.ExitCode = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal().String()
		} else if sb != nil {
			// The launcher outlives the command to reap its orphans and
			// reports how the command ended.
			if sig, ok := sb.Signal(); ok {
				res.Signal = sig.String()
				res.ExitCode = -1
			}
		}
	} else if werr != nil {
		return res, werr
	}
	return res, nil
}

// withoutVar drops NAME=... entries from env.
func withoutVar(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); n != name {
			out = append(out, kv)
		}
	}
	return out
}

// terminate sends SIGTERM to the group, then SIGKILL after grace, and
// returns the shell's wait result.
func terminate(pgid int, grace time.Duration, waited <-chan error) error {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case err := <-waited:
		return err
	case <-t.C:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return <-waited
	}
}

// capBuffer keeps the first and last max/2 bytes written.
type capBuffer struct {
	mu    sync.Mutex
	max   int
	head  []byte
	tail  []byte // ring buffer of size max-len(head) once head is full
	tpos  int    // next write position in tail when full
	tfull bool
	total int64
}

func newCapBuffer(max int) *capBuffer {
	return &capBuffer{max: max}
}

func (b *capBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	b.total += int64(n)
	headCap := b.max / 2
	if len(b.head) < headCap {
		k := min(headCap-len(b.head), len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	tailCap := b.max - headCap
	if tailCap <= 0 {
		return n, nil
	}
	if len(p) >= tailCap {
		b.tail = append(b.tail[:0], p[len(p)-tailCap:]...)
		b.tpos, b.tfull = 0, true
		return n, nil
	}
	for len(p) > 0 {
		if !b.tfull {
			k := min(tailCap-len(b.tail), len(p))
			b.tail = append(b.tail, p[:k]...)
			p = p[k:]
			if len(b.tail) == tailCap {
				b.tfull, b.tpos = true, 0
			}
			continue
		}
		k := copy(b.tail[b.tpos:], p)
		p = p[k:]
		b.tpos = (b.tpos + k) % tailCap
	}
	return n, nil
}

// result returns the kept output, the total size and whether bytes were cut.
func (b *capBuffer) result() (string, int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tail := b.tail
	if b.tfull && b.tpos > 0 {
		tail = append(append([]byte{}, b.tail[b.tpos:]...), b.tail[:b.tpos]...)
	}
	kept := int64(len(b.head) + len(tail))
	if kept == b.total {
		return string(b.head) + string(tail), b.total, false
	}
	cut := b.total - kept
	note := fmt.Sprintf("\n[... %d bytes omitted (output was %d bytes; kept the first %d and the last %d) ...]\n", cut, b.total, len(b.head), len(tail))
	return string(b.head) + note + string(tail), b.total, true
}

// liveWriter never fails: a watcher that went away does not stop the
// command or its captured output.
type liveWriter struct{ w io.Writer }

func (l liveWriter) Write(p []byte) (int, error) {
	_, _ = l.w.Write(p)
	return len(p), nil
}
