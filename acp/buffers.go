package acp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// The agent reads the client's buffers. When the client offers
// fs/read_text_file, every read of a workspace file during a turn (read_file,
// edit_file's base, the context build, the accept's base) asks the client
// first, through the workspace's documents source: a text that differs from
// the disk (an unsaved buffer) becomes the file's overlay for the rest of
// the turn, exactly as an LSP editor's didOpen does; a file the client holds
// as on disk is remembered for the turn and read from the disk. A client that
// does not answer within bufferReadWait is not asked again in that turn, and
// the user is told that the disk was read instead.

// bufferReadWait bounds one fs/read_text_file request (a variable for
// tests).
var bufferReadWait = 5 * time.Second

// bufferTurn is what a turn learned of the client's buffers.
type bufferTurn struct {
	disk   map[string]bool // files the client holds as on disk (or has not)
	silent bool            // the client did not answer: read the disk
}

// activate makes s the session whose client the workspace asks for buffers
// until deactivate (the latest active session wins; every session of a
// workspace talks to the same client).
func (w *workspaceEngines) activate(s *session) {
	w.mu.Lock()
	w.active = append(w.active, s)
	w.mu.Unlock()
	s.mu.Lock()
	s.buffers = &bufferTurn{disk: map[string]bool{}}
	s.mu.Unlock()
}

func (w *workspaceEngines) deactivate(s *session) {
	w.mu.Lock()
	for i := len(w.active) - 1; i >= 0; i-- {
		if w.active[i] == s {
			w.active = append(w.active[:i], w.active[i+1:]...)
			break
		}
	}
	w.mu.Unlock()
	s.mu.Lock()
	s.buffers = nil
	s.mu.Unlock()
}

func (w *workspaceEngines) activeSession() *session {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.active) == 0 {
		return nil
	}
	return w.active[len(w.active)-1]
}

// bufferSource is the workspace documents' source (workspace.Documents
// SetSource): the client's unsaved text of abs, if it has one.
func (a *adapter) bufferSource(w *workspaceEngines, abs string) (string, bool) {
	s := w.activeSession()
	if s == nil || !a.clientCaps().Fs.ReadTextFile {
		return "", false
	}
	s.mu.Lock()
	bt := s.buffers
	known := bt == nil || bt.silent || bt.disk[abs]
	s.mu.Unlock()
	if known {
		return "", false
	}
	text, ok := a.refreshBuffer(s, abs)
	return text, ok
}

// refreshBuffer asks the client for abs now (never from the turn's cache):
// when its text differs from the disk it becomes the overlay and is
// returned; otherwise an overlay of abs this turn set is dropped and ok is
// false (read the disk).
func (a *adapter) refreshBuffer(s *session, abs string) (string, bool) {
	if !a.clientCaps().Fs.ReadTextFile {
		return "", false
	}
	s.mu.Lock()
	silent := s.buffers != nil && s.buffers.silent
	s.mu.Unlock()
	if silent {
		return "", false
	}
	text, err := a.clientRead(s, abs)
	s.mu.Lock()
	defer s.mu.Unlock()
	bt := s.buffers
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		if bt != nil && !bt.silent {
			bt.silent = true
			s.notices = append(s.notices, fmt.Sprintf("the editor did not answer fs/read_text_file for %s within %s; Cairn read the files on disk for the rest of that turn, so unsaved changes were not seen.",
				s.w.ws.Rel(abs), bufferReadWait))
			slog.Warn("fs/read_text_file timed out; reading the disk for the rest of the turn", "path", abs)
		}
		return "", false
	case err != nil:
		// Most often the file does not exist; the disk says so too.
		slog.Debug("fs/read_text_file failed; reading the disk", "path", abs, "err", err)
	}
	if err == nil {
		if disk, derr := os.ReadFile(abs); derr != nil || string(disk) != text {
			s.w.ws.Docs.Open(abs, "", 0, text)
			if s.overlays == nil {
				s.overlays = map[string]bool{}
			}
			s.overlays[abs] = true
			if bt != nil {
				delete(bt.disk, abs)
			}
			return text, true
		}
	}
	if s.overlays[abs] {
		s.w.ws.Docs.Close(abs)
		delete(s.overlays, abs)
	}
	if bt != nil {
		bt.disk[abs] = true
	}
	return "", false
}

// readsSilent reports whether the client left a read of this turn
// unanswered.
func (s *session) readsSilent() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buffers != nil && s.buffers.silent
}

// clientRead is one fs/read_text_file request, bounded by bufferReadWait.
func (a *adapter) clientRead(s *session, abs string) (string, error) {
	ctx, cancel := context.WithTimeout(a.ctx, bufferReadWait)
	defer cancel()
	resp, err := a.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: s.id, Path: abs})
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", fmt.Errorf("fs/read_text_file %s: %w", abs, context.DeadlineExceeded)
		}
		return "", fmt.Errorf("fs/read_text_file %s: %w", abs, err)
	}
	return resp.Content, nil
}
