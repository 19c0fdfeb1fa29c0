package workspace

import (
	"fmt"

	"go.lsp.dev/uri"
)

// Severity is an LSP DiagnosticSeverity (1 error … 4 hint).
type Severity int

// The LSP severities.
const (
	SeverityError       Severity = 1
	SeverityWarning     Severity = 2
	SeverityInformation Severity = 3
	SeverityHint        Severity = 4
)

// String names the severity as prompts and tools show it. LSP lets a
// server leave the severity out; the client then decides, and editors
// show such a diagnostic as an error, so 0 (and anything unknown) is one.
func (s Severity) String() string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityInformation:
		return "info"
	case SeverityHint:
		return "hint"
	}
	return "error"
}

// Diagnostic is an editor diagnostic: the one type Cairn keeps for it from
// the editor's notification (converted in protocol/lsp.go) to the
// get_diagnostics tool and the prompt.
type Diagnostic struct {
	Path     string   `json:"path"`  // workspace-relative, slash-separated
	Range    Range    `json:"range"` // LSP's: 0-based lines, UTF-16 characters
	Severity Severity `json:"severity"`
	Source   string   `json:"source,omitempty"`
	Code     string   `json:"code,omitempty"` // a number or a string in LSP: kept as text
	Message  string   `json:"message"`
}

// Line is the 1-based line the diagnostic starts on, as prompts show it.
func (d Diagnostic) Line() int { return int(d.Range.Start.Line) + 1 }

// EndLine is the 1-based line the diagnostic ends on.
func (d Diagnostic) EndLine() int { return int(d.Range.End.Line) + 1 }

// FileURI returns the file:// URI of an absolute path, encoded as VS Code
// encodes it (go.lsp.dev/uri follows vscode-uri).
func FileURI(abs string) string { return string(uri.File(abs)) }

// URIPath returns the file system path of a file:// URI.
func URIPath(u string) (string, error) {
	path, _, err := URIPathFragment(u)
	return path, err
}

// URIPathFragment returns the file system path of a file:// URI and its
// fragment (the part after '#', decoded), which clients use for line
// ranges.
func URIPathFragment(u string) (path, fragment string, err error) {
	if u == "" {
		return "", "", fmt.Errorf("no uri given")
	}
	parsed, err := uri.ParseStrict(u)
	if err != nil {
		return "", "", fmt.Errorf("invalid uri %q: %w", u, err)
	}
	if !parsed.IsFile() {
		return "", "", fmt.Errorf("uri %q is not a file:// uri", u)
	}
	return parsed.FsPath(), parsed.Fragment(), nil
}
