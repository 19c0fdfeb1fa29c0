package server

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/protocol"
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
		if err := s.callClient(s.ctx, s.clientTimeout(), "window/workDoneProgress/create", map[string]any{"token": token}, nil); err != nil {
			if errors.Is(err, errNoAnswer) {
				// A client that does not answer gets no more progress.
				s.mu.Lock()
				s.caps.progress = false
				s.mu.Unlock()
			}
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

// runProgress shows a run as work-done progress (the editor's status bar):
// begin when it starts, a report per tool call, end when it ends. Progress
// is best effort: it runs on its own goroutine so a slow client never holds
// up the run, and drops reports it cannot keep up with.
type runProgress struct {
	s      *Server
	events chan protocol.RunEvent
}

func (s *Server) newRunProgress(question string) *runProgress {
	s.mu.Lock()
	supported := s.caps.progress
	s.mu.Unlock()
	if !supported {
		return nil
	}
	p := &runProgress{s: s, events: make(chan protocol.RunEvent, 64)}
	go p.loop(question)
	return p
}

func (p *runProgress) send(ev protocol.RunEvent) {
	if p == nil {
		return
	}
	switch ev.Kind {
	case protocol.EventStarted, protocol.EventToolCall, protocol.EventEditProposed:
	default:
		if !isTerminal(ev.Kind) {
			return
		}
	}
	select {
	case p.events <- ev:
	default:
		if isTerminal(ev.Kind) {
			p.events <- ev // the end must arrive
		}
	}
}

func isTerminal(kind string) bool {
	switch kind {
	case protocol.EventFinished, protocol.EventFailed, protocol.EventCancelled, protocol.EventInterrupted:
		return true
	}
	return false
}

func (p *runProgress) loop(question string) {
	s := p.s
	token := ""
	for ev := range p.events {
		if token == "" {
			token = "cairn/run/" + ev.RunID
			if err := s.callClient(s.ctx, s.clientTimeout(), "window/workDoneProgress/create", map[string]any{"token": token}, nil); err != nil {
				token = "-"
			} else {
				s.notifyProgress(token, map[string]any{"kind": "begin", "title": "Cairn", "message": truncate(question, 60), "cancellable": false})
			}
		}
		if token == "-" {
			if isTerminal(ev.Kind) {
				return
			}
			continue
		}
		switch {
		case isTerminal(ev.Kind):
			s.notifyProgress(token, map[string]any{"kind": "end", "message": ev.Kind})
			return
		case ev.Kind == protocol.EventToolCall:
			s.notifyProgress(token, map[string]any{"kind": "report", "message": "running " + ev.Tool})
		case ev.Kind == protocol.EventEditProposed:
			s.notifyProgress(token, map[string]any{"kind": "report", "message": "proposed an edit"})
		}
	}
}
