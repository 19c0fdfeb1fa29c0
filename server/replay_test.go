package server_test

import (
	"reflect"
	"testing"

	"github.com/cairn-dev/cairn/protocol"
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
