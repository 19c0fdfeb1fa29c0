package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/workspace"
)

// Permission option ids; their kinds are ACP's four.
const (
	optAllowOnce    = "allow_once"
	optAllowAlways  = "allow_always"
	optRejectOnce   = "reject_once"
	optRejectAlways = "reject_always"
)

func permissionOptions(what string) []sdk.PermissionOption {
	return []sdk.PermissionOption{
		{OptionId: optAllowOnce, Kind: sdk.PermissionOptionKindAllowOnce, Name: "Allow once"},
		{OptionId: optAllowAlways, Kind: sdk.PermissionOptionKindAllowAlways, Name: "Allow " + what + " for this session"},
		{OptionId: optRejectOnce, Kind: sdk.PermissionOptionKindRejectOnce, Name: "Reject"},
		{OptionId: optRejectAlways, Kind: sdk.PermissionOptionKindRejectAlways, Name: "Reject " + what + " for this session"},
	}
}

// denyFirst orders the options of an approval: Reject first, since
// clients make the first option the default.
func denyFirst(opts []sdk.PermissionOption) []sdk.PermissionOption {
	out := make([]sdk.PermissionOption, 0, len(opts))
	for _, o := range opts {
		if o.Kind == sdk.PermissionOptionKindRejectOnce {
			out = append(out, o)
		}
	}
	for _, o := range opts {
		if o.Kind != sdk.PermissionOptionKindRejectOnce {
			out = append(out, o)
		}
	}
	return out
}

// ask sends session/request_permission and returns the chosen option id
// ("" when the client cancelled the request or failed).
func (a *adapter) ask(ctx context.Context, id sdk.SessionId, call sdk.ToolCallUpdate, what string) (string, error) {
	return a.askWith(ctx, id, call, permissionOptions(what))
}

func (a *adapter) askWith(ctx context.Context, id sdk.SessionId, call sdk.ToolCallUpdate, opts []sdk.PermissionOption) (string, error) {
	resp, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: id, ToolCall: call, Options: opts})
	if err != nil {
		return "", fmt.Errorf("asking the client for permission: %w", err)
	}
	if resp.Outcome.Selected == nil {
		return "", nil
	}
	return string(resp.Outcome.Selected.OptionId), nil
}

// asker answers the approval gate's questions with session/request_permission,
// in the session of the run that asks. Cairn's policy has decided before:
// only calls it says to ask about arrive here.
type asker struct{ a *adapter }

func (k *asker) AskApproval(ctx context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	k.a.mu.Lock()
	s := k.a.runs[req.RunID]
	k.a.mu.Unlock()
	if s == nil {
		return tools.DecisionDeny, fmt.Errorf("run %s belongs to no ACP session", req.RunID)
	}
	key := req.Tool + "\x00" + string(req.Risk) + "\x00" + req.Detail
	s.mu.Lock()
	rejected := s.rejectedAlways[key]
	s.mu.Unlock()
	if rejected {
		return tools.DecisionDeny, nil
	}
	title := fmt.Sprintf("%s (%s risk)", tools.OneLine(req.Tool, 80), req.Risk)
	if req.Tool == "run_command" {
		cmd := req.Command
		if cmd == "" {
			cmd, _, _ = strings.Cut(req.Detail, "\n") // the command; then how it was classified
		}
		title = "Run `" + tools.OneLine(cmd, 200) + "`"
	}
	text := tools.ApprovalText(req)
	kind := toolKind(req.Tool)
	status := sdk.ToolCallStatusPending
	opts := denyFirst(permissionOptions("this " + string(req.Risk) + " call"))
	choice, err := k.a.askWith(ctx, s.id, sdk.ToolCallUpdate{ToolCallId: s.calls.of(req.RunID, req.CallID), Title: &title, Kind: &kind, Status: &status,
		Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))}, RawInput: map[string]any{"detail": req.Detail, "risk": string(req.Risk)}},
		opts)
	if err != nil {
		return tools.DecisionDeny, err
	}
	switch choice {
	case optAllowOnce:
		return tools.DecisionAllowOnce, nil
	case optAllowAlways:
		// The gate remembers it like "Allow for session".
		return tools.DecisionAllowSession, nil
	case optRejectAlways:
		s.mu.Lock()
		s.rejectedAlways[key] = true
		s.mu.Unlock()
	}
	return tools.DecisionDeny, nil
}

