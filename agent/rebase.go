package agent

import (
	"fmt"
	"sort"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/cairn-dev/cairn/protocol"
)

// Proposals follow the buffer. When the user changes a file that a pending
// edit touches, the edit is carried onto the new text: the file's base
// becomes the new text, the hunks the user's change does not overlap move
// with it and stay acceptable, and those it overlaps become conflicting.
// A conflicting hunk keeps the region of the current text it stands for,
// with that region's text as the model saw it (base) and as the model meant
// it (theirs); RedoHunks merges the user's change and the model's into it
// when they touch different characters.
//
// Invariant kept by every rebase: for each file of a pending edit,
// textWith(f, fi, hunks, Hunk.applied) is the text the file holds when
// nobody changed it behind Cairn's back, so an accept computes its
// workspace/applyEdit against the editor's current buffer.

// EditConflict is the state of a hunk the user's own change overlaps: it
// cannot be accepted until it is redone (RedoHunks) and may be rejected.
const EditConflict EditState = "conflict"

// hunkSuperseded is how a thread records a superseded hunk (Hunk.superseded):
// rejected on the wire, but not refused by the user.
const hunkSuperseded = "superseded"

// hunkConflict is what a conflicting hunk stands for: the text of its
// region (Hunk.change.Start..End in the file's base) as the model saw it
// and as the model meant it.
type hunkConflict struct {
	base, theirs string
}

// open reports whether a hunk still waits for the user's decision.
func (h Hunk) open() bool { return h.State == EditPending || h.State == EditConflict }

// DocumentChanged carries the pending edits of the file at abs from the
// text before an editor change to the text after it. Only an edit whose
// expected text (its base plus its accepted hunks) was the text before is
// carried: one built on another pending edit, or one the user had already
// diverged from, is left for the accept's check. It returns the edits it
// changed, after telling their runs (an editUpdated event each).
func (m *Manager) DocumentChanged(abs, before, after string) []string {
	if before == after {
		return nil
	}
	var changed []*Edit
	m.mu.Lock()
	for _, id := range m.order {
		e := m.edits[id]
		if e.State != EditPending {
			continue
		}
		e.ensureHunks()
		moved := false
		for fi := range e.Files {
			if e.Files[fi].Abs == abs && e.rebaseFile(fi, before, after) {
				moved = true
			}
		}
		if moved {
			changed = append(changed, e.clone())
		}
	}
	m.mu.Unlock()
	var ids []string
	for _, e := range changed {
		ids = append(ids, e.ID)
		m.recordEdit(e)
		if r, ok := m.Run(e.RunID); ok {
			r.send(protocol.RunEvent{Kind: protocol.EventEditUpdated, EditID: e.ID})
		}
	}
	return ids
}

