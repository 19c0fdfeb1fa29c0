package protocol

import (
	"fmt"
	"strconv"

	jsonv2 "github.com/go-json-experiment/json"
	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/workspace"
)

// This file is the one place where Cairn's edge types (workspace.Position,
// Range, Diagnostic) and go.lsp.dev/protocol's meet, as gopls keeps its
// conversions in its protocol package. Positions are UTF-16 on both sides:
// converting never re-counts characters (workspace.Mapper does that).

// PositionToLSP converts a Cairn position to LSP's.
func PositionToLSP(p workspace.Position) lsp.Position {
	return lsp.Position{Line: p.Line, Character: p.Character}
}

// PositionFromLSP converts an LSP position to Cairn's.
func PositionFromLSP(p lsp.Position) workspace.Position {
	return workspace.Position{Line: p.Line, Character: p.Character}
}

// RangeToLSP converts a Cairn range to LSP's.
func RangeToLSP(r workspace.Range) lsp.Range {
	return lsp.Range{Start: PositionToLSP(r.Start), End: PositionToLSP(r.End)}
}

// RangeFromLSP converts an LSP range to Cairn's.
func RangeFromLSP(r lsp.Range) workspace.Range {
	return workspace.Range{Start: PositionFromLSP(r.Start), End: PositionFromLSP(r.End)}
}

// DiagnosticFromLSP converts an LSP diagnostic of the file at path
// (workspace-relative) to Cairn's. A markup message keeps its text; a
// numeric code becomes its decimal text.
func DiagnosticFromLSP(path string, d lsp.Diagnostic) workspace.Diagnostic {
	out := workspace.Diagnostic{Path: path, Range: RangeFromLSP(d.Range), Severity: workspace.Severity(d.Severity)}
	if src, ok := d.Source.Get(); ok {
		out.Source = src
	}
	switch c := d.Code.(type) {
	case lsp.Integer:
		out.Code = strconv.FormatInt(int64(c), 10)
	case lsp.String:
		out.Code = string(c)
	}
	switch m := d.Message.(type) {
	case lsp.String:
		out.Message = string(m)
	case *lsp.MarkupContent:
		if m != nil {
			out.Message = m.Value
		}
	}
	return out
}

// DiagnosticToLSP converts a Cairn diagnostic to LSP's (its path goes in
// the URI of the notification that carries it). A code that is a number
// goes out as one.
func DiagnosticToLSP(d workspace.Diagnostic) lsp.Diagnostic {
	out := lsp.Diagnostic{Range: RangeToLSP(d.Range), Severity: lsp.DiagnosticSeverity(d.Severity), Message: lsp.String(d.Message)}
	if d.Source != "" {
		out.Source = lsp.NewOptional(d.Source)
	}
	if d.Code != "" {
		if n, err := strconv.ParseInt(d.Code, 10, 32); err == nil && strconv.FormatInt(n, 10) == d.Code {
			out.Code = lsp.Integer(n)
		} else {
			out.Code = lsp.String(d.Code)
		}
	}
	return out
}

// DecodeDiagnostic decodes one LSP Diagnostic object of the file at path,
// as cairn/didChangeDiagnostics carries them (raw, so that any server's
// extra fields pass through the notification).
func DecodeDiagnostic(path string, raw []byte) (workspace.Diagnostic, error) {
	var d lsp.Diagnostic
	if err := jsonv2.Unmarshal(raw, &d); err != nil {
		return workspace.Diagnostic{}, fmt.Errorf("not an LSP Diagnostic: %w", err)
	}
	return DiagnosticFromLSP(path, d), nil
}

// EncodeDiagnostic encodes a Cairn diagnostic as an LSP Diagnostic object.
func EncodeDiagnostic(d workspace.Diagnostic) ([]byte, error) {
	return jsonv2.Marshal(DiagnosticToLSP(d))
}
