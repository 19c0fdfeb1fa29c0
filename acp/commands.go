package acp

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/checkpoint"
)

// The slash commands, announced with available_commands_update.
var commands = []sdk.AvailableCommand{
	{Name: "undo", Description: "Undo Cairn's last written edit in this session (refused when you changed the file since)"},
	{Name: "context", Description: "Show the context report of the last run: every candidate, its tokens, included or dropped and why"},
	{Name: "rewind", Description: "Forget the last run's steps after step N and restore the files it changed since",
		Input: &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: "step number"}}},
	{Name: "resume", Description: "Continue the last run after it was interrupted (no side effect is repeated)"},
}

func (a *adapter) announceCommands(id sdk.SessionId) {
	a.send(id, sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: commands}})
}

// slashCommand returns the command line when the prompt is one of Cairn's
// slash commands ("/rewind 3").
func slashCommand(blocks []sdk.ContentBlock) (string, bool) {
	if len(blocks) == 0 || blocks[0].Text == nil {
		return "", false
	}
	line := strings.TrimSpace(blocks[0].Text.Text)
	name, _, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	if !strings.HasPrefix(line, "/") {
		return "", false
	}
	for _, c := range commands {
		if c.Name == name {
			return line, true
		}
	}
	return "", false
}

// runCommand answers a slash command as the turn's agent message.
func (a *adapter) runCommand(ctx context.Context, s *session, line string) (sdk.PromptResponse, error) {
	name, arg, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	arg = strings.TrimSpace(arg)
	mgr := s.w.mgr
	say := func(text string) { a.send(s.id, sdk.UpdateAgentMessageText(text)) }
	runs := s.runs()
	last := ""
	if len(runs) > 0 {
		last = runs[len(runs)-1]
	}
	end := sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}
	switch name {
	case "context":
		if last == "" {
			return end, invalidRequest("/context: this session has no run yet")
		}
		md, err := mgr.ContextReport(last)
		if err != nil {
			return end, invalidRequest("/context: %v", err)
		}
		say(md)
	case "undo":
		cp := lastApplied(mgr, runs)
		if cp == nil {
			return end, invalidRequest("/undo: no written edit of this session is left to undo")
		}
		res, err := mgr.Undo(ctx, cp.ID, false, &clientWriter{a: a, s: s})
		a.closeBuffers(s)
		if err != nil {
			return end, invalidRequest("/undo: %v", err)
		}
		if !res.Applied {
			return end, invalidRequest("/undo: the files could not be written")
		}
		for _, r := range res.Restored {
			s.forgetWritten(s.w.ws.Abs(r))
		}
		say(fmt.Sprintf("Undid checkpoint %s: restored %s.", cp.ID, strings.Join(res.Restored, ", ")))
	case "rewind":
		step, err := strconv.Atoi(arg)
		if err != nil || step < 0 {
			return end, invalidParams("/rewind takes a step number: /rewind 2")
		}
		if last == "" {
			return end, invalidRequest("/rewind: this session has no run yet")
		}
		res, err := mgr.Rewind(ctx, last, step, true, &clientWriter{a: a, s: s})
		a.closeBuffers(s)
		if err != nil {
			return end, invalidRequest("/rewind: %v", err)
		}
		msg := fmt.Sprintf("Rewound run %s to step %d.", last, step)
		if len(res.Restored) > 0 {
			msg += " Restored: " + strings.Join(res.Restored, ", ") + "."
		}
		if len(res.Irreversible) > 0 {
			msg += " Not undoable: " + strings.Join(res.Irreversible, "; ") + "."
		}
		say(msg + " /resume continues it from there.")
	case "resume":
		if last == "" {
			return end, invalidRequest("/resume: this session has no run yet")
		}
		t := &turn{a: a, s: s, ctx: ctx, calls: map[string]*callState{}}
		// The session's model, not the workspace's: a choice made in the
		// session (or restored with it) holds for the resumed run too.
		run, err := mgr.ResumeWithModel(ctx, last, s.chosenModel(), t.emit)
		if err != nil {
			return end, invalidRequest("/resume: %v", err)
		}
		if w := run.Warnings(); len(w) > 0 {
			say(strings.Join(w, " ") + "\n")
		}
		defer a.closeBuffers(s)
		a.wait(ctx, run)
		return t.response(run)
	}
	return end, nil
}

// lastApplied is the newest applied checkpoint of the session's runs.
func lastApplied(mgr *agent.Manager, runs []string) *checkpoint.Checkpoint {
	mine := map[string]bool{}
	for _, r := range runs {
		mine[r] = true
	}
	cps, err := mgr.Checkpoints().List()
	if err != nil {
		return nil
	}
	var best *checkpoint.Checkpoint
	for _, cp := range cps {
		if mine[cp.RunID] && cp.Status == checkpoint.StatusApplied && (best == nil || cp.Time.After(best.Time)) {
			best = cp
		}
	}
	return best
}

func (s *session) forgetWritten(abs string) {
	s.mu.Lock()
	delete(s.written, abs)
	s.mu.Unlock()
}
