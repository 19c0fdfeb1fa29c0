package trace

import (
	"context"
	"crypto/rand"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// Spans live in the OpenTelemetry SDK: the Recorder's TracerProvider has
// Cairn's span processor (storeProcessor), which writes the local store,
// and, when an endpoint is configured, a batch span processor exporting
// over OTLP through exportFilter. Two attributes carry what OpenTelemetry
// has no field for: the span's kind in Cairn's tree (run, step, model,
// tool) and its status (OpenTelemetry's "error" covers both Cairn's error
// and cancelled).
const (
	attrSpanKind   = "cairn.span.kind"
	attrSpanStatus = "cairn.span.status"
)

// newProvider builds the TracerProvider: every span sampled and kept whole
// (no attribute or event limits: the local store is the record of a run,
// and the OTEL_* sampler and limit variables must not thin it).
func newProvider(r *Recorder, export sdktrace.SpanProcessor, version string) *sdktrace.TracerProvider {
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithIDGenerator(idGenerator{}),
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{
			AttributeValueLengthLimit: -1, AttributeCountLimit: -1, EventCountLimit: -1,
			LinkCountLimit: -1, AttributePerEventCountLimit: -1, AttributePerLinkCountLimit: -1,
		}),
		sdktrace.WithResource(resource.NewSchemaless(
			attribute.String(AttrServiceName, "cairn"),
			attribute.String(AttrServiceVersion, version),
		)),
		sdktrace.WithSpanProcessor(storeProcessor{r}),
	}
	if export != nil {
		opts = append(opts, sdktrace.WithSpanProcessor(export))
	}
	return sdktrace.NewTracerProvider(opts...)
}

// traceIDKey carries the trace id a run span must have: a resumed run keeps
// the trace id of its first part, so the backend shows one trace.
type traceIDKey struct{}

// idGenerator makes random ids, except a run's trace id given in the context.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (oteltrace.TraceID, oteltrace.SpanID) {
	tid, ok := ctx.Value(traceIDKey{}).(oteltrace.TraceID)
	if !ok || !tid.IsValid() {
		_, _ = rand.Read(tid[:])
	}
	return tid, idGenerator{}.NewSpanID(ctx, tid)
}

func (idGenerator) NewSpanID(context.Context, oteltrace.TraceID) oteltrace.SpanID {
	var sid oteltrace.SpanID
	for !sid.IsValid() {
		_, _ = rand.Read(sid[:])
	}
	return sid
}

// storeProcessor is Cairn's span processor: it appends each span, redacted,
// to its run's file in the local store when it ends, and run and step spans
// also when they start (status "running"), so that an interrupted run keeps
// its tree.
type storeProcessor struct{ r *Recorder }

func (p storeProcessor) OnStart(_ context.Context, s sdktrace.ReadWriteSpan) {
	kind := kindOf(s.Attributes())
	if kind != KindRun && kind != KindStep {
		return
	}
	if run := p.r.runOf(s.SpanContext().TraceID()); run != nil {
		sd := spanData(s)
		sd.Status = StatusRunning
		run.write(sd)
	}
}

func (p storeProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if run := p.r.runOf(s.SpanContext().TraceID()); run != nil {
		run.write(spanData(s))
	}
}

func (storeProcessor) Shutdown(context.Context) error   { return nil }
func (storeProcessor) ForceFlush(context.Context) error { return nil }

func kindOf(attrs []attribute.KeyValue) string {
	for _, kv := range attrs {
		if kv.Key == attrSpanKind {
			return kv.Value.AsString()
		}
	}
	return ""
}

// spanData converts an SDK span to Cairn's record of it (not yet redacted).
func spanData(s sdktrace.ReadOnlySpan) SpanData {
	sd := SpanData{
		TraceID: s.SpanContext().TraceID().String(),
		SpanID:  s.SpanContext().SpanID().String(),
		Name:    s.Name(),
		Start:   s.StartTime(),
		End:     s.EndTime(),
		Status:  StatusRunning,
		Attrs:   map[string]any{},
	}
	if p := s.Parent(); p.SpanID().IsValid() {
		sd.ParentID = p.SpanID().String()
	}
	for _, kv := range s.Attributes() {
		switch kv.Key {
		case attrSpanKind:
			sd.Kind = kv.Value.AsString()
		case attrSpanStatus:
			sd.Status = kv.Value.AsString()
		default:
			sd.Attrs[string(kv.Key)] = valueOf(kv.Value)
		}
	}
	if st := s.Status(); st.Code == codes.Error {
		sd.StatusMessage = st.Description
	}
	for _, ev := range s.Events() {
		e := Event{Name: ev.Name, Time: ev.Time}
		if len(ev.Attributes) > 0 {
			e.Attrs = make(map[string]any, len(ev.Attributes))
			for _, kv := range ev.Attributes {
				e.Attrs[string(kv.Key)] = valueOf(kv.Value)
			}
		}
		sd.Events = append(sd.Events, e)
	}
	return sd
}

