package mcp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairn-dev/cairn/internal/mcptest"
)

// httpMCPServer serves a real go-sdk MCP server with one tool, echo, over
// the given transport ("http" or "sse") on a local port. Every request
// without the header X-Api-Key: k1 is refused (401); the echo tool answers
// with its text and the header it saw.
func httpMCPServer(t *testing.T, kind string) (url string, refused *atomic.Int64) {
	t.Helper()
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote-echo", Version: "1.0.0"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "echoes text"}, func(ctx context.Context, req *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
		key := ""
		if req.Extra != nil && req.Extra.Header != nil {
			key = req.Extra.Header.Get("X-Api-Key")
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + a.Text + " key=" + key}}}, nil, nil
	})
	return mcptest.Serve(t, srv, kind == TypeSSE, "X-Api-Key", "k1")
}

// A server configured with a URL is reached over streamable HTTP or SSE
// with its headers on every request; its tools are registered and called
// like a stdio server's, and stopping it withdraws them.
func TestRemoteServers(t *testing.T) {
	for _, kind := range []string{TypeHTTP, TypeSSE} {
		t.Run(kind, func(t *testing.T) {
			url, refused := httpMCPServer(t, kind)
			m, reg, rec := newTestManager(t, 30*time.Second)
			within(t, "Update", func() {
				m.Update(context.Background(), []ServerConfig{{Name: "remote", Type: kind, URL: url, Headers: map[string]string{"X-Api-Key": "k1"}}})
			})
			if got := mcpTools(reg, "remote"); len(got) != 1 || got[0] != "mcp__remote__echo" {
				t.Fatalf("tools %v\n%s", got, rec.dump())
			}
			if st := m.Servers(); len(st) != 1 || st[0].State != StateRunning || !strings.Contains(st[0].Info, "remote-echo") {
				t.Errorf("status %+v", st)
			}
			res := call(t, reg, "mcp__remote__echo", `{"text":"hi"}`)
			// The SSE server does not pass request headers to its tools:
			// there, refused (below) shows that every request had the key.
			want := "echo: hi key=k1"
			if kind == TypeSSE {
				want = "echo: hi"
			}
			if res.IsError || !strings.Contains(res.Content, want) {
				t.Errorf("result %+v", res)
			}
			if n := refused.Load(); n != 0 {
				t.Errorf("%d requests went without the header", n)
			}
			within(t, "Update to none", func() { m.Update(context.Background(), nil) })
			if got := mcpTools(reg, "remote"); len(got) != 0 {
				t.Errorf("tools not withdrawn: %v", got)
			}
		})
	}
}

// Without its header the server refuses the handshake: the server is
// reported failed, with the URL, and registers nothing; a URL that is not
// http(s) is refused before any connection.
func TestRemoteServerFailures(t *testing.T) {
	url, refused := httpMCPServer(t, TypeHTTP)
	m, reg, rec := newTestManager(t, 30*time.Second)
	within(t, "Update", func() {
		m.Update(context.Background(), []ServerConfig{
			{Name: "nokey", URL: url},
			{Name: "badurl", URL: "file:///etc/passwd"},
			{Name: "badtype", Type: "websocket", URL: url},
		})
	})
	if len(reg.Names()) != 0 {
		t.Errorf("tools registered: %v", reg.Names())
	}
	if refused.Load() == 0 {
		t.Error("the server saw no refused request")
	}
	for server, want := range map[string]string{"nokey": url, "badurl": "not an http(s) URL", "badtype": "unknown transport type"} {
		if e, ok := rec.event(server, want); !ok {
			t.Errorf("no event for %s with %q:\n%s", server, want, rec.dump())
		} else if !strings.Contains(e, "MCP server "+server) {
			t.Errorf("event %q", e)
		}
	}
}
