package server

import (
	"context"
	"log/slog"
	"strings"

	lsp "go.lsp.dev/protocol"
)

// clientLogHandler sends log records to the editor as window/logMessage as
// well as to the inner handler (stderr), so a user sees the server's log in
// the editor's output panel. Only `cairn serve` installs it: it is the one
// process with exactly one client.
type clientLogHandler struct {
	inner slog.Handler
	s     *Server
	attrs []slog.Attr
	group string
}

func (h *clientLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *clientLogHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.inner.Handle(ctx, r)
	if h.s.conn == nil || r.Level < slog.LevelInfo {
		return err
	}
	var b strings.Builder
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		b.WriteString(" ")
		if h.group != "" {
			b.WriteString(h.group + ".")
		}
		b.WriteString(a.Key + "=" + a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
	t := lsp.MessageTypeLog
	switch {
	case r.Level >= slog.LevelError:
		t = lsp.MessageTypeError
	case r.Level >= slog.LevelWarn:
		t = lsp.MessageTypeWarning
	case r.Level >= slog.LevelInfo:
		t = lsp.MessageTypeInfo
	}
	_ = h.s.conn.Notify(h.s.ctx, "window/logMessage", &lsp.LogMessageParams{Type: t, Message: b.String()})
	return err
}

func (h *clientLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(attrs)
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &c
}

func (h *clientLogHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.inner = h.inner.WithGroup(name)
	c.group = name
	return &c
}
