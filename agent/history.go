package agent

import (
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/tools"
)

// History returns what a run showed its client — its events — and the edits
// it proposed, for a client that reattaches to the run (an ACP session/load
// after a restart). A run of this process answers from memory; any other is
// read back from its journal, where the events are rebuilt from the records
// (question, streamed text as one delta per model turn, tool calls and
// results, edits and their fate, the end). Nothing is executed: it is a
// read of what happened. (Ended runs are retired from memory, so only a
// running run answers from it.)
func (m *Manager) History(runID string) (question string, events []protocol.RunEvent, edits []Edit, err error) {
	if r, ok := m.live(runID); ok {
		return r.Question, r.Events(), m.editsOf(runID), nil
	}
	if err := protocol.ValidateID("runId", runID); err != nil {
		return "", nil, nil, err
	}
	recs, _, err := checkpoint.ReadJournal(journalPath(m.cfg.StateDir, runID))
	if err != nil {
		return "", nil, nil, fmt.Errorf("reading the journal of run %s: %w", runID, err)
	}
	seq := 0
	add := func(ev protocol.RunEvent) {
		seq++
		ev.RunID, ev.Seq = runID, seq
		events = append(events, ev)
	}
	blob := func(h string) string {
		if h == "" || m.cps == nil {
			return ""
		}
		s, _ := m.cps.Blobs.Get(h)
		return s
	}
	byID := map[string]int{}                   // edit id → index in edits
	planInputs := map[string]json.RawMessage{} // update_plan inputs by call id
	finished := false
	var usage protocol.Usage
	for _, rec := range effectiveRecords(recs) {
		switch rec.Type {
		case checkpoint.RecRunStarted:
			var rs runStartedRecord
			_ = json.Unmarshal(rec.Data, &rs)
			question = rs.Question
			add(protocol.RunEvent{Kind: protocol.EventStarted})
		case checkpoint.RecModelResult:
			var resp model.Response
			if json.Unmarshal(rec.Data, &resp) != nil {
				continue
			}
			usage.InputTokens += resp.Usage.InputTokens
			usage.OutputTokens += resp.Usage.OutputTokens
			if resp.Text != "" {
				add(protocol.RunEvent{Kind: protocol.EventText, Delta: resp.Text})
			}
			for _, c := range resp.ToolCalls {
				input := json.RawMessage(c.Arguments)
				if !json.Valid(input) {
					input, _ = json.Marshal(c.Arguments)
				}
				add(protocol.RunEvent{Kind: protocol.EventToolCall, CallID: c.ID, Tool: c.Name, Input: input})
				if c.Name == "update_plan" {
					planInputs[c.ID] = input
				}
			}
		case checkpoint.RecToolResult:
			var tr toolResultRecord
			if json.Unmarshal(rec.Data, &tr) != nil {
				continue
			}
			ok := tr.OK
			if in, isPlan := planInputs[tr.CallID]; isPlan && ok {
				// The plan is not journaled apart: it is the call's input.
				if entries, err := tools.ParsePlan(in); err == nil {
					add(protocol.RunEvent{Kind: protocol.EventPlan, Plan: planEntries(redact.Default(), entries)})
				}
			}
			add(protocol.RunEvent{Kind: protocol.EventToolResult, CallID: tr.CallID, OK: &ok, Summary: tr.Summary})
		case checkpoint.RecEdit:
			var er editRecord
			if json.Unmarshal(rec.Data, &er) != nil {
				continue
			}
			e := Edit{ID: er.EditID, RunID: runID, Step: rec.Step, State: EditPending}
			for _, f := range er.Files {
				e.Files = append(e.Files, tools.FileChange{Abs: f.Abs, Rel: f.Rel, Before: blob(f.Before), BeforeOK: f.BeforeExists,
					After: blob(f.After), Created: f.Created, Protected: f.Protected})
			}
			byID[e.ID] = len(edits)
			edits = append(edits, e)
			add(protocol.RunEvent{Kind: protocol.EventEditProposed, EditID: e.ID})
		case checkpoint.RecEditState:
			var st struct {
				EditID       string    `json:"editId"`
				State        EditState `json:"state"`
				CheckpointID string    `json:"checkpointId"`
			}
			if json.Unmarshal(rec.Data, &st) != nil {
				continue
			}
			if i, ok := byID[st.EditID]; ok {
				edits[i].State, edits[i].CheckpointID = st.State, st.CheckpointID
			}
			if st.State == EditAccepted {
				add(protocol.RunEvent{Kind: protocol.EventCheckpoint, CheckpointID: st.CheckpointID, Step: rec.Step, EditID: st.EditID})
			}
		case checkpoint.RecFinished:
			var f struct {
				State State  `json:"state"`
				Error string `json:"error"`
				Class string `json:"class"`
			}
			_ = json.Unmarshal(rec.Data, &f)
			finished = true
			switch f.State {
			case StateFinished:
				u := usage
				add(protocol.RunEvent{Kind: protocol.EventFinished, Usage: &u})
			case StateCancelled:
				add(protocol.RunEvent{Kind: protocol.EventCancelled, Error: f.Error})
			default:
				add(protocol.RunEvent{Kind: protocol.EventFailed, Error: f.Error, Class: f.Class})
			}
		}
	}
	if len(events) == 0 {
		return "", nil, nil, fmt.Errorf("run %s journaled nothing", runID)
	}
	if !finished {
		add(protocol.RunEvent{Kind: protocol.EventInterrupted, Error: "the server stopped during this run"})
	}
	return question, events, edits, nil
}