// review shows a proposed edit as an edit tool call with diff content and
// settles it: accepted (written through the client, with a checkpoint) or
// rejected, as the user answers the permission request or as an earlier
// allow_always / reject_always says.
func (t *turn) review(c *callState) {
	mgr := t.s.w.mgr
	e, ok := mgr.EditByID(c.editID)
	if !ok {
		return
	}
	diff, locs := diffContent(e.Files)
	tcID := c.id
	t.a.send(t.s.id, sdk.UpdateToolCall(tcID, sdk.WithUpdateContent(diff), sdk.WithUpdateLocations(locs), sdk.WithUpdateStatus(sdk.ToolCallStatusPending)))
	t.s.mu.Lock()
	choice := t.s.editChoice
	t.s.mu.Unlock()
	accept := false
	switch choice {
	case sdk.PermissionOptionKindAllowAlways:
		accept = true
	case sdk.PermissionOptionKindRejectAlways:
	default:
		title := toolTitle(c.tool, c.input)
		kind, status := sdk.ToolKindEdit, sdk.ToolCallStatusPending
		opt, err := t.a.ask(t.ctx, t.s.id, sdk.ToolCallUpdate{ToolCallId: tcID, Title: &title, Kind: &kind, Status: &status,
			Content: diff, Locations: locs, RawInput: rawJSON(c.input)}, "edits")
		if err != nil {
			slog.Warn("edit review", "edit", e.ID, "err", err)
		}
		switch opt {
		case optAllowAlways:
			t.s.mu.Lock()
			t.s.editChoice = sdk.PermissionOptionKindAllowAlways
			t.s.mu.Unlock()
			accept = true
		case optAllowOnce:
			accept = true
		case optRejectAlways:
			t.s.mu.Lock()
			t.s.editChoice = sdk.PermissionOptionKindRejectAlways
			t.s.mu.Unlock()
		}
	}
	if !accept {
		if err := mgr.Reject(e.ID); err != nil {
			slog.Warn("rejecting an edit", "edit", e.ID, "err", err)
		}
		t.a.send(t.s.id, sdk.UpdateToolCall(tcID, sdk.WithUpdateStatus(sdk.ToolCallStatusFailed),
			sdk.WithUpdateContent(append(diff, sdk.ToolContent(sdk.TextBlock("Rejected: nothing was written."))))))
		return
	}
	// The accept's base is the buffer as the client has it now: the user
	// may have typed in the file while the edit waited.
	e, dropped, err := t.a.ontoBuffers(t.s, e)
	if err == nil && e.State != agent.EditPending {
		diff, _ = diffContent(e.Files)
		t.a.send(t.s.id, sdk.UpdateToolCall(tcID, sdk.WithUpdateStatus(sdk.ToolCallStatusFailed),
			sdk.WithUpdateContent(append(diff, sdk.ToolContent(sdk.TextBlock("Not written: you changed the same lines while the edit waited ("+droppedLines(dropped)+")."))))))
		return
	}
	diff, _ = diffContent(e.Files)
	var res protocol.AcceptResult
	if err == nil {
		res, err = mgr.Accept(t.ctx, e.ID, &clientWriter{a: t.a, s: t.s})
		if errors.Is(err, agent.ErrConflict) {
			err = fmt.Errorf("%s changed while the edit waited; ask again", editFiles(e))
		}
	}
	msg := ""
	status := sdk.ToolCallStatusCompleted
	switch {
	case err != nil:
		msg, status = "Not written: "+err.Error(), sdk.ToolCallStatusFailed
	case !res.Applied:
		msg, status = "Not written: "+res.Reason, sdk.ToolCallStatusFailed
	default:
		msg = "Written (checkpoint " + res.CheckpointID + "; /undo restores it)."
		if len(dropped) > 0 {
			msg += " Not applied, because you changed the same lines while the edit waited: " + droppedLines(dropped) + "."
		}
		t.s.mu.Lock()
		for _, f := range e.Files {
			t.s.written[f.Abs] = writtenFile{rel: f.Rel, before: f.Before, beforeExists: f.BeforeOK, after: f.After, checkpointID: res.CheckpointID}
		}
		t.s.mu.Unlock()
	}
	t.a.send(t.s.id, sdk.UpdateToolCall(tcID, sdk.WithUpdateStatus(status),
		sdk.WithUpdateContent(append(diff, sdk.ToolContent(sdk.TextBlock(msg)))),
		sdk.WithUpdateRawOutput(map[string]any{"applied": err == nil && res.Applied, "checkpointId": res.CheckpointID})))
}

