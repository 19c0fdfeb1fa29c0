package acp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
)

// cardOutputBytes bounds the command output shown on a tool call's card:
// the model gets up to run_command's own cap; the card keeps the head and
// the tail within this.
const cardOutputBytes = 8 << 10

// resultContent is the content of a finished tool call's card. A command
// shows its output (what the model was given, redacted by the run before it
// left the agent) under the summary, so the user sees what ran without
// opening a log; other tools show their summary.
func (t *turn) resultContent(tool string, ev protocol.RunEvent) []sdk.ToolCallContent {
	t.mu.Lock()
	term := t.terminals[ev.CallID]
	t.mu.Unlock()
	if term != "" {
		// The client's terminal holds the output: keep it on the card.
		return []sdk.ToolCallContent{sdk.ToolTerminalRef(term), sdk.ToolContent(sdk.TextBlock(ev.Summary))}
	}
	if tool != "run_command" || strings.TrimSpace(ev.Output) == "" {
		return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(ev.Summary))}
	}
	return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(ev.Summary + "\n\n" + fenced(capOutput(ev.Output, cardOutputBytes))))}
}

// capOutput keeps the first and last max/2 bytes of s (cut at line or rune
// boundaries where it can), with a note of what was left out.
func capOutput(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := s[:max/2], s[len(s)-max/2:]
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	}
	head, tail = strings.ToValidUTF8(head, ""), strings.ToValidUTF8(tail, "")
	return fmt.Sprintf("%s[... %d bytes not shown ...]\n%s", head, len(s)-len(head)-len(tail), tail)
}

// fenced is s as a Markdown code block whose fence no run of backticks in
// s can close.
func fenced(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return fence + "\n" + s + fence
}

// terminalOutputLimit is what the client keeps of a command's output: the
// model's copy comes from Cairn's own capture, the terminal is for the user.
const terminalOutputLimit = 1 << 20

// clientTerminal runs run_command's sandboxed launcher in the client's
// terminal (terminal/create), shown on the command's card, and waits for it
// to exit. It gets Cairn's launcher and its spec only (see
// shell.RunInTerminal): never the command line, which runs confined inside.
type clientTerminal struct {
	t *turn
}

func (c clientTerminal) Run(ctx context.Context, argv, env []string, dir string) error {
	a, s := c.t.a, c.t.s
	vars := make([]sdk.EnvVariable, 0, len(env))
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		vars = append(vars, sdk.EnvVariable{Name: name, Value: value})
	}
	limit := terminalOutputLimit
	created, err := a.conn.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: s.id, Command: argv[0], Args: argv[1:],
		Env: vars, Cwd: &dir, OutputByteLimit: &limit})
	if err != nil {
		slog.Warn("the client's terminal/create failed; running the command here", "session", s.id, "err", err)
		return fmt.Errorf("terminal/create: %v: %w", err, tools.ErrTerminalNotStarted)
	}
	id := created.TerminalId
	// Released with the connection's context: a cancelled turn still
	// frees the client's terminal.
	defer func() {
		if _, err := a.conn.ReleaseTerminal(a.ctx, sdk.ReleaseTerminalRequest{SessionId: s.id, TerminalId: id}); err != nil {
			slog.Debug("terminal/release failed", "terminal", id, "err", err)
		}
	}()
	if call := c.t.currentCall(); call != "" {
		c.t.mu.Lock()
		if c.t.terminals == nil {
			c.t.terminals = map[string]string{}
		}
		c.t.terminals[call] = id
		c.t.mu.Unlock()
		a.send(s.id, sdk.UpdateToolCall(s.calls.of(c.t.runID, call), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(id)})))
	}
	_, err = a.conn.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: s.id, TerminalId: id})
	if ctx.Err() != nil {
		if _, kerr := a.conn.KillTerminal(a.ctx, sdk.KillTerminalRequest{SessionId: s.id, TerminalId: id}); kerr != nil {
			slog.Debug("terminal/kill failed", "terminal", id, "err", kerr)
		}
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("terminal/wait_for_exit: %w", err)
	}
	return nil
}

// currentCall is the call whose tool is running.
func (t *turn) currentCall() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current
}
