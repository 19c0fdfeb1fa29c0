// Package protocol holds Cairn's own wire names and payload types: the
// commands, notifications and run events that clients depend on (see
// README.md in this directory, the wire documentation for client authors).
// Standard LSP types come from go.lsp.dev/protocol.
package protocol

import (
	"encoding/json"

	"github.com/cairn-dev/cairn/workspace"
)

// Commands, called with workspace/executeCommand and one object argument.
const (
	CommandAsk           = "cairn.ask"
	CommandCancel        = "cairn.cancel"
	CommandResume        = "cairn.resume"
	CommandAcceptEdit    = "cairn.acceptEdit"
	CommandRejectEdit    = "cairn.rejectEdit"
	CommandUndo          = "cairn.undo"
	CommandRewind        = "cairn.rewind"
	CommandContextReport = "cairn.contextReport"
	// CommandGetEdit returns a proposed edit's files with their current and
	// proposed text, for clients that show a diff view (an addition).
	CommandGetEdit = "cairn.getEdit"
	// CommandListRuns lists the runs this server knows (an addition).
	CommandListRuns = "cairn.listRuns"
)

// Commands lists every command advertised in executeCommandProvider.
var Commands = []string{
	CommandAsk, CommandCancel, CommandResume, CommandAcceptEdit, CommandRejectEdit,
	CommandUndo, CommandRewind, CommandContextReport, CommandGetEdit, CommandListRuns,
}

// Notifications.
const (
	// MethodRunEvent is sent server → client for every event of a run.
	MethodRunEvent = "cairn/runEvent"
	// MethodDidChangeDiagnostics is sent client → server with the editor's
	// current diagnostics for one file.
	MethodDidChangeDiagnostics = "cairn/didChangeDiagnostics"
)

// Event kinds of cairn/runEvent.
const (
	EventStarted      = "started"
	EventText         = "text"
	EventToolCall     = "toolCall"
	EventToolResult   = "toolResult"
	EventApproval     = "approval"
	EventEditProposed = "editProposed"
	EventCheckpoint   = "checkpoint"
	EventFinished     = "finished"
	EventFailed       = "failed"
	EventCancelled    = "cancelled"
	EventInterrupted  = "interrupted"
)

// Position and Range are LSP's (0-based, UTF-16 characters): Cairn's one
// position and range types, from workspace; lsp.go converts them to and
// from go.lsp.dev/protocol's.
type (
	Position = workspace.Position
	Range    = workspace.Range
)

// AskParams is the argument of cairn.ask.
type AskParams struct {
	URI      string `json:"uri"`
	Range    *Range `json:"range,omitempty"`
	Question string `json:"question"`
}

// RunRef is the argument of cairn.cancel and cairn.resume, and the result of
// cairn.ask, cairn.resume and cairn.rewind.
type RunRef struct {
	RunID string `json:"runId"`
}

// EditRef is the argument of cairn.acceptEdit, cairn.rejectEdit and cairn.getEdit.
type EditRef struct {
	EditID string `json:"editId"`
}

// AcceptResult is the result of cairn.acceptEdit.
type AcceptResult struct {
	Applied      bool   `json:"applied"`
	CheckpointID string `json:"checkpointId,omitempty"`
	// Reason says why an edit was not applied.
	Reason string `json:"reason,omitempty"`
}

// UndoParams is the argument of cairn.undo.
type UndoParams struct {
	CheckpointID string `json:"checkpointId"`
	// Force restores the files that still match even when others conflict.
	Force bool `json:"force,omitempty"`
}

// UndoResult is the result of cairn.undo.
type UndoResult struct {
	Applied bool `json:"applied"`
	// Restored lists the workspace-relative files put back.
	Restored []string `json:"restored,omitempty"`
}

// RewindParams is the argument of cairn.rewind.
type RewindParams struct {
	RunID        string `json:"runId"`
	Step         int    `json:"step"`
	RestoreFiles bool   `json:"restoreFiles,omitempty"`
}

// RewindResult is the result of cairn.rewind.
type RewindResult struct {
	RunID string `json:"runId"`
	// Irreversible lists side effects after the step that cannot be undone.
	Irreversible []string `json:"irreversible,omitempty"`
	// Restored lists files a rewind with restoreFiles put back from command
	// snapshots (accepted edits are undone through workspace/applyEdit).
	Restored []string `json:"restored,omitempty"`
}

// ContextReportResult is the result of cairn.contextReport.
type ContextReportResult struct {
	Markdown string `json:"markdown"`
}

// EditFile is one file of a proposed edit, as returned by cairn.getEdit.
type EditFile struct {
	URI      string `json:"uri"`
	Path     string `json:"path"`
	Current  string `json:"current"`
	Proposed string `json:"proposed"`
	Create   bool   `json:"create,omitempty"`
	Delete   bool   `json:"delete,omitempty"`
}

// GetEditResult is the result of cairn.getEdit.
type GetEditResult struct {
	EditID string     `json:"editId"`
	RunID  string     `json:"runId"`
	Files  []EditFile `json:"files"`
	Diff   string     `json:"diff"` // unified diff of all files
}

// DiagnosticsParams is cairn/didChangeDiagnostics. Diagnostics are LSP
// Diagnostic objects, kept raw so any server's extra fields survive.
type DiagnosticsParams struct {
	URI         string            `json:"uri"`
	Diagnostics []json.RawMessage `json:"diagnostics"`
}

// Usage is token usage in the finished event.
type Usage struct {
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	CostUSD      float64 `json:"costUSD,omitempty"`
}

// RunEvent is the payload of cairn/runEvent. Kind selects which of the
// optional fields are set.
type RunEvent struct {
	RunID string `json:"runId"`
	Seq   int    `json:"seq"`
	Kind  string `json:"kind"`

	Delta string `json:"delta,omitempty"` // text

	CallID  string          `json:"callId,omitempty"`  // toolCall, toolResult, approval
	Tool    string          `json:"tool,omitempty"`    // toolCall, toolResult
	Input   json.RawMessage `json:"input,omitempty"`   // toolCall
	OK      *bool           `json:"ok,omitempty"`      // toolResult
	Summary string          `json:"summary,omitempty"` // toolResult

	Decision string `json:"decision,omitempty"` // approval: allow_once, allow_session, deny, policy_allow, policy_deny

	EditID string          `json:"editId,omitempty"` // editProposed
	Edit   json.RawMessage `json:"edit,omitempty"`   // editProposed: LSP WorkspaceEdit

	CheckpointID string `json:"checkpointId,omitempty"` // checkpoint
	Step         int    `json:"step,omitempty"`         // checkpoint

	Answer string `json:"answer,omitempty"` // finished
	Usage  *Usage `json:"usage,omitempty"`  // finished

	Error string `json:"error,omitempty"` // failed, cancelled, interrupted
	Class string `json:"class,omitempty"` // failed
}

// Approval actions offered through window/showMessageRequest.
const (
	ActionAllowOnce    = "Allow once"
	ActionAllowSession = "Allow for session"
	ActionDeny         = "Deny"
)
