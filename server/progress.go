package server

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/protocol"
)

// indexProgress turns indexing progress into LSP work-done progress
// (window/workDoneProgress/create, then $/progress begin/report/end), one
// token per index, when the client supports it. Progress never holds up the
// work: report only records the latest state and wakes the index's own
// goroutine, which waits for the create answer, then sends what is latest
// (reports are throttled, so a fast index coalesces them).
type indexProgress struct {
	s     *Server
	mu    sync.Mutex
	kinds map[string]*kindProgress // by index kind, while in progress
}

// kindProgress is the latest state of one index's progress.
type kindProgress struct {
	mu     sync.Mutex
	latest codeindex.Progress
	wake   chan struct{} // capacity 1: a pending wake-up
}

func newIndexProgress(s *Server) *indexProgress {
	return &indexProgress{s: s, kinds: map[string]*kindProgress{}}
}

// report records ev and returns at once.
func (p *indexProgress) report(ev codeindex.Progress) {
	s := p.s
	s.mu.Lock()
	supported := s.caps.progress
	s.mu.Unlock()
	if !supported {
		return
	}
	p.mu.Lock()
	k, started := p.kinds[ev.Kind]
	if !started {
		if ev.Finished && ev.Total == 0 {
			p.mu.Unlock()
			return
		}
		k = &kindProgress{wake: make(chan struct{}, 1)}
		p.kinds[ev.Kind] = k
	}
	if ev.Finished {
		// The next progress of this kind (a later reconcile) gets a new token.
		delete(p.kinds, ev.Kind)
	}
	p.mu.Unlock()
	k.mu.Lock()
	k.latest = ev
	k.mu.Unlock()
	select {
	case k.wake <- struct{}{}:
	default:
	}
	if !started {
		go p.loop(ev.Kind, k)
	}
}

// loop sends one index's progress until it finishes.
func (p *indexProgress) loop(kind string, k *kindProgress) {
	s := p.s
	token := fmt.Sprintf("cairn/index/%s/%d", kind, time.Now().UnixNano())
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
	s.notifyProgress(token, map[string]any{"kind": "begin", "title": "Cairn: indexing (" + kind + ")", "cancellable": false, "percentage": 0})
	for {
		select {
		case <-k.wake:
		case <-s.ctx.Done():
			return
		}
		k.mu.Lock()
		ev := k.latest
		k.mu.Unlock()
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
		// Throttle: what arrives meanwhile is coalesced into the latest.
		select {
		case <-time.After(200 * time.Millisecond):
		case <-s.ctx.Done():
			return
		}
	}
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

// indexWaitKind marks the progress of a question waiting for the code
// index on a run's progress line (never sent as a cairn/runEvent).
const indexWaitKind = "cairn/indexWait"

// indexWait reports a question's wait for the index; dropped when the
// client is behind.
func (p *runProgress) indexWait(w agent.IndexWait) {
	if p == nil {
		return
	}
	msg := w.Message() + "…"
	if w.Done {
		msg = "index ready"
		if len(w.NotReady) > 0 {
			msg = "going ahead; not ready: " + strings.Join(w.NotReady, ", ")
		}
	}
	select {
	case p.events <- protocol.RunEvent{RunID: w.RunID, Kind: indexWaitKind, Summary: msg}:
	default:
	}
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
		case ev.Kind == indexWaitKind:
			s.notifyProgress(token, map[string]any{"kind": "report", "message": ev.Summary})
		}
	}
}
