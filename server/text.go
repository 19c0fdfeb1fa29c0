package server

import (
	"context"
	"time"

	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

// Text synchronization. These are notifications: they run in wire order on
// the read loop, so the overlay always reflects the editor's sequence.

func (s *Server) DidOpen(ctx context.Context, params *lsp.DidOpenTextDocumentParams) error {
	if s.ws == nil {
		return nil
	}
	abs, err := s.pathFromURI(string(params.TextDocument.URI))
	if err != nil {
		s.logToClient(warnLevel, "didOpen ignored", "uri", params.TextDocument.URI, "err", err)
		return nil
	}
	s.ws.Docs.Open(abs, string(params.TextDocument.LanguageID), params.TextDocument.Version, params.TextDocument.Text)
	return nil
}

func (s *Server) DidChange(ctx context.Context, params *lsp.DidChangeTextDocumentParams) error {
	if s.ws == nil {
		return nil
	}
	abs, err := s.pathFromURI(string(params.TextDocument.URI))
	if err != nil {
		return nil
	}
	var changes []workspace.TextChange
	for _, c := range params.ContentChanges {
		switch ch := c.(type) {
		case *lsp.TextDocumentContentChangePartial:
			r := protocol.RangeFromLSP(ch.Range)
			changes = append(changes, workspace.TextChange{Range: &r, Text: ch.Text})
		case *lsp.TextDocumentContentChangeWholeDocument:
			changes = append(changes, workspace.TextChange{Text: ch.Text})
		}
	}
	before, after, err := s.ws.Docs.Change(abs, params.TextDocument.Version, changes)
	if err != nil {
		s.logToClient(warnLevel, "didChange could not be applied; the document may be out of sync", "err", err)
		return nil
	}
	s.ws.Recent.Record(abs, before, after, time.Now())
	if s.index != nil {
		s.index.DocumentChanged(abs, after)
	}
	s.proposalsFollow(abs, before, after)
	return nil
}

func (s *Server) DidSave(ctx context.Context, params *lsp.DidSaveTextDocumentParams) error {
	if s.ws == nil {
		return nil
	}
	abs, err := s.pathFromURI(string(params.TextDocument.URI))
	if err != nil {
		return nil
	}
	if params.Text != nil {
		if doc, ok := s.ws.Docs.Get(abs); ok && doc.Text != *params.Text {
			if before, after, err := s.ws.Docs.Change(abs, doc.Version, []workspace.TextChange{{Text: *params.Text}}); err == nil {
				s.proposalsFollow(abs, before, after)
			}
		}
	}
	if s.index != nil {
		s.index.DocumentSaved(abs)
	}
	return nil
}

func (s *Server) DidClose(ctx context.Context, params *lsp.DidCloseTextDocumentParams) error {
	if s.ws == nil {
		return nil
	}
	abs, err := s.pathFromURI(string(params.TextDocument.URI))
	if err != nil {
		return nil
	}
	s.ws.Docs.Close(abs)
	return nil
}

// proposalsFollow carries the pending edits of a file the user changed onto
// its new text (agent.Manager.DocumentChanged); each edit it changes sends
// an editUpdated run event.
func (s *Server) proposalsFollow(abs, before, after string) {
	s.mu.Lock()
	mgr := s.mgr
	s.mu.Unlock()
	if mgr != nil {
		mgr.DocumentChanged(abs, before, after)
	}
}
