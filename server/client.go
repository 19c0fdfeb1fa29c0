package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
)

const warnLevel = slog.LevelWarn

// How long the server waits for the client to answer its requests. No call
// to the client waits without a limit: a client that never answers must not
// hold a run, an accept or indexing forever.
const (
	// defaultApprovalTimeout bounds window/showMessageRequest approvals: the
	// user may be away; no answer in time is a denial (and audited as such).
	defaultApprovalTimeout = 10 * time.Minute
	// defaultClientTimeout bounds every other request (workspace/applyEdit,
	// window/workDoneProgress/create, window/showDocument).
	defaultClientTimeout = 60 * time.Second
)

// errNoAnswer is wrapped when the client did not answer in time.
var errNoAnswer = errors.New("the editor did not answer")

// nudgeAfter is how long a request to the client goes unanswered before
// the server writes one window/logMessage about the wait. The write is the
// point: Emacs 28's jsonrpc leaves the messages that arrive in the same
// read as the reply to its synchronous request (eglot's executeCommand)
// unparsed until the process writes again, so a request that came right
// after such a reply (a run's approval) is never seen while the server only
// waits for its answer.
const nudgeAfter = 2 * time.Second

// callClient sends a request to the client and waits at most timeout for
// the answer. On timeout the request is cancelled ($/cancelRequest) so the
// client can drop it, and the error wraps errNoAnswer.
func (s *Server) callClient(ctx context.Context, timeout time.Duration, method string, params, result any) error {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	nudge := time.AfterFunc(nudgeAfter, func() {
		_ = s.conn.Notify(s.ctx, "window/logMessage", &lsp.LogMessageParams{Type: lsp.MessageTypeLog,
			Message: "Cairn is waiting for the editor's answer to " + method})
	})
	defer nudge.Stop()
	id, err := s.conn.Call(cctx, method, params, result)
	if err != nil && cctx.Err() != nil {
		// Timed out, or the caller gave up (a cancelled run's approval):
		// either way the client may drop the request (and its inline card).
		if raw, ok := idJSON(id); ok {
			_ = s.conn.Notify(s.ctx, lsp.MethodCancelRequest, jsonrpc2.RawMessage(`{"id":`+raw+`}`))
		}
	}
	if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
		slog.Warn("the client did not answer a request in time", "method", method, "timeout", timeout)
		return fmt.Errorf("%s: %w within %s", method, errNoAnswer, timeout)
	}
	return err
}

// idJSON is the JSON of a request id as it went out (a number or a string).
// jsonrpc2.ID has no MarshalJSON: encoding/json would write it as {}, and
// a cancel naming {} cancels nothing.
func idJSON(id jsonrpc2.ID) (string, bool) {
	if n, ok := id.Number(); ok {
		return strconv.FormatInt(n, 10), true
	}
	if str, ok := id.StringValue(); ok {
		b, err := json.Marshal(str)
		return string(b), err == nil
	}
	return "", false
}

func (s *Server) approvalTimeout() time.Duration {
	if s.opts.ApprovalTimeout > 0 {
		return s.opts.ApprovalTimeout
	}
	return defaultApprovalTimeout
}

func (s *Server) clientTimeout() time.Duration {
	if s.opts.ClientTimeout > 0 {
		return s.opts.ClientTimeout
	}
	return defaultClientTimeout
}

// Calls from the server to the client.

// notifyRunEvent streams one run event.
func (s *Server) notifyRunEvent(ev protocol.RunEvent) {
	b, err := json.Marshal(ev)
	if err != nil {
		slog.Error("encoding a run event", "err", err)
		return
	}
	if err := s.conn.Notify(s.ctx, protocol.MethodRunEvent, jsonrpc2.RawMessage(b)); err != nil {
		slog.Debug("sending a run event failed", "err", err)
	}
}

// ApplyEdit implements agent.Applier with workspace/applyEdit.
func (s *Server) ApplyEdit(ctx context.Context, label string, edit protocol.WorkspaceEdit) (protocol.ApplyWorkspaceEditResult, error) {
	b, err := json.Marshal(protocol.ApplyWorkspaceEditParams{Label: label, Edit: edit})
	if err != nil {
		return protocol.ApplyWorkspaceEditResult{}, err
	}
	var raw jsonrpc2.RawMessage
	if err := s.callClient(ctx, s.clientTimeout(), "workspace/applyEdit", jsonrpc2.RawMessage(b), &raw); err != nil {
		return protocol.ApplyWorkspaceEditResult{}, fmt.Errorf("workspace/applyEdit: %w", err)
	}
	var res protocol.ApplyWorkspaceEditResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return res, fmt.Errorf("workspace/applyEdit answered %s: %w", truncate(string(raw), 100), err)
	}
	return res, nil
}

