package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/tokencount"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/workspace"
)

// journalRun is a run as its journal tells it: everything resume rebuilds,
// computed by restoreJournal from the records alone (and the blobs they
// name), before anything in the manager or the workspace is touched.
type journalRun struct {
	// Question, File and Selection come from the run record; Question is
	// "" when that record was unreadable.
	Question  string
	File      string
	Selection *struct{ StartLine, EndLine int }
	// System and User are the built context; HasContext is false when no
	// readable context record exists (it is built again).
	System, User string
	HasContext   bool
	// Messages is the conversation after the context: assistant turns and
	// one tool message per call.
	Messages []model.Message
	// Step is the last complete step (its model result was read).
	Step      int
	LastSeq   int // the highest event seq journaled
	Usage     tokencount.Usage
	SeenCalls map[string]int
	// Rerun are calls that never started: they run again, through the full
	// pipeline, when the resumed run starts.
	Rerun []rerunCall
	// Edits are the run's proposed edits with their last recorded state;
	// Drafts the run's overlay as it stood (rejected edits' files dropped).
	Edits  []*Edit
	Drafts []workspace.Draft
	// Unknown are calls that may or may not have taken effect: they are
	// never replayed, and both the model and the user are told.
	Unknown []unknownCall
	// Damaged is how many unreadable stretches the journal had.
	Damaged int
	// Notes are for the model's resume note.
	Notes []string
}

// unknownCall is a tool call whose outcome the journal cannot tell.
type unknownCall struct {
	Call   model.ToolCall
	Reason string
}

// pendingCall is one tool call of a turn, with what the journal recorded
// about it.
type pendingCall struct {
	call   model.ToolCall
	intent *toolIntentRecord
	result *toolResultRecord
}

// journalTurn is one step being read back: the model's reply and its calls.
type journalTurn struct {
	step      int
	readReply bool // the model result was read
	calls     []*pendingCall
	byID      map[string]*pendingCall
	damaged   bool // an unreadable record lies inside this turn
}

// journalReader folds records into a journalRun, one record at a time.
type journalReader struct {
	out    *journalRun
	blob   func(hash string) (string, error)
	turn   *journalTurn
	edits  map[string]*Edit
	drafts map[string]workspace.Draft
	order  []string // draft paths in first-seen order
}

// restoreJournal rebuilds a run from its journal records (with
// checkpoint.RecUnreadable where a record was damaged). blob reads a
// content-addressed blob. It has no other inputs and no effects.
func restoreJournal(runID string, recs []checkpoint.Record, blob func(string) (string, error)) (*journalRun, error) {
	jr := &journalReader{out: &journalRun{SeenCalls: map[string]int{}}, blob: blob, edits: map[string]*Edit{},
		drafts: map[string]workspace.Draft{}}
	for _, rec := range recs {
		jr.out.LastSeq = max(jr.out.LastSeq, rec.EventSeq)
		jr.apply(runID, rec)
	}
	jr.closeTurn()
	out := jr.out
	if out.Question == "" && !out.HasContext {
		return nil, fmt.Errorf("the journal has no readable run record nor context; it cannot be resumed")
	}
	for _, p := range jr.order {
		if d, ok := jr.drafts[p]; ok {
			out.Drafts = append(out.Drafts, d)
		}
	}
	if out.Damaged > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("%d record(s) of this run's journal were damaged on disk and skipped; what they recorded (a tool call's outcome, a proposed edit, your reply) is unknown. Check the files before relying on earlier steps.", out.Damaged))
	}
	return out, nil
}

func (jr *journalReader) apply(runID string, rec checkpoint.Record) {
	switch rec.Type {
	case checkpoint.RecRunStarted:
		jr.runStarted(rec)
	case checkpoint.RecContext:
		jr.contextBuilt(rec)
	case checkpoint.RecStepStarted:
		jr.closeTurn()
		jr.turn = &journalTurn{step: rec.Step, byID: map[string]*pendingCall{}}
	case checkpoint.RecModelResult:
		jr.modelResult(rec)
	case checkpoint.RecApproval:
		var a approvalRecord
		if json.Unmarshal(rec.Data, &a) == nil {
			jr.callOf(a.CallID, a.Tool, nil)
		}
	case checkpoint.RecToolIntent:
		var ti toolIntentRecord
		if json.Unmarshal(rec.Data, &ti) == nil {
			if pc := jr.callOf(ti.CallID, ti.Tool, ti.Input); pc != nil {
				pc.intent = &ti
			}
		}
	case checkpoint.RecToolResult:
		var tr toolResultRecord
		if json.Unmarshal(rec.Data, &tr) == nil {
			if pc := jr.callOf(tr.CallID, tr.Tool, nil); pc != nil {
				pc.result = &tr
			}
		}
	case checkpoint.RecEdit:
		jr.editProposed(runID, rec)
	case checkpoint.RecEditState:
		jr.editState(rec)
	case checkpoint.RecUnreadable:
		jr.out.Damaged++
		if jr.turn != nil {
			jr.turn.damaged = true
		}
	}
}

