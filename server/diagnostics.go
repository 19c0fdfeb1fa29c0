package server

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

// diagnosticsStore keeps the diagnostics the editor forwards with
// cairn/didChangeDiagnostics, per file; each notification replaces the
// file's earlier ones.
type diagnosticsStore struct {
	mu     sync.Mutex
	byPath map[string][]workspace.Diagnostic
}

func newDiagnosticsStore() *diagnosticsStore {
	return &diagnosticsStore{byPath: map[string][]workspace.Diagnostic{}}
}

func (d *diagnosticsStore) set(abs, rel string, raw []json.RawMessage) error {
	var out []workspace.Diagnostic
	for i, r := range raw {
		diag, err := protocol.DecodeDiagnostic(rel, r)
		if err != nil {
			return fmt.Errorf("diagnostic %d: %w", i, err)
		}
		out = append(out, diag)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(out) == 0 {
		delete(d.byPath, abs)
	} else {
		d.byPath[abs] = out
	}
	return nil
}

// Diagnostics implements tools.DiagnosticsSource.
func (d *diagnosticsStore) Diagnostics(abs string) []workspace.Diagnostic {
	d.mu.Lock()
	defer d.mu.Unlock()
	if abs != "" {
		return append([]workspace.Diagnostic(nil), d.byPath[abs]...)
	}
	var keys []string
	for k := range d.byPath {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []workspace.Diagnostic
	for _, k := range keys {
		out = append(out, d.byPath[k]...)
	}
	return out
}

// inRange returns the diagnostics of abs touching 0-based lines [from, to].
func (d *diagnosticsStore) inRange(abs string, from, to int) []workspace.Diagnostic {
	var out []workspace.Diagnostic
	for _, diag := range d.Diagnostics(abs) {
		if int(diag.Range.Start.Line) <= to && int(diag.Range.End.Line) >= from {
			out = append(out, diag)
		}
	}
	return out
}
