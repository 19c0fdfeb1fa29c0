package lspclient

import (
	"context"
	"encoding/json"
	"fmt"

	"go.lsp.dev/jsonrpc2"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

// Execute runs workspace/executeCommand with one argument and decodes the result.
func (e *Editor) Execute(ctx context.Context, command string, arg any, result any) error {
	_, err := e.ExecuteID(ctx, command, arg, result)
	return err
}

// ExecuteID is Execute that also returns the request's JSON-RPC id (for
// tests that cancel it with $/cancelRequest).
func (e *Editor) ExecuteID(ctx context.Context, command string, arg any, result any) (jsonrpc2.ID, error) {
	params := map[string]any{"command": command, "arguments": []any{arg}}
	var raw json.RawMessage
	id, err := e.conn.Call(ctx, "workspace/executeCommand", params, &raw)
	if err != nil {
		return id, err
	}
	if result != nil {
		if err := json.Unmarshal(raw, result); err != nil {
			return id, fmt.Errorf("decoding the result of %s: %w", command, err)
		}
	}
	return id, nil
}

// Ask runs cairn.ask on 1-based inclusive lines of a file (0,0 for no selection).
func (e *Editor) Ask(ctx context.Context, rel string, startLine, endLine int, question string) (string, error) {
	res, err := e.AskThread(ctx, "", rel, startLine, endLine, question)
	return res.RunID, err
}

// AskThread runs cairn.ask in a thread ("" starts a new one).
func (e *Editor) AskThread(ctx context.Context, threadID, rel string, startLine, endLine int, question string) (protocol.AskResult, error) {
	p := protocol.AskParams{URI: e.URI(rel), Question: question, ThreadID: threadID}
	if startLine > 0 {
		p.Range = &protocol.Range{Start: protocol.Position{Line: uint32(startLine - 1)}, End: protocol.Position{Line: uint32(endLine)}}
	}
	var res protocol.AskResult
	err := e.Execute(ctx, protocol.CommandAsk, p, &res)
	return res, err
}

// ListThreads runs cairn.listThreads.
func (e *Editor) ListThreads(ctx context.Context) ([]protocol.ThreadSummary, error) {
	var res []protocol.ThreadSummary
	err := e.Execute(ctx, protocol.CommandListThreads, struct{}{}, &res)
	return res, err
}

// GetThread runs cairn.getThread; the result is decoded into v.
func (e *Editor) GetThread(ctx context.Context, threadID string, v any) error {
	return e.Execute(ctx, protocol.CommandGetThread, protocol.ThreadRef{ThreadID: threadID}, v)
}

// AcceptHunks runs cairn.acceptEdit for some hunks.
func (e *Editor) AcceptHunks(ctx context.Context, editID string, hunks []int) (protocol.AcceptResult, error) {
	var res protocol.AcceptResult
	err := e.Execute(ctx, protocol.CommandAcceptEdit, protocol.EditRef{EditID: editID, Hunks: hunks}, &res)
	return res, err
}

// RejectHunks runs cairn.rejectEdit for some hunks.
func (e *Editor) RejectHunks(ctx context.Context, editID string, hunks []int) error {
	return e.Execute(ctx, protocol.CommandRejectEdit, protocol.EditRef{EditID: editID, Hunks: hunks}, nil)
}

// CodeAction is the part of an LSP code action this editor uses.
type CodeAction struct {
	Title   string `json:"title"`
	Command *struct {
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	} `json:"command"`
}

// CodeActions asks for the code actions on 0-based lines from..to of a file.
func (e *Editor) CodeActions(ctx context.Context, rel string, from, to int) ([]CodeAction, error) {
	params := map[string]any{
		"textDocument": map[string]any{"uri": e.URI(rel)},
		"range":        protocol.Range{Start: protocol.Position{Line: uint32(from)}, End: protocol.Position{Line: uint32(to)}},
		"context":      map[string]any{"diagnostics": []any{}},
	}
	var res []CodeAction
	_, err := e.conn.Call(ctx, "textDocument/codeAction", params, &res)
	return res, err
}

// Run executes a code action's command, as an editor does when the user picks it.
func (e *Editor) Run(ctx context.Context, a CodeAction, result any) error {
	if a.Command == nil {
		return fmt.Errorf("code action %q has no command", a.Title)
	}
	params := map[string]any{"command": a.Command.Command, "arguments": a.Command.Arguments}
	var raw json.RawMessage
	if _, err := e.conn.Call(ctx, "workspace/executeCommand", params, &raw); err != nil {
		return err
	}
	if result != nil {
		return json.Unmarshal(raw, result)
	}
	return nil
}

// Events returns the events received for a run so far.
func (e *Editor) Events(runID string) []protocol.RunEvent {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]protocol.RunEvent(nil), e.events[runID]...)
}

