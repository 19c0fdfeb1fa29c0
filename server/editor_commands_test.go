package server_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/protocol"
)

// TestProposeEditIsAReviewedProposal: cairn.proposeEdit of a selection
// becomes a run whose one edit is pending review (the file unchanged on
// disk) and, once accepted, is exactly the selection replaced.
func TestProposeEditIsAReviewedProposal(t *testing.T) {
	e := newEnv(t, greetWS+"-- greet/twice.go --\npackage greet\n\nfunc A() int { return 1 }\n\nfunc B() int { return 1 }\n", withScript("turns: []"))
	before := e.read("greet/twice.go")
	var res protocol.AskResult
	// Line 5 (0-based 4) is B's body; "return 1" occurs twice, so the
	// server must widen the replaced text to make it unique.
	rng := protocol.Range{Start: protocol.Position{Line: 4, Character: 0}, End: protocol.Position{Line: 4, Character: 25}}
	if err := e.ed.Execute(e.ctx, protocol.CommandProposeEdit, protocol.ProposeEditParams{URI: e.ed.URI("greet/twice.go"), Range: &rng, NewText: "func B() int { return 2 }"}, &res); err != nil {
		t.Fatal(err)
	}
	evs := e.waitRun(res.RunID)
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("run: %s", kinds(evs))
	}
	props := ofKind(evs, protocol.EventEditProposed)
	if len(props) != 1 {
		t.Fatalf("want one proposal, got %s", kinds(evs))
	}
	if got := e.read("greet/twice.go"); got != before {
		t.Fatalf("the proposal reached the disk before review: %q", got)
	}
	if _, err := e.ed.Accept(e.ctx, props[0].EditID); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(before, "func B() int { return 1 }", "func B() int { return 2 }", 1)
	if got := e.read("greet/twice.go"); got != want {
		t.Fatalf("accepted file = %q, want %q", got, want)
	}
	// The same text again proposes nothing.
	err := e.ed.Execute(e.ctx, protocol.CommandProposeEdit, protocol.ProposeEditParams{URI: e.ed.URI("greet/twice.go"), Range: &rng, NewText: "func B() int { return 2 }"}, &res)
	if err == nil || !strings.Contains(err.Error(), "nothing to propose") {
		t.Fatalf("an unchanged text: err %v", err)
	}
}

// TestContextEventListsPromptFiles: a run sends a context event naming the
// selected file and its lines, and no item that is not a workspace file.
func TestContextEventListsPromptFiles(t *testing.T) {
	e := newEnv(t, greetWS, withScript("turns:\n  - text: ok\n"))
	evs := e.waitRun(e.ask("greet/greet.go", 3, 4, "what does it do?"))
	ctxs := ofKind(evs, protocol.EventContext)
	if len(ctxs) == 0 {
		t.Fatalf("no context event: %s", kinds(evs))
	}
	found := false
	for _, it := range ctxs[len(ctxs)-1].Context {
		if it.Path == "greet/greet.go" && it.Source == "selection" {
			found = it.StartLine <= 4 && it.EndLine >= 5 && it.Tokens > 0
			if !found {
				t.Errorf("selection item %+v, want lines covering 4-5, with tokens", it)
			}
		}
		if it.Path == "" || strings.Contains(it.Path, " ") {
			t.Errorf("not a file: %+v", it)
		}
	}
	if !found {
		t.Fatalf("no selection item in %+v", ctxs[len(ctxs)-1].Context)
	}
}

// TestModelsNamesTheCurrentModel: cairn.models answers the configured
// model first even when the provider cannot list any.
func TestModelsNamesTheCurrentModel(t *testing.T) {
	e := newEnv(t, greetWS, withScript("turns: []"), withSettings(map[string]any{"model": map[string]any{"name": "m-1"}}))
	var res protocol.ModelsResult
	if err := e.ed.Execute(e.ctx, protocol.CommandModels, map[string]any{}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Current != "m-1" || len(res.Available) != 1 || res.Available[0] != "m-1" {
		t.Fatalf("models = %+v", res)
	}
}
