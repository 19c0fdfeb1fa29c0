package evals

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestRecordRoundTrip runs a case, drafts a case from its journal with
// Record, and runs the draft: it must pass, on the same workspace text.
func TestRecordRoundTrip(t *testing.T) {
	src := `
turns:
  - text: "Reading."
    toolCalls:
      - name: read_file
        arguments: {path: greet/greet.go}
  - toolCalls:
      - name: edit_file
        arguments: {path: greet/greet.go, oldText: "\"Hello, \" + name", newText: "\"Hello, \" + name + \"!\""}
      - name: read_file
        argumentsRaw: "{oops"
  - text: "Added the exclamation mark.\nThat is all."
actions:
  - open: greet/greet.go
  - ask: {file: greet/greet.go, lines: "4-5", question: "Add an exclamation mark; the key is AKIAZ7VRSQ5CEXAMPLE7"}
  - accept: {}
-- go.mod --
module example.com/g
-- greet/greet.go --
package greet

// Greet returns a greeting.
func Greet(name string) string {
	return "Hello, " + name
}
const token = "ghp_R3dAct1onT3stT0k3nAbCdEfGhIjKlMnOp12"
`
	c, err := ParseCase("src", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := newHarness(ctx, c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	res := &Result{}
	h.res = res
	h.runActions()
	h.waitAll()
	if len(res.Failures) > 0 || len(h.runs) != 1 {
		t.Fatalf("the source case failed: %+v", res.Failures)
	}
	out, notes, err := Record(RecordOptions{StateDir: h.state, Root: h.ws, RunID: h.runs[0]})
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	t.Logf("draft:\n%s\nnotes: %q", text, notes)
	for _, want := range []string{
		"ask:", "lines: 4-5", "name: read_file", "argumentsRaw: '{oops'", "name: edit_file",
		"final: finished", "editProposed: 1", "-- greet/greet.go --", `return "Hello, " + name` + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the draft lacks %q", want)
		}
	}
	for _, secret := range []string{"AKIAZ7VRSQ5CEXAMPLE7", "ghp_R3dAct1onT3stT0k3nAbCdEfGhIjKlMnOp12"} {
		if strings.Contains(text, secret) {
			t.Errorf("the draft holds a secret: %s", secret)
		}
	}
	draft, err := ParseCase("draft", out)
	if err != nil {
		t.Fatal(err)
	}
	if r := RunCase(ctx, draft, Options{}); r.Status != StatusPass {
		t.Fatalf("the draft case does not pass: %+v", r.Failures)
	}
	if _, _, err := Record(RecordOptions{StateDir: h.state, Root: h.ws, RunID: "../x"}); err == nil {
		t.Error("a run id with a path was accepted")
	}
	if _, _, err := Record(RecordOptions{StateDir: h.state, Root: h.ws, RunID: "run-000000000000"}); err == nil {
		t.Error("a missing run was accepted")
	}
}
