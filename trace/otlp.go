//go:build !cairn_nootel

package trace

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// OTLPSupported reports whether this binary can export over OTLP (it
// cannot when built with -tags cairn_nootel).
const OTLPSupported = true

// newOTLPExporter is the second exporter of the TracerProvider: OTLP/HTTP
// protobuf to endpointURL. Cairn's processor and exportFilter stand in
// front of it, so it sees spans redacted, with Cairn's trace and span ids.
func newOTLPExporter(endpointURL string) (sdktrace.SpanExporter, error) {
	return otlptracehttp.New(context.Background(),
		otlptracehttp.WithEndpointURL(endpointURL),
		otlptracehttp.WithTimeout(10*time.Second),
		// Bounded retries: a collector that is down must not hold spans
		// (and a closing `cairn ask`) for the SDK's default minute.
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: time.Second, MaxInterval: 5 * time.Second, MaxElapsedTime: 15 * time.Second}),
	)
}
