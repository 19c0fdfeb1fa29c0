package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

// The code actions' titles (fixed by the contract) and questions.
const (
	TitleExplain    = "Explain this code"
	TitleFix        = "Fix these diagnostics"
	QuestionExplain = "Explain what the selected code does, how it fits into the surrounding code, and anything surprising about it."
	QuestionFix     = "Fix these diagnostics in the selected code with minimal edits:\n%s"
)

// CodeAction offers "Explain this code" on a non-empty range and "Fix these
// diagnostics" where diagnostics (forwarded or sent in the request's
// context) touch the range. Each carries a cairn.ask command, so a plain LSP
// client can use Cairn.
func (s *Server) CodeAction(ctx context.Context, params *lsp.CodeActionParams) ([]lsp.CommandOrCodeAction, error) {
	s.awaitInitialized(ctx)
	mgr, err := s.ready()
	if err != nil {
		return nil, err
	}
	uri := string(params.TextDocument.URI)
	abs, err := s.pathFromURI(uri)
	if err != nil {
		return nil, nil // not a workspace file: nothing to offer
	}
	r := protocol.RangeFromLSP(params.Range)
	ask := func(title, question string, kind lsp.CodeActionKind) *lsp.CodeAction {
		arg, _ := json.Marshal(protocol.AskParams{URI: uri, Range: &r, Question: question})
		var k *lsp.CodeActionKind
		if kind != lsp.CodeActionKindEmpty {
			k = &kind
		}
		return &lsp.CodeAction{
			Title: title,
			Kind:  k,
			Command: lsp.Command{
				Title:     title,
				Command:   protocol.CommandAsk,
				Arguments: []lsp.LSPAny{jsontext.Value(arg)},
			},
		}
	}
	var actions []lsp.CommandOrCodeAction
	// A bare cursor (an empty range) is what editors send on every cursor
	// move for their lightbulb (VS Code) or on a code-action key without a
	// region (eglot): "Explain" needs code the user picked.
	if r.Start != r.End {
		actions = append(actions, ask(TitleExplain, QuestionExplain, lsp.CodeActionKindEmpty))
	}
	s.mu.Lock()
	plain := !s.caps.cairnClient
	s.mu.Unlock()
	if plain {
		// A plain client reviews proposed edits through code actions.
		actions = append(s.editActions(mgr, abs, int(r.Start.Line), int(r.End.Line)), actions...)
	}

	lines := diagnosticLines(s.diags.inRange(abs, int(r.Start.Line), int(r.End.Line)), s.ws.Rel(abs), params.Context.Diagnostics)
	if len(lines) > 0 {
		actions = append(actions, ask(TitleFix, fmt.Sprintf(QuestionFix, strings.Join(lines, "\n")), lsp.CodeActionKindQuickFix))
	}
	return actions, nil
}

// diagnosticLines lists each diagnostic once for the "Fix" question, the
// forwarded ones first: an editor may forward a diagnostic
// (cairn/didChangeDiagnostics) and send it again in the request's context.
func diagnosticLines(forwarded []workspace.Diagnostic, rel string, inContext []lsp.Diagnostic) []string {
	all := append([]workspace.Diagnostic(nil), forwarded...)
	for _, d := range inContext {
		all = append(all, protocol.DiagnosticFromLSP(rel, d))
	}
	type key struct {
		line    int
		message string
	}
	var lines []string
	seen := map[key]bool{}
	for _, d := range all {
		// The line and message identify it: a copy in the context may
		// lack the severity or source the forwarded one has.
		if k := (key{d.Line(), d.Message}); !seen[k] {
			seen[k] = true
			lines = append(lines, fmt.Sprintf("- line %d: %s: %s", d.Line(), d.Severity, d.Message))
		}
	}
	return lines
}
