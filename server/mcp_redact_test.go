package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
)

const mcpSecretWS = `
-- notes/deploy.txt --
deploy key AKIAZ7Q4M2KXW6PLRT5B for the staging bucket
-- main.go --
package main
`

// TestMCPResultSecretNotStored: a secret in an MCP tool's result (the
// real filesystem server from npm) is masked in what the model gets, in
// the toolResult event's summary, and in everything under the state dir
// (the summary used to be journaled in clear).
func TestMCPResultSecretNotStored(t *testing.T) {
	node, serverJS := fsMCPServer(t)
	const secret = "AKIAZ7Q4M2KXW6PLRT5B"
	script := `
turns:
  - toolCalls:
      - name: mcp__fs__read_text_file
        arguments: {path: "ROOT/notes/deploy.txt"}
  - text: done
`
	root := t.TempDir()
	writeTxtar(t, root, mcpSecretWS)
	realRoot, _ := filepath.EvalSymlinks(root)
	e := newEnv(t, mcpSecretWS, withScript(strings.ReplaceAll(script, "ROOT", realRoot)),
		withSettings(map[string]any{"mcpServers": map[string]any{
			"fs": map[string]any{"command": node, "args": []string{serverJS, realRoot}},
		}}),
		withEditor(lspclient.Options{Approve: func(string, []string) string { return protocol.ActionAllowOnce }}))
	waitRegistered(t, e)
	evs := e.waitRun(e.ask("main.go", 0, 0, "read the deploy notes"))
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("%+v", last(evs))
	}
	var results int
	for _, ev := range evs {
		if ev.Kind == protocol.EventToolResult {
			results++
			if strings.Contains(ev.Summary, secret) {
				t.Errorf("toolResult summary holds the secret: %q", ev.Summary)
			}
		}
	}
	if results == 0 {
		t.Fatal("no toolResult event")
	}
	for _, m := range e.toolMessages(2) {
		if strings.Contains(m.Content, secret) {
			t.Errorf("the model got the secret: %q", m.Content)
		}
	}
	filepath.Walk(e.state, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			if err == nil && (info.Name() == "repomap" || info.Name() == "search" || info.Name() == "index") {
				return filepath.SkipDir
			}
			return nil
		}
		if b, _ := os.ReadFile(p); strings.Contains(string(b), secret) {
			t.Errorf("the secret is stored in %s", p)
		}
		return nil
	})
}
