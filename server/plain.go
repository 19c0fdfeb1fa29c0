package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

// A client that does not declare capabilities.experimental.cairn.runEvents
// (eglot, Helix, Zed's LSP, …) never shows cairn/runEvent. It gets each
// run's answer as a Markdown document opened with window/showDocument
// (client capability window.showDocument.support), else as
// window/showMessage, and each proposed edit as code actions at the edited
// ranges (codeaction.go). Nothing here is sent to a Cairn client.

// showDocumentWait bounds the wait for the client's answer to showDocument.
const showDocumentWait = 30 * time.Second

// maxMessageAnswer bounds the answer shown in a window/showMessage.
const maxMessageAnswer = 4000

// plainRun collects what a plain client is shown at the end of one run.
type plainRun struct {
	s     *Server
	mu    sync.Mutex
	q     string
	edits []string // edit ids proposed
}

// runEmitter returns the function that delivers a run's events to this
// client: cairn/runEvent, the progress report, and for a plain client the
// answer document; and abort, which ends the progress of a run that could
// not start.
func (s *Server) runEmitter(question string) (emit func(protocol.RunEvent), abort func()) {
	progress := s.newRunProgress(question)
	s.mu.Lock()
	plain := !s.caps.cairnClient
	s.mu.Unlock()
	var pr *plainRun
	if plain {
		pr = &plainRun{s: s, q: question}
	}
	emit = func(ev protocol.RunEvent) {
		s.notifyRunEvent(ev)
		if progress != nil {
			switch {
			case ev.Kind == protocol.EventStarted:
				s.runProgress.Store(ev.RunID, progress)
			case isTerminal(ev.Kind):
				s.runProgress.Delete(ev.RunID)
			}
		}
		progress.send(ev)
		if pr != nil {
			pr.event(ev)
		}
	}
	return emit, func() { progress.send(protocol.RunEvent{Kind: protocol.EventFailed}) }
}

func (p *plainRun) event(ev protocol.RunEvent) {
	switch ev.Kind {
	case protocol.EventStarted:
		p.mu.Lock()
		if ev.Question != "" {
			p.q = ev.Question
		}
		p.mu.Unlock()
	case protocol.EventEditProposed:
		p.mu.Lock()
		p.edits = append(p.edits, ev.EditID)
		p.mu.Unlock()
	case protocol.EventFinished:
		p.mu.Lock()
		q, edits := p.q, append([]string(nil), p.edits...)
		p.mu.Unlock()
		// Off the run's goroutine: the client's answer may take a while.
		go p.s.showAnswer(ev.RunID, q, ev.Answer, edits)
	case protocol.EventFailed:
		p.s.showMessage(lsp.MessageTypeError, fmt.Sprintf("Cairn: the run failed (%s): %s", ev.Class, ev.Error))
	case protocol.EventCancelled:
		p.s.showMessage(lsp.MessageTypeInfo, "Cairn: the run was cancelled: "+ev.Error)
	}
}

// showAnswer writes the answer document and shows it, or shows the answer
// as a message when the client cannot open documents.
func (s *Server) showAnswer(runID, question, answer string, editIDs []string) {
	s.mu.Lock()
	mgr, stateDir, canShow := s.mgr, s.stateDir, s.caps.showDocument
	s.mu.Unlock()
	var edits []*protocol.GetEditResult
	for _, id := range editIDs {
		if v, err := mgr.EditView(id); err == nil {
			edits = append(edits, v)
		}
	}
	doc := answerMarkdown(question, answer, edits)
	if canShow {
		path, err := writeAnswer(stateDir, runID, doc)
		if err == nil {
			ctx, cancel := context.WithTimeout(s.ctx, showDocumentWait)
			defer cancel()
			params := map[string]any{"uri": workspace.FileURI(path), "takeFocus": true}
			var raw jsonrpc2.RawMessage
			_, err = s.conn.Call(ctx, "window/showDocument", params, &raw)
			var res struct {
				Success bool `json:"success"`
			}
			if err == nil && json.Unmarshal(raw, &res) == nil && res.Success {
				return
			}
			if err == nil {
				err = fmt.Errorf("the client did not open it")
			}
		}
		slog.Warn("showing the answer document failed; sending it as a message", "run", runID, "err", err)
	}
	msg := strings.TrimSpace(answer)
	if len(msg) > maxMessageAnswer {
		cut := maxMessageAnswer
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut-- // never split a character
		}
		msg = msg[:cut] + "… (cut; the whole answer is in the run's trace)"
	}
	if len(edits) > 0 {
		msg += fmt.Sprintf("\n\nCairn proposed %d edit(s): use the code actions %q or %q on the changed lines.", len(edits), protocol.TitleAcceptEdit, protocol.TitleRejectEdit)
	}
	s.showMessage(lsp.MessageTypeInfo, "Cairn: "+msg)
}

