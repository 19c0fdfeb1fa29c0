package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
)

// Accepting and rejecting proposed edits, whole or hunk by hunk. Every
// accept is its own checkpoint: the text of each file before it (the base
// plus the hunks accepted earlier) and after it, journaled before the
// editor is asked, so undo puts back exactly that accept's hunks.

// ErrUnconfirmedProtected is wrapped by an accept refused because it would
// write a protected path (workspace.Protected) that was not confirmed as one.
var ErrUnconfirmedProtected = errors.New("protected path not confirmed")

// Accept applies every pending hunk of a proposed edit.
func (m *Manager) Accept(ctx context.Context, id string, ap Applier) (protocol.AcceptResult, error) {
	return m.AcceptHunks(ctx, id, nil, ap)
}

// Reject drops every pending hunk of a proposed edit.
func (m *Manager) Reject(id string) error { return m.RejectHunks(id, nil) }

// selectHunks resolves hunk indices (nil: every pending hunk) and checks
// that each waits for a decision; a conflicting hunk is selectable only
// when withConflicts (a reject). Called with m.mu held.
func selectHunks(e *Edit, idx []int, withConflicts bool) (map[int]bool, error) {
	sel := map[int]bool{}
	if idx == nil {
		var conflicts []string
		for _, h := range e.Hunks {
			switch {
			case h.State == EditPending, h.State == EditConflict && withConflicts:
				sel[h.Index] = true
			case h.State == EditConflict:
				conflicts = append(conflicts, hunkWhere(h))
			}
		}
		if len(sel) == 0 && len(conflicts) > 0 {
			return nil, fmt.Errorf("the proposed change to %s overlaps your own edits there: redo it against the current text, or reject it: %w",
				strings.Join(conflicts, ", "), ErrConflict)
		}
		if len(sel) == 0 {
			return nil, fmt.Errorf("the proposed edit of %s has no pending changes left", e.fileNames())
		}
		return sel, nil
	}
	if len(idx) == 0 {
		return nil, fmt.Errorf("hunks is empty: give hunk indices, or omit it for every pending hunk")
	}
	for _, i := range idx {
		if i < 0 || i >= len(e.Hunks) {
			return nil, fmt.Errorf("the proposed edit of %s has no hunk %d (it has %d, numbered from 0)", e.fileNames(), i, len(e.Hunks))
		}
		h := e.Hunks[i]
		if h.State == EditConflict && !withConflicts {
			return nil, fmt.Errorf("the proposed change to %s overlaps your own edits there: redo it against the current text, or reject it: %w", hunkWhere(h), ErrConflict)
		}
		if !h.open() {
			return nil, fmt.Errorf("the proposed change to %s was already %s", hunkWhere(h), h.State)
		}
		sel[i] = true
	}
	return sel, nil
}

// fileNames lists an edit's files for people.
func (e *Edit) fileNames() string {
	var names []string
	for _, f := range e.Files {
		names = append(names, f.Rel)
	}
	return strings.Join(names, ", ")
}

// firstDifference is the 1-based line where two texts first differ.
func firstDifference(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return strings.Count(a[:i], "\n") + 1
}

// settle sets the edit's state once every hunk is decided: accepted when at
// least one hunk was accepted, else rejected. Called with m.mu held.
func (e *Edit) settle() {
	if !decided(e.Hunks) {
		e.State = EditPending
		return
	}
	e.State = EditRejected
	for _, h := range e.Hunks {
		if h.State == EditAccepted {
			e.State = EditAccepted
		}
	}
}

