package acp

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

const planScript = `turns:
  - toolCalls:
      - {id: p1, name: update_plan, arguments: {entries: [{content: "Read calc.go", status: pending, priority: high}, {content: "Fix Add", status: pending}]}}
  - toolCalls:
      - {id: p2, name: update_plan, arguments: {entries: [{content: "Read calc.go", status: in_progress, priority: high}, {content: "Fix Add", status: pending}]}}
      - {id: r1, name: read_file, arguments: {path: calc.go}}
  - toolCalls:
      - {id: p3, name: update_plan, arguments: {entries: [{content: "Read calc.go", status: completed, priority: high}, {content: "Fix Add", status: completed}]}}
      - {id: bad, name: update_plan, arguments: {entries: [{content: "x", status: started}]}}
  - text: Done.
`

func plans(updates []sdk.SessionNotification, id sdk.SessionId) [][]sdk.PlanEntry {
	var out [][]sdk.PlanEntry
	for _, u := range updates {
		if u.SessionId == id && u.Update.Plan != nil {
			out = append(out, u.Update.Plan.Entries)
		}
	}
	return out
}

func planString(entries []sdk.PlanEntry) string {
	var parts []string
	for _, e := range entries {
		parts = append(parts, e.Content+":"+string(e.Status)+":"+string(e.Priority))
	}
	return strings.Join(parts, ", ")
}

// The model's update_plan calls become ACP plan updates, the whole list each
// time, with no tool card of their own; an invalid plan goes back to the
// model and shows nothing; session/load replays the plans.
func TestPlanUpdates(t *testing.T) {
	h := newHarness(t, map[string]string{"calc.go": calc}, planScript, harnessConfig{})
	h.mustPrompt(sdk.TextBlock("fix Add in steps"))
	updates, perms, _ := h.client.snapshot()
	want := []string{
		"Read calc.go:pending:high, Fix Add:pending:medium",
		"Read calc.go:in_progress:high, Fix Add:pending:medium",
		"Read calc.go:completed:high, Fix Add:completed:medium",
	}
	got := plans(updates, h.session)
	if len(got) != len(want) {
		t.Fatalf("%d plan updates, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if s := planString(got[i]); s != want[i] {
			t.Errorf("plan %d = %q, want %q", i, s, want[i])
		}
	}
	if len(perms) != 0 {
		t.Errorf("update_plan asked for permission: %+v", perms)
	}
	for _, u := range updates {
		if tc := u.Update.ToolCall; tc != nil && (strings.HasPrefix(string(tc.ToolCallId), "p") || tc.ToolCallId == "bad") {
			t.Errorf("update_plan got a card: %+v", tc)
		}
		if tu := u.Update.ToolCallUpdate; tu != nil && (strings.HasPrefix(string(tu.ToolCallId), "p") || tu.ToolCallId == "bad") {
			t.Errorf("update_plan got a card update: %+v", tu)
		}
	}
	if st := lastStatus(updates, "r1"); st != sdk.ToolCallStatusCompleted {
		t.Errorf("read_file status %q", st)
	}
	reqs := h.provider.Received()
	var okResult, badResult string
	for _, m := range reqs[len(reqs)-1].Messages {
		switch m.ToolCallID {
		case "p3":
			okResult = m.Content
		case "bad":
			badResult = m.Content
		}
	}
	if !strings.Contains(okResult, "2 steps, 2 completed") {
		t.Errorf("the model was told %q for p3", okResult)
	}
	if !strings.Contains(badResult, "status") || !strings.Contains(badResult, "error") {
		t.Errorf("the model was told %q for an invalid plan", badResult)
	}

	h2 := newHarness(t, nil, "turns: []\n", harnessConfig{root: h.root, stateDir: h.stateDir})
	if _, err := h2.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: h.session, Cwd: h.root, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	updates2, _, _ := h2.client.snapshot()
	replayed := plans(updates2, h.session)
	if len(replayed) != len(want) || planString(replayed[len(replayed)-1]) != want[len(want)-1] {
		t.Errorf("replayed plans: %+v", replayed)
	}
}
