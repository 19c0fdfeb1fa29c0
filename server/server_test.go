package server_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/workspace"
)

const greetWS = `
-- go.mod --
module example.com/g

go 1.22
-- greet/greet.go --
package greet

// Greet returns a greeting.
func Greet(name string) string {
	return "Hello, " + name
}
-- notes/ünï.txt --
naïve 🙂 text
`

const editScript = `
turns:
  - text: "Reading."
    toolCalls:
      - name: read_file
        arguments: {path: greet/greet.go}
  - toolCalls:
      - name: edit_file
        arguments: {path: greet/greet.go, oldText: "\"Hello, \" + name", newText: "\"Hello, \" + name + \"!\""}
  - toolCalls:
      - name: read_file
        arguments: {path: greet/greet.go, startLine: 4, endLine: 6}
  - text: "Added the exclamation mark."
`

func TestAskEditAcceptUndo(t *testing.T) {
	e := newEnv(t, greetWS, withScript(editScript))
	e.open("greet/greet.go")
	orig := e.read("greet/greet.go")
	run := e.ask("greet/greet.go", 4, 6, "Add an exclamation mark")
	evs := e.waitRun(run)
	checkSeq(t, evs)
	if k := last(evs).Kind; k != protocol.EventFinished {
		t.Fatalf("run ended with %s: %+v", k, last(evs))
	}
	if got := last(evs).Answer; got != "Added the exclamation mark." {
		t.Errorf("answer = %q", got)
	}
	if u := last(evs).Usage; u == nil || u.InputTokens == 0 {
		t.Errorf("finished event has no usage: %+v", u)
	}
	proposed := ofKind(evs, protocol.EventEditProposed)
	if len(proposed) != 1 {
		t.Fatalf("want 1 editProposed, got %s", kinds(evs))
	}
	if !strings.Contains(string(proposed[0].Edit), `"documentChanges"`) || !strings.Contains(string(proposed[0].Edit), `"version"`) {
		t.Errorf("editProposed should carry a versioned WorkspaceEdit: %s", proposed[0].Edit)
	}
	// Nothing is written before the user accepts.
	if got := e.read("greet/greet.go"); got != orig {
		t.Fatalf("the file changed before accept:\n%s", got)
	}
	// The run's later read_file saw its own proposal.
	tm := e.toolMessages(4)
	if len(tm) != 3 || !strings.Contains(tm[2].Content, `"Hello, " + name + "!"`) {
		t.Fatalf("the second read_file did not see the proposed edit: %+v", tm)
	}

	res, err := e.ed.Accept(e.ctx, proposed[0].EditID)
	if err != nil || !res.Applied || res.CheckpointID == "" {
		t.Fatalf("accept: %+v, %v", res, err)
	}
	want := strings.Replace(orig, `"Hello, " + name`, `"Hello, " + name + "!"`, 1)
	if got := e.read("greet/greet.go"); got != want {
		t.Fatalf("after accept:\n%s\nwant:\n%s", got, want)
	}
	// A second accept of the same edit is refused.
	if _, err := e.ed.Accept(e.ctx, proposed[0].EditID); err == nil {
		t.Error("accepting twice succeeded")
	}
	u, err := e.ed.Undo(e.ctx, res.CheckpointID)
	if err != nil || !u.Applied {
		t.Fatalf("undo: %+v, %v", u, err)
	}
	if got := e.read("greet/greet.go"); got != orig {
		t.Fatalf("undo did not restore byte for byte:\n%q\nwant\n%q", got, orig)
	}
	if _, err := e.ed.Undo(e.ctx, res.CheckpointID); err == nil {
		t.Error("undoing twice succeeded")
	}
}

func TestUndoRefusesWhenUserChangedFile(t *testing.T) {
	e := newEnv(t, greetWS, withScript(editScript))
	e.open("greet/greet.go")
	evs := e.waitRun(e.ask("greet/greet.go", 4, 6, "Add an exclamation mark"))
	res, err := e.ed.Accept(e.ctx, ofKind(evs, protocol.EventEditProposed)[0].EditID)
	if err != nil || !res.Applied {
		t.Fatalf("accept: %+v %v", res, err)
	}
	text, _ := e.ed.Text("greet/greet.go")
	if err := e.ed.Type(e.ctx, "greet/greet.go", text+"\n// my own change\n"); err != nil {
		t.Fatal(err)
	}
	_, err = e.ed.Undo(e.ctx, res.CheckpointID)
	if err == nil || !strings.Contains(err.Error(), "greet/greet.go") {
		t.Fatalf("undo after a user edit: err = %v, want a refusal naming the file", err)
	}
	if got, _ := e.ed.Text("greet/greet.go"); !strings.Contains(got, "// my own change") {
		t.Fatal("the user's text was lost")
	}
}