// IsTerminal reports whether an event kind ends a run.
func IsTerminal(kind string) bool {
	switch kind {
	case protocol.EventFinished, protocol.EventFailed, protocol.EventCancelled, protocol.EventInterrupted:
		return true
	}
	return false
}

// WaitFor waits until cond holds for the run's events.
func (e *Editor) WaitFor(ctx context.Context, runID string, cond func([]protocol.RunEvent) bool) ([]protocol.RunEvent, error) {
	for {
		// The events and the channel that announces the next change are
		// taken together: an event recorded between the two would otherwise
		// be announced on a channel nobody waits on, and a run's last event
		// would leave WaitRun blocked until ctx ends.
		e.mu.Lock()
		evs := append([]protocol.RunEvent(nil), e.events[runID]...)
		changed := e.changed
		e.mu.Unlock()
		if cond(evs) {
			return evs, nil
		}
		if err := e.wait(ctx, changed); err != nil {
			return evs, fmt.Errorf("waiting for run %s: %w", runID, err)
		}
	}
}

// WaitRun waits until the run's latest segment has ended (a terminal event
// after its last started) and returns all its events. Events that come
// after the end, such as checkpoint, do not matter.
func (e *Editor) WaitRun(ctx context.Context, runID string) ([]protocol.RunEvent, error) {
	return e.WaitFor(ctx, runID, Ended)
}

// Ended reports whether the run's latest segment has ended.
func Ended(evs []protocol.RunEvent) bool {
	ended := false
	for _, ev := range evs {
		switch {
		case ev.Kind == protocol.EventStarted:
			ended = false
		case IsTerminal(ev.Kind):
			ended = true
		}
	}
	return ended
}

// WaitKind waits for the first event of a kind and returns it.
func (e *Editor) WaitKind(ctx context.Context, runID, kind string) (protocol.RunEvent, error) {
	var found protocol.RunEvent
	_, err := e.WaitFor(ctx, runID, func(evs []protocol.RunEvent) bool {
		for _, ev := range evs {
			if ev.Kind == kind {
				found = ev
				return true
			}
		}
		return false
	})
	return found, err
}

// Accept runs cairn.acceptEdit.
func (e *Editor) Accept(ctx context.Context, editID string) (protocol.AcceptResult, error) {
	var res protocol.AcceptResult
	err := e.Execute(ctx, protocol.CommandAcceptEdit, protocol.EditRef{EditID: editID}, &res)
	return res, err
}

// Reject runs cairn.rejectEdit.
func (e *Editor) Reject(ctx context.Context, editID string) error {
	return e.Execute(ctx, protocol.CommandRejectEdit, protocol.EditRef{EditID: editID}, nil)
}

// Undo runs cairn.undo.
func (e *Editor) Undo(ctx context.Context, checkpointID string) (protocol.UndoResult, error) {
	var res protocol.UndoResult
	err := e.Execute(ctx, protocol.CommandUndo, protocol.UndoParams{CheckpointID: checkpointID}, &res)
	return res, err
}

// Cancel runs cairn.cancel.
func (e *Editor) Cancel(ctx context.Context, runID string) error {
	return e.Execute(ctx, protocol.CommandCancel, protocol.RunRef{RunID: runID}, nil)
}

// GetEdit runs cairn.getEdit.
func (e *Editor) GetEdit(ctx context.Context, editID string) (protocol.GetEditResult, error) {
	var res protocol.GetEditResult
	err := e.Execute(ctx, protocol.CommandGetEdit, protocol.EditRef{EditID: editID}, &res)
	return res, err
}

// ContextReport runs cairn.contextReport.
func (e *Editor) ContextReport(ctx context.Context, runID string) (string, error) {
	var res protocol.ContextReportResult
	err := e.Execute(ctx, protocol.CommandContextReport, protocol.RunRef{RunID: runID}, &res)
	return res.Markdown, err
}

// SendDiagnostics forwards diagnostics for a file (cairn/didChangeDiagnostics)
// as LSP Diagnostic objects.
func (e *Editor) SendDiagnostics(ctx context.Context, rel string, diags []workspace.Diagnostic) error {
	raw := make([]json.RawMessage, 0, len(diags))
	for _, d := range diags {
		b, err := protocol.EncodeDiagnostic(d)
		if err != nil {
			return fmt.Errorf("encoding a diagnostic of %s: %w", rel, err)
		}
		raw = append(raw, b)
	}
	return e.conn.Notify(ctx, protocol.MethodDidChangeDiagnostics, protocol.DiagnosticsParams{URI: e.URI(rel), Diagnostics: raw})
}
