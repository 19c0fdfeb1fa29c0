package agent

import (
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/cairn-dev/cairn/tools"
)

// Hunks are the unit of review: each contiguous run of changed lines of a
// proposed edit is accepted or rejected on its own. A hunk is a line-aligned
// replacement in the file's text before the edit, so any subset of a file's
// hunks applies to that text exactly (byte for byte).

// Hunk is one hunk of an edit and the user's decision on it.
type Hunk struct {
	Index int // across the edit's files, in file order
	File  int // index into Edit.Files
	Rel   string
	// StartLine and EndLine are 0-based, half-open, in the text before the
	// edit; NewStartLine and NewEndLine in the proposed text.
	StartLine, EndLine       int
	NewStartLine, NewEndLine int
	Diff                     string
	State                    EditState
	CheckpointID             string
	Undone                   bool // its checkpoint was undone since

	change udiff.Edit // byte offsets into the file's Before; unused for whole-file hunks
	whole  bool       // the file is created or deleted: one hunk, all or nothing
	// folded: decided before a rebase (rebase.go), so its change is part of
	// the file's Before (accepted) or never applied (rejected, undone).
	folded bool
	// conflict is set while State is EditConflict: change.Start..End is
	// then the region of Before the hunk stands for, change.New unused.
	conflict *hunkConflict
	// superseded: rejected because a redo run replaces it (RedoHunks), not
	// because the user refused the change.
	superseded bool
}

// splitHunks computes the hunks of an edit's files, numbered from 0.
func splitHunks(files []tools.FileChange) []Hunk {
	var out []Hunk
	for fi, f := range files {
		if !f.BeforeOK || f.Delete {
			// Creating or deleting a file is one decision.
			after := f.After
			if f.Delete {
				after = ""
			}
			out = append(out, Hunk{Index: len(out), File: fi, Rel: f.Rel, EndLine: lineCount(f.Before), NewEndLine: lineCount(after),
				Diff: udiff.Unified("a/"+f.Rel, "b/"+f.Rel, f.Before, after), State: EditPending, whole: true})
			continue
		}
		shift := 0 // lines added minus removed by the hunks so far
		for _, c := range udiff.Lines(f.Before, f.After) {
			start := strings.Count(f.Before[:c.Start], "\n")
			oldLines, newLines := lineCount(f.Before[c.Start:c.End]), lineCount(c.New)
			diff, err := udiff.ToUnified("a/"+f.Rel, "b/"+f.Rel, f.Before, []udiff.Edit{c}, 3)
			if err != nil {
				diff = fmt.Sprintf("(no diff: %v)\n", err)
			}
			out = append(out, Hunk{Index: len(out), File: fi, Rel: f.Rel, StartLine: start, EndLine: start + oldLines,
				NewStartLine: start + shift, NewEndLine: start + shift + newLines, Diff: diff, State: EditPending, change: c})
			shift += newLines - oldLines
		}
	}
	return out
}

// lineCount counts lines, the last one with or without a newline.
func lineCount(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// textWith returns file fi's text with the hunks for which keep is true
// applied to its base, and whether the file then exists.
func textWith(f tools.FileChange, fi int, hunks []Hunk, keep func(Hunk) bool) (string, bool, error) {
	var changes []udiff.Edit
	for _, h := range hunks {
		if h.File != fi || h.folded || h.State == EditConflict || !keep(h) {
			continue
		}
		if h.whole {
			return f.After, !f.Delete, nil
		}
		changes = append(changes, h.change)
	}
	if len(changes) == 0 {
		return f.Before, f.BeforeOK, nil
	}
	text, err := udiff.Apply(f.Before, changes)
	if err != nil {
		return "", false, fmt.Errorf("applying hunks to %s: %w", f.Rel, err)
	}
	return text, true, nil
}

// applied reports whether a hunk's change is in the user's file: accepted
// and not undone since.
func (h Hunk) applied() bool { return h.State == EditAccepted && !h.Undone }

// decided reports whether every hunk has been accepted or rejected.
func decided(hunks []Hunk) bool {
	for _, h := range hunks {
		if h.open() {
			return false
		}
	}
	return true
}
