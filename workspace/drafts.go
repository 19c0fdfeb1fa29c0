package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Draft is one file as a run proposes to change it. Drafts are never written
// to disk by the agent: they reach the user's files only through the editor,
// after the user accepts.
type Draft struct {
	Abs        string
	Rel        string
	Base       string // text when the run first touched the file
	BaseExists bool
	Text       string
	Deleted    bool
}

// Drafts is a run's overlay of proposed file contents, read back by the
// run's own tools so the agent sees its proposals.
type Drafts struct {
	mu    sync.Mutex
	ws    *Workspace
	files map[string]*Draft
}

// NewDrafts returns an empty overlay over ws.
func NewDrafts(ws *Workspace) *Drafts { return &Drafts{ws: ws, files: map[string]*Draft{}} }

// Read returns the text the run sees: its draft, else the editor's, else disk.
func (d *Drafts) Read(abs string) (text string, exists bool, err error) {
	d.mu.Lock()
	if dr, ok := d.files[abs]; ok {
		d.mu.Unlock()
		return dr.Text, !dr.Deleted, nil
	}
	d.mu.Unlock()
	return d.ws.ReadFile(abs)
}

// Open returns a reader of the text the run sees (as Read), streaming from
// disk when neither a draft nor the editor holds the file, so a part of a
// huge file can be read without loading it.
func (d *Drafts) Open(abs string) (io.ReadCloser, bool, error) {
	d.mu.Lock()
	if dr, ok := d.files[abs]; ok {
		d.mu.Unlock()
		return io.NopCloser(strings.NewReader(dr.Text)), !dr.Deleted, nil
	}
	d.mu.Unlock()
	if text, ok := d.ws.Docs.Text(abs); ok {
		return io.NopCloser(strings.NewReader(text)), true, nil
	}
	f, err := os.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", d.ws.Rel(abs), err)
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, false, fmt.Errorf("%s is a directory", d.ws.Rel(abs))
	}
	return f, true, nil
}

// Write records newText as the run's proposal for abs and returns the text it
// replaced in the run's view (the previous draft, or the current file).
func (d *Drafts) Write(abs, newText string) (prev string, prevExists bool, err error) {
	prev, prevExists, err = d.Read(abs)
	if err != nil {
		return "", false, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	dr, ok := d.files[abs]
	if !ok {
		dr = &Draft{Abs: abs, Rel: d.ws.Rel(abs), Base: prev, BaseExists: prevExists}
		d.files[abs] = dr
	}
	dr.Text = newText
	dr.Deleted = false
	return prev, prevExists, nil
}

// Forget drops the run's draft of abs (after its edit was rejected).
func (d *Drafts) Forget(abs string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.files, abs)
}

// All returns the drafts in path order.
func (d *Drafts) All() []Draft {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Draft, 0, len(d.files))
	for _, dr := range d.files {
		out = append(out, *dr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return out
}

// TextEdit replaces Range with NewText (LSP semantics).
type TextEdit struct {
	Range   Range
	NewText string
}

// TextEdits computes the minimal LSP edits that turn before into after, with
// positions in UTF-16 units of before.
func TextEdits(before, after string) []TextEdit {
	edits := udiff.Strings(before, after)
	m := NewMapper(before)
	out := make([]TextEdit, 0, len(edits))
	for _, e := range edits {
		out = append(out, TextEdit{
			Range:   Range{Start: m.Position(e.Start), End: m.Position(e.End)},
			NewText: e.New,
		})
	}
	return out
}

// ApplyTextEdits applies LSP edits to text, as an editor does: every range
// is in UTF-16 units of the original text, and edits may not overlap.
func ApplyTextEdits(text string, edits []TextEdit) (string, error) {
	m := NewMapper(text)
	type span struct {
		start, end int
		newText    string
	}
	spans := make([]span, 0, len(edits))
	for _, e := range edits {
		s, err := m.Offset(e.Range.Start)
		if err != nil {
			return "", err
		}
		en, err := m.Offset(e.Range.End)
		if err != nil {
			return "", err
		}
		if en < s {
			return "", fmt.Errorf("an edit ends before it starts")
		}
		spans = append(spans, span{s, en, e.NewText})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start > spans[j].start })
	for i, sp := range spans {
		if i > 0 && sp.end > spans[i-1].start {
			return "", fmt.Errorf("overlapping edits")
		}
		text = text[:sp.start] + sp.newText + text[sp.end:]
	}
	return text, nil
}

// UnifiedDiff renders a unified diff of one file with 3 lines of context.
func UnifiedDiff(rel, before, after string) string {
	return udiff.Unified("a/"+rel, "b/"+rel, before, after)
}

// Restore puts back a draft recorded earlier (resuming a run): the base is
// the recorded one, not the file's current text.
func (d *Drafts) Restore(dr Draft) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if dr.Rel == "" {
		dr.Rel = d.ws.Rel(dr.Abs)
	}
	c := dr
	d.files[dr.Abs] = &c
}
