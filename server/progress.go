package server

import (
	"fmt"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/codeindex"
)

// indexProgress turns indexing progress into LSP work-done progress
// (window/workDoneProgress/create, then $/progress begin/report/end), one
// token per index, when the client supports it; reports are throttled.
type indexProgress struct {
	s      *Server
	mu     sync.Mutex
	tokens map[string]string // kind → token, while in progress
	last   map[string]time.Time
}

func newIndexProgress(s *Server) *indexProgress {
	return &indexProgress{s: s, tokens: map[string]string{}, last: map[string]time.Time{}}
}

func (p *indexProgress) report(ev codeindex.Progress) {
	s := p.s
	s.mu.Lock()
	supported := s.caps.progress
	s.mu.Unlock()
	if !supported {
		return
	}
	p.mu.Lock()
	token, started := p.tokens[ev.Kind]
	if !started {
		if ev.Finished && ev.Total == 0 {
			p.mu.Unlock()
			return
		}
		token = fmt.Sprintf("cairn/index/%s/%d", ev.Kind, time.Now().UnixNano())
		p.tokens[ev.Kind] = token
	}
	throttled := started && !ev.Finished && time.Since(p.last[ev.Kind]) < 200*time.Millisecond
	if !throttled {
		p.last[ev.Kind] = time.Now()
	}
	if ev.Finished {
		delete(p.tokens, ev.Kind)
	}
	p.mu.Unlock()
	if throttled {
		return
	}
	if !started {
		// The create request must be answered before progress is sent.
		if _, err := s.conn.Call(s.ctx, "window/workDoneProgress/create", map[string]any{"token": token}, nil); err != nil {
			return
		}
		s.notifyProgress(token, map[string]any{"kind": "begin", "title": "Cairn: indexing (" + ev.Kind + ")", "cancellable": false, "percentage": 0})
	}
	pct := 0
	if ev.Total > 0 {
		pct = ev.Done * 100 / ev.Total
	}
	msg := ev.Message
	if msg == "" && ev.Total > 0 {
		msg = fmt.Sprintf("%d/%d files", ev.Done, ev.Total)
	}
	if ev.Finished {
		s.notifyProgress(token, map[string]any{"kind": "end", "message": msg})
		return
	}
	s.notifyProgress(token, map[string]any{"kind": "report", "message": msg, "percentage": pct})
}

func (s *Server) notifyProgress(token string, value map[string]any) {
	_ = s.conn.Notify(s.ctx, "$/progress", map[string]any{"token": token, "value": value})
}
