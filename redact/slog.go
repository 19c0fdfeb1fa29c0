package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler is a slog.Handler that redacts the message and every string
// attribute (including those in groups, those added with WithAttrs, errors
// and fmt.Stringers) before passing the record on.
type Handler struct {
	inner slog.Handler
	r     *Redactor
}

// NewHandler wraps inner. A nil r means Default(), compiled when the first
// record is logged: building the rules costs a short-lived command (`cairn
// search`, `cairn --version`) more CPU than its work, and most log nothing.
func NewHandler(inner slog.Handler, r *Redactor) *Handler {
	return &Handler{inner: inner, r: r}
}

// red is the redactor records pass.
func (h *Handler) red() *Redactor {
	if h.r == nil {
		return Default()
	}
	return h.r
}

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.red().String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &Handler{inner: h.inner.WithAttrs(red), r: h.r}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name), r: h.r}
}

func (h *Handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.red().String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.red().String(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, h.red().String(x.String()))
		case []byte:
			return slog.String(a.Key, h.red().String(string(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
