package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
)

const warnLevel = slog.LevelWarn

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
	if _, err := s.conn.Call(ctx, "workspace/applyEdit", jsonrpc2.RawMessage(b), &raw); err != nil {
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
	msg := fmt.Sprintf("Cairn wants to run %s (%s risk)", req.Tool, req.Risk)
	if req.Detail != "" {
		msg += ":\n" + req.Detail
	}
	params := &lsp.ShowMessageRequestParams{
		Type:    lsp.MessageTypeWarning,
		Message: msg,
		Actions: []lsp.MessageActionItem{{Title: protocol.ActionAllowOnce}, {Title: protocol.ActionAllowSession}, {Title: protocol.ActionDeny}},
	}
	var raw jsonrpc2.RawMessage
	if _, err := s.conn.Call(ctx, "window/showMessageRequest", params, &raw); err != nil {
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
