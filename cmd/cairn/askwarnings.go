package main

import (
	"context"
	"log/slog"
	"strings"
	"sync"
)

// configPrefix starts the in-process server's log line for each problem it
// finds in the configuration (server/lifecycle.go applySettings).
const configPrefix = "configuration: "

// configWarnings is the log handler of cairn ask: it holds the in-process
// server's configuration warnings until the question has been asked, then
// prints each distinct one once, except those the command's error already
// says. The server reads its configuration more than once (at initialize,
// then with the settings the editor sends), and when the problem leaves no
// usable model, refusing the question repeats it: without this, the same
// text reached the terminal two or three times. Every other record goes
// straight to the inner handler.
type configWarnings struct {
	inner slog.Handler
	state *configWarningState // shared by the handlers WithAttrs/WithGroup derive
}

type configWarningState struct {
	mu      sync.Mutex
	holding bool
	held    []heldRecord
	seen    map[string]bool // configuration warnings printed or held
}

type heldRecord struct {
	h slog.Handler
	r slog.Record
}

func newConfigWarnings(inner slog.Handler) *configWarnings {
	return &configWarnings{inner: inner, state: &configWarningState{holding: true, seen: map[string]bool{}}}
}

func (c *configWarnings) Enabled(ctx context.Context, l slog.Level) bool {
	return c.inner.Enabled(ctx, l)
}

func (c *configWarnings) Handle(ctx context.Context, r slog.Record) error {
	if !strings.HasPrefix(r.Message, configPrefix) {
		return c.inner.Handle(ctx, r)
	}
	s := c.state
	s.mu.Lock()
	if s.seen[r.Message] {
		s.mu.Unlock()
		return nil
	}
	s.seen[r.Message] = true
	if s.holding {
		s.held = append(s.held, heldRecord{c.inner, r.Clone()})
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	return c.inner.Handle(ctx, r)
}

func (c *configWarnings) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &configWarnings{inner: c.inner.WithAttrs(attrs), state: c.state}
}

func (c *configWarnings) WithGroup(name string) slog.Handler {
	return &configWarnings{inner: c.inner.WithGroup(name), state: c.state}
}

// release stops holding: it prints the held warnings that err (the
// question's outcome so far, nil when it was accepted) does not already
// say; later ones print as they come, each once.
func (c *configWarnings) release(err error) {
	s := c.state
	s.mu.Lock()
	held := s.held
	s.held, s.holding = nil, false
	s.mu.Unlock()
	for _, h := range held {
		if err != nil && strings.Contains(err.Error(), strings.TrimPrefix(h.r.Message, configPrefix)) {
			continue
		}
		_ = h.h.Handle(context.Background(), h.r)
	}
}
