package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

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
// through the editor, after the user accepts it, hunk by hunk or all at
// once (accept.go). It stays pending until every hunk is decided.
type Edit struct {
	ID    string
	RunID string
	Step  int
	Files []tools.FileChange
	State EditState
	// CheckpointID is the checkpoint of the latest accept.
	CheckpointID string
	Hunks        []Hunk
}

// ensureHunks computes the hunks of an edit restored without them (from a
// journal); an edit decided as a whole gives each hunk its state. Called
// with m.mu held, or on an edit not shared yet.
func (e *Edit) ensureHunks() {
	if e.Hunks != nil || len(e.Files) == 0 {
		return
	}
	e.Hunks = splitHunks(e.Files)
	for i := range e.Hunks {
		e.Hunks[i].State = e.State
		if e.State == EditAccepted {
			e.Hunks[i].CheckpointID = e.CheckpointID
		}
	}
}

// clone copies an edit with its own hunks.
func (e *Edit) clone() *Edit {
	c := *e
	c.Hunks = append([]Hunk(nil), e.Hunks...)
	return &c
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
	e := &Edit{ID: r.cfg.NewID("edit"), RunID: r.ID, Step: step, Files: files, State: EditPending, Hunks: splitHunks(files)}
	m.mu.Lock()
	m.edits[e.ID] = e
	m.order = append(m.order, e.ID)
	m.mu.Unlock()
	m.recordEdit(e.clone())
	we := m.workspaceEdit(files, func(f tools.FileChange) (string, bool) { return f.Before, f.BeforeOK }, true)
	raw, _ := json.Marshal(we)
	r.send(protocol.RunEvent{Kind: protocol.EventEditProposed, EditID: e.ID, Edit: raw})
	return e
}

// EditByID returns a proposed edit.
func (m *Manager) EditByID(id string) (*Edit, bool) {
	e, _, ok := m.editCopy(id)
	return e, ok
}

// editCopy is EditByID with the view count taken under the same lock
// (EditView's seq: a larger count is never an older state of the edit).
func (m *Manager) editCopy(id string) (*Edit, uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.views++
	e, ok := m.edits[id]
	if !ok {
		return nil, m.views, false
	}
	e.ensureHunks()
	return e.clone(), m.views, true
}

// PendingEdits returns copies of the edits still pending, in proposal order.
func (m *Manager) PendingEdits() []*Edit {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Edit
	for _, id := range m.order {
		if e := m.edits[id]; e.State == EditPending {
			e.ensureHunks()
			out = append(out, e.clone())
		}
	}
	return out
}

// workspaceEdit builds the LSP edit turning each file's base (as given by
// base) into its proposed text. Versions come from the editor's open
// documents; a file not open gets a null version.
func (m *Manager) workspaceEdit(files []tools.FileChange, base func(tools.FileChange) (string, bool), docChanges bool) protocol.WorkspaceEdit {
	var we protocol.WorkspaceEdit
	for _, f := range files {
		before, existed := base(f)
		uri := workspace.FileURI(m.ws.ClientPath(f.Abs))
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
			Range:   e.Range,
			NewText: e.NewText,
		})
	}
	return out
}

// EditView is a proposed edit with each file's current and proposed text.
func (m *Manager) EditView(id string) (*protocol.GetEditResult, error) {
	m.loadEdit(id)
	e, seq, ok := m.editCopy(id)
	if !ok {
		return nil, fmt.Errorf("no proposed edit with that id is known to this server")
	}
	res := &protocol.GetEditResult{EditID: e.ID, RunID: e.RunID, State: string(e.State), Hunks: []protocol.Hunk{}, Seq: seq}
	var diff strings.Builder
	for _, f := range e.Files {
		cur, _, err := m.ws.ReadFile(f.Abs)
		if err != nil {
			return nil, err
		}
		res.Files = append(res.Files, protocol.EditFile{URI: workspace.FileURI(m.ws.ClientPath(f.Abs)), Path: f.Rel, Current: cur, Proposed: f.After, Create: f.Created})
		diff.WriteString(workspace.UnifiedDiff(f.Rel, cur, f.After))
	}
	res.Diff = diff.String()
	for _, h := range e.Hunks {
		res.Hunks = append(res.Hunks, protocol.Hunk{Index: h.Index, Path: h.Rel, URI: workspace.FileURI(m.ws.ClientPath(e.Files[h.File].Abs)),
			StartLine: h.StartLine, EndLine: h.EndLine, ProposedStartLine: h.NewStartLine, ProposedEndLine: h.NewEndLine,
			Diff: h.Diff, State: string(h.State), CheckpointID: h.CheckpointID, Undone: h.Undone})
	}
	return res, nil
}
