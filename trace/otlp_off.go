//go:build cairn_nootel

package trace

import (
	"errors"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// OTLPSupported reports whether this binary can export over OTLP (it
// cannot when built with -tags cairn_nootel).
const OTLPSupported = false

func newOTLPExporter(string) (sdktrace.SpanExporter, error) {
	return nil, errors.New("this cairn was built without OTLP export (-tags cairn_nootel)")
}