func TestRejectDropsDraft(t *testing.T) {
	script := `
turns:
  - toolCalls:
      - name: edit_file
        arguments: {path: greet/greet.go, oldText: "Hello", newText: "Hi"}
  - text: done
`
	e := newEnv(t, greetWS, withScript(script))
	evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "say hi"))
	id := ofKind(evs, protocol.EventEditProposed)[0].EditID
	if err := e.ed.Reject(e.ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ed.Accept(e.ctx, id); err == nil {
		t.Fatal("accepting a rejected edit succeeded")
	}
	if strings.Contains(e.read("greet/greet.go"), "Hi") {
		t.Fatal("a rejected edit reached the disk")
	}
}

func TestCreateFileAcceptUndoDeletes(t *testing.T) {
	script := `
turns:
  - toolCalls:
      - name: edit_file
        arguments: {path: greet/greet_test.go, oldText: "", newText: "package greet\n"}
  - text: created
`
	e := newEnv(t, greetWS, withScript(script))
	evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "add a test file"))
	res, err := e.ed.Accept(e.ctx, ofKind(evs, protocol.EventEditProposed)[0].EditID)
	if err != nil || !res.Applied {
		t.Fatalf("accept: %+v %v", res, err)
	}
	if got := e.read("greet/greet_test.go"); got != "package greet\n" {
		t.Fatalf("created file = %q", got)
	}
	if _, err := e.ed.Undo(e.ctx, res.CheckpointID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.root, "greet/greet_test.go")); !os.IsNotExist(err) {
		t.Fatalf("undo of a created file should delete it: %v", err)
	}
}

func TestInvalidToolCallsGoBackToModel(t *testing.T) {
	script := `
turns:
  - toolCalls:
      - name: no_such_tool
        arguments: {}
      - name: read_file
        argumentsRaw: "{not json"
      - name: read_file
        arguments: {path: greet/greet.go, extra: 1}
      - name: read_file
        arguments: {path: "../outside.txt"}
      - name: read_file
        arguments: {path: "/etc/passwd"}
      - name: read_file
        arguments: {path: "link/secret.txt"}
      - name: edit_file
        arguments: {path: ".git/config", oldText: "", newText: "x"}
      - name: read_file
        arguments: {path: "notes/ünï.txt"}
  - text: "I could read only the notes."
`
	e := newEnv(t, greetWS, withScript(script))
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("top secret"), 0o644)
	if err := os.Symlink(outside, filepath.Join(e.root, "link")); err != nil {
		t.Fatal(err)
	}
	evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "try things"))
	checkSeq(t, evs)
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("run should go on after invalid calls: %+v", last(evs))
	}
	tm := e.toolMessages(2)
	if len(tm) != 8 {
		t.Fatalf("want 8 tool results, got %d", len(tm))
	}
	wants := []string{"unknown tool", "not valid JSON", "schema", "outside the workspace", "outside the workspace", "leaves the workspace", ".git", "naïve 🙂 text"}
	for i, w := range wants {
		if !strings.Contains(tm[i].Content, w) {
			t.Errorf("tool result %d = %q, want it to mention %q", i, tm[i].Content, w)
		}
		if i < 7 && !strings.HasPrefix(tm[i].Content, "error:") {
			t.Errorf("tool result %d should be an error: %q", i, tm[i].Content)
		}
	}
	for _, m := range tm {
		if strings.Contains(m.Content, "top secret") {
			t.Fatal("a symlink let the model read outside the workspace")
		}
	}
	results := ofKind(evs, protocol.EventToolResult)
	if len(results) != 8 || *results[0].OK || !*results[7].OK {
		t.Errorf("toolResult events wrong: %+v", results)
	}
}

func TestRepeatedInvalidToolCallsFailRun(t *testing.T) {
	script := `
turns:
  - toolCalls: [{name: read_file, argumentsRaw: "{"}]
  - toolCalls: [{name: read_file, argumentsRaw: "{{"}]
  - text: never reached
`
	e := newEnv(t, greetWS, withScript(script))
	evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "q"))
	if l := last(evs); l.Kind != protocol.EventFailed || l.Class != "invalid_tool_call" {
		t.Fatalf("want failed/invalid_tool_call, got %+v", l)
	}
}

