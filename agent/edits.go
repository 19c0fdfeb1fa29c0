package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/workspace"
)

// EditState is where a proposed edit stands.
type EditState string

const (
	EditPending  EditState = "pending"
	EditAccepted EditState = "accepted"
	EditRejected EditState = "rejected"
)

// Edit is a change the agent proposed; it touches the user's files only
// through the editor, after the user accepts it.
type Edit struct {
	ID           string
	RunID        string
	Step         int
	Files        []tools.FileChange
	State        EditState
	CheckpointID string
}

// Applier sends workspace/applyEdit to the editor.
type Applier interface {
	ApplyEdit(ctx context.Context, label string, edit protocol.WorkspaceEdit) (protocol.ApplyWorkspaceEditResult, error)
	// SupportsDocumentChanges reports whether the client takes versioned
	// documentChanges with create/delete resource operations.
	SupportsDocumentChanges() bool
}

// ErrConflict is wrapped by accept and undo refusals caused by the user's own
// changes to a file.
var ErrConflict = errors.New("the file changed")

func (m *Manager) proposeEdit(r *Run, step int, files []tools.FileChange) *Edit {
	e := &Edit{ID: r.cfg.NewID("edit"), RunID: r.ID, Step: step, Files: files, State: EditPending}
	m.mu.Lock()
	m.edits[e.ID] = e
	m.order = append(m.order, e.ID)
	m.mu.Unlock()
	we := m.workspaceEdit(files, func(f tools.FileChange) (string, bool) { return f.Before, f.BeforeOK }, true)
	raw, _ := json.Marshal(we)
	r.send(protocol.RunEvent{Kind: protocol.EventEditProposed, EditID: e.ID, Edit: raw})
	return e
}

// EditByID returns a proposed edit.
func (m *Manager) EditByID(id string) (*Edit, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.edits[id]
	if !ok {
		return nil, false
	}
	c := *e
	return &c, true
}

// FileURI returns the file:// URI of an absolute path.
func FileURI(abs string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return u.String()
}

// workspaceEdit builds the LSP edit turning each file's base (as given by
// base) into its proposed text. Versions come from the editor's open
// documents; a file not open gets a null version.
func (m *Manager) workspaceEdit(files []tools.FileChange, base func(tools.FileChange) (string, bool), docChanges bool) protocol.WorkspaceEdit {
	var we protocol.WorkspaceEdit
	for _, f := range files {
		before, existed := base(f)
		uri := FileURI(f.Abs)
		edits := toWire(workspace.TextEdits(before, f.After))
		if !docChanges {
			if we.Changes == nil {
				we.Changes = map[string][]protocol.TextEdit{}
			}
			we.Changes[uri] = append(we.Changes[uri], edits...)
			continue
		}
		if !existed {
			we.DocumentChanges = append(we.DocumentChanges, protocol.CreateFile{Kind: "create", URI: uri, Options: &protocol.FileOptions{IgnoreIfExists: true}})
		}
		var version *int32
		if doc, ok := m.ws.Docs.Get(f.Abs); ok {
			v := doc.Version
			version = &v
		}
		we.DocumentChanges = append(we.DocumentChanges, protocol.TextDocumentEdit{
			TextDocument: protocol.VersionedTextDocumentIdentifier{URI: uri, Version: version}, Edits: edits})
	}
	return we
}

func toWire(edits []workspace.TextEdit) []protocol.TextEdit {
	out := make([]protocol.TextEdit, 0, len(edits))
	for _, e := range edits {
		out = append(out, protocol.TextEdit{
			Range: protocol.Range{
				Start: protocol.Position{Line: e.Range.Start.Line, Character: e.Range.Start.Character},
				End:   protocol.Position{Line: e.Range.End.Line, Character: e.Range.End.Character},
			},
			NewText: e.NewText,
		})
	}
	return out
}

// EditView is a proposed edit with each file's current and proposed text.
func (m *Manager) EditView(id string) (*protocol.GetEditResult, error) {
	e, ok := m.EditByID(id)
	if !ok {
		return nil, fmt.Errorf("no proposed edit %q", id)
	}
	res := &protocol.GetEditResult{EditID: e.ID, RunID: e.RunID}
	var diff strings.Builder
	for _, f := range e.Files {
		cur, _, err := m.ws.ReadFile(f.Abs)
		if err != nil {
			return nil, err
		}
		res.Files = append(res.Files, protocol.EditFile{URI: FileURI(f.Abs), Path: f.Rel, Current: cur, Proposed: f.After, Create: f.Created})
		diff.WriteString(workspace.UnifiedDiff(f.Rel, cur, f.After))
	}
	res.Diff = diff.String()
	return res, nil
}

