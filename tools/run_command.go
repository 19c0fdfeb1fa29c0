package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/tools/shell"
	"github.com/cairn-dev/cairn/tools/shell/sandbox"
	"github.com/cairn-dev/cairn/workspace"
)

const runCommandDescription = `Run a shell command in the workspace root (bash), with a timeout (default 120 s, at most 600). Output (stdout and stderr together) is capped; the middle of long output is cut. Commands are classified by risk (read, write, network, install, destructive): read-only commands run at once, others may need the user's approval or be refused by policy. Commands run in an OS sandbox: read-only commands can write nothing but $TMPDIR; others may also write the workspace and tool caches, except protected paths (.git anywhere, .cairn, .vscode, .github/workflows, .envrc, ...: existing ones are read-only, new ones a command makes are removed afterwards); memory, processes, CPU time, file sizes and /tmp are limited, and nothing a command starts outlives it; there is no network unless the command is rated network/install and approved; files outside the workspace and toolchains (e.g. ~/.ssh) are unreadable. If a command fails only because of the sandbox, you may call run_command again with withoutSandbox: true and a reason the user will read; the user must approve that exact command. Prefer read-only commands (go test is write: it builds). Do not use it to edit files: use edit_file, which the user reviews.`

// OutsideSandbox starts the approval detail of a command that will run
// without the OS sandbox. The gate never allows such a call by policy:
// the user approves the exact command.
const OutsideSandbox = "[outside the sandbox] "

// PartialSandbox starts the approval detail of a read command that would
// run in a sandbox without its own namespaces (Landlock alone), where
// host UNIX sockets and other processes stay reachable. Like
// OutsideSandbox, the gate never allows it by policy.
const PartialSandbox = "[sandbox without isolation] "

// Sandbox modes (setting sandbox.mode, env CAIRN_SANDBOX).
const (
	SandboxAuto     = "auto"
	SandboxRequired = "required"
	SandboxOff      = "off"
)

// SandboxSettings are the `sandbox` settings.
type SandboxSettings struct {
	Mode          string   `json:"mode"`
	Network       bool     `json:"network"`
	WritableRoots []string `json:"writableRoots"`
	ReadableRoots []string `json:"readableRoots"`
	// Limits are sandbox.limits.{memoryMB,pids,tmpMB,cpuSeconds,fileMB};
	// zero or missing fields take sandbox.DefaultLimits.
	Limits sandbox.Limits `json:"limits"`
}

// CommandSandbox decides how run_command confines each command: the
// settings, the state directory to protect, and what the system allows.
// Safe for concurrent use; settings may change between calls.
type CommandSandbox struct {
	mu       sync.Mutex
	root     string
	stateDir string
	settings SandboxSettings
	probe    func() sandbox.Status
	// folders are the workspace's other folders (SetFolders): writable
	// like the root under workspace-write, their protected paths kept.
	folders []string
}

// SetFolders sets the real paths of the workspace folders besides the
// first (the command's working directory stays the first).
func (c *CommandSandbox) SetFolders(roots []string) {
	c.mu.Lock()
	c.folders = append([]string(nil), roots...)
	c.mu.Unlock()
}

// NewCommandSandbox returns the sandbox for commands run in root, in
// mode auto until Configure says otherwise.
func NewCommandSandbox(root string) *CommandSandbox {
	return &CommandSandbox{root: root, settings: SandboxSettings{Mode: SandboxAuto}, probe: sandbox.Probe}
}

