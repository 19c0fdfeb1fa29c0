//go:build !cairn_nootel

package trace

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// otlpExporter turns finished, redacted spans into OpenTelemetry SDK spans
// (keeping Cairn's trace and span ids, so the local store and the backend
// agree) and hands them to a batch span processor over OTLP/HTTP protobuf.
type otlpExporter struct {
	bsp     sdktrace.SpanProcessor
	res     *resource.Resource
	scope   instrumentation.Scope
	content bool
}

// OTLPSupported reports whether this binary can export over OTLP (it
// cannot when built with -tags cairn_nootel).
const OTLPSupported = true

func newOTLPExporter(endpointURL string, opts Options) (exporter, error) {
	exp, err := otlptracehttp.New(context.Background(),
		otlptracehttp.WithEndpointURL(endpointURL),
		otlptracehttp.WithTimeout(10*time.Second),
		// Bounded retries: a collector that is down must not hold spans
		// (and a closing `cairn ask`) for the SDK's default minute.
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: time.Second, MaxInterval: 5 * time.Second, MaxElapsedTime: 15 * time.Second}),
	)
	if err != nil {
		return nil, err
	}
	version := opts.ServiceVersion
	if version == "" {
		version = "dev"
	}
	return &otlpExporter{
		bsp: sdktrace.NewBatchSpanProcessor(exp, sdktrace.WithBatchTimeout(2*time.Second)),
		res: resource.NewSchemaless(
			attribute.String(AttrServiceName, "cairn"),
			attribute.String(AttrServiceVersion, version),
		),
		scope:   instrumentation.Scope{Name: "github.com/cairn-dev/cairn/trace", Version: version},
		content: opts.ExportContent,
	}, nil
}

func (e *otlpExporter) export(sd SpanData) {
	stub, err := e.stub(sd)
	if err != nil {
		return
	}
	e.bsp.OnEnd(stub.Snapshot())
}

func (e *otlpExporter) flush(ctx context.Context) error    { return e.bsp.ForceFlush(ctx) }
func (e *otlpExporter) shutdown(ctx context.Context) error { return e.bsp.Shutdown(ctx) }

// contentAttrs are kept out of the export unless ExportContent is set.
var contentAttrs = map[string]bool{AttrRunQuestion: true, AttrToolCallArguments: true}
var contentEvents = map[string]bool{EventModelResponse: true, EventToolArguments: true}

func (e *otlpExporter) stub(sd SpanData) (tracetest.SpanStub, error) {
	tid, err := traceID(sd.TraceID)
	if err != nil {
		return tracetest.SpanStub{}, err
	}
	sid, err := spanID(sd.SpanID)
	if err != nil {
		return tracetest.SpanStub{}, err
	}
	stub := tracetest.SpanStub{
		Name: sd.Name,
		SpanContext: oteltrace.NewSpanContext(oteltrace.SpanContextConfig{
			TraceID: tid, SpanID: sid, TraceFlags: oteltrace.FlagsSampled,
		}),
		SpanKind:             oteltrace.SpanKindInternal,
		StartTime:            sd.Start,
		EndTime:              sd.End,
		Resource:             e.res,
		InstrumentationScope: e.scope,
	}
	if sd.Kind == KindModel {
		stub.SpanKind = oteltrace.SpanKindClient
	}
	if sd.ParentID != "" {
		if pid, err := spanID(sd.ParentID); err == nil {
			stub.Parent = oteltrace.NewSpanContext(oteltrace.SpanContextConfig{TraceID: tid, SpanID: pid, TraceFlags: oteltrace.FlagsSampled})
		}
	}
	switch sd.Status {
	case StatusOK:
		stub.Status = sdktrace.Status{Code: codes.Ok}
	case StatusError, StatusCancelled:
		stub.Status = sdktrace.Status{Code: codes.Error, Description: sd.StatusMessage}
	}
	stub.Attributes = e.attrs(sd.Attrs)
	stub.Attributes = append(stub.Attributes, attribute.String("cairn.span.kind", sd.Kind))
	for _, ev := range sd.Events {
		if contentEvents[ev.Name] && !e.content {
			continue
		}
		stub.Events = append(stub.Events, sdktrace.Event{Name: ev.Name, Time: ev.Time, Attributes: e.attrs(ev.Attrs)})
	}
	return stub, nil
}

func (e *otlpExporter) attrs(m map[string]any) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(m))
	for k, v := range m {
		if contentAttrs[k] && !e.content {
			continue
		}
		switch x := v.(type) {
		case string:
			out = append(out, attribute.String(k, x))
		case bool:
			out = append(out, attribute.Bool(k, x))
		case int64:
			out = append(out, attribute.Int64(k, x))
		case float64:
			out = append(out, attribute.Float64(k, x))
		case []string:
			out = append(out, attribute.StringSlice(k, x))
		default:
			out = append(out, attribute.String(k, fmt.Sprint(x)))
		}
	}
	return out
}

func traceID(s string) (oteltrace.TraceID, error) {
	var id oteltrace.TraceID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("bad trace id %q", s)
	}
	copy(id[:], b)
	return id, nil
}

func spanID(s string) (oteltrace.SpanID, error) {
	var id oteltrace.SpanID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(id) {
		return id, fmt.Errorf("bad span id %q", s)
	}
	copy(id[:], b)
	return id, nil
}