func (jr *journalReader) runStarted(rec checkpoint.Record) {
	var rs runStartedRecord
	if json.Unmarshal(rec.Data, &rs) != nil {
		return
	}
	jr.out.Question, jr.out.File = rs.Question, rs.File
	if rs.Selection != nil {
		jr.out.Selection = &struct{ StartLine, EndLine int }{rs.Selection.StartLine, rs.Selection.EndLine}
	}
}

// contextBuilt reads the built context; a later one (rebuilt smaller after
// a context-length error) replaces it.
func (jr *journalReader) contextBuilt(rec checkpoint.Record) {
	var c contextRecord
	if json.Unmarshal(rec.Data, &c) != nil {
		return
	}
	jr.out.System, jr.out.User = jr.text(c.System), jr.text(c.User)
	jr.out.HasContext = true
}

func (jr *journalReader) modelResult(rec checkpoint.Record) {
	var resp model.Response
	if json.Unmarshal(rec.Data, &resp) != nil {
		return
	}
	if jr.turn == nil || jr.turn.step != rec.Step {
		jr.closeTurn() // the step record was lost
		jr.turn = &journalTurn{step: rec.Step, byID: map[string]*pendingCall{}}
	}
	t := jr.turn
	t.readReply = true
	jr.out.Step = rec.Step
	jr.out.Usage.Add(resp.Usage)
	jr.out.Messages = append(jr.out.Messages, model.Message{Role: model.RoleAssistant, Content: resp.Text, ToolCalls: resp.ToolCalls})
	for _, c := range resp.ToolCalls {
		pc := &pendingCall{call: c}
		t.calls = append(t.calls, pc)
		t.byID[c.ID] = pc
		jr.out.SeenCalls[c.Name+"\x00"+strings.TrimSpace(c.Arguments)]++
	}
}

// callOf finds a call of the current turn. When the turn's model result
// was unreadable, the calls are rebuilt from the records that name them
// (tool and input from the intent), so a call that ran is never mistaken
// for one that did not.
func (jr *journalReader) callOf(id, tool string, input json.RawMessage) *pendingCall {
	t := jr.turn
	if t == nil || id == "" {
		return nil
	}
	if pc, ok := t.byID[id]; ok {
		if pc.call.Arguments == "" && len(input) > 0 {
			pc.call.Arguments = string(input)
		}
		return pc
	}
	if t.readReply {
		return nil
	}
	pc := &pendingCall{call: model.ToolCall{ID: id, Name: tool, Arguments: string(input)}}
	t.calls = append(t.calls, pc)
	t.byID[id] = pc
	return pc
}

// closeTurn ends the turn being read: every call gets its tool message
// (the recorded result, an "unknown" error, or a slot filled by re-running
// a call that never started).
func (jr *journalReader) closeTurn() {
	t := jr.turn
	jr.turn = nil
	if t == nil {
		return
	}
	if !t.readReply {
		if len(t.calls) == 0 {
			return // the step never got a reply: it is asked again
		}
		// The reply was lost but its calls were recorded.
		calls := make([]model.ToolCall, len(t.calls))
		for i, pc := range t.calls {
			if pc.call.Arguments == "" {
				pc.call.Arguments = "{}"
			}
			calls[i] = pc.call
		}
		jr.out.Messages = append(jr.out.Messages, model.Message{Role: model.RoleAssistant, ToolCalls: calls})
		jr.out.Step = t.step
		jr.out.Notes = append(jr.out.Notes, fmt.Sprintf("Your reply at step %d could not be read back; the tool calls recorded for it are shown with their outcomes.", t.step))
	}
	for _, pc := range t.calls {
		jr.out.Messages = append(jr.out.Messages, jr.toolMessage(t, pc))
	}
}

