package agent

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/workspace"
)

// Undo restores the files of a checkpoint through the editor. Files already
// back at their pre-edit text (the editor's own undo after accept) are
// reported as already undone and left alone; when every file is, nothing is
// sent and the result says so (applied: false, alreadyUndone, reason). It
// refuses, naming the files, when the user changed any other file since;
// with force it restores the rest and reports them.
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
	m.loadEdit(cp.EditID) // an accept of an earlier session: its hunks learn they are undone
	read := func(rel string) (string, bool, error) { return m.ws.ReadFile(m.ws.Abs(rel)) }
	// Files at their pre-edit text (and not also at the post-edit text,
	// which only an empty change could be) need nothing.
	already := map[string]bool{}
	var alreadyList []string
	for _, f := range cp.Files {
		cur, exists, err := read(f.Rel)
		if err != nil {
			return protocol.UndoResult{}, fmt.Errorf("reading %s: %w", f.Rel, err)
		}
		h := ""
		if exists {
			h = workspace.Hash(cur)
		}
		atBefore := exists == f.BeforeExists && (!exists || h == f.BeforeHash)
		atAfter := exists == f.AfterExists && (!exists || h == f.AfterHash)
		if atBefore && !atAfter {
			already[f.Rel] = true
			alreadyList = append(alreadyList, f.Rel)
		}
	}
	if len(cp.Files) > 0 && len(already) == len(cp.Files) {
		m.markUndone(cpID)
		return protocol.UndoResult{Applied: false, AlreadyUndone: alreadyList,
			Reason: "already undone: the files are back at their text from before the edit"}, nil
	}
	restores, conflicts, err := m.cps.PlanUndo(cp, read)
	if err != nil {
		return protocol.UndoResult{}, err
	}
	kept := conflicts[:0]
	for _, c := range conflicts {
		if !already[c.Rel] {
			kept = append(kept, c)
		}
	}
	conflicts = kept
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
		uri := workspace.FileURI(m.ws.ClientPath(abs))
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
		reason := res.FailureReason
		if reason == "" {
			reason = "the editor did not apply the undo"
		}
		return protocol.UndoResult{Applied: false, Reason: reason}, nil
	}
	m.faultPoint("during_undo")
	m.markUndone(cpID)
	return protocol.UndoResult{Applied: true, Restored: restored, AlreadyUndone: alreadyList}, nil
}

// markUndone records an undone checkpoint, and marks the hunks it applied
// as undone (the thread's history says so, and a later accept of the same
// edit's other hunks builds on the text without them).
func (m *Manager) markUndone(cpID string) {
	if err := m.cps.SetStatus(cpID, checkpoint.StatusUndone); err != nil {
		slog.Error("marking checkpoint undone", "checkpoint", cpID, "err", err)
	}
	var changed []*Edit
	m.mu.Lock()
	for _, e := range m.edits {
		hit := false
		for i := range e.Hunks {
			if e.Hunks[i].CheckpointID == cpID {
				e.Hunks[i].Undone, hit = true, true
			}
		}
		if hit {
			changed = append(changed, e.clone())
		}
	}
	m.mu.Unlock()
	for _, e := range changed {
		m.recordEdit(e)
	}
}
