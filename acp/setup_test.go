package acp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
)

func TestAuthenticateUnknownMethod(t *testing.T) {
	h := newHarness(t, map[string]string{"a.txt": "a\n"}, "turns: []\n", harnessConfig{})
	_, err := h.conn.Authenticate(context.Background(), sdk.AuthenticateRequest{MethodId: "oauth"})
	if err == nil || !strings.Contains(err.Error(), "unknown authentication method") {
		t.Fatalf("authenticate with an unknown method: %v", err)
	}
}

func TestEnvArrays(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/w","mcpServers":[` +
		`{"name":"a","command":"/bin/a","args":[],"env":{"B":"2","A":"1","N":3}},` +
		`{"name":"b","command":"/bin/b","args":[],"env":[{"name":"X","value":"y"}]}]}}` + "\n")
	fixed, ok := envArrays(line)
	if !ok {
		t.Fatal("an env object was not rewritten")
	}
	var req struct {
		ID     int                   `json:"id"`
		Params sdk.NewSessionRequest `json:"params"`
	}
	if err := json.Unmarshal(fixed, &req); err != nil {
		t.Fatalf("the rewritten line does not decode as session/new: %v\n%s", err, fixed)
	}
	got := req.Params.McpServers[0].Stdio.Env
	var pairs []string
	for _, e := range got {
		pairs = append(pairs, e.Name+"="+e.Value)
	}
	if req.ID != 3 || strings.Join(pairs, ",") != "A=1,B=2,N=3" {
		t.Errorf("id %d, env = %v", req.ID, pairs)
	}
	if e := req.Params.McpServers[1].Stdio.Env; len(e) != 1 || e[0].Name != "X" {
		t.Errorf("the array env changed: %+v", e)
	}
	if _, ok := envArrays([]byte(`{"method":"session/new","params":{"mcpServers":[{"name":"a","env":[]}]}}`)); ok {
		t.Error("an env array was rewritten")
	}
	// An http server's headers given as an object are taken alike.
	fixed, ok = envArrays([]byte(`{"id":4,"method":"session/new","params":{"cwd":"/w","mcpServers":[` +
		`{"type":"http","name":"h","url":"http://x/mcp","headers":{"Authorization":"Bearer k"}}]}}`))
	if !ok {
		t.Fatal("a headers object was not rewritten")
	}
	if err := json.Unmarshal(fixed, &req); err != nil {
		t.Fatalf("the rewritten line does not decode: %v\n%s", err, fixed)
	}
	if hs := req.Params.McpServers[0].Http; hs == nil || len(hs.Headers) != 1 || hs.Headers[0].Value != "Bearer k" {
		t.Errorf("headers = %+v", req.Params.McpServers[0])
	}
}

// A session saved by an earlier process in another folder is listed without
// a cwd and deleted without opening its folder.
func TestSavedSessionsListedAndDeleted(t *testing.T) {
	stateDir := t.TempDir()
	roots := filepath.Join(t.TempDir(), "roots.json")
	h := newHarness(t, map[string]string{"a.txt": "a\n"}, "turns:\n  - text: hello\n",
		harnessConfig{stateDir: stateDir, perRootState: true, rootsFile: roots})
	h.mustPrompt(sdk.TextBlock("a saved question"))

	a := newAdapter(context.Background(), Options{RootsFile: roots,
		StateDir: func(root string) (string, error) { return rootStateDir(stateDir, root), nil }})
	list, err := a.ListSessions(context.Background(), sdk.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != h.session || list.Sessions[0].Cwd != h.root {
		t.Fatalf("session/list without cwd = %+v, want %s in %s", list.Sessions, h.session, h.root)
	}
	if len(a.workspaces) != 0 {
		t.Error("listing opened the workspace")
	}
	if err := a.deleteSession(json.RawMessage(`{"sessionId":"thread-nope"}`)); err == nil {
		t.Error("deleting an unknown session succeeded")
	}
	if err := a.deleteSession(json.RawMessage(`{"sessionId":"` + string(h.session) + `"}`)); err != nil {
		t.Fatalf("session/delete: %v", err)
	}
	if agent.ThreadExists(rootStateDir(stateDir, h.root), string(h.session)) {
		t.Error("the thread is still on disk")
	}
	if list, _ := a.ListSessions(context.Background(), sdk.ListSessionsRequest{}); len(list.Sessions) != 0 {
		t.Errorf("listed after delete: %+v", list.Sessions)
	}
}