// ontoBuffers reads each file of a pending edit as the client has it now
// and, where the user changed it since the edit was proposed, moves the
// edit onto that text (agent.RebaseOnto): hunks over the user's changes are
// dropped and returned. It returns the edit as it then stands.
func (a *adapter) ontoBuffers(s *session, e *agent.Edit) (*agent.Edit, []agent.DroppedHunk, error) {
	mgr := s.w.mgr
	var dropped []agent.DroppedHunk
	for _, f := range e.Files {
		if !f.BeforeOK || f.Delete {
			continue
		}
		cur, ok := a.refreshBuffer(s, f.Abs)
		if !ok && s.readsSilent() {
			// Writing what the disk holds could erase what the editor
			// holds: nothing is written.
			return e, nil, fmt.Errorf("the editor did not answer fs/read_text_file, so Cairn cannot keep unsaved changes to %s; ask again", f.Rel)
		}
		if !ok {
			text, exists, err := s.w.ws.ReadFile(f.Abs)
			if err != nil {
				return e, nil, err
			}
			if !exists {
				return e, nil, fmt.Errorf("%s was deleted while the edit waited; ask again", f.Rel)
			}
			cur = text
		}
		if cur == f.Before {
			continue
		}
		d, err := mgr.RebaseOnto(e.ID, f.Abs, cur)
		if err != nil {
			return e, nil, err
		}
		dropped = append(dropped, d...)
	}
	if next, ok := mgr.EditByID(e.ID); ok {
		e = next
	}
	return e, dropped, nil
}

// droppedLines names the places of dropped hunks: "calc.go lines 4-5, …".
func droppedLines(dropped []agent.DroppedHunk) string {
	parts := make([]string, 0, len(dropped))
	for _, d := range dropped {
		parts = append(parts, d.Lines())
	}
	return strings.Join(parts, ", ")
}

// editFiles names an edit's files: "calc.go and util.go".
func editFiles(e *agent.Edit) string {
	names := make([]string, 0, len(e.Files))
	for _, f := range e.Files {
		names = append(names, f.Rel)
	}
	if len(names) > 1 {
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	return strings.Join(names, "")
}

// diffContent is the ACP diff of each file of an edit (oldText absent for a
// new file), with the files as locations.
func diffContent(files []tools.FileChange) ([]sdk.ToolCallContent, []sdk.ToolCallLocation) {
	var content []sdk.ToolCallContent
	var locs []sdk.ToolCallLocation
	for _, f := range files {
		if f.BeforeOK {
			content = append(content, sdk.ToolDiffContent(f.Abs, f.After, f.Before))
		} else {
			content = append(content, sdk.ToolDiffContent(f.Abs, f.After))
		}
		locs = append(locs, sdk.ToolCallLocation{Path: f.Abs})
	}
	return content, locs
}

// clientWriter is the agent.Applier of an ACP session: it writes files
// through the client's fs/write_text_file when the client offers it (so
// the editor's buffers are updated, never behind its back), else to disk.
type clientWriter struct {
	a *adapter
	s *session
}

var _ agent.Applier = (*clientWriter)(nil)

// SupportsDocumentChanges: the writer handles create and delete itself.
func (cw *clientWriter) SupportsDocumentChanges() bool { return true }

// ApplyEdit writes the edit's files one by one; the first failure stops it
// and is reported as not applied.
func (cw *clientWriter) ApplyEdit(ctx context.Context, label string, we protocol.WorkspaceEdit) (protocol.ApplyWorkspaceEditResult, error) {
	type fileEdit struct {
		abs    string
		edits  []protocol.TextEdit
		create bool
		delete bool
	}
	var files []fileEdit
	for uri, edits := range we.Changes {
		abs, err := workspace.URIPath(uri)
		if err != nil {
			return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}, nil
		}
		files = append(files, fileEdit{abs: abs, edits: edits})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].abs < files[j].abs })
	for _, dc := range we.DocumentChanges {
		var fe fileEdit
		var uri string
		switch c := dc.(type) {
		case protocol.TextDocumentEdit:
			uri, fe.edits = c.TextDocument.URI, c.Edits
		case protocol.CreateFile:
			uri, fe.create = c.URI, true
		case protocol.DeleteFile:
			uri, fe.delete = c.URI, true
		default:
			return protocol.ApplyWorkspaceEditResult{FailureReason: fmt.Sprintf("unsupported change %T", dc)}, nil
		}
		abs, err := workspace.URIPath(uri)
		if err != nil {
			return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}, nil
		}
		fe.abs = abs
		files = append(files, fe)
	}
	ws := cw.s.w.ws
	for _, f := range files {
		if _, err := ws.Resolve(f.abs); err != nil {
			return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}, nil
		}
		if f.delete {
			// ACP has no delete: the file goes from disk, and the overlay.
			if err := os.Remove(f.abs); err != nil && !errors.Is(err, os.ErrNotExist) {
				return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}, nil
			}
			ws.Docs.Close(f.abs)
			continue
		}
		if f.create && len(f.edits) == 0 {
			continue // the text edit that follows writes it
		}
		cur, _, err := ws.ReadFile(f.abs)
		if err != nil {
			return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}, nil
		}
		next, err := protocol.ApplyTextEdits(cur, f.edits)
		if err != nil {
			return protocol.ApplyWorkspaceEditResult{FailureReason: fmt.Sprintf("%s: %v", ws.Rel(f.abs), err)}, nil
		}
		if err := cw.a.writeText(ctx, cw.s, f.abs, next); err != nil {
			return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}, nil
		}
	}
	return protocol.ApplyWorkspaceEditResult{Applied: true}, nil
}

