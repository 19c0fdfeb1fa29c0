package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/tools"
)

// rawAgent is the adapter on raw newline-delimited JSON-RPC, as a client
// that writes whatever it likes to `cairn acp`'s stdin.
type rawAgent struct {
	in      *io.PipeWriter
	lines   chan map[string]any // every message the agent wrote
	serving chan struct{}       // closed when Serve returns
	err     error               // what Serve returned, once serving is closed
	cancel  context.CancelFunc
}

func startRaw(t *testing.T, root, stateDir string) *rawAgent {
	t.Helper()
	s, err := model.ParseScript([]byte("turns:\n  - text: ok\n"))
	if err != nil {
		t.Fatal(err)
	}
	provider := model.NewScripted(s)
	opts := Options{
		Version:  "test",
		StateDir: func(string) (string, error) { return stateDir, nil },
		Configure: func(root, stateDir string) Setup {
			return Setup{Run: agent.Config{Provider: provider}, Policy: tools.DefaultPolicy()}
		},
		Environ: []string{"PATH=" + os.Getenv("PATH")},
	}
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	r := &rawAgent{in: clientOut, lines: make(chan map[string]any, 1024), serving: make(chan struct{}), cancel: cancel}
	go func() {
		r.err = Serve(ctx, agentIn, agentOut, opts)
		close(r.serving)
	}()
	go func() {
		sc := bufio.NewScanner(clientIn)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				select {
				case r.lines <- m:
				default: // nobody waits for it
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = clientOut.Close()
		cancel()
		select {
		case <-r.serving:
			if r.err != nil {
				t.Errorf("Serve: %v", r.err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Serve did not return after the client went away")
		}
	})
	return r
}

// call writes a request and waits (generous deadline) for its answer.
func (r *rawAgent) call(t *testing.T, id int, method string, params any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := r.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("writing %s: %v", method, err)
	}
	deadline := time.After(60 * time.Second)
	for {
		select {
		case m := <-r.lines:
			if v, ok := m["id"].(float64); ok && int(v) == id {
				return m
			}
		case <-r.serving:
			t.Fatalf("the agent stopped serving (Serve returned %v) before answering %s", r.err, method)
		case <-deadline:
			t.Fatalf("no answer to %s", method)
		}
	}
}

// TestNotificationFloodKeepsServing: 20,000 session/cancel notifications
// (and other notifications nobody handles) in a row do not end the
// connection: the SDK's notification queue never overflows, and a request
// sent after the flood is answered.
func TestNotificationFloodKeepsServing(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startRaw(t, root, t.TempDir())
	r.call(t, 1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	resp := r.call(t, 2, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
	result, _ := resp["result"].(map[string]any)
	sid, _ := result["sessionId"].(string)
	if sid == "" {
		t.Fatalf("session/new: %v", resp)
	}
	// The flood, written as fast as the agent takes it, in one goroutine
	// (the pipe blocks while the agent applies back-pressure).
	flood := make(chan error, 1)
	go func() {
		var buf []byte
		for i := range 20000 {
			switch i % 4 {
			case 0:
				buf = fmt.Appendf(buf, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":%q}}`+"\n", sid)
			case 1:
				buf = fmt.Appendf(buf, `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"nope-%d"}}`+"\n", i)
			case 2:
				buf = fmt.Appendf(buf, `{"jsonrpc":"2.0","method":"no/such/notification","params":{"i":%d}}`+"\n", i)
			case 3:
				buf = fmt.Appendf(buf, `{"jsonrpc":"2.0","method":"session/cancel","params":{}}`+"\n")
			}
			if len(buf) > 64<<10 {
				if _, err := r.in.Write(buf); err != nil {
					flood <- err
					return
				}
				buf = buf[:0]
			}
		}
		_, err := r.in.Write(buf)
		flood <- err
	}()
	select {
	case err := <-flood:
		if err != nil {
			t.Fatalf("the agent stopped reading during the flood: %v", err)
		}
	case <-r.serving:
		t.Fatalf("the agent stopped serving during the flood (Serve returned %v)", r.err)
	case <-time.After(2 * time.Minute):
		t.Fatal("the flood was not read")
	}
	// A new session (the flood's cancels may still be cancelling the first
	// one's turns), then a prompt that must be answered.
	resp = r.call(t, 3, "session/new", map[string]any{"cwd": root, "mcpServers": []any{}})
	result, _ = resp["result"].(map[string]any)
	sid2, _ := result["sessionId"].(string)
	if sid2 == "" {
		t.Fatalf("session/new after the flood: %v", resp)
	}
	resp = r.call(t, 4, "session/prompt", map[string]any{"sessionId": sid2, "prompt": []any{map[string]any{"type": "text", "text": "hello"}}})
	if result, _ := resp["result"].(map[string]any); result["stopReason"] != "end_turn" {
		t.Fatalf("session/prompt after the flood: %v", resp)
	}
}
