package acp

import (
	"context"
	"log/slog"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
)

// replay sends a loaded session's history as session/update notifications:
// each run's question as a user message, then its events through the same
// mapping a live turn uses. The history comes from Cairn's journal (or
// memory); nothing is executed and no edit is reviewed again.
func (a *adapter) replay(s *session) {
	for _, runID := range s.runs() {
		question, events, edits, err := s.w.mgr.History(runID)
		if err != nil {
			slog.Warn("replaying a run", "session", s.id, "run", runID, "err", err)
			continue
		}
		a.send(s.id, sdk.UpdateUserMessageText(question))
		s.calls.resetRun(runID)
		t := &turn{a: a, s: s, ctx: context.Background(), calls: map[string]*callState{}, runID: runID, replaying: true, edits: map[string]agent.Edit{}}
		for _, e := range edits {
			t.edits[e.ID] = e
		}
		for _, ev := range events {
			t.emit(ev)
		}
	}
}

// replayEdit shows a replayed edit with the fate it had.
func (t *turn) replayEdit(c *callState) {
	e, ok := t.edits[c.editID]
	if !ok {
		return
	}
	diff, locs := diffContent(e.Files)
	status, note := sdk.ToolCallStatusFailed, "Not written."
	if e.State == agent.EditAccepted {
		status, note = sdk.ToolCallStatusCompleted, "Written (checkpoint "+e.CheckpointID+")."
	}
	t.a.send(t.s.id, sdk.UpdateToolCall(c.id, sdk.WithUpdateStatus(status), sdk.WithUpdateLocations(locs),
		sdk.WithUpdateContent(append(diff, sdk.ToolContent(sdk.TextBlock(note))))))
}