// Configure applies settings (invalid values are reported and replaced
// by defaults) and the server's state directory (never writable).
func (c *CommandSandbox) Configure(s SandboxSettings, stateDir string) []string {
	var problems []string
	switch s.Mode {
	case "":
		s.Mode = SandboxAuto
	case SandboxAuto, SandboxRequired, SandboxOff:
	default:
		problems = append(problems, fmt.Sprintf("sandbox.mode %q is not auto, required or off; using auto", s.Mode))
		s.Mode = SandboxAuto
	}
	keep := func(name string, in []string) []string {
		var out []string
		for _, p := range in {
			if !filepath.IsAbs(p) {
				problems = append(problems, fmt.Sprintf("%s: %q is not an absolute path; ignored", name, p))
				continue
			}
			out = append(out, filepath.Clean(p))
		}
		return out
	}
	s.WritableRoots = keep("sandbox.writableRoots", s.WritableRoots)
	for name, v := range map[string]int{"memoryMB": s.Limits.MemoryMB, "pids": s.Limits.Pids, "tmpMB": s.Limits.TmpMB, "cpuSeconds": s.Limits.CPUSeconds, "fileMB": s.Limits.FileMB} {
		if v < 0 {
			problems = append(problems, fmt.Sprintf("sandbox.limits.%s %d is negative; using the default", name, v))
		}
	}
	s.ReadableRoots = keep("sandbox.readableRoots", s.ReadableRoots)
	c.mu.Lock()
	c.settings, c.stateDir = s, stateDir
	c.mu.Unlock()
	return problems
}

// Status reports what the system gives and the mode in force.
func (c *CommandSandbox) Status() (sandbox.Status, string) {
	c.mu.Lock()
	mode := c.settings.Mode
	c.mu.Unlock()
	return c.probe(), mode
}

// confined reports whether commands run in the sandbox now.
func (c *CommandSandbox) confined() bool {
	st, mode := c.Status()
	return mode != SandboxOff && st.Available()
}

// isolated reports whether commands run in a sandbox with namespaces of
// their own (no host sockets, processes or /tmp reachable).
func (c *CommandSandbox) isolated() bool {
	st, mode := c.Status()
	return mode != SandboxOff && st.Isolated()
}

// protectedPaths walks the workspace for its protected paths; complete is
// false when part of the walk failed. It runs before every command that
// may write: a command may have made a new nested repository since the
// last one.
func (c *CommandSandbox) protectedPaths() (paths []string, complete bool) {
	c.mu.Lock()
	roots := append([]string{c.root}, c.folders...)
	c.mu.Unlock()
	var protected []string
	var err error
	for _, root := range roots {
		found, ferr := workspace.FindProtected(root)
		if ferr != nil {
			// What was found is still protected; the rest of the walk
			// failed on a directory the command may not list either.
			slog.Warn("run_command: finding the protected paths", "root", root, "err", ferr)
			err = ferr
		}
		protected = append(protected, found...)
	}
	if protected == nil {
		protected = []string{}
	}
	return protected, err == nil
}

// policy is the sandbox policy for a command of the given risk, with the
// workspace's protected paths (nil for a read command, which writes
// nothing of the workspace).
func (c *CommandSandbox) policy(risk Risk, protected []string) sandbox.Policy {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := sandbox.Policy{
		Profile:        sandbox.WorkspaceWrite,
		Workspace:      c.root,
		StateDir:       c.stateDir,
		ReadableRoots:  c.settings.ReadableRoots,
		WritableRoots:  append(slices.Clip(c.settings.WritableRoots), c.folders...),
		Protected:      protected,
		ProtectedNames: workspace.ProtectedRootNames,
		Limits:         c.settings.Limits,
		// A command rated network or install runs only after approval
		// (or an explicit allow rule) and needs the network to work.
		Network: c.settings.Network || risk == RiskNetwork || risk == RiskInstall,
	}
	if risk == RiskRead {
		p.Profile = sandbox.ReadOnly
		p.Network = false
		p.WritableRoots = nil
		p.ReadableRoots = append(slices.Clip(c.settings.ReadableRoots), c.folders...)
	}
	return p
}

type runCommandInput struct {
	Command        string `json:"command"`
	TimeoutSec     int    `json:"timeoutSec"`
	WithoutSandbox bool   `json:"withoutSandbox"`
	Reason         string `json:"reason"`
}

