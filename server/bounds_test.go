package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/tools"
)

func startRaw(t *testing.T) (*rawConn, chan error) {
	serverEnd, clientEnd := net.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- server.Serve(context.Background(), serverEnd, serverEnd, server.Options{Getenv: func(string) string { return "" }})
	}()
	t.Cleanup(func() { clientEnd.Close() })
	return &rawConn{t: t, c: clientEnd, r: bufio.NewReader(clientEnd)}, done
}

func errOf(m map[string]any) (float64, string) {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return c, msg
}

// sendRepeated writes n bytes of b without building them in memory.
func (rc *rawConn) sendRepeated(b byte, n int) {
	rc.t.Helper()
	chunk := bytes.Repeat([]byte{b}, 64<<10)
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := rc.c.Write(chunk[:k]); err != nil {
			rc.t.Fatal(err)
		}
		n -= k
	}
}

// TestOversizedInputIsDiscarded: a huge header line and a huge body are
// skipped as they stream in (memory stays far below their size), each is
// answered with an error naming the limit, and the server keeps serving.
func TestOversizedInputIsDiscarded(t *testing.T) {
	rc, _ := startRaw(t)
	const huge = 96 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)

	rc.send("X-Junk: ")
	rc.sendRepeated('a', huge)
	rc.send("\r\n\r\n")
	if code, msg := errOf(rc.next()); code != -32700 || !strings.Contains(msg, "limit of 8192 bytes") {
		t.Fatalf("huge header line: %v %q", code, msg)
	}
	rc.send(fmt.Sprintf("Content-Length: %d\r\n\r\n", huge))
	rc.sendRepeated('{', huge)
	if code, msg := errOf(rc.next()); code != -32600 || !strings.Contains(msg, "exceeds the limit of 67108864 bytes") {
		t.Fatalf("huge body: %v %q", code, msg)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > huge/4 {
		t.Errorf("discarding %d MB allocated %d MB: the input was buffered", 2*huge>>20, grew>>20)
	}
	rc.send(frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"processId":null,"rootUri":"file://%s","capabilities":{}}}`, t.TempDir())))
	if m := rc.next(); m["result"] == nil {
		t.Fatalf("initialize after oversized input: %v", m)
	}
}

// TestShutdownBeforeInitialize answers ServerNotInitialized.
func TestShutdownBeforeInitialize(t *testing.T) {
	rc, _ := startRaw(t)
	rc.send(frame(`{"jsonrpc":"2.0","id":1,"method":"shutdown"}`))
	if code, _ := errOf(rc.next()); code != -32002 {
		t.Fatalf("shutdown before initialize answered code %v, want -32002 (ServerNotInitialized)", code)
	}
}

// TestIDsAreValidatedBeforeUse sends path-like ids to every command that
// takes one and checks each is refused with InvalidParams and nothing is
// written outside the state dir.
func TestIDsAreValidatedBeforeUse(t *testing.T) {
	e := newEnv(t, greetWS, withScript(`turns: [{text: "ok"}]`))
	outside := filepath.Join(filepath.Dir(e.state), "x")
	bad := []string{"../../x", "../x", "..", ".", "/etc/passwd", "a/b", `a\b`, "a\x00b", strings.Repeat("a", 200)}
	cmds := []struct {
		command string
		arg     func(id string) map[string]any
	}{
		{protocol.CommandRewind, func(id string) map[string]any { return map[string]any{"runId": id, "step": 0} }},
		{protocol.CommandResume, func(id string) map[string]any { return map[string]any{"runId": id} }},
		{protocol.CommandCancel, func(id string) map[string]any { return map[string]any{"runId": id} }},
		{protocol.CommandContextReport, func(id string) map[string]any { return map[string]any{"runId": id} }},
		{protocol.CommandAcceptEdit, func(id string) map[string]any { return map[string]any{"editId": id} }},
		{protocol.CommandRejectEdit, func(id string) map[string]any { return map[string]any{"editId": id} }},
		{protocol.CommandGetEdit, func(id string) map[string]any { return map[string]any{"editId": id} }},
		{protocol.CommandUndo, func(id string) map[string]any { return map[string]any{"checkpointId": id} }},
		{protocol.CommandAsk, func(id string) map[string]any {
			return map[string]any{"uri": e.ed.URI("greet/greet.go"), "question": "q", "threadId": id}
		}},
	}
	for _, c := range cmds {
		for _, id := range bad {
			err := e.ed.Execute(e.ctx, c.command, c.arg(id), nil)
			if err == nil || !strings.Contains(err.Error(), "invalid") {
				t.Errorf("%s with id %q: %v, want an invalid-id error", c.command, id, err)
			}
		}
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("a command wrote outside the state dir: %s", outside)
	}
	if _, err := os.Stat(filepath.Join(e.state, "journal.jsonl")); err == nil {
		t.Errorf("a command wrote a journal at the state dir's top")
	}
}

// TestUnansweredApprovalIsDenied: an editor that never answers the approval
// request gets the call denied after the timeout, audited as no answer, and
// the run goes on.
func TestUnansweredApprovalIsDenied(t *testing.T) {
	e := newEnv(t, greetWS, withScript(`turns:
  - toolCalls: [{name: run_command, arguments: {command: "echo ran >> counter.txt"}}]
  - text: "ok"
