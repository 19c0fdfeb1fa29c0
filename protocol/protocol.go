// Package protocol holds Cairn's own wire names and payload types: the
// commands, notifications and run events that clients depend on (see
// README.md in this directory, the wire documentation for client authors).
// Standard LSP types come from go.lsp.dev/protocol.
package protocol

import (
	"encoding/json"
	"math"

	"github.com/cairn-dev/cairn/tokencount"
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
	// CommandListThreads lists the conversations (threads), newest first.
	CommandListThreads = "cairn.listThreads"
	// CommandGetThread returns one thread's turns (an addition), for a
	// chat view that shows a thread after a restart.
	CommandGetThread = "cairn.getThread"
	// CommandRedoHunks recomputes conflicting hunks of a proposed edit
	// against the file's current text, asking the model again for those it
	// cannot merge (an addition).
	CommandRedoHunks = "cairn.redoHunks"
)

// Commands lists every command advertised in executeCommandProvider.
// CommandProposeEdit proposes an editor-supplied text (a chat code block's
// Apply) as an edit: a run whose one step is that edit, reviewed like any.
const CommandProposeEdit = "cairn.proposeEdit"

// CommandModels lists the models the configured endpoint offers.
const CommandModels = "cairn.models"

var Commands = []string{
	CommandAsk, CommandCancel, CommandResume, CommandAcceptEdit, CommandRejectEdit,
	CommandUndo, CommandRewind, CommandContextReport, CommandGetEdit, CommandListRuns, CommandListThreads,
	CommandGetThread, CommandRedoHunks, CommandProposeEdit, CommandModels,
}

// A client declares itself a Cairn client (it shows cairn/runEvent itself)
// with capabilities.experimental.cairn.runEvents: true in initialize. Any
// other client gets each answer through window/showDocument or
// window/showMessage, and each proposed edit as code actions.
//
// experimental.cairn.approvalDetail: true asks for each approval's
// structured detail (run, call, every command with its risk) under
// "cairn" in window/showMessageRequest, for a client that shows approvals
// itself. It is opt-in: some clients refuse a request with a parameter
// they do not know (eglot 1.9 answers it with an error).
const (
	ExperimentalKey            = "cairn"
	ExperimentalRunEvents      = "runEvents"
	ExperimentalApprovalDetail = "approvalDetail"
)

// Titles of the code actions a plain LSP client gets for a proposed edit.
const (
	TitleAcceptEdit = "Accept Cairn's edit…"
	TitleRejectEdit = "Reject Cairn's edit…"
)

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
	EventStarted = "started"
	EventText    = "text"
	// EventThought (delta): the model's reasoning as it streams, from
	// providers that expose it; never part of the answer.
	EventThought      = "thought"
	EventToolCall     = "toolCall"
	EventToolResult   = "toolResult"
	EventApproval     = "approval"
	EventEditProposed = "editProposed"
	EventCheckpoint   = "checkpoint"
	// EventEditUpdated: a pending edit changed without a decision of the
	// user on it (the user edited its file and its hunks were carried over,
	// or some became conflicting, or a redo recomputed them): fetch it again
	// with cairn.getEdit and refresh any diff view of it.
	EventEditUpdated = "editUpdated"
	// EventPlan (plan): the agent's plan for a task of several steps, the
	// whole list each time a step's status changes (the model's
	// update_plan tool).
	EventPlan = "plan"
	// EventContext (context): the workspace files and lines the prompt
	// holds, sent each time the run builds its context.
	EventContext     = "context"
	EventFinished    = "finished"
	EventFailed      = "failed"
	EventCancelled   = "cancelled"
	EventInterrupted = "interrupted"
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
	// ThreadID continues that conversation; empty starts a new thread.
	ThreadID string `json:"threadId,omitempty"`
}

// AskResult is the result of cairn.ask.
type AskResult struct {
	RunID    string `json:"runId"`
	ThreadID string `json:"threadId"`
}

// ThreadRef is the argument of cairn.getThread.
type ThreadRef struct {
	ThreadID string `json:"threadId"`
}

// ThreadSummary is one element of cairn.listThreads' result.
type ThreadSummary struct {
	ThreadID string   `json:"threadId"`
	Title    string   `json:"title"`
	Runs     []string `json:"runs"`
	Updated  string   `json:"updated"` // RFC 3339, UTC
	// Usage totals the thread's finished runs (absent before the first).
	Usage *Usage `json:"usage,omitempty"`
}