// RunCommandWith is the run_command tool confined by sb. The classifier
// judges paths and redirections against root and picks the profile: a
// read command runs read-only, anything else workspace-write.
func RunCommandWith(root string, sb *CommandSandbox) *Tool {
	return &Tool{
		Name:        "run_command",
		Description: runCommandDescription,
		Schema: json.RawMessage(`{"type":"object","properties":{
			"command":{"type":"string","minLength":1},
			"timeoutSec":{"type":"integer","minimum":1,"maximum":600},
			"withoutSandbox":{"type":"boolean","description":"run outside the OS sandbox; only after the command failed because of it; the user must approve"},
			"reason":{"type":"string","description":"why the command needs to run outside the sandbox (shown to the user)"}},
			"required":["command"],"additionalProperties":false}`),
		Risk:           RiskDestructive,   // refined per input by Classify
		Timeout:        605 * time.Second, // the command's own timeout is enforced by shell.Run
		MaxOutputBytes: 32 << 10,
		SideEffects:    true,
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
			return runRunCommand(ctx, env, input, sb)
		},
		Classify: func(input json.RawMessage) (Risk, string) {
			req := explainCommand(root, sb, input)
			return req.Risk, req.Detail
		},
		Explain: func(input json.RawMessage) ApprovalRequest {
			return explainCommand(root, sb, input)
		},
	}
}

// explainCommand classifies a command line for the gate: its risk, each of
// its commands with its own risk and reason, the packages an install would
// fetch, and the detail (the session key, the audit trail, and what clients
// without structure show). The model's reason for leaving the sandbox is
// kept apart, quoted on one line, so it cannot pass for Cairn's text.
func explainCommand(root string, sb *CommandSandbox, input json.RawMessage) ApprovalRequest {
	var in runCommandInput
	_ = json.Unmarshal(input, &in)
	c := shell.Classify(in.Command, shell.Options{Workspace: root})
	req := ApprovalRequest{Tool: "run_command", Risk: Risk(c.Risk), Command: in.Command, Commands: CommandParts(c), Packages: c.Packages}
	detail := in.Command
	if len(c.Packages) > 0 {
		detail += "\npackages: " + strings.Join(c.Packages, ", ")
	}
	if r := c.Reason(); r != "" {
		detail += "\n(" + r + ")"
	}
	// A command outside the sandbox always asks, unless it only reads and
	// no sandbox was asked for.
	switch {
	case in.WithoutSandbox:
		req.ModelReason = strings.TrimSpace(in.Reason)
		reason := "(no reason given)"
		if req.ModelReason != "" {
			reason = QuoteModel(req.ModelReason, promptReasonRunes)
		}
		detail = OutsideSandbox + detail + "\nmodel's reason: " + reason
	case req.Risk != RiskRead && !sb.confined():
		detail = OutsideSandbox + detail + "\nreason: commands cannot be sandboxed here"
	case req.Risk == RiskRead && sb.confined() && !sb.isolated():
		// Landlock alone does not keep a command from host UNIX sockets
		// (a daemon that runs anything), other processes or shared
		// memory: a read command is no longer harmless, so it asks.
		detail = PartialSandbox + detail + "\nreason: the sandbox here has no namespaces of its own, so host sockets and processes are reachable"
	}
	req.Detail = detail
	return req
}