// toolMessage is the tool message that answers pc in the rebuilt
// conversation.
func (jr *journalReader) toolMessage(t *journalTurn, pc *pendingCall) model.Message {
	msg := model.Message{Role: model.RoleTool, ToolCallID: pc.call.ID, ToolName: pc.call.Name}
	if pc.result != nil {
		content, err := jr.blob(pc.result.Content)
		if err == nil || pc.result.Content == "" {
			msg.Content = content
			return msg
		}
	}
	var reason string
	switch {
	case pc.result != nil:
		reason = "its recorded result could not be read back"
	case t.damaged:
		reason = "a journal record of its step was damaged, so whether it ran is unknown"
	case pc.intent != nil && pc.intent.SideEffects:
		reason = "it was interrupted after it started"
	default:
		// Never started (or had no side effects): it runs again once the
		// run is back, through the full pipeline; an earlier "Allow once"
		// is not reused.
		jr.out.Rerun = append(jr.out.Rerun, rerunCall{call: pc.call, index: len(jr.out.Messages)})
		return msg
	}
	input := pc.call.Arguments
	if pc.intent != nil {
		input = string(pc.intent.Input)
	}
	msg.Content = fmt.Sprintf("error: this %s call's outcome is unknown: %s (input %s); it may or may not have taken effect. It was not run again. Check its effects before repeating it.",
		pc.call.Name, reason, summarizeInput(json.RawMessage(input)))
	jr.out.Unknown = append(jr.out.Unknown, unknownCall{Call: pc.call, Reason: reason})
	jr.out.Notes = append(jr.out.Notes, fmt.Sprintf("Call %s (%s): %s; it was not replayed; it may or may not have happened.", pc.call.ID, pc.call.Name, reason))
	return msg
}

func (jr *journalReader) editProposed(runID string, rec checkpoint.Record) {
	var er editRecord
	if json.Unmarshal(rec.Data, &er) != nil {
		return
	}
	e := &Edit{ID: er.EditID, RunID: runID, Step: rec.Step, State: EditPending}
	for _, f := range er.Files {
		fc := tools.FileChange{Abs: f.Abs, Rel: f.Rel, Before: jr.text(f.Before), BeforeOK: f.BeforeExists, After: jr.text(f.After), Created: f.Created, Protected: f.Protected}
		e.Files = append(e.Files, fc)
		if _, seen := jr.drafts[f.Abs]; !seen {
			jr.order = append(jr.order, f.Abs)
		}
		jr.drafts[f.Abs] = workspace.Draft{Abs: f.Abs, Rel: f.Rel, Base: fc.Before, BaseExists: fc.BeforeOK, Text: fc.After}
	}
	e.Hunks = splitHunks(e.Files)
	jr.edits[e.ID] = e
	jr.out.Edits = append(jr.out.Edits, e)
}

func (jr *journalReader) editState(rec checkpoint.Record) {
	var es struct {
		EditID       string    `json:"editId"`
		State        EditState `json:"state"`
		CheckpointID string    `json:"checkpointId"`
		Hunks        []int     `json:"hunks"`     // decided by this record (per-hunk review)
		HunkState    EditState `json:"hunkState"` // what they were decided
	}
	if json.Unmarshal(rec.Data, &es) != nil {
		return
	}
	e, ok := jr.edits[es.EditID]
	if !ok {
		return
	}
	e.State = es.State
	if es.CheckpointID != "" {
		e.CheckpointID = es.CheckpointID
	}
	for _, i := range es.Hunks {
		if i >= 0 && i < len(e.Hunks) {
			e.Hunks[i].State = es.HunkState
			if es.HunkState == EditAccepted {
				e.Hunks[i].CheckpointID = es.CheckpointID
			}
		}
	}
	if es.Hunks == nil && es.State != EditPending {
		for i := range e.Hunks {
			if e.Hunks[i].State == EditPending {
				e.Hunks[i].State = es.State
			}
		}
	}
	if es.State == EditRejected {
		for _, f := range e.Files {
			delete(jr.drafts, f.Abs)
		}
	}
}

// text reads a blob; a blob that cannot be read back becomes a note.
func (jr *journalReader) text(hash string) string {
	if hash == "" {
		return ""
	}
	t, err := jr.blob(hash)
	if err != nil {
		jr.out.Notes = append(jr.out.Notes, fmt.Sprintf("Some recorded content could not be read back (%v).", err))
	}
	return t
}