// SupportsDocumentChanges implements agent.Applier.
func (s *Server) SupportsDocumentChanges() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps.documentChanges && s.caps.resourceOps
}

// AskApproval implements tools.Asker with window/showMessageRequest.
func (s *Server) AskApproval(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	// Deny comes first: editors make the first action the default (VS
	// Code's modal answers Enter with it). Only calls above read, or
	// outside the sandbox, or of protected paths ask by default.
	s.mu.Lock()
	detail := s.caps.approvalDetail
	s.mu.Unlock()
	params := &approvalParams{
		Type:    lsp.MessageTypeWarning,
		Message: tools.ApprovalText(req),
		Actions: []lsp.MessageActionItem{{Title: protocol.ActionDeny}, {Title: protocol.ActionAllowOnce}, {Title: protocol.ActionAllowSession}},
	}
	if detail {
		d := approvalDetailOf(req)
		params.Cairn = &d
	}
	var raw jsonrpc2.RawMessage
	if err := s.callClient(ctx, s.approvalTimeout(), "window/showMessageRequest", params, &raw); err != nil {
		return tools.DecisionDeny, fmt.Errorf("asking for approval: %w", err)
	}
	var item *lsp.MessageActionItem
	if err := json.Unmarshal(raw, &item); err != nil {
		return tools.DecisionDeny, fmt.Errorf("approval answer %s: %w", truncate(string(raw), 100), err)
	}
	if item == nil {
		return tools.DecisionDeny, nil // dismissed
	}
	switch strings.TrimSpace(item.Title) {
	case protocol.ActionAllowOnce:
		return tools.DecisionAllowOnce, nil
	case protocol.ActionAllowSession:
		return tools.DecisionAllowSession, nil
	default:
		return tools.DecisionDeny, nil
	}
}

// approvalParams is an approval's window/showMessageRequest with Cairn's
// structured detail beside the LSP fields: a client that knows it (the VS
// Code chat) shows the approval inline in the run's thread, every command
// of the line with its own risk; other clients ignore the extra field and
// show the message. The LSP fields are spelled out, not embedded: the
// embedded type's own JSON methods would be promoted and drop "cairn".
type approvalParams struct {
	Type    lsp.MessageType         `json:"type"`
	Message string                  `json:"message"`
	Actions []lsp.MessageActionItem `json:"actions"`
	Cairn   *approvalDetail         `json:"cairn,omitempty"` // only to a client that declared approvalDetail
}

type approvalDetail struct {
	RunID    string            `json:"runId"`
	CallID   string            `json:"callId"`
	Tool     string            `json:"tool"`
	Risk     tools.Risk        `json:"risk"`
	Command  string            `json:"command,omitempty"`
	Commands []approvalCommand `json:"commands,omitempty"`
	Packages []string          `json:"packages,omitempty"`
}

type approvalCommand struct {
	Text        string     `json:"text"`
	Risk        tools.Risk `json:"risk"`
	Reason      string     `json:"reason,omitempty"`
	Via         string     `json:"via,omitempty"`
	Redirection bool       `json:"redirection,omitempty"`
	Whole       bool       `json:"whole,omitempty"`
}

func approvalDetailOf(req tools.ApprovalRequest) approvalDetail {
	d := approvalDetail{RunID: req.RunID, CallID: req.CallID, Tool: req.Tool, Risk: req.Risk, Command: req.Command, Packages: req.Packages}
	cmds := req.Commands
	if len(cmds) == 0 && req.Command != "" {
		cmds = []tools.CommandPart{{Text: req.Command, Risk: req.Risk}}
	}
	for _, c := range cmds {
		d.Commands = append(d.Commands, approvalCommand{Text: c.Text, Risk: c.Risk, Reason: c.Reason, Via: c.Via, Redirection: c.Redirection, Whole: c.Whole})
	}
	return d
}