// rebaseFile carries file fi of e from before to after; it reports whether
// anything changed. Called with m.mu held.
func (e *Edit) rebaseFile(fi int, before, after string) bool {
	f := &e.Files[fi]
	if !f.BeforeOK || f.Delete {
		return false // created or deleted whole: all or nothing, checked at accept
	}
	anyOpen := false
	for _, h := range e.Hunks {
		if h.File == fi && h.open() {
			anyOpen = true
		}
	}
	if !anyOpen {
		return false
	}
	expected, _, err := textWith(*f, fi, e.Hunks, Hunk.applied)
	if err != nil || expected != before {
		return false
	}
	user := udiff.Lines(before, after)

	// toExpected maps an offset of the base outside every applied hunk to
	// the expected text.
	toExpected := func(p int) int {
		for _, a := range e.Hunks {
			if a.File == fi && !a.folded && a.applied() && a.change.End <= p {
				p += len(a.change.New) - (a.change.End - a.change.Start)
			}
		}
		return p
	}
	// Plan every hunk's move first: nothing changes unless all are sound.
	type move struct {
		i        int
		state    EditState
		change   udiff.Edit
		conflict *hunkConflict
	}
	var moves []move
	for i := range e.Hunks {
		h := &e.Hunks[i]
		if h.File != fi || h.folded || !h.open() {
			continue
		}
		s := toExpected(h.change.Start)
		t := s + (h.change.End - h.change.Start)
		if s < 0 || t < s || t > len(before) {
			return false
		}
		base, theirs := before[s:t], h.change.New
		if h.conflict != nil {
			base, theirs = h.conflict.base, h.conflict.theirs
		}
		// Grow the region over every user change it overlaps.
		u0, u1 := s, t
		for grown := true; grown; {
			grown = false
			for _, d := range user {
				if overlaps(u0, u1, d) && (d.Start < u0 || d.End > u1) {
					u0, u1, grown = min(u0, d.Start), max(u1, d.End), true
				}
			}
		}
		// The region in the new text: moved by the changes before it,
		// grown or shrunk by those inside it.
		c0, grow := u0, 0
		for _, d := range user {
			delta := len(d.New) - (d.End - d.Start)
			if overlaps(u0, u1, d) {
				grow += delta
			} else if d.End <= u0 {
				c0 += delta
			}
		}
		c1 := c0 + (u1 - u0) + grow
		if u0 < 0 || u1 > len(before) || c0 < 0 || c1 < c0 || c1 > len(after) {
			return false
		}
		base = before[u0:s] + base + before[t:u1]
		theirs = before[u0:s] + theirs + before[t:u1]
		if after[c0:c1] == base {
			// Untouched (or the user's change was undone): acceptable.
			moves = append(moves, move{i: i, state: EditPending, change: udiff.Edit{Start: c0, End: c1, New: theirs}})
		} else {
			moves = append(moves, move{i: i, state: EditConflict, change: udiff.Edit{Start: c0, End: c1}, conflict: &hunkConflict{base: base, theirs: theirs}})
		}
	}
	for _, mv := range moves {
		h := &e.Hunks[mv.i]
		h.State, h.change, h.conflict = mv.state, mv.change, mv.conflict
		if h.State == EditPending {
			h.trim(after)
		}
	}
	// Everything decided is now part of the base (applied) or never
	// applied again (rejected, undone).
	for i := range e.Hunks {
		if h := &e.Hunks[i]; h.File == fi && !h.open() {
			h.folded = true
		}
	}
	f.Before = after
	if proposed, _, err := textWith(*f, fi, e.Hunks, func(h Hunk) bool { return h.State == EditPending }); err == nil {
		f.After = proposed
	}
	e.relabel(fi)
	return true
}

// trim narrows a pending hunk's change to the lines that differ, so its
// diff shows only them.
func (h *Hunk) trim(text string) {
	old := text[h.change.Start:h.change.End]
	eds := udiff.Lines(old, h.change.New)
	if len(eds) != 1 {
		return
	}
	d := eds[0]
	h.change = udiff.Edit{Start: h.change.Start + d.Start, End: h.change.Start + d.End, New: d.New}
}

// overlaps reports whether a user change d touches the region [s, t) of the
// same text. Two insertions at one point overlap (their order is unknown);
// an insertion at a region's edge does not.
func overlaps(s, t int, d udiff.Edit) bool {
	switch {
	case s == t && d.Start == d.End:
		return s == d.Start
	case s == t:
		return d.Start < s && s < d.End
	case d.Start == d.End:
		return s < d.Start && d.Start < t
	}
	return d.Start < t && s < d.End
}

// relabel recomputes the lines and diffs of file fi's open hunks after a
// rebase. It runs on every keystroke in a file with a pending edit, so each
// hunk's diff is computed on the lines around it, not the whole file.
// Called with m.mu held.
func (e *Edit) relabel(fi int) {
	f := e.Files[fi]
	lines := newLineIndex(f.Before)
	shift := 0
	for i := range e.Hunks {
		h := &e.Hunks[i]
		if h.File != fi || h.folded {
			continue
		}
		start := lines.lineOf(h.change.Start)
		oldLines := lineCount(f.Before[h.change.Start:h.change.End])
		h.StartLine, h.EndLine = start, start+oldLines
		if h.State == EditConflict {
			h.NewStartLine, h.NewEndLine = start+shift, start+shift
			if c := h.conflict; c != nil {
				// The change as the model meant it, among the lines around
				// it as they are now.
				around := f.Before[:h.change.Start] + c.base + f.Before[h.change.End:]
				meant := udiff.Edit{Start: h.change.Start, End: h.change.Start + len(c.base), New: c.theirs}
				if diff, err := hunkDiff(f.Rel, around, newLineIndex(around), meant); err == nil {
					h.Diff = diff
				}
			}
			continue
		}
		newLines := lineCount(h.change.New)
		h.NewStartLine, h.NewEndLine = start+shift, start+shift+newLines
		if h.State == EditPending || h.applied() {
			shift += newLines - oldLines
		}
		if h.State == EditPending {
			if diff, err := hunkDiff(f.Rel, f.Before, lines, h.change); err == nil {
				h.Diff = diff
			}
		}
	}
}

