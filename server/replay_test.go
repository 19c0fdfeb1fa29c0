package server_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/trace"
)

// shape is what must be equal between a run and its replay: ids and
// timings differ, the events do not.
func shape(evs []protocol.RunEvent) []string {
	var out []string
	for _, ev := range evs {
		s := ev.Kind + " " + ev.Tool + " " + string(ev.Input) + " " + ev.Summary + " " + ev.Answer
		if ev.Kind == protocol.EventText {
			s = "text"
		}
		out = append(out, s)
	}
	return out
}

func TestReplayGivesTheSameEvents(t *testing.T) {
	state := t.TempDir()
	e := newEnv(t, greetWS, withScript(editScript), withState(state))
	first := e.waitRun(e.ask("greet/greet.go", 4, 6, "Add an exclamation mark"))

	r := newEnv(t, greetWS, withState(state), withSettings(map[string]any{
		"model": map[string]any{"provider": "replay"}, "replay": map[string]any{"run": first[0].RunID},
	}))
	again := r.waitRun(r.ask("greet/greet.go", 4, 6, "Add an exclamation mark"))
	if !reflect.DeepEqual(shape(first), shape(again)) {
		t.Fatalf("replay differs:\n%q\n%q", shape(first), shape(again))
	}
}

func TestRunIsTraced(t *testing.T) {
	e := newEnv(t, greetWS, withScript(editScript))
	run := e.ask("greet/greet.go", 4, 6, "Add an exclamation mark")
	e.waitRun(run)
	store, err := trace.OpenStore(e.state)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := store.Load(run)
	if err != nil {
		t.Fatalf("no trace for the run: %v", err)
	}
	names := map[string]int{}
	for _, sp := range tr.Spans {
		names[sp.Name]++
	}
	if names["invoke_agent cairn"] != 1 || names["execute_tool read_file"] != 2 || names["execute_tool edit_file"] != 1 || names["step 4"] != 1 {
		t.Fatalf("spans: %v", names)
	}
	resps, err := tr.Responses()
	if err != nil || len(resps) != 4 {
		t.Fatalf("recorded responses: %d %v", len(resps), err)
	}
	if u := tr.Summarize(); u.Status != "finished" {
		t.Errorf("summary: %+v", u)
	}
}

func TestContextReportSurvivesRestart(t *testing.T) {
	state := t.TempDir()
	e := newEnv(t, greetWS, withScript("turns:\n  - text: ok\n"), withState(state))
	run := e.ask("greet/greet.go", 4, 6, "What does Greet return?")
	e.waitRun(run)
	e2 := newEnv(t, greetWS, withScript("turns: []"), withState(state))
	md, err := e2.ed.ContextReport(e2.ctx, run)
	if err != nil || !strings.Contains(md, "What does Greet return?") || !strings.Contains(md, "| selection |") {
		t.Fatalf("stored report: %v\n%s", err, md)
	}
}
