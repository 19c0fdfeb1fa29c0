package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestUpdatePlan(t *testing.T) {
	reg := NewRegistry()
	if err := reg.Register(UpdatePlan()); err != nil {
		t.Fatal(err)
	}
	tool, _ := reg.Get("update_plan")
	in, err := tool.Validate(`{"entries":[{"content":" Read a.go ","status":"completed"},{"content":"Fix it","status":"in_progress","priority":"high"},{"content":"Test","status":"pending","priority":"low"}]}`)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tool.Invoke(context.Background(), &Env{}, in)
	if err != nil || res.IsError {
		t.Fatalf("invoke: %v %+v", err, res)
	}
	want := []PlanEntry{{"Read a.go", "completed", "medium"}, {"Fix it", "in_progress", "high"}, {"Test", "pending", "low"}}
	if len(res.Plan) != 3 {
		t.Fatalf("plan %+v", res.Plan)
	}
	for i := range want {
		if res.Plan[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, res.Plan[i], want[i])
		}
	}
	if !strings.Contains(res.Content, "3 steps, 1 completed, 1 in progress, 1 pending") {
		t.Errorf("content %q", res.Content)
	}
	// The schema refuses what ParsePlan would; ParsePlan alone (a replay)
	// refuses it too.
	for _, bad := range []string{`{"entries":[]}`, `{"entries":[{"content":"x","status":"started"}]}`, `{"entries":[{"content":"  ","status":"pending"}]}`, `{"entries":[{"content":"x","status":"pending","priority":"urgent"}]}`} {
		if _, err := ParsePlan(json.RawMessage(bad)); err == nil {
			t.Errorf("ParsePlan accepted %s", bad)
		}
	}
	if _, err := tool.Validate(`{"entries":[{"content":"x","status":"started"}]}`); err == nil {
		t.Error("the schema accepted status started")
	}
}