// RunRef is the argument of cairn.cancel and cairn.resume, and the result of
// cairn.ask, cairn.resume and cairn.rewind.
type RunRef struct {
	RunID string `json:"runId"`
}

// EditRef is the argument of cairn.acceptEdit, cairn.rejectEdit and cairn.getEdit.
type EditRef struct {
	EditID string `json:"editId"`
	// Hunks are indices into cairn.getEdit's hunks (acceptEdit, rejectEdit);
	// omitted means every pending hunk.
	Hunks []int `json:"hunks,omitempty"`
}

// Hunk states.
const (
	HunkPending  = "pending"
	HunkAccepted = "accepted"
	HunkRejected = "rejected"
	// HunkConflict: the user's own change overlaps the hunk; it cannot be
	// accepted until redone (cairn.redoHunks), and may be rejected.
	HunkConflict = "conflict"
)

// Hunk is one contiguous change of a proposed edit, the unit of review.
// Lines are 0-based and half-open, like an LSP range from (startLine, 0) to
// (endLine, 0): startLine == endLine is a pure insertion before startLine.
// startLine/endLine count in the file's text before the edit (the left side
// of a diff); proposedStartLine/proposedEndLine in the proposed text (the
// right side).
type Hunk struct {
	Index             int    `json:"index"`
	Path              string `json:"path"`
	URI               string `json:"uri"`
	StartLine         int    `json:"startLine"`
	EndLine           int    `json:"endLine"`
	ProposedStartLine int    `json:"proposedStartLine"`
	ProposedEndLine   int    `json:"proposedEndLine"`
	Diff              string `json:"diff"`  // unified diff of this hunk alone, 3 lines of context
	State             string `json:"state"` // pending, accepted, rejected
	// CheckpointID is the checkpoint of the accept that applied this hunk.
	CheckpointID string `json:"checkpointId,omitempty"`
	// Undone is set when that checkpoint was undone since.
	Undone bool `json:"undone,omitempty"`
}

// AcceptResult is the result of cairn.acceptEdit.
type AcceptResult struct {
	Applied      bool   `json:"applied"`
	CheckpointID string `json:"checkpointId,omitempty"`
	// Reason says why an edit was not applied.
	Reason string `json:"reason,omitempty"`
}