// writeAnswer stores an answer document under <state>/answers/.
func writeAnswer(stateDir, runID, doc string) (string, error) {
	if !agent.ValidThreadID(runID) { // the same shape as run ids: it names a file
		return "", fmt.Errorf("invalid run id %q", runID)
	}
	dir := filepath.Join(stateDir, "answers")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	path := filepath.Join(dir, runID+".md")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		return "", fmt.Errorf("writing the answer: %w", err)
	}
	return path, nil
}

// answerMarkdown renders a run's answer with its proposed edits.
func answerMarkdown(question, answer string, edits []*protocol.GetEditResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Cairn\n\n> %s\n\n%s\n", strings.ReplaceAll(strings.TrimSpace(question), "\n", "\n> "), strings.TrimSpace(answer))
	if len(edits) == 0 {
		return b.String()
	}
	fmt.Fprintf(&b, "\n## Proposed edits\n\nNothing is applied yet. On the changed lines, run the code action **%s** or **%s**.\n",
		protocol.TitleAcceptEdit, protocol.TitleRejectEdit)
	for _, e := range edits {
		fmt.Fprintf(&b, "\n### Edit %s\n\n```diff\n%s```\n", e.EditID, e.Diff)
	}
	return b.String()
}

// Titles of the per-hunk actions, offered before the whole-edit ones.
const (
	titleAcceptHunk = "Accept this hunk of Cairn's edit…"
	titleRejectHunk = "Reject this hunk of Cairn's edit…"
)

// editActions offers the pending edits whose hunks touch lines from..to
// (0-based, inclusive) of abs as Accept/Reject code actions: first each
// pending hunk that the range touches, then the whole edit (titles fixed by
// the contract). The order matters: eglot and other clients make the first
// action (none is marked preferred) the default a bare RET picks, and that
// must never be the one that accepts every hunk of the edit.
func (s *Server) editActions(mgr *agent.Manager, abs string, from, to int) []lsp.CommandOrCodeAction {
	var hunks, whole []lsp.CommandOrCodeAction
	action := func(title, cmd string, ref protocol.EditRef) lsp.CommandOrCodeAction {
		arg, _ := json.Marshal(ref)
		return &lsp.CodeAction{
			Title:   title,
			Command: lsp.Command{Title: title, Command: cmd, Arguments: []lsp.LSPAny{jsontext.Value(arg)}},
		}
	}
	for _, e := range mgr.PendingEdits() {
		var touched []int
		for _, h := range e.Hunks {
			if e.Files[h.File].Abs != abs || h.State != agent.EditPending {
				continue
			}
			end := max(h.EndLine-1, h.StartLine)
			if h.StartLine <= to && end >= from {
				touched = append(touched, h.Index)
			}
		}
		if len(touched) == 0 {
			continue
		}
		for _, i := range touched {
			hunks = append(hunks,
				action(titleAcceptHunk, protocol.CommandAcceptEdit, protocol.EditRef{EditID: e.ID, Hunks: []int{i}}),
				action(titleRejectHunk, protocol.CommandRejectEdit, protocol.EditRef{EditID: e.ID, Hunks: []int{i}}))
		}
		whole = append(whole,
			action(protocol.TitleAcceptEdit, protocol.CommandAcceptEdit, protocol.EditRef{EditID: e.ID}),
			action(protocol.TitleRejectEdit, protocol.CommandRejectEdit, protocol.EditRef{EditID: e.ID}))
	}
	return append(hunks, whole...)
}
