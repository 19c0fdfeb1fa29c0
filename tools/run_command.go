package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/tools/shell"
)

const runCommandDescription = `Run a shell command in the workspace root (bash), with a timeout (default 120 s, at most 600). Output (stdout and stderr together) is capped; the middle of long output is cut. Commands are classified by risk (read, write, network, install, destructive): read-only commands run at once, others may need the user's approval or be refused by policy. Prefer read-only commands (go test is write: it builds). Do not use it to edit files: use edit_file, which the user reviews.`

// RunCommand is the run_command tool for the workspace at root (the
// classifier judges paths and redirections against it).
func RunCommand(root string) *Tool {
	return &Tool{
		Name:        "run_command",
		Description: runCommandDescription,
		Schema: json.RawMessage(`{"type":"object","properties":{
			"command":{"type":"string","minLength":1},
			"timeoutSec":{"type":"integer","minimum":1,"maximum":600}},
			"required":["command"],"additionalProperties":false}`),
		Risk:           RiskDestructive,   // refined per input by Classify
		Timeout:        605 * time.Second, // the command's own timeout is enforced by shell.Run
		MaxOutputBytes: 32 << 10,
		SideEffects:    true,
		Run:            runRunCommand,
		Classify: func(input json.RawMessage) (Risk, string) {
			var in struct {
				Command string `json:"command"`
			}
			_ = json.Unmarshal(input, &in)
			c := shell.Classify(in.Command, shell.Options{Workspace: root})
			detail := in.Command
			if len(c.Packages) > 0 {
				detail += "\npackages: " + strings.Join(c.Packages, ", ")
			}
			if r := c.Reason(); r != "" {
				detail += "\n(" + r + ")"
			}
			return Risk(c.Risk), detail
		},
	}
}

func runRunCommand(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	var in struct {
		Command    string `json:"command"`
		TimeoutSec int    `json:"timeoutSec"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return errorResult("invalid input: %v", err), nil
	}
	timeout := 120 * time.Second
	if in.TimeoutSec > 0 {
		timeout = time.Duration(in.TimeoutSec) * time.Second
	}
	res, err := shell.Run(ctx, shell.RunOptions{
		Dir: env.WS.Root(), Command: in.Command, Timeout: timeout, MaxOutputBytes: 32 << 10,
		Env: shell.StripSecrets(os.Environ()),
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
	default:
		fmt.Fprintf(&b, "[exit status %d]\n", res.ExitCode)
	}
	summary := fmt.Sprintf("exit %d in %s", res.ExitCode, res.Duration.Round(time.Millisecond))
	if res.TimedOut {
		summary = "timed out"
	}
	if res.Cancelled && ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	return Result{Content: b.String(), Summary: summary, IsError: res.ExitCode != 0 || res.TimedOut}, nil
}
