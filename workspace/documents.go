package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
)

// Document is the editor's live copy of an open file.
type Document struct {
	Path    string // absolute
	Version int32
	Text    string
	Lang    string
}

// Documents is the overlay of files the editor has open, keyed by absolute
// path. The editor's text wins over the disk while a file is open.
type Documents struct {
	mu   sync.RWMutex
	docs map[string]*Document
	// source reads a file as a client holds it when no document is open
	// for it (SetSource); nil reads the disk.
	source func(abs string) (string, bool)
}

// SetSource makes Text ask src for a file no document is open for: an ACP
// client's buffer, read through fs/read_text_file. src says false when the
// client has no text for abs that differs from the disk (or did not
// answer); it may Open the text it returns, so the next read finds it. nil
// removes the source.
func (d *Documents) SetSource(src func(abs string) (text string, ok bool)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.source = src
}

// Text returns the editor's text of abs: the open document, else what the
// source (SetSource) says. ok is false when the disk holds the file's text.
func (d *Documents) Text(abs string) (string, bool) {
	d.mu.RLock()
	// The text is read under the lock: Change writes it in place.
	var text string
	doc, open := d.docs[abs]
	if open {
		text = doc.Text
	}
	src := d.source
	d.mu.RUnlock()
	if open {
		return text, true
	}
	if src == nil {
		return "", false
	}
	text, ok := src(abs)
	if ok && len(text) > MaxFileBytes {
		return "", false
	}
	return text, ok
}

// NewDocuments returns an empty overlay.
func NewDocuments() *Documents { return &Documents{docs: map[string]*Document{}} }

// Open records a newly opened document.
func (d *Documents) Open(path, lang string, version int32, text string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.docs[path] = &Document{Path: path, Version: version, Text: text, Lang: lang}
}

// TextChange is one content change: a replacement of Range, or of the whole
// text when Range is nil.
type TextChange struct {
	Range *Range
	Text  string
}

// Change applies content changes in order and returns the text before and after.
func (d *Documents) Change(path string, version int32, changes []TextChange) (before, after string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	doc, ok := d.docs[path]
	if !ok {
		return "", "", fmt.Errorf("didChange for %s, which is not open", path)
	}
	before = doc.Text
	text := doc.Text
	for i, c := range changes {
		if c.Range == nil {
			text = c.Text
			continue
		}
		m := NewMapper(text)
		start, err1 := m.Offset(c.Range.Start)
		end, err2 := m.Offset(c.Range.End)
		if err := errors.Join(err1, err2); err != nil {
			return before, doc.Text, fmt.Errorf("applying change %d to %s: %w", i, path, err)
		}
		if end < start {
			return before, doc.Text, fmt.Errorf("applying change %d to %s: range end before start", i, path)
		}
		text = text[:start] + c.Text + text[end:]
	}
	doc.Text = text
	doc.Version = version
	return before, text, nil
}

// Close forgets a document; the disk is authoritative again.
func (d *Documents) Close(path string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.docs, path)
}

// Get returns a copy of the open document at path.
func (d *Documents) Get(path string) (Document, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	doc, ok := d.docs[path]
	if !ok {
		return Document{}, false
	}
	return *doc, true
}

// All returns copies of every open document.
func (d *Documents) All() []Document {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]Document, 0, len(d.docs))
	for _, doc := range d.docs {
		out = append(out, *doc)
	}
	return out
}

// ReadFile returns the current text of an absolute path: the editor's copy
// when open (or when the Docs source has it), else the disk. exists is false when neither has it.
func (w *Workspace) ReadFile(abs string) (text string, exists bool, err error) {
	if text, ok := w.Docs.Text(abs); ok {
		return text, true, nil
	}
	f, err := os.Open(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading %s: %w", w.Rel(abs), err)
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		if size = st.Size(); size > MaxFileBytes {
			return "", true, fmt.Errorf("%s is %s; Cairn reads whole files only up to %s (read_file reads a line range of any size): %w",
				w.Rel(abs), byteSize(size), byteSize(MaxFileBytes), ErrTooLarge)
		}
	}
	// Read into a string of the file's size (and a little over, to see
	// its end, or that it grew) through a pooled buffer: a context build
	// reads dozens of files, and growing a buffer from 512 bytes then
	// copying it into a string was most of what that allocated.
	var sb strings.Builder
	sb.Grow(int(size) + 512)
	buf := copyBufs.Get().(*[]byte)
	_, err = io.CopyBuffer(&sb, io.LimitReader(f, MaxFileBytes+1), *buf)
	copyBufs.Put(buf)
	if err != nil {
		return "", false, fmt.Errorf("reading %s: %w", w.Rel(abs), err)
	}
	if sb.Len() > MaxFileBytes {
		return "", true, fmt.Errorf("%s grew past %s while it was read: %w", w.Rel(abs), byteSize(MaxFileBytes), ErrTooLarge)
	}
	return sb.String(), true, nil
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// MaxFileBytes is the largest file read whole (context, edits, undo): a
// bigger one is refused with ErrTooLarge rather than loaded into memory.
const MaxFileBytes = 16 << 20

// ErrTooLarge is wrapped when a file exceeds MaxFileBytes.
var ErrTooLarge = errors.New("file too large")

// byteSize renders a size for people: "1.0 GB", "16 MB", "512 bytes".
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Hash is the content hash used everywhere a file's state is recorded
// (checkpoints, caches): hex SHA-256.
func Hash(text string) string {
	s := sha256.Sum256([]byte(text))
	return hex.EncodeToString(s[:])
}