// RedoResult is the result of cairn.redoHunks.
type RedoResult struct {
	// Recomputed hunks were merged with the user's change and are pending.
	Recomputed []int `json:"recomputed"`
	// Conflicting hunks could not be merged; when a model is configured a
	// run in the edit's thread (RunID) proposes them again, and they are
	// then rejected as superseded.
	Conflicting []int  `json:"conflicting"`
	RunID       string `json:"runId,omitempty"`
	ThreadID    string `json:"threadId,omitempty"`
	// Reason says why no run was started for the conflicting hunks.
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
	// AlreadyUndone lists files that were already back at their pre-edit
	// text (the editor's own undo); they are left as they are.
	AlreadyUndone []string `json:"alreadyUndone,omitempty"`
	// Reason says why nothing was applied.
	Reason string `json:"reason,omitempty"`
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

// ContextItem is one file range that went into a run's prompt. Lines are
// 1-based and inclusive; 0 when the item is a whole file or a diff.
type ContextItem struct {
	Path      string `json:"path"`
	StartLine int    `json:"startLine,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
	Tokens    int    `json:"tokens"`
	Source    string `json:"source"`
}

// ProposeEditParams is cairn.proposeEdit's argument: replace Range (the
// whole file when absent) of URI with NewText, as a proposal.
type ProposeEditParams struct {
	URI      string `json:"uri"`
	Range    *Range `json:"range,omitempty"`
	NewText  string `json:"newText"`
	ThreadID string `json:"threadId,omitempty"`
}

// ModelsResult is cairn.models' result.
type ModelsResult struct {
	Current   string   `json:"current"`
	Available []string `json:"available"`
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
	Hunks  []Hunk     `json:"hunks"`
	// State is pending until every hunk is decided, then accepted (at least
	// one hunk accepted) or rejected.
	State string `json:"state"`
	// Seq grows with every cairn.getEdit answer of a server: of two answers
	// about one edit, the one with the larger seq is the newer state.
	// Answers to concurrent requests (one per editUpdated while the user
	// types) can arrive out of order; a client keeps the largest.
	Seq uint64 `json:"seq"`
}

// DiagnosticsParams is cairn/didChangeDiagnostics. Diagnostics are LSP
// Diagnostic objects, kept raw so any server's extra fields survive.
type DiagnosticsParams struct {
	URI         string            `json:"uri"`
	Diagnostics []json.RawMessage `json:"diagnostics"`
}

// Usage is token usage in the finished event and a thread's total:
// inputTokens counts every prompt token, cachedInputTokens (and
// cacheWriteTokens) the part the provider read from (wrote to) its prompt
// cache. CostUSD is what it cost at the price table's rates; it is
// omitted when nothing was paid and when some model call had no price
// (then CostUnknown is set: a client shows no figure rather than a wrong
// one).
type Usage struct {
	tokencount.Usage
	CostUSD     float64 `json:"costUSD,omitempty"`
	CostUnknown bool    `json:"costUnknown,omitempty"`
}

// Add accumulates u2 into u; the sum's cost is unknown when either was.
func (u *Usage) Add(u2 Usage) {
	u.Usage.Add(u2.Usage)
	u.CostUnknown = u.CostUnknown || u2.CostUnknown
	sum := u.CostUSD + u2.CostUSD
	u.CostUSD = 0
	if !u.CostUnknown {
		// Rounded to a billionth of a dollar, as each part is.
		u.CostUSD = math.Round(sum*1e9) / 1e9
	}
}

// RunEvent is the payload of cairn/runEvent. Kind selects which of the
// optional fields are set.
type RunEvent struct {
	RunID string `json:"runId"`
	Seq   int    `json:"seq"`
	Kind  string `json:"kind"`

	// started: what the run is about, so a client that did not start it
	// (a code action, a resume after restart, another client) can show it.
	ThreadID string `json:"threadId,omitempty"`
	Question string `json:"question,omitempty"`
	URI      string `json:"uri,omitempty"`
	Range    *Range `json:"range,omitempty"`

	Delta string `json:"delta,omitempty"` // text

	CallID  string          `json:"callId,omitempty"`  // toolCall, toolResult, approval
	Tool    string          `json:"tool,omitempty"`    // toolCall, toolResult
	Input   json.RawMessage `json:"input,omitempty"`   // toolCall
	OK      *bool           `json:"ok,omitempty"`      // toolResult
	Summary string          `json:"summary,omitempty"` // toolResult
	// Output (toolResult) is what the model was given, already redacted:
	// in process only (never on the wire, never stored), for adapters that
	// show a command's output on its card.
	Output string `json:"-"`

	Decision string `json:"decision,omitempty"` // approval: allow_once, allow_session, deny, policy_allow, policy_deny

	Context []ContextItem `json:"context,omitempty"` // context

	EditID string          `json:"editId,omitempty"` // editProposed
	Edit   json.RawMessage `json:"edit,omitempty"`   // editProposed: LSP WorkspaceEdit

	Plan []PlanEntry `json:"plan,omitempty"` // plan: every step, in order

	CheckpointID string `json:"checkpointId,omitempty"` // checkpoint
	Step         int    `json:"step,omitempty"`         // checkpoint

	Answer string `json:"answer,omitempty"` // finished
	Usage  *Usage `json:"usage,omitempty"`  // finished
	// Truncated (finished): the model stopped at its output-token limit
	// (finish reason "length", Anthropic "max_tokens"): the answer may be cut.
	Truncated bool `json:"truncated,omitempty"`
	// NotReady (finished) names the code index's sources ("repo map",
	// "search") that were still being built when the question went ahead
	// past its wait: the answer used what was indexed so far.
	NotReady []string `json:"notReady,omitempty"`

	Error string `json:"error,omitempty"` // failed, cancelled, interrupted
	Class string `json:"class,omitempty"` // failed
}

// PlanEntry is one step of a plan event: status pending, in_progress or
// completed; priority high, medium or low (ACP's plan entry).
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority"`
}

// Approval actions offered through window/showMessageRequest.
const (
	ActionAllowOnce    = "Allow once"
	ActionAllowSession = "Allow for session"
	ActionDeny         = "Deny"
)
