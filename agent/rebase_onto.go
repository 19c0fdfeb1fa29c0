package agent

import (
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/cairn-dev/cairn/workspace"
)

// Rebasing a pending edit onto the text the user has now: an ACP client
// reports no changes as they happen, so before an accept the adapter reads
// the client's buffer and, when the user typed in the file since the edit
// was proposed, moves the edit's hunks onto that text. A hunk whose lines
// the user changed is dropped (never applied over the user's text).

// DroppedHunk is a hunk RebaseOnto could not carry over: the user changed
// the lines under it. StartLine and EndLine are 1-based and inclusive, in
// the file's current text (the region of the user's change and the hunk).
type DroppedHunk struct {
	Rel                string
	StartLine, EndLine int
	Diff               string
}

// Lines says where the hunk was, for people: "calc.go lines 4-5".
func (d DroppedHunk) Lines() string {
	if d.EndLine <= d.StartLine {
		return fmt.Sprintf("%s line %d", d.Rel, d.StartLine)
	}
	return fmt.Sprintf("%s lines %d-%d", d.Rel, d.StartLine, d.EndLine)
}

// RebaseOnto makes cur, the text the user now has for abs, the base of the
// pending edit id: the hunks that do not overlap what the user changed are
// moved onto cur (the edit's hunks are renumbered), the others are dropped
// and returned. An edit that keeps no hunk is settled as rejected. It
// needs every hunk of the edit pending and the file existing before and
// after the edit; otherwise it returns an error wrapping ErrConflict that
// names the file.
func (m *Manager) RebaseOnto(id, abs, cur string) ([]DroppedHunk, error) {
	m.loadEdit(id)
	m.mu.Lock()
	e, ok := m.edits[id]
	if !ok {
		m.mu.Unlock()
		return nil, fmt.Errorf("no proposed edit %q", id)
	}
	e.ensureHunks()
	fi := -1
	for i, f := range e.Files {
		if f.Abs == abs {
			fi = i
		}
	}
	if fi < 0 || (e.Files[fi].BeforeOK && e.Files[fi].Before == cur) {
		m.mu.Unlock()
		return nil, nil
	}
	f := e.Files[fi]
	if e.State != EditPending || !f.BeforeOK || f.Delete {
		m.mu.Unlock()
		return nil, fmt.Errorf("%s changed since the edit was proposed; ask again: %w", f.Rel, ErrConflict)
	}
	for _, h := range e.Hunks {
		if h.State != EditPending || h.whole {
			m.mu.Unlock()
			return nil, fmt.Errorf("%s changed since part of the edit was decided; ask again: %w", f.Rel, ErrConflict)
		}
	}
	user := udiff.Lines(f.Before, cur)
	var kept []udiff.Edit
	var dropped []DroppedHunk
	for _, h := range e.Hunks {
		if h.File != fi {
			continue
		}
		c := h.change
		delta := 0               // bytes the user's changes before the hunk added
		lo, hi := c.Start, c.End // the hunk and the user's changes over it, in Before
		grow := 0                // bytes the overlapping changes added
		conflict := false
		for _, u := range user {
			switch {
			// Overlapping text, or two insertions at one place (whose
			// order nobody can tell), is a conflict; a change that only
			// touches the hunk's first or last line boundary is not.
			case (u.Start < c.End && c.Start < u.End) || (u.Start == u.End && c.Start == c.End && u.Start == c.Start):
				conflict = true
				lo, hi = min(lo, u.Start), max(hi, u.End)
				grow += len(u.New) - (u.End - u.Start)
			case u.End <= c.Start:
				delta += len(u.New) - (u.End - u.Start)
			}
		}
		if !conflict {
			kept = append(kept, udiff.Edit{Start: c.Start + delta, End: c.End + delta, New: c.New})
			continue
		}
		start, end := lo+delta, hi+delta+grow
		start, end = min(start, len(cur)), min(max(end, start), len(cur))
		first := strings.Count(cur[:start], "\n") + 1
		last := first + strings.Count(strings.TrimSuffix(cur[start:end], "\n"), "\n")
		dropped = append(dropped, DroppedHunk{Rel: h.Rel, StartLine: first, EndLine: last, Diff: h.Diff})
	}
	after, err := udiff.Apply(cur, kept)
	if err != nil {
		m.mu.Unlock()
		return nil, fmt.Errorf("moving the edit of %s onto its current text: %w", f.Rel, err)
	}
	oldAfter := f.After
	e.Files[fi].Before, e.Files[fi].After = cur, after
	e.Hunks = splitHunks(e.Files)
	e.settle()
	snap := e.clone()
	m.mu.Unlock()
	m.recordEdit(snap)
	if r, ok := m.Run(e.RunID); ok {
		// The run reads the file as the user has it plus what is still
		// proposed.
		for _, d := range r.drafts.All() {
			if d.Abs == abs && d.Text == oldAfter {
				r.drafts.Restore(workspace.Draft{Abs: abs, Rel: d.Rel, Base: cur, BaseExists: true, Text: after})
			}
		}
		if len(dropped) > 0 {
			var parts []string
			for _, d := range dropped {
				parts = append(parts, fmt.Sprintf("%s:\n```diff\n%s```", d.Lines(), d.Diff))
			}
			r.addNote(fmt.Sprintf("[Cairn] The user changed %s while your edit waited; these hunks were not applied (read the file again before proposing them anew):\n%s",
				f.Rel, strings.Join(parts, "\n")))
		}
	}
	return dropped, nil
}
