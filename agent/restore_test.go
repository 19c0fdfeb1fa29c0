package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/model"
)

// rec builds a journal record; data is encoded as JSON.
func rec(typ string, step int, data any) checkpoint.Record {
	r := checkpoint.Record{Type: typ, Step: step}
	if data != nil {
		r.Data, _ = json.Marshal(data)
	}
	return r
}

var damaged = checkpoint.Record{Type: checkpoint.RecUnreadable}

func turn(step int, calls ...model.ToolCall) checkpoint.Record {
	return rec(checkpoint.RecModelResult, step, model.Response{Text: fmt.Sprintf("turn %d", step), ToolCalls: calls})
}

var (
	cmdCall  = model.ToolCall{ID: "c1", Name: "run_command", Arguments: `{"command":"echo ran >> counter.txt"}`}
	readCall = model.ToolCall{ID: "c2", Name: "read_file", Arguments: `{"path":"a.go"}`}
)

func intent(c model.ToolCall, side bool) checkpoint.Record {
	return rec(checkpoint.RecToolIntent, 1, toolIntentRecord{CallID: c.ID, Tool: c.Name, Input: json.RawMessage(c.Arguments), SideEffects: side})
}

func result(c model.ToolCall, blob string) checkpoint.Record {
	return rec(checkpoint.RecToolResult, 1, toolResultRecord{CallID: c.ID, Tool: c.Name, OK: true, Content: blob})
}

// head is a run's opening: the run record and the built context.
func head() []checkpoint.Record {
	return []checkpoint.Record{
		rec(checkpoint.RecRunStarted, 0, map[string]any{"question": "count", "file": "a.go"}),
		rec(checkpoint.RecContext, 0, contextRecord{System: "h-sys", User: "h-user"}),
		rec(checkpoint.RecStepStarted, 1, nil),
	}
}

func join(parts ...[]checkpoint.Record) []checkpoint.Record {
	var out []checkpoint.Record
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func rs(r ...checkpoint.Record) []checkpoint.Record { return r }

// describe renders what resume would do, compactly: the tool messages
// (ok:<content> | unknown | rerun), the step, and the counts.
func describe(jr *journalRun) string {
	rerun := map[int]bool{}
	for _, r := range jr.Rerun {
		rerun[r.index] = true
	}
	var parts []string
	for i, m := range jr.Messages {
		switch {
		case m.Role == model.RoleAssistant:
			var ids []string
			for _, c := range m.ToolCalls {
				ids = append(ids, c.ID+"="+c.Name)
			}
			parts = append(parts, fmt.Sprintf("assistant[%s]", strings.Join(ids, ",")))
		case rerun[i]:
			parts = append(parts, m.ToolCallID+":rerun")
		case strings.Contains(m.Content, "outcome is unknown"):
			parts = append(parts, m.ToolCallID+":unknown")
		default:
			parts = append(parts, m.ToolCallID+":"+m.Content)
		}
	}
	return fmt.Sprintf("step=%d %s unknown=%d damaged=%d", jr.Step, strings.Join(parts, " "), len(jr.Unknown), jr.Damaged)
}

func TestRestoreJournal(t *testing.T) {
	blobs := map[string]string{"h-sys": "system", "h-user": "user", "h-ran": "ran", "h-a": "package a"}
	cases := []struct {
		name string
		recs []checkpoint.Record
		want string
	}{
		{"complete step", join(head(), rs(turn(1, cmdCall, readCall), intent(cmdCall, true), result(cmdCall, "h-ran"),
			intent(readCall, false), result(readCall, "h-a"))),
			"step=1 assistant[c1=run_command,c2=read_file] c1:ran c2:package a unknown=0 damaged=0"},
		{"side effect started, result missing: unknown", join(head(), rs(turn(1, cmdCall, readCall), intent(cmdCall, true))),
			"step=1 assistant[c1=run_command,c2=read_file] c1:unknown c2:rerun unknown=1 damaged=0"},
		{"read started, result missing: rerun", join(head(), rs(turn(1, readCall), intent(readCall, false))),
			"step=1 assistant[c2=read_file] c2:rerun unknown=0 damaged=0"},
		{"never started: rerun", join(head(), rs(turn(1, cmdCall))),
			"step=1 assistant[c1=run_command] c1:rerun unknown=0 damaged=0"},
		{"damaged record in the step: calls without a result are unknown",
			join(head(), rs(turn(1, cmdCall, readCall), damaged)),
			"step=1 assistant[c1=run_command,c2=read_file] c1:unknown c2:unknown unknown=2 damaged=1"},
		{"damaged result record", join(head(), rs(turn(1, cmdCall, readCall), intent(cmdCall, true), damaged,
			intent(readCall, false), result(readCall, "h-a"))),
			"step=1 assistant[c1=run_command,c2=read_file] c1:unknown c2:package a unknown=1 damaged=1"},
		{"damaged intent record, result read", join(head(), rs(turn(1, cmdCall), damaged, result(cmdCall, "h-ran"))),
			"step=1 assistant[c1=run_command] c1:ran unknown=0 damaged=1"},
		{"damaged model result: calls rebuilt from their records", join(head(), rs(damaged, intent(cmdCall, true), result(cmdCall, "h-ran"),
			intent(readCall, false))),
			"step=1 assistant[c1=run_command,c2=read_file] c1:ran c2:unknown unknown=1 damaged=1"},
		{"damaged model result, nothing after: the step is asked again", join(head(), rs(damaged)),
			"step=0  unknown=0 damaged=1"},
		{"damaged step record", join(head()[:2], rs(damaged, turn(1, cmdCall), intent(cmdCall, true), result(cmdCall, "h-ran"))),
			"step=1 assistant[c1=run_command] c1:ran unknown=0 damaged=1"},
		{"result blob missing: unknown", join(head(), rs(turn(1, cmdCall), intent(cmdCall, true), result(cmdCall, "h-gone"))),
			"step=1 assistant[c1=run_command] c1:unknown unknown=1 damaged=0"},
		{"second step", join(head(), rs(turn(1, cmdCall), intent(cmdCall, true), result(cmdCall, "h-ran"),
			rec(checkpoint.RecStepStarted, 2, nil), turn(2, readCall))),
			"step=2 assistant[c1=run_command] c1:ran assistant[c2=read_file] c2:rerun unknown=0 damaged=0"},
		{"second step started, no reply", join(head(), rs(turn(1, cmdCall), intent(cmdCall, true), result(cmdCall, "h-ran"),
			rec(checkpoint.RecStepStarted, 2, nil))),
			"step=1 assistant[c1=run_command] c1:ran unknown=0 damaged=0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			jr, err := restoreJournal("run-1", c.recs, func(h string) (string, error) {
				if b, ok := blobs[h]; ok {
					return b, nil
				}
				return "", fmt.Errorf("blob %s is missing", h)
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(jr); got != c.want {
				t.Errorf("\ngot  %s\nwant %s", got, c.want)
			}
			if jr.Damaged > 0 && !strings.Contains(strings.Join(jr.Notes, "\n"), "damaged") {
				t.Errorf("the model is not told about the damage: %q", jr.Notes)
			}
			for _, u := range jr.Unknown {
				if !strings.Contains(strings.Join(jr.Notes, "\n"), "may or may not have happened") {
					t.Errorf("the model is not told that %s may have happened: %q", u.Call.ID, jr.Notes)
				}
			}
		})
	}
}

