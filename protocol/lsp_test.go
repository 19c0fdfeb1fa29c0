package protocol

import (
	"encoding/json"
	"reflect"
	"testing"

	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/workspace"
)

// Every Cairn edge value survives the trip to LSP's types and back, on the
// Go side and through the JSON an editor sends.
func TestEdgeTypesRoundTrip(t *testing.T) {
	diags := []workspace.Diagnostic{
		{Path: "a/b.go", Range: workspace.Range{Start: workspace.Position{Line: 4, Character: 20}, End: workspace.Position{Line: 4, Character: 23}},
			Severity: workspace.SeverityError, Source: "compiler", Code: "UndeclaredName", Message: "undefined: nme"},
		{Path: "a/b.go", Range: workspace.Range{End: workspace.Position{Line: 1}}, Severity: workspace.SeverityHint, Code: "1002", Message: "𝒳 unused"},
		{Path: "c.py", Severity: workspace.SeverityWarning, Message: "line too long"},
	}
	for _, d := range diags {
		if got := DiagnosticFromLSP(d.Path, DiagnosticToLSP(d)); !reflect.DeepEqual(got, d) {
			t.Errorf("Go round trip:\n got %+v\nwant %+v", got, d)
		}
		raw, err := EncodeDiagnostic(d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeDiagnostic(d.Path, raw)
		if err != nil || !reflect.DeepEqual(got, d) {
			t.Errorf("JSON round trip via %s:\n got %+v, %v\nwant %+v", raw, got, err, d)
		}
		if r := RangeFromLSP(RangeToLSP(d.Range)); r != d.Range {
			t.Errorf("range round trip: %+v, want %+v", r, d.Range)
		}
	}
	// A numeric code goes out as a JSON number, as servers send it.
	raw, _ := EncodeDiagnostic(diags[1])
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m["code"] != float64(1002) || m["message"] != "𝒳 unused" || m["severity"] != float64(4) {
		t.Errorf("encoded diagnostic = %s (%v)", raw, err)
	}
}

// What editors send: codes as numbers or strings, markup messages, an
// absent severity, fields Cairn does not read.
func TestDecodeDiagnosticFromEditors(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want workspace.Diagnostic
	}{
		{`{"range":{"start":{"line":2,"character":1},"end":{"line":3,"character":0}},"severity":2,"code":42,"source":"vet","message":"unreachable code","tags":[1],"data":{"x":1}}`,
			workspace.Diagnostic{Path: "p.go", Range: workspace.Range{Start: workspace.Position{Line: 2, Character: 1}, End: workspace.Position{Line: 3}},
				Severity: workspace.SeverityWarning, Source: "vet", Code: "42", Message: "unreachable code"}},
		{`{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":5}},"message":{"kind":"markdown","value":"**bad**"}}`,
			workspace.Diagnostic{Path: "p.go", Range: workspace.Range{End: workspace.Position{Character: 5}}, Message: "**bad**"}},
	} {
		got, err := DecodeDiagnostic("p.go", []byte(tc.raw))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("DecodeDiagnostic(%s) = %+v, %v\nwant %+v", tc.raw, got, err, tc.want)
		}
		if got.Severity.String() != map[workspace.Severity]string{0: "error", 2: "warning"}[tc.want.Severity] {
			t.Errorf("severity %d reads %q", got.Severity, got.Severity)
		}
	}
	if _, err := DecodeDiagnostic("p.go", []byte(`{"range":"nope"}`)); err == nil {
		t.Error("a malformed diagnostic was accepted")
	}
}

// protocol's wire position is LSP's, field for field.
func TestWirePositionIsLSPs(t *testing.T) {
	r := Range{Start: Position{Line: 1, Character: 2}, End: Position{Line: 3, Character: 4}}
	a, _ := json.Marshal(r)
	b, _ := json.Marshal(RangeToLSP(r))
	if string(a) != string(b) {
		t.Errorf("wire %s, LSP %s", a, b)
	}
	var back lsp.Range
	if err := json.Unmarshal(a, &back); err != nil || RangeFromLSP(back) != r {
		t.Errorf("decoded %+v, %v", back, err)
	}
}
