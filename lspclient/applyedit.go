package lspclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

// applyEdit applies a WorkspaceEdit the way an editor does: all or nothing,
// refusing a versioned document edit whose version does not match the
// buffer; then it saves the touched files, like a user who accepts and saves
// (unless Options.NoSave).
func (e *Editor) applyEdit(ctx context.Context, raw json.RawMessage) error {
	ops, err := parseEditOps(raw)
	if err != nil {
		return err
	}
	// Compute every new text first, so a failure changes nothing.
	order, texts, err := e.planEdit(ops)
	if err != nil {
		return err
	}
	for _, abs := range order {
		if err := e.writeResult(ctx, texts[abs]); err != nil {
			return err
		}
	}
	var parsed protocol.WorkspaceEdit
	_ = json.Unmarshal(raw, &parsed)
	e.mu.Lock()
	e.applied = append(e.applied, parsed)
	e.mu.Unlock()
	return nil
}

// editOp is one operation of a WorkspaceEdit on one file.
type editOp struct {
	kind    string // edit, create, delete
	abs     string
	version *int32
	edits   []protocol.TextEdit
}

// parseEditOps lists a WorkspaceEdit's operations in the order an editor
// applies them: documentChanges, then changes by URI.
func parseEditOps(raw json.RawMessage) ([]editOp, error) {
	var we struct {
		Changes         map[string][]protocol.TextEdit `json:"changes"`
		DocumentChanges []json.RawMessage              `json:"documentChanges"`
	}
	if err := json.Unmarshal(raw, &we); err != nil {
		return nil, fmt.Errorf("invalid WorkspaceEdit: %w", err)
	}
	var ops []editOp
	for _, dc := range we.DocumentChanges {
		o, err := parseDocumentChange(dc)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o)
	}
	uris := make([]string, 0, len(we.Changes))
	for u := range we.Changes {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	for _, u := range uris {
		abs, err := workspace.URIPath(u)
		if err != nil {
			return nil, err
		}
		ops = append(ops, editOp{kind: "edit", abs: abs, edits: we.Changes[u]})
	}
	return ops, nil
}

// parseDocumentChange reads one entry of documentChanges: a text document
// edit, or a create or delete resource operation.
func parseDocumentChange(dc json.RawMessage) (editOp, error) {
	var probe struct {
		Kind         string `json:"kind"`
		URI          string `json:"uri"`
		TextDocument *struct {
			URI     string `json:"uri"`
			Version *int32 `json:"version"`
		} `json:"textDocument"`
		Edits []protocol.TextEdit `json:"edits"`
	}
	if err := json.Unmarshal(dc, &probe); err != nil {
		return editOp{}, fmt.Errorf("invalid documentChange: %w", err)
	}
	if probe.TextDocument != nil {
		abs, err := workspace.URIPath(probe.TextDocument.URI)
		if err != nil {
			return editOp{}, err
		}
		return editOp{kind: "edit", abs: abs, version: probe.TextDocument.Version, edits: probe.Edits}, nil
	}
	abs, err := workspace.URIPath(probe.URI)
	if err != nil {
		return editOp{}, err
	}
	switch probe.Kind {
	case "create", "delete":
		return editOp{kind: probe.Kind, abs: abs}, nil
	default:
		return editOp{}, fmt.Errorf("unsupported resource operation %q", probe.Kind)
	}
}

// editResult is a file's text once every operation on it is applied.
type editResult struct {
	abs     string
	text    string
	deleted bool
}

// planEdit applies ops in memory, over the buffers and the disk, and
// returns the touched files in first-touched order with their results.
// It changes nothing.
func (e *Editor) planEdit(ops []editOp) ([]string, map[string]*editResult, error) {
	texts := map[string]*editResult{}
	var order []string
	for _, o := range ops {
		cur, exists, err := e.currentText(texts, o.abs)
		if err != nil {
			return nil, nil, err
		}
		if _, ok := texts[o.abs]; !ok {
			order = append(order, o.abs)
		}
		switch o.kind {
		case "create":
			if !exists {
				texts[o.abs] = &editResult{abs: o.abs, text: ""}
			} else {
				texts[o.abs] = &editResult{abs: o.abs, text: cur}
			}
		case "delete":
			texts[o.abs] = &editResult{abs: o.abs, deleted: true}
		case "edit":
			next, err := e.applyTextEdits(o, cur, exists)
			if err != nil {
				return nil, nil, err
			}
			texts[o.abs] = &editResult{abs: o.abs, text: next}
		}
	}
	return order, texts, nil
}

// currentText is abs's text as the edit so far leaves it: the planned
// result, else the open buffer, else the disk; exists is false for a
// file deleted or missing.
func (e *Editor) currentText(texts map[string]*editResult, abs string) (text string, exists bool, err error) {
	if r, ok := texts[abs]; ok {
		return r.text, !r.deleted, nil
	}
	e.mu.Lock()
	b, ok := e.buffers[abs]
	e.mu.Unlock()
	if ok {
		return b.text, true, nil
	}
	data, err := os.ReadFile(abs)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	return string(data), err == nil, err
}

// applyTextEdits applies a text document edit to cur, refusing a missing
// file and a version that is not the open buffer's.
func (e *Editor) applyTextEdits(o editOp, cur string, exists bool) (string, error) {
	if !exists {
		return "", fmt.Errorf("cannot edit %s: it does not exist", o.abs)
	}
	if o.version != nil {
		e.mu.Lock()
		b, open := e.buffers[o.abs]
		e.mu.Unlock()
		if open && b.version != *o.version {
			return "", fmt.Errorf("version mismatch for %s: edit for version %d, buffer is at %d", o.abs, *o.version, b.version)
		}
	}
	next, err := protocol.ApplyTextEdits(cur, o.edits)
	if err != nil {
		return "", fmt.Errorf("applying edits to %s: %w", o.abs, err)
	}
	return next, nil
}

// writeResult makes one planned result real: a deleted file is closed and
// removed; any other is opened in a buffer if it was not, typed into it
// and saved (unless Options.NoSave).
func (e *Editor) writeResult(ctx context.Context, r *editResult) error {
	abs := r.abs
	if r.deleted {
		e.mu.Lock()
		_, open := e.buffers[abs]
		delete(e.buffers, abs)
		e.mu.Unlock()
		if open {
			_ = e.conn.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": workspace.FileURI(abs)}})
		}
		if err := os.Remove(abs); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	e.mu.Lock()
	b, open := e.buffers[abs]
	e.mu.Unlock()
	if !open {
		var err error
		if b, err = e.openForEdit(ctx, abs); err != nil {
			return err
		}
	}
	if b.text != r.text {
		rel, _ := filepath.Rel(e.Root, abs)
		if err := e.Type(ctx, filepath.ToSlash(rel), r.text); err != nil {
			return err
		}
	}
	if e.opts.NoSave {
		return nil
	}
	return e.save(ctx, abs)
}

// openForEdit opens a file that an edit touches in a buffer, as VS Code
// does for an edit to a closed file, creating it (and its directory) when
// missing.
func (e *Editor) openForEdit(ctx context.Context, abs string) (*buffer, error) {
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(abs, nil, 0o644); err != nil {
			return nil, err
		}
	}
	rel, _ := filepath.Rel(e.Root, abs)
	if err := e.Open(ctx, filepath.ToSlash(rel)); err != nil {
		return nil, err
	}
	e.mu.Lock()
	b := e.buffers[abs]
	e.mu.Unlock()
	return b, nil
}
