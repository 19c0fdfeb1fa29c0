package acp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairn-dev/cairn/internal/mcptest"
)

// remoteMCP serves a real MCP server (the MCP Go SDK's) with one tool,
// shout, over streamable HTTP (sse false) or SSE on a local port; a
// request without the header Authorization: Bearer t0k is refused.
func remoteMCP(t *testing.T, sse bool) (url string, refused *atomic.Int64) {
	t.Helper()
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "shouter", Version: "1.0.0"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	mcpsdk.AddTool(srv, &mcpsdk.Tool{Name: "shout", Description: "upper-cases text"}, func(ctx context.Context, req *mcpsdk.CallToolRequest, a in) (*mcpsdk.CallToolResult, any, error) {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: strings.ToUpper(a.Text)}}}, nil, nil
	})
	return mcptest.Serve(t, srv, sse, "Authorization", "Bearer t0k")
}

// A session's http and sse MCP servers are connected with their headers;
// their tools are untrusted (each call asks) and their results reach the
// model. initialize advertises both transports.
func TestSessionRemoteMCPServers(t *testing.T) {
	httpURL, httpRefused := remoteMCP(t, false)
	sseURL, sseRefused := remoteMCP(t, true)
	script := `turns:
  - toolCalls:
      - {id: h1, name: mcp__web__shout, arguments: {text: "over http"}}
      - {id: s1, name: mcp__events__shout, arguments: {text: "over sse"}}
  - text: done
`
	h := newHarness(t, map[string]string{"a.txt": "a\n"}, script, harnessConfig{interactive: true})
	init, err := h.conn.Initialize(context.Background(), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
	if err != nil {
		t.Fatal(err)
	}
	if mc := init.AgentCapabilities.McpCapabilities; !mc.Http || !mc.Sse {
		t.Errorf("mcpCapabilities = %+v", mc)
	}
	auth := []sdk.HttpHeader{{Name: "Authorization", Value: "Bearer t0k"}}
	resp, err := h.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: h.root, McpServers: []sdk.McpServer{
		{Http: &sdk.McpServerHttpInline{Name: "web", Type: "http", Url: httpURL, Headers: auth}},
		{Sse: &sdk.McpServerSseInline{Name: "events", Type: "sse", Url: sseURL, Headers: auth}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.session = resp.SessionId
	h.mustPrompt(sdk.TextBlock("shout twice"))
	updates, perms, _ := h.client.snapshot()
	if len(perms) != 2 {
		t.Errorf("%d permission requests, want 2 (untrusted servers)", len(perms))
	}
	for _, id := range []string{"h1", "s1"} {
		if st := lastStatus(updates, id); st != sdk.ToolCallStatusCompleted {
			t.Errorf("%s status %q", id, st)
		}
	}
	reqs := h.provider.Received()
	got := map[string]string{}
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.ToolCallID != "" {
			got[m.ToolCallID] = m.Content
		}
	}
	if !strings.Contains(got["h1"], "OVER HTTP") || !strings.Contains(got["s1"], "OVER SSE") {
		t.Errorf("the model got %q", got)
	}
	if httpRefused.Load() != 0 || sseRefused.Load() != 0 {
		t.Errorf("requests without the header: http %d, sse %d", httpRefused.Load(), sseRefused.Load())
	}
	if text := agentText(updates); strings.Contains(text, "not support") || strings.Contains(text, "MCP server") {
		t.Errorf("a problem was reported: %q", text)
	}
}