// Accept applies a proposed edit through the editor and records a
// checkpoint. The checkpoint (base hash and patch of every file) is
// journaled before the editor is asked, so undo is exact even after a crash.
func (m *Manager) Accept(ctx context.Context, id string, ap Applier) (protocol.AcceptResult, error) {
	m.mu.Lock()
	e, ok := m.edits[id]
	if !ok {
		m.mu.Unlock()
		return protocol.AcceptResult{}, fmt.Errorf("no proposed edit %q", id)
	}
	if e.State != EditPending {
		st := e.State
		m.mu.Unlock()
		return protocol.AcceptResult{}, fmt.Errorf("edit %s was already %s", id, st)
	}
	// An edit built on an earlier pending edit of the same file (the agent
	// edited the file twice) is applied together with it.
	group := []*Edit{e}
	files := append([]tools.FileChange(nil), e.Files...)
	for i, f := range files {
		cur, exists, err := m.ws.ReadFile(f.Abs)
		if err != nil {
			m.mu.Unlock()
			return protocol.AcceptResult{}, err
		}
		if exists == f.BeforeOK && cur == f.Before {
			continue
		}
		// Walk back through pending edits of this run to find one whose base is the current text.
		found := false
		for j := len(m.order) - 1; j >= 0 && !found; j-- {
			prev := m.edits[m.order[j]]
			if prev == e || prev.RunID != e.RunID || prev.State != EditPending {
				continue
			}
			for _, pf := range prev.Files {
				if pf.Abs == f.Abs && pf.BeforeOK == exists && pf.Before == cur {
					files[i].Before, files[i].BeforeOK, files[i].Created = cur, exists, pf.Created
					group = append(group, prev)
					found = true
					break
				}
			}
		}
		if !found {
			m.mu.Unlock()
			return protocol.AcceptResult{}, fmt.Errorf("cannot accept edit %s: %s changed since the edit was proposed; ask again: %w", id, f.Rel, ErrConflict)
		}
	}
	for _, g := range group {
		g.State = EditAccepted // reserve: a concurrent accept now fails
	}
	m.mu.Unlock()
	revert := func() {
		m.mu.Lock()
		for _, g := range group {
			g.State = EditPending
		}
		m.mu.Unlock()
	}

	var changes []checkpoint.Change
	for _, f := range files {
		changes = append(changes, checkpoint.Change{Rel: f.Rel, Before: f.Before, BeforeExists: f.BeforeOK, After: f.After, AfterExists: !f.Delete})
	}
	cp, err := m.cps.Create(e.RunID, e.ID, e.Step, changes)
	if err != nil {
		revert()
		return protocol.AcceptResult{}, fmt.Errorf("recording the checkpoint: %w", err)
	}
	we := m.workspaceEdit(files, func(f tools.FileChange) (string, bool) { return f.Before, f.BeforeOK }, ap.SupportsDocumentChanges())
	res, err := ap.ApplyEdit(ctx, "Cairn: accept "+id, we)
	if err != nil || !res.Applied {
		revert()
		_ = m.cps.SetStatus(cp.ID, checkpoint.StatusFailed)
		reason := res.FailureReason
		if err != nil {
			reason = err.Error()
		}
		if reason == "" {
			reason = "the editor did not apply the edit"
		}
		return protocol.AcceptResult{Applied: false, Reason: reason}, nil
	}
	m.faultPoint("during_accept")
	if err := m.cps.SetStatus(cp.ID, checkpoint.StatusApplied); err != nil {
		slog.Error("marking checkpoint applied", "checkpoint", cp.ID, "err", err)
	}
	m.mu.Lock()
	for _, g := range group {
		g.CheckpointID = cp.ID
	}
	m.mu.Unlock()
	if r, ok := m.Run(e.RunID); ok {
		r.jrnl(checkpoint.RecEditState, e.Step, map[string]any{"editId": id, "state": EditAccepted, "checkpointId": cp.ID})
		r.send(protocol.RunEvent{Kind: protocol.EventCheckpoint, CheckpointID: cp.ID, Step: e.Step, EditID: id})
	}
	return protocol.AcceptResult{Applied: true, CheckpointID: cp.ID}, nil
}