// lineIndex holds the offsets of a text's newlines.
type lineIndex struct {
	text string
	nl   []int
}

func newLineIndex(text string) lineIndex {
	li := lineIndex{text: text}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			li.nl = append(li.nl, i)
		}
	}
	return li
}

// lineOf is the 0-based line of a byte offset: the newlines before it.
func (li lineIndex) lineOf(off int) int { return sort.SearchInts(li.nl, off) }

// start is the offset where 0-based line n starts (the text's end past it).
func (li lineIndex) start(n int) int {
	switch {
	case n <= 0:
		return 0
	case n-1 < len(li.nl):
		return li.nl[n-1] + 1
	}
	return len(li.text)
}

// hunkDiff is the unified diff (3 lines of context) of one line-aligned
// change of text, computed on the lines around it, with the line numbers it
// has in the whole text.
func hunkDiff(rel, text string, li lineIndex, c udiff.Edit) (string, error) {
	first := max(0, li.lineOf(c.Start)-3)
	w0, w1 := li.start(first), li.start(li.lineOf(c.End)+4)
	ud, err := udiff.ToUnifiedDiff("a/"+rel, "b/"+rel, text[w0:w1], []udiff.Edit{{Start: c.Start - w0, End: c.End - w0, New: c.New}}, 3)
	if err != nil {
		return "", err
	}
	for _, h := range ud.Hunks {
		h.FromLine += first
		h.ToLine += first
	}
	return ud.String(), nil
}

// RedoHunks recomputes conflicting hunks of a pending edit against the
// file's current text (nil: every conflicting hunk). A hunk whose change
// and the user's touch different characters of its region is merged and
// pending again; the others stay conflicting and are returned, with a
// question that asks the model to redo them against the current text.
func (m *Manager) RedoHunks(id string, idx []int) (protocol.RedoResult, *AskRequest, error) {
	m.loadEdit(id)
	m.mu.Lock()
	e, ok := m.edits[id]
	if !ok {
		m.mu.Unlock()
		return protocol.RedoResult{}, nil, fmt.Errorf("no proposed edit with that id is known")
	}
	e.ensureHunks()
	sel := map[int]bool{}
	for i, h := range e.Hunks {
		if idx == nil && h.State == EditConflict {
			sel[i] = true
		}
	}
	for _, i := range idx {
		if i < 0 || i >= len(e.Hunks) {
			m.mu.Unlock()
			return protocol.RedoResult{}, nil, fmt.Errorf("the edit has no hunk %d (it has %d, numbered from 0)", i, len(e.Hunks))
		}
		if h := e.Hunks[i]; h.State != EditConflict {
			m.mu.Unlock()
			return protocol.RedoResult{}, nil, fmt.Errorf("the change to %s does not conflict with your edits (it is %s)", hunkWhere(h), h.State)
		}
		sel[i] = true
	}
	if len(sel) == 0 {
		m.mu.Unlock()
		return protocol.RedoResult{}, nil, fmt.Errorf("none of the edit's changes conflicts with your edits")
	}
	res := protocol.RedoResult{Recomputed: []int{}, Conflicting: []int{}}
	var stuck []Hunk
	touchedFiles := map[int]bool{}
	for _, i := range sortedKeys(sel) {
		h := &e.Hunks[i]
		f := e.Files[h.File]
		if merged, ok := e.merge3(i); ok {
			h.State, h.conflict = EditPending, nil
			h.change = udiff.Edit{Start: h.change.Start, End: h.change.End, New: merged}
			h.trim(f.Before)
			touchedFiles[h.File] = true
			res.Recomputed = append(res.Recomputed, i)
			continue
		}
		res.Conflicting = append(res.Conflicting, i)
		stuck = append(stuck, *h)
	}
	for fi := range touchedFiles {
		f := &e.Files[fi]
		if proposed, _, err := textWith(*f, fi, e.Hunks, func(h Hunk) bool { return h.State == EditPending }); err == nil {
			f.After = proposed
		}
		e.relabel(fi)
	}
	snap := e.clone()
	m.mu.Unlock()
	if len(res.Recomputed) > 0 {
		m.recordEdit(snap)
		if r, ok := m.Run(e.RunID); ok {
			r.send(protocol.RunEvent{Kind: protocol.EventEditUpdated, EditID: id})
		}
	}
	if len(stuck) == 0 {
		return res, nil, nil
	}
	return res, m.redoRequest(snap, stuck), nil
}

