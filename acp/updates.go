package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/protocol"
)

// turn streams one run's events to the client as session/update
// notifications. emit is called from the run's goroutine, in order.
type turn struct {
	a     *adapter
	s     *session
	ctx   context.Context
	calls map[string]*callState // by the model's call id
	// hidden are the calls shown otherwise than as a card (update_plan).
	hidden map[string]bool
	// runID is the run whose events these are.
	runID string
	// current is the call whose tool is running (mu: the terminal reads
	// it from the tool's goroutine).
	mu      sync.Mutex
	current string
	// terminals are the client terminals of calls, by call id (mu).
	terminals map[string]string
	// registered is set once the run is mapped to the session.
	registered bool
	last       protocol.RunEvent // the run's end
	// replaying is set while session/load replays a finished run: edits are
	// shown with their recorded fate, never reviewed again.
	replaying bool
	edits     map[string]agent.Edit // edits of a replayed run, by id
}

type callState struct {
	id     sdk.ToolCallId // the ACP id (callids.go)
	tool   string
	input  json.RawMessage
	editID string
}

// emit turns a run event into updates; an edit proposal is reviewed when its
// tool call has finished (so the run's journal has the edit first).
func (t *turn) emit(ev protocol.RunEvent) {
	id := t.s.id
	if t.runID == "" {
		t.runID = ev.RunID
	}
	if !t.registered && !t.replaying {
		// The run's first event comes from its goroutine before any tool
		// call can reach the approval gate: from here on, the gate's asker
		// finds this session by the run id.
		t.registered = true
		t.a.mu.Lock()
		t.a.runs[ev.RunID] = t.s
		t.a.mu.Unlock()
	}
	switch ev.Kind {
	case protocol.EventText:
		t.a.send(id, sdk.UpdateAgentMessageText(ev.Delta))
	case protocol.EventThought:
		t.a.send(id, sdk.UpdateAgentThoughtText(ev.Delta))
	case protocol.EventPlan:
		t.a.send(id, sdk.UpdatePlan(planEntries(ev.Plan)...))
	case protocol.EventToolCall:
		if ev.Tool == planTool {
			// The plan is its own update (the plan panel); a card for the
			// call that carried it would only repeat it.
			if t.hidden == nil {
				t.hidden = map[string]bool{}
			}
			t.hidden[ev.CallID] = true
			return
		}
		tcID := t.s.calls.start(t.runID, ev.CallID)
		t.calls[ev.CallID] = &callState{id: tcID, tool: ev.Tool, input: ev.Input}
		t.mu.Lock()
		t.current = ev.CallID
		t.mu.Unlock()
		t.a.send(id, sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{
			ToolCallId: tcID, Title: toolTitle(ev.Tool, ev.Input), Kind: toolKind(ev.Tool),
			Status: sdk.ToolCallStatusPending, Locations: t.locations(ev.Input), RawInput: rawJSON(ev.Input),
		}})
	case protocol.EventApproval:
		if t.hidden[ev.CallID] {
			return
		}
		status := sdk.ToolCallStatusInProgress
		if !toolsDecisionAllowed(ev.Decision) {
			status = sdk.ToolCallStatusFailed
		}
		t.a.send(id, sdk.UpdateToolCall(t.s.calls.of(t.runID, ev.CallID), sdk.WithUpdateStatus(status)))
	case protocol.EventEditProposed:
		// Proposed while its tool call runs: the latest call.
		if c := t.calls[t.current]; c != nil {
			c.editID = ev.EditID
		}
	case protocol.EventToolResult:
		if t.hidden[ev.CallID] {
			return
		}
		c := t.calls[ev.CallID]
		ok := ev.OK != nil && *ev.OK
		if c != nil && c.editID != "" && ok {
			if t.replaying {
				t.replayEdit(c)
			} else {
				t.review(c)
			}
			return
		}
		status := sdk.ToolCallStatusCompleted
		if !ok {
			status = sdk.ToolCallStatusFailed
		}
		tool := ev.Tool
		if c != nil {
			tool = c.tool
		}
		t.a.send(id, sdk.UpdateToolCall(t.s.calls.of(t.runID, ev.CallID), sdk.WithUpdateStatus(status),
			sdk.WithUpdateContent(t.resultContent(tool, ev)),
			sdk.WithUpdateRawOutput(map[string]any{"ok": ok, "summary": ev.Summary})))
	case protocol.EventFinished, protocol.EventFailed, protocol.EventCancelled, protocol.EventInterrupted:
		t.last = ev
		if ev.Usage != nil && !t.replaying {
			// Context use against the window, for the client's meter.
			t.a.send(id, sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{
				Used: ev.Usage.InputTokens + ev.Usage.OutputTokens, Size: t.s.w.mgr.Config().ContextWindow,
				Cost: t.sessionCost()}})
		}
		if _, mapped := stopReason(ev); !mapped && ev.Error != "" {
			msg := fmt.Sprintf("\n\n[Cairn] The run %s: %s", ev.Kind, ev.Error)
			if ev.Kind == protocol.EventInterrupted {
				msg += "; /resume continues it"
			}
			t.a.send(id, sdk.UpdateAgentMessageText(msg))
		}
	}
}