// writeText writes a whole file: through fs/write_text_file when the client
// offers it, else to disk. The text is also kept as the file's overlay for
// the rest of the turn, so the run reads what it wrote even when the client
// only updated a buffer.
func (a *adapter) writeText(ctx context.Context, s *session, abs, text string) error {
	if a.clientCaps().Fs.WriteTextFile {
		if _, err := a.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: s.id, Path: abs, Content: text}); err != nil {
			return fmt.Errorf("fs/write_text_file %s: %w", abs, err)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", abs, err)
		}
		if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", abs, err)
		}
	}
	s.setOverlay(abs, text)
	return nil
}

// readText reads a file as the user sees it: through fs/read_text_file
// (unsaved buffers included) when the client offers it, else from disk.
func (a *adapter) readText(ctx context.Context, s *session, abs string) (string, bool, error) {
	if a.clientCaps().Fs.ReadTextFile {
		text, err := a.clientRead(s, abs)
		if err == nil {
			return text, true, nil
		}
		slog.Debug("fs/read_text_file failed; reading the disk", "path", abs, "err", err)
	}
	b, err := os.ReadFile(abs)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(b), true, nil
}

// setOverlay makes the workspace read text for abs until the turn ends.
func (s *session) setOverlay(abs, text string) {
	s.w.ws.Docs.Open(abs, "", 0, text)
	s.mu.Lock()
	if s.overlays == nil {
		s.overlays = map[string]bool{}
	}
	s.overlays[abs] = true
	s.mu.Unlock()
}

// openBuffers puts the client's text of the file asked from (its unsaved
// buffer) in front of the disk for this turn.
func (a *adapter) openBuffers(ctx context.Context, s *session, q ask) {
	if q.abs == "" {
		return
	}
	var text string
	switch {
	case q.bufferText != nil:
		text = *q.bufferText
	case a.clientCaps().Fs.ReadTextFile:
		t, ok, err := a.readText(ctx, s, q.abs)
		if err != nil || !ok {
			return
		}
		text = t
	default:
		return
	}
	if disk, err := os.ReadFile(q.abs); err == nil && string(disk) == text {
		return
	}
	s.setOverlay(q.abs, text)
}

// closeBuffers drops the turn's overlays: between turns the disk (and the
// client, asked again next turn) is the truth.
func (a *adapter) closeBuffers(s *session) {
	s.mu.Lock()
	overlays := s.overlays
	s.overlays = nil
	s.mu.Unlock()
	for abs := range overlays {
		s.w.ws.Docs.Close(abs)
	}
}

// reconcile reads back the files the session wrote: ACP does not report
// that a user rejected (reverted) an edit in the client's review, so each
// turn starts by looking. A checkpoint whose files are all back at their
// old text is undone the way /undo would find it already undone (its hunks
// are marked undone in the thread, nothing is written); the model is told
// of every revert and every other change.
func (a *adapter) reconcile(ctx context.Context, s *session) []string {
	s.mu.Lock()
	written := make(map[string]writtenFile, len(s.written))
	for k, v := range s.written {
		written[k] = v
	}
	s.mu.Unlock()
	var notes []string
	paths := make([]string, 0, len(written))
	for p := range written {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	files, reverted := map[string]int{}, map[string]int{} // per checkpoint
	for _, abs := range paths {
		wf := written[abs]
		cur, exists, err := a.readText(ctx, s, abs)
		if err != nil {
			continue
		}
		if disk, err := os.ReadFile(abs); exists && (err != nil || string(disk) != cur) {
			s.setOverlay(abs, cur) // the client's unsaved text is what counts
		}
		files[wf.checkpointID]++
		switch {
		case exists && cur == wf.after:
			continue // still as written
		case exists == wf.beforeExists && cur == wf.before:
			reverted[wf.checkpointID]++
			notes = append(notes, fmt.Sprintf("the user rejected your edit of %s (it is back as it was).", wf.rel))
		default:
			notes = append(notes, fmt.Sprintf("the user changed %s after your edit was written; read it again before editing it.", wf.rel))
		}
		s.forgetWritten(abs)
	}
	cps := make([]string, 0, len(reverted))
	for cp := range reverted {
		cps = append(cps, cp)
	}
	sort.Strings(cps)
	for _, cp := range cps {
		if reverted[cp] != files[cp] {
			continue
		}
		res, err := s.w.mgr.Undo(ctx, cp, false, &clientWriter{a: a, s: s})
		if err != nil || res.Applied {
			slog.Warn("settling a reverted checkpoint", "checkpoint", cp, "applied", res.Applied, "err", err)
		}
	}
	return notes
}
