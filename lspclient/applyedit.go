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
	var we struct {
		Changes         map[string][]protocol.TextEdit `json:"changes"`
		DocumentChanges []json.RawMessage              `json:"documentChanges"`
	}
	if err := json.Unmarshal(raw, &we); err != nil {
		return fmt.Errorf("invalid WorkspaceEdit: %w", err)
	}
	type op struct {
		kind    string // edit, create, delete
		abs     string
		version *int32
		edits   []protocol.TextEdit
	}
	var ops []op
	for _, dc := range we.DocumentChanges {
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
			return fmt.Errorf("invalid documentChange: %w", err)
		}
		if probe.TextDocument != nil {
			abs, err := workspace.URIPath(probe.TextDocument.URI)
			if err != nil {
				return err
			}
			ops = append(ops, op{kind: "edit", abs: abs, version: probe.TextDocument.Version, edits: probe.Edits})
			continue
		}
		abs, err := workspace.URIPath(probe.URI)
		if err != nil {
			return err
		}
		switch probe.Kind {
		case "create", "delete":
			ops = append(ops, op{kind: probe.Kind, abs: abs})
		default:
			return fmt.Errorf("unsupported resource operation %q", probe.Kind)
		}
	}
	uris := make([]string, 0, len(we.Changes))
	for u := range we.Changes {
		uris = append(uris, u)
	}
	sort.Strings(uris)
	for _, u := range uris {
		abs, err := workspace.URIPath(u)
		if err != nil {
			return err
		}
		ops = append(ops, op{kind: "edit", abs: abs, edits: we.Changes[u]})
	}

	// Compute every new text first, so a failure changes nothing.
	type result struct {
		abs     string
		text    string
		deleted bool
	}
	texts := map[string]*result{}
	var order []string
	current := func(abs string) (string, bool, error) {
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
	for _, o := range ops {
		cur, exists, err := current(o.abs)
		if err != nil {
			return err
		}
		if _, ok := texts[o.abs]; !ok {
			order = append(order, o.abs)
		}
		switch o.kind {
		case "create":
			if !exists {
				texts[o.abs] = &result{abs: o.abs, text: ""}
			} else {
				texts[o.abs] = &result{abs: o.abs, text: cur}
			}
		case "delete":
			texts[o.abs] = &result{abs: o.abs, deleted: true}
		case "edit":
			if !exists {
				return fmt.Errorf("cannot edit %s: it does not exist", o.abs)
			}
			if o.version != nil {
				e.mu.Lock()
				b, open := e.buffers[o.abs]
				e.mu.Unlock()
				if open && b.version != *o.version {
					return fmt.Errorf("version mismatch for %s: edit for version %d, buffer is at %d", o.abs, *o.version, b.version)
				}
			}
			next, err := protocol.ApplyTextEdits(cur, o.edits)
			if err != nil {
				return fmt.Errorf("applying edits to %s: %w", o.abs, err)
			}
			texts[o.abs] = &result{abs: o.abs, text: next}
		}
	}
	for _, abs := range order {
		r := texts[abs]
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
			continue
		}
		e.mu.Lock()
		b, open := e.buffers[abs]
		e.mu.Unlock()
		if !open {
			// Like VS Code, an edit to a closed file opens it in a buffer.
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
				return err
			}
			if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
				if err := os.WriteFile(abs, nil, 0o644); err != nil {
					return err
				}
			}
			rel, _ := filepath.Rel(e.Root, abs)
			if err := e.Open(ctx, filepath.ToSlash(rel)); err != nil {
				return err
			}
			e.mu.Lock()
			b = e.buffers[abs]
			e.mu.Unlock()
		}
		if b.text != r.text {
			rel, _ := filepath.Rel(e.Root, abs)
			if err := e.Type(ctx, filepath.ToSlash(rel), r.text); err != nil {
				return err
			}
		}
		if e.opts.NoSave {
			continue
		}
		if err := e.save(ctx, abs); err != nil {
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
