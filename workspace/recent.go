package workspace

import (
	"sync"
	"time"
)

// RecentEdit is one change the user made in the editor.
type RecentEdit struct {
	Path   string // absolute
	Before string
	After  string
	At     time.Time
}

// RecentEdits is a bounded history of the user's own edits, newest last.
// Consecutive edits to the same file are merged so the history shows intent,
// not keystrokes.
type RecentEdits struct {
	mu    sync.Mutex
	max   int
	edits []RecentEdit
}

// NewRecentEdits keeps at most max entries.
func NewRecentEdits(max int) *RecentEdits { return &RecentEdits{max: max} }

// Record adds an edit, merging it with the previous one for the same file
// when that was within a minute.
func (r *RecentEdits) Record(path, before, after string, at time.Time) {
	if before == after {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.edits); n > 0 {
		last := &r.edits[n-1]
		if last.Path == path && at.Sub(last.At) < time.Minute {
			last.After = after
			last.At = at
			if last.Before == last.After {
				r.edits = r.edits[:n-1]
			}
			return
		}
	}
	r.edits = append(r.edits, RecentEdit{Path: path, Before: before, After: after, At: at})
	if len(r.edits) > r.max {
		r.edits = append([]RecentEdit(nil), r.edits[len(r.edits)-r.max:]...)
	}
}

// Newest returns up to n edits, newest first.
func (r *RecentEdits) Newest(n int) []RecentEdit {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []RecentEdit
	for i := len(r.edits) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, r.edits[i])
	}
	return out
}
