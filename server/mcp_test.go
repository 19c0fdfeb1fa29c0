package server_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
)

// TestMCPToolThroughTheServer configures the real filesystem MCP server
// from npm (pinned in test/mcp; the tools/mcp tests install it) and has the
// model call one of its tools through the whole pipeline.
func TestMCPToolThroughTheServer(t *testing.T) {
	node, serverJS := fsMCPServer(t)
	script := `
turns:
  - toolCalls:
      - name: mcp__fs__read_text_file
        arguments: {path: "ROOT/greet/greet.go"}
  - text: done
`
	var asked []string
	root := t.TempDir()
	writeTxtar(t, root, greetWS)
	realRoot, _ := filepath.EvalSymlinks(root)
	e := newEnv(t, greetWS, withScript(strings.ReplaceAll(script, "ROOT", realRoot)),
		withSettings(map[string]any{"mcpServers": map[string]any{
			"fs": map[string]any{"command": node, "args": []string{serverJS, realRoot}},
		}}),
		withEditor(lspclient.Options{Approve: func(msg string, _ []string) string {
			asked = append(asked, msg)
			return protocol.ActionAllowOnce
		}}))
	// The bridge starts servers in the background: wait for the tool.
	waitRegistered(t, e)
	evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "read it through MCP"))
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("%+v", last(evs))
	}
	tm := e.toolMessages(2)
	if len(tm) != 1 || !strings.Contains(tm[0].Content, "func Greet") {
		t.Fatalf("MCP tool result: %+v", tm)
	}
	if len(asked) != 1 || !strings.Contains(asked[0], "mcp__fs__read_text_file") {
		t.Errorf("an untrusted MCP server's tool must ask: %q", asked)
	}
}

// fsMCPServer returns node and the pinned filesystem MCP server's script
// (test/mcp; the tools/mcp tests install it), skipping the test where they
// are missing, except in CI.
func fsMCPServer(t *testing.T) (node, serverJS string) {
	t.Helper()
	node, err := exec.LookPath("node")
	serverJS, _ = filepath.Abs("../test/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	if _, statErr := os.Stat(serverJS); err != nil || statErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or the pinned MCP servers are missing (run npm ci in test/mcp): %v %v", err, statErr)
		}
		t.Skip("node or test/mcp/node_modules missing")
	}
	return node, serverJS
}

// waitRegistered waits (a minute at most) until the fs server's tools
// are registered.
func waitRegistered(t *testing.T, e *env) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !registered(e) {
		if time.Now().After(deadline) {
			t.Fatalf("the MCP server's tools were not registered: %q", e.ed.Messages())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// registered reports whether the bridge logged (window/logMessage) that the
// fs server runs with its tools registered.
func registered(e *env) bool {
	for _, m := range e.ed.Messages() {
		if strings.Contains(m, "mcp fs: running") {
			return true
		}
	}
	return false
}