// Reject drops a proposed edit; the run's later reads no longer see it.
func (m *Manager) Reject(id string) error {
	m.mu.Lock()
	e, ok := m.edits[id]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("no proposed edit %q", id)
	}
	if e.State != EditPending {
		st := e.State
		m.mu.Unlock()
		return fmt.Errorf("edit %s was already %s", id, st)
	}
	e.State = EditRejected
	m.mu.Unlock()
	if r, ok := m.Run(e.RunID); ok {
		for _, f := range e.Files {
			r.drafts.Forget(f.Abs)
		}
		r.jrnl(checkpoint.RecEditState, e.Step, map[string]any{"editId": id, "state": EditRejected})
	}
	return nil
}

// Undo restores the files of a checkpoint through the editor. It refuses,
// naming the files, when the user changed any of them since; with force it
// restores the others and reports the rest.
func (m *Manager) Undo(ctx context.Context, cpID string, force bool, ap Applier) (protocol.UndoResult, error) {
	cp, err := m.cps.Get(cpID)
	if err != nil {
		return protocol.UndoResult{}, err
	}
	switch cp.Status {
	case checkpoint.StatusUndone:
		return protocol.UndoResult{}, fmt.Errorf("checkpoint %s was already undone", cpID)
	case checkpoint.StatusFailed:
		return protocol.UndoResult{}, fmt.Errorf("checkpoint %s was never applied", cpID)
	}
	read := func(rel string) (string, bool, error) { return m.ws.ReadFile(m.ws.Abs(rel)) }
	restores, conflicts, err := m.cps.PlanUndo(cp, read)
	if err != nil {
		return protocol.UndoResult{}, err
	}
	if len(conflicts) > 0 && (!force || len(restores) == 0) {
		var names []string
		for _, c := range conflicts {
			names = append(names, fmt.Sprintf("%s (%s)", c.Rel, c.Reason))
		}
		msg := fmt.Sprintf("cannot undo checkpoint %s: %s", cpID, strings.Join(names, "; "))
		if len(restores) > 0 {
			msg += fmt.Sprintf("; %d other file(s) can be restored with force: true", len(restores))
		}
		return protocol.UndoResult{}, fmt.Errorf("%s: %w", msg, ErrConflict)
	}
	we := protocol.WorkspaceEdit{}
	docChanges := ap.SupportsDocumentChanges()
	var restored []string
	for _, r := range restores {
		abs := m.ws.Abs(r.Rel)
		uri := FileURI(abs)
		switch {
		case !r.TargetExists && docChanges:
			we.DocumentChanges = append(we.DocumentChanges, protocol.DeleteFile{Kind: "delete", URI: uri, Options: &protocol.FileOptions{IgnoreIfNotExists: true}})
		case !r.TargetExists:
			// Without resource operations the best we can do is empty it.
			if we.Changes == nil {
				we.Changes = map[string][]protocol.TextEdit{}
			}
			we.Changes[uri] = toWire(workspace.TextEdits(r.Current, ""))
		default:
			f := tools.FileChange{Abs: abs, Rel: r.Rel, Before: r.Current, BeforeOK: r.CurrentExists, After: r.Target}
			part := m.workspaceEdit([]tools.FileChange{f}, func(f tools.FileChange) (string, bool) { return f.Before, f.BeforeOK }, docChanges)
			we.DocumentChanges = append(we.DocumentChanges, part.DocumentChanges...)
			for k, v := range part.Changes {
				if we.Changes == nil {
					we.Changes = map[string][]protocol.TextEdit{}
				}
				we.Changes[k] = v
			}
		}
		restored = append(restored, r.Rel)
	}
	res, err := ap.ApplyEdit(ctx, "Cairn: undo "+cpID, we)
	if err != nil {
		return protocol.UndoResult{}, fmt.Errorf("asking the editor to restore the files: %w", err)
	}
	if !res.Applied {
		return protocol.UndoResult{Applied: false}, nil
	}
	m.faultPoint("during_undo")
	if err := m.cps.SetStatus(cpID, checkpoint.StatusUndone); err != nil {
		slog.Error("marking checkpoint undone", "checkpoint", cpID, "err", err)
	}
	return protocol.UndoResult{Applied: true, Restored: restored}, nil
}