`), withEditor(lspclient.Options{NeverAnswer: []string{"window/showMessageRequest"}}),
		withServerOptions(func(o *server.Options) { o.ApprovalTimeout = 500 * time.Millisecond }))
	run := e.ask("greet/greet.go", 0, 0, "count")
	evs := e.waitRun(run)
	if l := last(evs); l.Kind != protocol.EventFinished {
		t.Fatalf("run ended %+v; events %s", l, kinds(evs))
	}
	appr := ofKind(evs, protocol.EventApproval)
	if len(appr) != 1 || !strings.Contains(appr[0].Decision, "deny") {
		t.Fatalf("approval events %+v", appr)
	}
	if _, err := os.Stat(filepath.Join(e.root, "counter.txt")); err == nil {
		t.Error("the command ran without an answer")
	}
	recs, err := tools.ReadAudit(filepath.Join(e.state, "audit.jsonl"))
	if err != nil || len(recs) == 0 {
		t.Fatalf("audit: %v %v", recs, err)
	}
	if r := recs[len(recs)-1]; !strings.Contains(r.By, "no answer") || !strings.Contains(r.By, "did not answer") {
		t.Errorf("audit record does not say the editor did not answer: %+v", r)
	}
	if e.ed.Cancelled() == 0 {
		t.Error("the server did not cancel the unanswered request")
	}
}

// TestUnansweredApplyEditFailsAccept: accept does not wait forever on an
// editor that never answers workspace/applyEdit; the edit stays pending.
func TestUnansweredApplyEditFailsAccept(t *testing.T) {
	e := newEnv(t, greetWS, withScript(editScript), withEditor(lspclient.Options{NeverAnswer: []string{"workspace/applyEdit"}}),
		withServerOptions(func(o *server.Options) { o.ClientTimeout = 500 * time.Millisecond }))
	run := e.ask("greet/greet.go", 4, 6, "Add an exclamation mark")
	evs := e.waitRun(run)
	edits := ofKind(evs, protocol.EventEditProposed)
	if len(edits) == 0 {
		t.Fatalf("no edit proposed: %s", kinds(evs))
	}
	res, err := e.ed.Accept(e.ctx, edits[0].EditID)
	if err != nil {
		t.Fatalf("accept: %v", err)
	}
	if res.Applied || !strings.Contains(res.Reason, "did not answer") {
		t.Fatalf("accept with no answer: %+v", res)
	}
	var got protocol.GetEditResult
	if err := e.ed.Execute(e.ctx, protocol.CommandGetEdit, map[string]any{"editId": edits[0].EditID}, &got); err != nil {
		t.Fatal(err)
	}
	for _, h := range got.Hunks {
		if h.State != "pending" {
			t.Errorf("hunk %d is %s after a failed accept, want pending", h.Index, h.State)
		}
	}
}

// TestUnansweredProgressCreate: a client that never answers
// window/workDoneProgress/create holds neither indexing nor runs.
func TestUnansweredProgressCreate(t *testing.T) {
	var turns strings.Builder
	turns.WriteString("turns:\n")
	for range 40 {
		turns.WriteString("  - text: \"ok\"\n")
	}
	e := newEnv(t, greetWS, withScript(turns.String()), withEditor(lspclient.Options{NeverAnswer: []string{"window/workDoneProgress/create"}}),
		withServerOptions(func(o *server.Options) { o.ClientTimeout = 300 * time.Millisecond }))
	// Runs finish, and the index becomes ready (the context stops saying it
	// is still being built).
	for i := 0; ; i++ {
		run := e.ask("greet/greet.go", 0, 0, "hello")
		if l := last(e.waitRun(run)); l.Kind != protocol.EventFinished {
			t.Fatalf("run %d ended %+v", i, l)
		}
		report, err := e.ed.ContextReport(e.ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(report, "still being built") {
			break
		}
		if i == 39 {
			t.Fatal("the index never became ready")
		}
		select {
		case <-e.ctx.Done():
			t.Fatal("the index never became ready")
		case <-time.After(200 * time.Millisecond):
		}
	}
	// The create request is waited on apart from the indexing, so it may
	// still be pending when the index is ready.
	if err := e.ed.WaitUntil(e.ctx, func() bool { return e.ed.Cancelled() > 0 }); err != nil {
		t.Error("the server did not cancel the unanswered create request")
	}
}