// AcceptHunks applies the given hunks of a proposed edit (nil: every pending
// hunk) through the editor and records a checkpoint for them. Each file must
// hold the text the edit was based on plus the hunks accepted earlier; when
// the agent edited a file twice, accepting the later edit whole applies the
// earlier pending one with it.
func (m *Manager) AcceptHunks(ctx context.Context, id string, idx []int, ap Applier) (protocol.AcceptResult, error) {
	acc, err := m.reserveHunks(id, idx)
	if err != nil {
		return protocol.AcceptResult{}, err
	}
	e := acc.e
	var changes []checkpoint.Change
	for _, f := range acc.files {
		changes = append(changes, checkpoint.Change{Rel: f.Rel, Before: f.Before, BeforeExists: f.BeforeOK, After: f.After, AfterExists: !f.Delete})
	}
	cp, err := m.cps.Create(e.RunID, e.ID, e.Step, changes)
	if err != nil {
		m.release(acc)
		return protocol.AcceptResult{}, fmt.Errorf("recording the checkpoint: %w", err)
	}
	we := m.workspaceEdit(acc.files, func(f tools.FileChange) (string, bool) { return f.Before, f.BeforeOK }, ap.SupportsDocumentChanges())
	res, err := ap.ApplyEdit(ctx, "Cairn: accept the change to "+e.fileNames(), we)
	if err != nil || !res.Applied {
		m.release(acc)
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
	m.settleAccepted(acc, cp.ID)
	return protocol.AcceptResult{Applied: true, CheckpointID: cp.ID}, nil
}

// acceptance is an accept in progress: the edit, its selected hunks, the
// file changes they write and the earlier edits taken along (the group).
type acceptance struct {
	id    string
	e     *Edit
	sel   map[int]bool
	files []tools.FileChange
	group []*Edit
}

// reserveHunks finds the pending edit id and its selected hunks, computes
// what accepting them writes, and marks them (and the group) accepted, so
// that a concurrent accept or reject of them fails; release undoes that.
func (m *Manager) reserveHunks(id string, idx []int) (acceptance, error) {
	m.loadEdit(id)
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.edits[id]
	if !ok {
		return acceptance{}, fmt.Errorf("no proposed edit with that id is known to this server")
	}
	if e.State != EditPending {
		return acceptance{}, fmt.Errorf("the proposed edit of %s was already %s", e.fileNames(), e.State)
	}
	e.ensureHunks()
	sel, err := selectHunks(e, idx, false)
	if err != nil {
		return acceptance{}, err
	}
	files, group, err := m.acceptedFiles(e, sel)
	if err != nil {
		return acceptance{}, err
	}
	for i := range sel {
		e.Hunks[i].State = EditAccepted
	}
	for _, g := range group {
		g.State = EditAccepted
	}
	return acceptance{id: id, e: e, sel: sel, files: files, group: group}, nil
}

// release returns the hunks reserveHunks reserved to pending.
func (m *Manager) release(acc acceptance) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range acc.sel {
		acc.e.Hunks[i].State = EditPending
	}
	for _, g := range acc.group {
		g.State = EditPending
	}
}

// settleAccepted records an applied accept: the hunks and the group's
// pending hunks point at the checkpoint, the edits are saved and
// journaled, and the run is told.
func (m *Manager) settleAccepted(acc acceptance, cpID string) {
	e := acc.e
	m.mu.Lock()
	for i := range acc.sel {
		e.Hunks[i].CheckpointID = cpID
	}
	e.CheckpointID = cpID
	e.settle()
	for _, g := range acc.group {
		g.CheckpointID = cpID
		for i := range g.Hunks {
			if g.Hunks[i].State == EditPending {
				g.Hunks[i].State, g.Hunks[i].CheckpointID = EditAccepted, cpID
			}
		}
	}
	snap := e.clone()
	var groupSnaps []*Edit
	for _, g := range acc.group {
		groupSnaps = append(groupSnaps, g.clone())
	}
	m.mu.Unlock()
	m.recordEdit(snap)
	for _, g := range groupSnaps {
		m.recordEdit(g)
	}
	if r, ok := m.Run(e.RunID); ok {
		r.jrnl(checkpoint.RecEditState, e.Step, map[string]any{"editId": acc.id, "state": snap.State, "checkpointId": cpID,
			"hunks": sortedKeys(acc.sel), "hunkState": EditAccepted})
		r.send(protocol.RunEvent{Kind: protocol.EventCheckpoint, CheckpointID: cpID, Step: e.Step, EditID: acc.id})
		if snap.State != EditPending {
			r.afterDecision(snap)
		}
	}
}

