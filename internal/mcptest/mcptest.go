// Package mcptest serves a real MCP server (the go-sdk's) over streamable
// HTTP or SSE on a loopback httptest server, behind a header check, for the
// tests of Cairn's remote MCP client.
package mcptest

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Serve serves srv over SSE (sse) or streamable HTTP. A request whose
// header is not value is refused with 401 and counted in refused. The URL
// is that of the MCP endpoint; the server stops when t ends.
func Serve(t testing.TB, srv *sdk.Server, sse bool, header, value string) (url string, refused *atomic.Int64) {
	t.Helper()
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	if sse {
		h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	}
	refused = &atomic.Int64{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(header) != value {
			refused.Add(1)
			http.Error(w, "refused: no "+header, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", refused
}
