package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/server"
)

// rawConn speaks bytes to a server, to send what no client library would.
type rawConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func (rc *rawConn) send(s string) {
	rc.t.Helper()
	rc.c.SetWriteDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(rc.c, s); err != nil {
		rc.t.Fatal(err)
	}
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

// next reads frames until one that is a response (skipping notifications).
func (rc *rawConn) next() map[string]any {
	rc.t.Helper()
	for {
		rc.c.SetReadDeadline(time.Now().Add(time.Minute))
		n := -1
		for {
			line, err := rc.r.ReadString('\n')
			if err != nil {
				rc.t.Fatalf("reading a frame: %v", err)
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(rc.r, body); err != nil {
			rc.t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			rc.t.Fatalf("server sent invalid JSON: %s", body)
		}
		if _, ok := m["method"]; ok {
			continue
		}
		return m
	}
}

func TestMalformedFramesKeepServing(t *testing.T) {
	serverEnd, clientEnd := net.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- server.Serve(context.Background(), serverEnd, serverEnd, server.Options{Getenv: func(string) string { return "" }})
	}()
	rc := &rawConn{t: t, c: clientEnd, r: bufio.NewReader(clientEnd)}
	errCode := func(m map[string]any) float64 {
		e, _ := m["error"].(map[string]any)
		c, _ := e["code"].(float64)
		return c
	}
	rc.send(frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{`)) // truncated JSON
	if m := rc.next(); errCode(m) != -32700 || m["id"] != nil {
		t.Fatalf("truncated JSON: %v", m)
	}
	rc.send("X-Nonsense\r\n\r\n") // header block without Content-Length
	if m := rc.next(); errCode(m) != -32700 {
		t.Fatalf("missing Content-Length: %v", m)
	}
	rc.send(frame(`{"hello":"world"}`)) // JSON, not JSON-RPC
	if m := rc.next(); errCode(m) != -32600 && errCode(m) != -32700 {
		t.Fatalf("not JSON-RPC: %v", m)
	}
	rc.send(frame(`{"jsonrpc":"2.0","id":2,"method":"workspace/executeCommand","params":{"command":"cairn.ask","arguments":[{}]}}`))
	if m := rc.next(); errCode(m) != -32002 {
		t.Fatalf("command before initialize: %v", m)
	}
	root := t.TempDir()
	rc.send(frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"processId":null,"rootUri":"file://%s","capabilities":{}}}`, root)))
	m := rc.next()
	res, _ := m["result"].(map[string]any)
	caps, _ := res["capabilities"].(map[string]any)
	cmds, _ := caps["executeCommandProvider"].(map[string]any)["commands"].([]any)
	if len(cmds) < len(protocol.Commands)-2 {
		t.Fatalf("initialize after bad frames: %v", m)
	}
	for _, want := range []string{protocol.CommandAsk, protocol.CommandCancel, protocol.CommandResume, protocol.CommandAcceptEdit,
		protocol.CommandRejectEdit, protocol.CommandUndo, protocol.CommandRewind, protocol.CommandContextReport} {
		if !strings.Contains(fmt.Sprint(cmds), want) {
			t.Errorf("executeCommandProvider lacks %s", want)
		}
	}
	if sync, _ := caps["textDocumentSync"].(map[string]any); sync["change"] != float64(2) {
		t.Errorf("textDocumentSync is not incremental: %v", caps["textDocumentSync"])
	}
	// The client vanishes: the server must return.
	clientEnd.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a vanished client should not count as a clean exit")
		}
	case <-time.After(time.Minute):
		t.Fatal("the server did not stop when its client went away")
	}
}

func TestShutdownExitIsClean(t *testing.T) {
	serverEnd, clientEnd := net.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- server.Serve(context.Background(), serverEnd, serverEnd, server.Options{Getenv: func(string) string { return "" }})
	}()
	rc := &rawConn{t: t, c: clientEnd, r: bufio.NewReader(clientEnd)}
	rc.send(frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://%s","capabilities":{}}}`, t.TempDir())))
	rc.next()
	rc.send(frame(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`))
	if m := rc.next(); m["error"] != nil {
		t.Fatalf("shutdown: %v", m)
	}
	rc.send(frame(`{"jsonrpc":"2.0","method":"exit"}`))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("clean exit returned %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("exit did not stop the server")
	}
}

// sse writes an OpenAI Chat Completions stream, one event per flush.
func sse(w http.ResponseWriter, events ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	f := w.(http.Flusher)
	for _, ev := range events {
		fmt.Fprintf(w, "data: %s\n\n", ev)
		f.Flush()
	}
}

func TestOpenAIStreamCutMidwayFailsRunKeepsServing(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		// A stream that stops mid tool call, without finish_reason or [DONE].
		sse(w, `{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"Let me"}}]}`,
			`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":"{\"pa"}}]}}]}`)
	}))
	defer srv.Close()
	e := newEnv(t, greetWS, withSettings(map[string]any{
		"model": map[string]any{"provider": "openai", "name": "gpt-test", "baseURL": srv.URL + "/v1"},
	}))
	evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "q"))
	checkSeq(t, evs)
	if l := last(evs); l.Kind != protocol.EventFailed || l.Class != "bad_response" {
		t.Fatalf("want failed/bad_response, got %+v", l)
	}
	if calls.Load() < 2 {
		t.Errorf("a cut stream should be retried; the endpoint saw %d calls", calls.Load())
	}
	var runs []map[string]any
	if err := e.ed.Execute(e.ctx, protocol.CommandListRuns, map[string]any{}, &runs); err != nil || len(runs) != 1 {
		t.Fatalf("still serving? %v %v", runs, err)
	}
}
