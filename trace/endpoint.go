package trace

import (
	"net/url"
	"strings"
)

// withScheme adds http:// to a bare host:port.
func withScheme(u string) string {
	u = strings.TrimSpace(u)
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	return u
}

// tracesURL turns an OTLP base endpoint into the traces URL, following
// OTEL_EXPORTER_OTLP_ENDPOINT's rule: "/v1/traces" is appended to the
// base path (unless the path already ends with it).
func tracesURL(base string) string {
	base = withScheme(base)
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	if !strings.HasSuffix(u.Path, "/v1/traces") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	}
	return u.String()
}