// acceptedFiles computes, with m.mu held, the file changes that accepting
// the selected hunks of e writes: each touched file from its text with the
// applied hunks to its text with the selected ones too. A file that holds
// the base of an earlier pending edit of the run, on which e was built,
// takes that edit along (the group). Protected paths that were not
// confirmed as such, and files changed under the edit, are refused.
func (m *Manager) acceptedFiles(e *Edit, sel map[int]bool) ([]tools.FileChange, []*Edit, error) {
	var group []*Edit
	var files []tools.FileChange
	for fi, f := range e.Files {
		touched, all, untouched := false, true, true
		for _, h := range e.Hunks {
			if h.File != fi {
				continue
			}
			touched = touched || sel[h.Index]
			all = all && sel[h.Index]
			untouched = untouched && h.State == EditPending && !h.folded
		}
		if !touched {
			continue
		}
		// A protected path was confirmed, naming it, before its edit was
		// proposed. One that was not (a journal of an older version, a
		// path that became protected since) is never written by an accept.
		if why, protected := m.ws.Protected(f.Rel); protected && f.Protected == "" {
			return nil, nil, fmt.Errorf("cannot accept the change: %s is a protected path (%s) and the edit was not confirmed as one when it was proposed; ask for the change again: %w",
				f.Rel, why, ErrUnconfirmedProtected)
		}
		base, baseOK, err := textWith(f, fi, e.Hunks, Hunk.applied)
		if err != nil {
			return nil, nil, err
		}
		target, targetOK, err := textWith(f, fi, e.Hunks, func(h Hunk) bool { return h.applied() || sel[h.Index] })
		if err != nil {
			return nil, nil, err
		}
		cur, exists, err := m.ws.ReadFile(f.Abs)
		if err != nil {
			return nil, nil, err
		}
		fc := tools.FileChange{Abs: f.Abs, Rel: f.Rel, Before: base, BeforeOK: baseOK, After: target, Delete: !targetOK, Created: !baseOK && targetOK}
		if exists != baseOK || (exists && cur != base) {
			prev := m.earlierPending(e, f.Abs, cur, exists)
			if prev != nil {
				prev.ensureHunks()
			}
			if prev == nil || !all || !untouched {
				if !exists || !baseOK {
					return nil, nil, fmt.Errorf("cannot accept the change to %s: the file was created or deleted since the change was proposed; ask again: %w", f.Rel, ErrConflict)
				}
				return nil, nil, fmt.Errorf("cannot accept the change to %s: the file changed at line %d since the change was proposed, outside the editor's open buffer, so Cairn could not carry the change over; ask again: %w",
					f.Rel, firstDifference(cur, base), ErrConflict)
			}
			// The file holds the base of an earlier pending edit of this
			// run, on which this one was built: apply both.
			fc.Before, fc.BeforeOK, fc.Created = cur, exists, !exists
			group = append(group, prev)
		}
		files = append(files, fc)
	}
	return files, group, nil
}

// earlierPending finds a pending edit of e's run, proposed before e, whose
// base for abs is the file's current text. Called with m.mu held.
func (m *Manager) earlierPending(e *Edit, abs, cur string, exists bool) *Edit {
	for j := len(m.order) - 1; j >= 0; j-- {
		prev := m.edits[m.order[j]]
		if prev == e || prev.RunID != e.RunID || prev.State != EditPending {
			continue
		}
		for _, pf := range prev.Files {
			if pf.Abs == abs && pf.BeforeOK == exists && pf.Before == cur {
				return prev
			}
		}
	}
	return nil
}

// RejectHunks drops the given hunks of a proposed edit (nil: every pending
// hunk). Once every hunk is decided, the run's later reads see the file as
// the user has it; a run still going is told what was rejected.
func (m *Manager) RejectHunks(id string, idx []int) error {
	m.loadEdit(id)
	m.mu.Lock()
	e, ok := m.edits[id]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("no proposed edit with that id is known to this server")
	}
	if e.State != EditPending {
		st := e.State
		m.mu.Unlock()
		return fmt.Errorf("the proposed edit of %s was already %s", e.fileNames(), st)
	}
	e.ensureHunks()
	sel, err := selectHunks(e, idx, true)
	if err != nil {
		m.mu.Unlock()
		return err
	}
	for i := range sel {
		e.Hunks[i].State = EditRejected
	}
	e.settle()
	snap := e.clone()
	m.mu.Unlock()
	m.recordEdit(snap)
	if r, ok := m.Run(e.RunID); ok {
		r.jrnl(checkpoint.RecEditState, e.Step, map[string]any{"editId": id, "state": snap.State, "hunks": sortedKeys(sel), "hunkState": EditRejected})
		var parts []string
		for _, i := range sortedKeys(sel) {
			h := snap.Hunks[i]
			parts = append(parts, fmt.Sprintf("hunk %d (%s lines %d-%d):\n```diff\n%s```", i, h.Rel, h.StartLine+1, max(h.EndLine, h.StartLine+1), h.Diff))
		}
		r.addNote(fmt.Sprintf("[Cairn] The user rejected %s of edit %s; do not propose the same change again unless asked:\n%s",
			plural(len(sel), "hunk", "hunks"), id, strings.Join(parts, "\n")))
		if snap.State != EditPending {
			r.afterDecision(snap)
		}
	}
	return nil
}

// afterDecision runs once every hunk of an edit is decided: if any was
// rejected, the run's drafts of its files are dropped, so later reads see
// the file as the user has it (the accepted hunks only).
func (r *Run) afterDecision(e *Edit) {
	for _, h := range e.Hunks {
		if h.State == EditRejected {
			for _, f := range e.Files {
				r.drafts.Forget(f.Abs)
			}
			return
		}
	}
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