func runRunCommand(ctx context.Context, env *Env, input json.RawMessage, sb *CommandSandbox) (Result, error) {
	var in runCommandInput
	if err := json.Unmarshal(input, &in); err != nil {
		return errorResult("invalid input: %v", err), nil
	}
	timeout := 120 * time.Second
	if in.TimeoutSec > 0 {
		timeout = time.Duration(in.TimeoutSec) * time.Second
	}
	root := env.WS.Root()
	risk := Risk(shell.Classify(in.Command, shell.Options{Workspace: root}).Risk)
	st, mode := sb.Status()
	var pol *sandbox.Policy
	// One walk serves the sandbox (read-only binds, removal of what the
	// command creates) and git's environment (the repositories' configs).
	// walked: the list from before the command is complete.
	protected, walked := sb.protectedPaths()
	profile := "no sandbox"
	switch {
	case in.WithoutSandbox:
		profile = "outside the sandbox (approved)"
	case mode == SandboxOff:
		profile = "no sandbox (sandbox.mode is off)"
	case !st.Available() && mode == SandboxRequired:
		return errorResult("not run: sandbox.mode is required and %s", st.Describe()), nil
	case !st.Available():
		profile = "no sandbox (" + st.Err.Error() + ")"
	default:
		var writable []string // a read command writes nothing of the workspace
		if risk != RiskRead {
			writable = protected
		}
		p := sb.policy(risk, writable)
		pol = &p
		profile = string(p.Profile) + " sandbox"
		if p.Network {
			profile += " with network"
		}
		if !st.Isolated() {
			profile += " (Landlock only)"
		}
	}
	res, err := runShell(ctx, shell.RunOptions{
		Dir: root, Command: in.Command, Timeout: timeout, MaxOutputBytes: 32 << 10,
		Env: shell.GitEnvFor(shell.StripSecrets(os.Environ()), root, protected), Sandbox: orFull(pol),
		// Only against a complete walk from before: a path it missed
		// must never be taken for the command's.
		RevertProtected: walked,
	})
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return errorResult("could not run the command: %v", err), nil
	}
	var b strings.Builder
	b.WriteString(res.Output)
	if res.Output != "" && !strings.HasSuffix(res.Output, "\n") {
		b.WriteByte('\n')
	}
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "[timed out after %s; the process group was killed]\n", timeout)
	case res.Cancelled:
		fmt.Fprintf(&b, "[cancelled; the process group was killed]\n")
	case res.Signal != "":
		fmt.Fprintf(&b, "[killed by signal %s]\n", res.Signal)
	case pol != nil && sandbox.Failed(res.ExitCode, res.Output):
		fmt.Fprintf(&b, "[the sandbox could not be set up; the command did not run]\n")
	default:
		fmt.Fprintf(&b, "[exit status %d; ran in: %s]\n", res.ExitCode, profile)
	}
	b.WriteString(shell.DescribeProtected(res.Protected))
	if pol != nil && res.ExitCode != 0 && !res.TimedOut && !res.Cancelled && deniedBySandbox(res.Output) {
		fmt.Fprintf(&b, "[this may have failed because of the %s sandbox (%s). If it cannot work inside it, call run_command again with withoutSandbox: true and a reason; the user decides]\n",
			pol.Profile, sandboxLimits(*pol))
	}
	summary := fmt.Sprintf("exit %d in %s (%s)", res.ExitCode, res.Duration.Round(time.Millisecond), profile)
	if res.TimedOut {
		summary = "timed out"
	}
	if res.Cancelled && ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	return Result{Content: b.String(), Summary: summary, IsError: res.ExitCode != 0 || res.TimedOut}, nil
}

// orFull is p, or the Full profile for a command that runs outside the
// sandbox: no walls, but the launcher still sees that nothing the command
// starts outlives it.
func orFull(p *sandbox.Policy) *sandbox.Policy {
	if p != nil {
		return p
	}
	return &sandbox.Policy{Profile: sandbox.Full}
}

// deniedBySandbox recognizes the errors a confined command meets. In the
// command's own filesystem a path outside it does not exist at all.
func deniedBySandbox(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "No such file or directory") && strings.Contains(line, " /") {
			return true
		}
	}
	for _, s := range []string{"Permission denied", "Operation not permitted", "Read-only file system",
		"Network is unreachable", "Could not resolve host", "Temporary failure in name resolution", "Device or resource busy"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

func sandboxLimits(p sandbox.Policy) string {
	s := "writable: $TMPDIR only"
	if p.Profile == sandbox.WorkspaceWrite {
		s = "writable: the workspace except protected paths (.git, .cairn, .vscode, .github/workflows, .envrc, ...) and new entries directly in its root, $TMPDIR, tool caches"
	}
	if !p.Network {
		s += "; no network"
	}
	return s + "; unreadable: files outside the workspace, toolchains and caches; limits: " + p.Limits.String()
}
