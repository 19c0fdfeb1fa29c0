package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/server"
)

// TestCancelRequestNamesTheRequest: when the server gives up on a request
// the editor never answered, its $/cancelRequest carries that request's id
// as it went out (not {}), so the editor can drop it.
func TestCancelRequestNamesTheRequest(t *testing.T) {
	e := newEnv(t, greetWS, withScript(`turns:
  - toolCalls: [{name: run_command, arguments: {command: "echo ran >> counter.txt"}}]
  - text: "ok"
`), withEditor(lspclient.Options{NeverAnswer: []string{"window/showMessageRequest"}}),
		withServerOptions(func(o *server.Options) { o.ApprovalTimeout = 300 * time.Millisecond }))
	run := e.ask("greet/greet.go", 0, 0, "count")
	if l := last(e.waitRun(run)); l.Kind != protocol.EventFinished {
		t.Fatalf("run ended %+v", l)
	}
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	err := e.ed.WaitUntil(ctx, func() bool {
		u := e.ed.Unanswered()
		return len(u) > 0 && slices.Contains(e.ed.CancelledIDs(), u[0])
	})
	if err != nil {
		t.Fatalf("no $/cancelRequest named the unanswered request %v; cancels named %v", e.ed.Unanswered(), e.ed.CancelledIDs())
	}
	for _, id := range e.ed.CancelledIDs() {
		if !slices.Contains(e.ed.Unanswered(), id) {
			t.Errorf("a $/cancelRequest named %s, which is no request the editor left unanswered (%v)", id, e.ed.Unanswered())
		}
	}
}

// TestIndexReadyWhileProgressCreateUnanswered: progress reporting never
// holds up indexing. With the default client timeout (60 s), an editor that
// never answers window/workDoneProgress/create sees the index ready within
// the same deadline as an editor that answers — a deadline far below the
// timeout the create request would otherwise hold the index for.
func TestIndexReadyWhileProgressCreateUnanswered(t *testing.T) {
	const deadline = 20 * time.Second
	for _, tc := range []struct {
		name   string
		editor lspclient.Options
	}{
		{"answers", lspclient.Options{}},
		{"never answers", lspclient.Options{NeverAnswer: []string{"window/workDoneProgress/create"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var turns strings.Builder
			turns.WriteString("turns:\n")
			for range 400 {
				turns.WriteString("  - text: \"ok\"\n")
			}
			e := newEnv(t, greetWS, withScript(turns.String()), withEditor(tc.editor))
			ctx, cancel := context.WithTimeout(e.ctx, deadline)
			defer cancel()
			for i := 0; ; i++ {
				run := e.ask("greet/greet.go", 0, 0, "hello")
				evs, err := e.ed.WaitRun(ctx, run)
				if err != nil {
					t.Fatalf("run %d did not end within %s: %v", i, deadline, err)
				}
				if l := last(evs); l.Kind != protocol.EventFinished {
					t.Fatalf("run %d ended %+v", i, l)
				}
				report, err := e.ed.ContextReport(ctx, run)
				if err != nil {
					t.Fatalf("context report: %v", err)
				}
				if !strings.Contains(report, "still being built") {
					return
				}
				select {
				case <-ctx.Done():
					t.Fatalf("the index was not ready within %s (the last report: %s)", deadline, report)
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
	}
}