// sessionCost is the session's (its thread's) cumulative cost, or nil
// when some run in it used a model without a price: ACP's cost is
// optional, and an unknown cost is not sent as a figure.
func (t *turn) sessionCost() *sdk.Cost {
	th, ok := t.s.w.mgr.Thread(t.s.threadID())
	if !ok || th.Usage == nil || th.Usage.CostUnknown {
		return nil
	}
	return &sdk.Cost{Amount: th.Usage.CostUSD, Currency: "USD"}
}

// response is the prompt's answer once the run has ended.
func (t *turn) response(run *agent.Run) (sdk.PromptResponse, error) {
	ev := t.last
	if ev.Kind == "" {
		if evs := run.Events(); len(evs) > 0 {
			ev = evs[len(evs)-1]
		}
	}
	if t.ctx.Err() != nil || ev.Kind == protocol.EventCancelled {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	reason, ok := stopReason(ev)
	if !ok {
		// A failure ACP has no stop reason for (model unreachable, bad
		// key, ...): the prompt fails with Cairn's message.
		return sdk.PromptResponse{}, &sdk.RequestError{Code: -32603, Message: fmt.Sprintf("the run failed (%s): %s", ev.Class, ev.Error)}
	}
	resp := sdk.PromptResponse{StopReason: reason}
	if ev.Usage != nil {
		resp.Usage = &sdk.Usage{InputTokens: ev.Usage.InputTokens, OutputTokens: ev.Usage.OutputTokens,
			TotalTokens: ev.Usage.InputTokens + ev.Usage.OutputTokens}
		if c, w := ev.Usage.CachedInputTokens, ev.Usage.CacheWriteTokens; c > 0 || w > 0 {
			resp.Usage.CachedReadTokens, resp.Usage.CachedWriteTokens = &c, &w
		}
	}
	return resp, nil
}

// planTool is the tool whose calls become plan updates.
const planTool = "update_plan"

// planEntries are a plan event's steps as ACP plan entries (the same
// status and priority names).
func planEntries(plan []protocol.PlanEntry) []sdk.PlanEntry {
	out := make([]sdk.PlanEntry, len(plan))
	for i, e := range plan {
		out[i] = sdk.PlanEntry{Content: e.Content, Status: sdk.PlanEntryStatus(e.Status), Priority: sdk.PlanEntryPriority(e.Priority)}
	}
	return out
}

func toolsDecisionAllowed(d string) bool {
	switch d {
	case "policy_allow", "allow_once", "allow_session", "session_allow":
		return true
	}
	return false
}

// toolKind is the ACP kind of a Cairn tool, for the client's icon.
func toolKind(tool string) sdk.ToolKind {
	switch tool {
	case "read_file", "list_files", "repo_map", "get_diagnostics":
		return sdk.ToolKindRead
	case "search_code":
		return sdk.ToolKindSearch
	case "edit_file":
		return sdk.ToolKindEdit
	case "run_command":
		return sdk.ToolKindExecute
	}
	if strings.HasPrefix(tool, "mcp__") && strings.Contains(strings.ToLower(tool), "fetch") {
		return sdk.ToolKindFetch
	}
	return sdk.ToolKindOther
}

// toolInput is the union of the built-in tools' input fields a title or a
// location is made from.
type toolInput struct {
	Path      string `json:"path"`
	StartLine int    `json:"startLine"`
	Query     string `json:"query"`
	Command   string `json:"command"`
	Glob      string `json:"glob"`
}

func parseInput(raw json.RawMessage) toolInput {
	var in toolInput
	_ = json.Unmarshal(raw, &in)
	return in
}

// toolTitle is a short human title: the exact command, the file, the query.
func toolTitle(tool string, raw json.RawMessage) string {
	in := parseInput(raw)
	switch tool {
	case "read_file":
		return "Read " + orDot(in.Path)
	case "list_files":
		return strings.TrimSpace("List " + orDot(in.Path) + " " + in.Glob)
	case "search_code":
		return fmt.Sprintf("Search %q", in.Query)
	case "repo_map":
		return "Repository map"
	case "get_diagnostics":
		return "Diagnostics " + in.Path
	case "edit_file":
		return "Edit " + in.Path
	case "run_command":
		return "Run `" + in.Command + "`"
	}
	return tool
}

func orDot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// locations are the absolute paths a tool call touches, so the client can
// follow along.
func (t *turn) locations(raw json.RawMessage) []sdk.ToolCallLocation {
	in := parseInput(raw)
	if in.Path == "" {
		return nil
	}
	abs := in.Path
	if !filepath.IsAbs(abs) {
		abs = t.s.w.ws.Abs(in.Path)
	}
	loc := sdk.ToolCallLocation{Path: abs}
	if in.StartLine > 0 {
		l := in.StartLine
		loc.Line = &l
	}
	return []sdk.ToolCallLocation{loc}
}

func rawJSON(raw json.RawMessage) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return v
}
