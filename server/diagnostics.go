package server

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
)

// diagnosticsStore keeps the diagnostics the editor forwards with
// cairn/didChangeDiagnostics, per file; each notification replaces the
// file's earlier ones.
type diagnosticsStore struct {
	mu     sync.Mutex
	byPath map[string][]tools.Diagnostic
}

func newDiagnosticsStore() *diagnosticsStore {
	return &diagnosticsStore{byPath: map[string][]tools.Diagnostic{}}
}

// lspDiagnostic is the part of an LSP Diagnostic that Cairn reads.
type lspDiagnostic struct {
	Range    protocol.Range  `json:"range"`
	Severity int             `json:"severity"`
	Code     json.RawMessage `json:"code"`
	Source   string          `json:"source"`
	Message  string          `json:"message"`
}

var severityNames = map[int]string{1: "error", 2: "warning", 3: "info", 4: "hint"}

func (d *diagnosticsStore) set(abs, rel string, raw []json.RawMessage) error {
	var out []tools.Diagnostic
	for i, r := range raw {
		var ld lspDiagnostic
		if err := json.Unmarshal(r, &ld); err != nil {
			return fmt.Errorf("diagnostic %d is not an LSP Diagnostic: %w", i, err)
		}
		sev := severityNames[ld.Severity]
		if sev == "" {
			sev = "error"
		}
		code := ""
		if len(ld.Code) > 0 && string(ld.Code) != "null" {
			var c any
			_ = json.Unmarshal(ld.Code, &c)
			code = fmt.Sprint(c)
		}
		out = append(out, tools.Diagnostic{Path: rel, StartLine: int(ld.Range.Start.Line) + 1, EndLine: int(ld.Range.End.Line) + 1,
			Severity: sev, Source: ld.Source, Code: code, Message: ld.Message})
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
func (d *diagnosticsStore) Diagnostics(abs string) []tools.Diagnostic {
	d.mu.Lock()
	defer d.mu.Unlock()
	if abs != "" {
		return append([]tools.Diagnostic(nil), d.byPath[abs]...)
	}
	var keys []string
	for k := range d.byPath {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []tools.Diagnostic
	for _, k := range keys {
		out = append(out, d.byPath[k]...)
	}
	return out
}

// inRange returns the diagnostics of abs touching 0-based lines [from, to].
func (d *diagnosticsStore) inRange(abs string, from, to int) []tools.Diagnostic {
	var out []tools.Diagnostic
	for _, diag := range d.Diagnostics(abs) {
		if diag.StartLine-1 <= to && diag.EndLine-1 >= from {
			out = append(out, diag)
		}
	}
	return out
}