// merge3 merges the user's change and the model's within conflicting hunk
// i's region, character by character; ok is false when they touch the same
// characters or the result would overlap another open hunk. Called with
// m.mu held.
func (e *Edit) merge3(i int) (string, bool) {
	h := e.Hunks[i]
	f := e.Files[h.File]
	if h.conflict == nil {
		return "", false
	}
	for j, o := range e.Hunks {
		if j != i && o.File == h.File && !o.folded && o.open() && o.change.Start < h.change.End && h.change.Start < o.change.End {
			return "", false
		}
	}
	ours := f.Before[h.change.Start:h.change.End]
	merged, ok := udiff.Merge(udiff.Strings(h.conflict.base, ours), udiff.Strings(h.conflict.base, h.conflict.theirs))
	if !ok {
		return "", false
	}
	out, err := udiff.Apply(h.conflict.base, merged)
	if err != nil {
		return "", false
	}
	return out, true
}

// redoRequest is the question that asks the model to redo conflicting hunks
// against the file's current text, in the edit's thread.
func (m *Manager) redoRequest(e *Edit, stuck []Hunk) *AskRequest {
	var b strings.Builder
	b.WriteString("The user changed the file while your proposed change waited, and these parts of it now overlap the user's edits. ")
	b.WriteString("Read the file as it is now and propose each change again against the current text, keeping the user's edits:\n")
	abs, first, lastLine := "", -1, 0
	for _, h := range stuck {
		f := e.Files[h.File]
		if abs == "" {
			abs = f.Abs
		}
		if f.Abs == abs {
			if first < 0 || h.StartLine < first {
				first = h.StartLine
			}
			lastLine = max(lastLine, h.EndLine)
		}
		fmt.Fprintf(&b, "\n%s, now lines %d-%d; the change you meant there:\n```diff\n%s```\n", f.Rel, h.StartLine+1, max(h.EndLine, h.StartLine+1), h.Diff)
	}
	req := &AskRequest{Abs: abs, Question: b.String()}
	if r, ok := m.Run(e.RunID); ok {
		req.ThreadID = r.ThreadID
	}
	return req
}

// SupersedeHunks marks conflicting hunks that a redo run replaces as
// rejected, without telling the model it was a rejection (the redo's
// question says what to do).
func (m *Manager) SupersedeHunks(id string, idx []int) {
	m.mu.Lock()
	e, ok := m.edits[id]
	if !ok {
		m.mu.Unlock()
		return
	}
	for _, i := range idx {
		if i >= 0 && i < len(e.Hunks) && e.Hunks[i].State == EditConflict {
			e.Hunks[i].State, e.Hunks[i].superseded = EditRejected, true
		}
	}
	e.settle()
	snap := e.clone()
	m.mu.Unlock()
	m.recordEdit(snap)
	if r, ok := m.Run(e.RunID); ok {
		r.send(protocol.RunEvent{Kind: protocol.EventEditUpdated, EditID: id})
	}
}

// hunkWhere names a hunk for people: its file and lines (1-based).
func hunkWhere(h Hunk) string {
	if h.EndLine <= h.StartLine+1 {
		return fmt.Sprintf("%s line %d", h.Rel, h.StartLine+1)
	}
	return fmt.Sprintf("%s lines %d-%d", h.Rel, h.StartLine+1, h.EndLine)
}
