//go:build cairn_nootel

package trace

import "errors"

// OTLPSupported reports whether this binary can export over OTLP (it
// cannot when built with -tags cairn_nootel).
const OTLPSupported = false

func newOTLPExporter(string, Options) (exporter, error) {
	return nil, errors.New("this cairn was built without OpenTelemetry export (-tags cairn_nootel)")
}