func valueOf(v attribute.Value) any {
	switch v.Type() {
	case attribute.BOOL:
		return v.AsBool()
	case attribute.INT64:
		return v.AsInt64()
	case attribute.FLOAT64:
		return v.AsFloat64()
	case attribute.STRINGSLICE:
		return v.AsStringSlice()
	}
	return v.String()
}

// keyValue converts a normalized attribute value (see normValue).
func keyValue(k string, v any) attribute.KeyValue {
	switch x := v.(type) {
	case string:
		return attribute.String(k, x)
	case bool:
		return attribute.Bool(k, x)
	case int64:
		return attribute.Int64(k, x)
	case float64:
		return attribute.Float64(k, x)
	case []string:
		return attribute.StringSlice(k, x)
	}
	return attribute.String(k, fmt.Sprint(v))
}

func keyValues(m map[string]any) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(m))
	for k, v := range m {
		if nv := normValue(v); nv != nil {
			out = append(out, keyValue(k, nv))
		}
	}
	return out
}

// contentAttrs and contentEvents are kept out of the OTLP export unless
// Options.ExportContent is set (the local store always has them).
var (
	contentAttrs  = map[string]bool{AttrRunQuestion: true, AttrToolCallArguments: true}
	contentEvents = map[string]bool{EventModelResponse: true, EventToolArguments: true}
)

// exportFilter is what the OTLP export sees: each span redacted as the
// local store has it (with its run's redactor, see RunInfo.Redact), without
// the content attributes and events unless they are to be exported, and with
// Cairn's kind and status attributes. It filters as a span ends, while its
// run is still known, and hands the view to the batch processor (next).
type exportFilter struct {
	rec     *Recorder
	next    sdktrace.SpanProcessor
	content bool
}

func (e exportFilter) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) { e.next.OnStart(ctx, s) }

func (e exportFilter) OnEnd(s sdktrace.ReadOnlySpan) {
	e.next.OnEnd(e.view(s, e.rec.redactorOf(s.SpanContext().TraceID())))
}

func (e exportFilter) Shutdown(ctx context.Context) error   { return e.next.Shutdown(ctx) }
func (e exportFilter) ForceFlush(ctx context.Context) error { return e.next.ForceFlush(ctx) }

func (e exportFilter) view(s sdktrace.ReadOnlySpan, redact func(string) string) sdktrace.ReadOnlySpan {
	sd := spanData(s)
	redactRecord(&sd, redact)
	v := spanView{ReadOnlySpan: s, name: sd.Name, status: s.Status()}
	if v.status.Code == codes.Error {
		v.status.Description = sd.StatusMessage
	}
	for k, val := range sd.Attrs {
		if !contentAttrs[k] || e.content {
			v.attrs = append(v.attrs, keyValue(k, val))
		}
	}
	v.attrs = append(v.attrs, attribute.String(attrSpanKind, sd.Kind), attribute.String(attrSpanStatus, sd.Status))
	for i, ev := range sd.Events {
		if contentEvents[ev.Name] && !e.content {
			continue
		}
		v.events = append(v.events, sdktrace.Event{Name: ev.Name, Time: ev.Time, Attributes: keyValues(ev.Attrs),
			DroppedAttributeCount: s.Events()[i].DroppedAttributeCount})
	}
	return v
}

// spanView is an SDK span with its name, attributes, events and status
// replaced (the exported, redacted view); everything else is the span's.
type spanView struct {
	sdktrace.ReadOnlySpan
	name   string
	attrs  []attribute.KeyValue
	events []sdktrace.Event
	status sdktrace.Status
}

func (v spanView) Name() string                     { return v.name }
func (v spanView) Attributes() []attribute.KeyValue { return v.attrs }
func (v spanView) Events() []sdktrace.Event         { return v.events }
func (v spanView) Status() sdktrace.Status          { return v.status }