func TestRestoreJournalRequestAndEdits(t *testing.T) {
	blobs := func(h string) (string, error) { return "text of " + h, nil }
	edit := func(id, abs string) checkpoint.Record {
		return rec(checkpoint.RecEdit, 1, editRecord{EditID: id, Files: []editFileRecord{{Abs: abs, Rel: abs[1:], Before: "b", BeforeExists: true, After: "a"}}})
	}
	state := func(id string, st EditState) checkpoint.Record {
		return rec(checkpoint.RecEditState, 1, map[string]any{"editId": id, "state": st, "checkpointId": "cp-" + id})
	}
	recs := join(head(), rs(turn(1), edit("e1", "/x.go"), edit("e2", "/y.go"), state("e1", EditRejected), state("e2", EditAccepted),
		rec(checkpoint.RecContext, 1, contextRecord{System: "s2", User: "u2"})))
	jr, err := restoreJournal("run-1", recs, blobs)
	if err != nil {
		t.Fatal(err)
	}
	if jr.Question != "count" || jr.File != "a.go" || jr.System != "text of s2" || jr.User != "text of u2" {
		t.Errorf("request/context: %+v", jr)
	}
	if len(jr.Edits) != 2 || jr.Edits[0].State != EditRejected || jr.Edits[1].State != EditAccepted || jr.Edits[1].CheckpointID != "cp-e2" {
		t.Errorf("edits: %+v %+v", jr.Edits[0], jr.Edits[1])
	}
	if len(jr.Drafts) != 1 || jr.Drafts[0].Abs != "/y.go" || jr.Drafts[0].Text != "text of a" {
		t.Errorf("drafts: %+v", jr.Drafts)
	}

	// The run record unreadable: the context still carries the question.
	jr, err = restoreJournal("run-1", join(rs(damaged), head()[1:]), blobs)
	if err != nil || jr.Question != "" || !jr.HasContext {
		t.Errorf("without a run record: %+v %v", jr, err)
	}
	// Neither: nothing to resume from.
	if _, err := restoreJournal("run-1", rs(damaged, damaged, rec(checkpoint.RecStepStarted, 1, nil)), blobs); err == nil {
		t.Error("resumed a run with neither a run record nor a context")
	}
}