func TestCancelStopsStalledModel(t *testing.T) {
	script := `
turns:
  - text: "thinking"
    stall: true
`
	e := newEnv(t, greetWS, withScript(script))
	run := e.ask("greet/greet.go", 0, 0, "q")
	if _, err := e.ed.WaitKind(e.ctx, run, protocol.EventText); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.Cancel(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	evs := e.waitRun(run)
	checkSeq(t, evs)
	if last(evs).Kind != protocol.EventCancelled {
		t.Fatalf("want cancelled, got %s", kinds(evs))
	}
}

func TestCancelRequestCancelsAskRun(t *testing.T) {
	e := newEnv(t, greetWS, withScript("turns:\n  - stall: true\n"))
	var ref protocol.RunRef
	id, err := e.ed.ExecuteID(e.ctx, protocol.CommandAsk, protocol.AskParams{URI: e.ed.URI("greet/greet.go"), Question: "q"}, &ref)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := id.Number()
	if err := e.ed.Conn().Notify(e.ctx, "$/cancelRequest", map[string]any{"id": n}); err != nil {
		t.Fatal(err)
	}
	if evs := e.waitRun(ref.RunID); last(evs).Kind != protocol.EventCancelled {
		t.Fatalf("want cancelled, got %s", kinds(evs))
	}
}

func TestConcurrentRunsAreIndependent(t *testing.T) {
	script := `
turns:
  - text: "thinking"
    stall: true
  - text: "second run answers"
`
	e := newEnv(t, greetWS, withScript(script))
	first := e.ask("greet/greet.go", 0, 0, "one")
	// Wait until the first run holds the stalling turn.
	if _, err := e.ed.WaitKind(e.ctx, first, protocol.EventText); err != nil {
		t.Fatal(err)
	}
	second := e.ask("greet/greet.go", 0, 0, "two")
	if evs := e.waitRun(second); last(evs).Kind != protocol.EventFinished {
		t.Fatalf("second run: %s", kinds(evs))
	}
	if err := e.ed.Cancel(e.ctx, first); err != nil {
		t.Fatal(err)
	}
	if evs := e.waitRun(first); last(evs).Kind != protocol.EventCancelled {
		t.Fatalf("first run: %s", kinds(evs))
	}
}

func TestCodeActions(t *testing.T) {
	e := newEnv(t, greetWS, withScript("turns: []"))
	e.open("greet/greet.go")
	// nme is undefined on line 5 (4 in LSP): once forwarded with
	// cairn/didChangeDiagnostics, and as editors send it again in the
	// request's context (without a source this time).
	inContext := map[string]any{
		"range":    map[string]any{"start": map[string]any{"line": 4, "character": 1}, "end": map[string]any{"line": 4, "character": 5}},
		"severity": 1, "message": "undefined: nme",
	}
	type action struct {
		title, question string
	}
	rng := map[string]any{"start": map[string]any{"line": 3, "character": 0}, "end": map[string]any{"line": 5, "character": 0}}
	actions := func(contextDiags ...any) []action {
		var raw []struct {
			Title   string `json:"title"`
			Command struct {
				Command   string               `json:"command"`
				Arguments []protocol.AskParams `json:"arguments"`
			} `json:"command"`
		}
		params := map[string]any{
			"textDocument": map[string]any{"uri": e.ed.URI("greet/greet.go")},
			"range":        rng,
			"context":      map[string]any{"diagnostics": append([]any{}, contextDiags...)},
		}
		if _, err := e.ed.Conn().Call(e.ctx, "textDocument/codeAction", params, &raw); err != nil {
			t.Fatal(err)
		}
		var out []action
		for _, a := range raw {
			if a.Command.Command != protocol.CommandAsk || len(a.Command.Arguments) != 1 || a.Command.Arguments[0].Question == "" {
				t.Errorf("action %q does not carry a cairn.ask command: %+v", a.Title, a.Command)
				continue
			}
			out = append(out, action{a.Title, a.Command.Arguments[0].Question})
		}
		return out
	}
	if got := actions(); len(got) != 1 || !strings.Contains(got[0].title, "Explain") {
		t.Fatalf("without diagnostics: %v", got)
	}
	// A bare cursor (what VS Code's lightbulb and eglot without a region
	// send on every line) is not offered "Explain": it needs picked code.
	cursor := map[string]any{"line": 4, "character": 2}
	rng = map[string]any{"start": cursor, "end": cursor}
	if got := actions(); len(got) != 0 {
		t.Fatalf("on a bare cursor without diagnostics: %v", got)
	}
	wantFix := fmt.Sprintf(server.QuestionFix, "- line 5: error: undefined: nme")
	// A diagnostic under the cursor still gets its quick fix.
	if got := actions(inContext); len(got) != 1 || got[0].title != server.TitleFix || got[0].question != wantFix {
		t.Fatalf("on a bare cursor with a diagnostic: %q", got)
	}
	rng = map[string]any{"start": map[string]any{"line": 3, "character": 0}, "end": map[string]any{"line": 5, "character": 0}}
	if got := actions(inContext); len(got) != 2 || got[1].title != server.TitleFix || got[1].question != wantFix {
		t.Fatalf("with a diagnostic in the context: %q", got)
	}
	err := e.ed.SendDiagnostics(e.ctx, "greet/greet.go", []workspace.Diagnostic{{
		Range:    workspace.Range{Start: workspace.Position{Line: 4, Character: 1}, End: workspace.Position{Line: 4, Character: 5}},
		Severity: workspace.SeverityError, Source: "compiler", Message: "undefined: nme",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := actions(); len(got) != 2 || got[1].question != wantFix {
		t.Fatalf("with a forwarded diagnostic: %q", got)
	}
	// Sent both ways, it is listed once.
	if got := actions(inContext); len(got) != 2 || got[1].question != wantFix {
		t.Fatalf("with the diagnostic sent both ways:\n%q\nwant the question\n%q", got, wantFix)
	}
}

func TestDiagnosticsReachThePrompt(t *testing.T) {
	e := newEnv(t, greetWS, withScript("turns:\n  - text: ok\n"))
	e.ed.SendDiagnostics(e.ctx, "greet/greet.go", []workspace.Diagnostic{{
		Range:    workspace.Range{Start: workspace.Position{Line: 4, Character: 1}, End: workspace.Position{Line: 4, Character: 5}},
		Severity: workspace.SeverityError, Message: "undefined: nme",
	}})
	run := e.ask("greet/greet.go", 4, 6, "fix it")
	e.waitRun(run)
	msgs := e.provider.Received()[0].Messages
	if !strings.Contains(msgs[1].Content, "undefined: nme") || !strings.Contains(msgs[1].Content, "greet/greet.go:5") {
		t.Fatalf("the diagnostic is not in the prompt:\n%s", msgs[1].Content)
	}
	report, err := e.ed.ContextReport(e.ctx, run)
	if err != nil || !strings.Contains(report, "diagnostics") || !strings.Contains(report, "available for messages") {
		t.Fatalf("context report: %v\n%s", err, report)
	}
}

func TestIncrementalChangesKeepOverlayInOrder(t *testing.T) {
	e := newEnv(t, greetWS, withScript("turns:\n  - text: ok\n"))
	e.open("notes/ünï.txt")
	// Replace "🙂" (2 UTF-16 units at character 6) with "!" in many small steps.
	r := protocol.Range{Start: protocol.Position{Line: 0, Character: 6}, End: protocol.Position{Line: 0, Character: 8}}
	if err := e.ed.EditRange(e.ctx, "notes/ünï.txt", r, "!"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		p := protocol.Position{Line: 0, Character: uint32(7 + i)}
		if err := e.ed.EditRange(e.ctx, "notes/ünï.txt", protocol.Range{Start: p, End: p}, "x"); err != nil {
			t.Fatal(err)
		}
	}
	run := e.ask("notes/ünï.txt", 1, 1, "what does it say?")
	e.waitRun(run)
	want, _ := e.ed.Text("notes/ünï.txt")
	if !strings.Contains(e.provider.Received()[0].Messages[1].Content, strings.TrimSpace(want)) {
		t.Fatalf("the server's overlay differs from the editor's buffer %q:\n%s", want, e.provider.Received()[0].Messages[1].Content)
	}
}

func TestBadCommands(t *testing.T) {
	e := newEnv(t, greetWS, withScript("turns: []"))
	cases := []struct {
		cmd  string
		arg  any
		want string
	}{
		{"cairn.nope", map[string]any{}, "unknown command"},
		{protocol.CommandAsk, map[string]any{"uri": 42, "question": "q"}, "must be a string"},
		{protocol.CommandAsk, map[string]any{"question": "q"}, "missing \"uri\""},
		{protocol.CommandAsk, "not an object", "JSON object"},
		{protocol.CommandAsk, map[string]any{"uri": "file:///etc/passwd", "question": "q"}, "outside the workspace"},
		{protocol.CommandAsk, map[string]any{"uri": e.ed.URI("greet/greet.go"), "question": "  "}, "empty"},
		{protocol.CommandAcceptEdit, map[string]any{"editId": "edit-nope"}, "no proposed edit"},
		{protocol.CommandUndo, map[string]any{"checkpointId": "../../etc"}, "invalid checkpoint id"},
		{protocol.CommandCancel, map[string]any{"runId": "run-nope"}, "no run"},
		{protocol.CommandContextReport, map[string]any{}, "missing \"runId\""},
	}
	for _, c := range cases {
		err := e.ed.Execute(e.ctx, c.cmd, c.arg, nil)
		var je *jsonrpc2.Error
		if err == nil || !errors.As(err, &je) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: err = %v, want a JSON-RPC error mentioning %q", c.cmd, c.arg, err, c.want)
		}
	}
	// Unknown methods: a call gets MethodNotFound, a notification is ignored.
	if _, err := e.ed.Conn().Call(e.ctx, "cairn/nothing", map[string]any{}, nil); !errors.Is(err, jsonrpc2.ErrMethodNotFound) {
		t.Errorf("unknown method: %v", err)
	}
	_ = e.ed.Conn().Notify(e.ctx, "cairn/nothing", map[string]any{})
	_ = e.ed.Conn().Notify(e.ctx, "textDocument/didChange", map[string]any{"textDocument": 5})
	_ = e.ed.Conn().Notify(e.ctx, protocol.MethodDidChangeDiagnostics, map[string]any{"uri": "file:///etc/x", "diagnostics": "no"})
	// Still serving.
	var runs []map[string]any
	if err := e.ed.Execute(e.ctx, protocol.CommandListRuns, map[string]any{}, &runs); err != nil {
		t.Fatalf("the server stopped serving after bad input: %v", err)
	}
}

func TestNoProviderIsAClearError(t *testing.T) {
	e := newEnv(t, greetWS, withoutProvider())
	_, err := e.ed.Ask(e.ctx, "greet/greet.go", 0, 0, "q")
	if err == nil || !strings.Contains(err.Error(), "model.provider") {
		t.Fatalf("ask without a provider: %v", err)
	}
	found := false
	for _, m := range e.ed.Messages() {
		if strings.Contains(m, "model.provider") {
			found = true
		}
	}
	if !found {
		t.Errorf("no showMessage about the missing provider: %v", e.ed.Messages())
	}
}

func TestBadSettingsKeepServing(t *testing.T) {
	e := newEnv(t, greetWS, withSettings(map[string]any{
		"model":    map[string]any{"provider": "scripted", "contextWindow": "big"},
		"approval": map[string]any{"mode": "sometimes"},
		"scripted": map[string]any{"path": "/does/not/exist.yaml"},
	}))
	msgs := strings.Join(e.ed.Messages(), "\n")
	for _, w := range []string{"model", "approval.mode", "scripted.path"} {
		if !strings.Contains(msgs, w) {
			t.Errorf("no message about %s in:\n%s", w, msgs)
		}
	}
	var runs []map[string]any
	if err := e.ed.Execute(e.ctx, protocol.CommandListRuns, map[string]any{}, &runs); err != nil {
		t.Fatal(err)
	}
}

func TestApplyEditRefusedKeepsEditPending(t *testing.T) {
	e := newEnv(t, greetWS, withScript(editScript), withEditor(lspclient.Options{RejectApplyEdit: true}))
	evs := e.waitRun(e.ask("greet/greet.go", 4, 6, "x"))
	id := ofKind(evs, protocol.EventEditProposed)[0].EditID
	res, err := e.ed.Accept(e.ctx, id)
	if err != nil || res.Applied || res.Reason == "" {
		t.Fatalf("accept with a refusing editor: %+v %v", res, err)
	}
	if _, err := e.ed.GetEdit(e.ctx, id); err != nil {
		t.Fatal(err)
	}
}
