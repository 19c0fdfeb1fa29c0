package acp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/contextengine"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

const calc = "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"

const editScript = `turns:
  - toolCalls:
      - id: call_edit
        name: edit_file
        arguments: {path: calc.go, oldText: "return a - b", newText: "return a + b"}
  - text: "Fixed the sign."
`

func TestParsePrompt(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	file := filepath.Join(root, "src", "calc.js")
	whole := "line1\nline2\nline3\nline4\n"
	read := func(abs string) (string, bool) { return whole, abs == file }
	uri := "file://" + filepath.ToSlash(file)
	text := func(s string) sdk.ContentBlock { return sdk.TextBlock(s) }
	embedded := func(uri, text string, meta map[string]any) sdk.ContentBlock {
		b := sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: uri, Text: text}})
		b.Resource.Meta = meta
		return b
	}
	sel := func(a, b int) *contextengine.Selection { return &contextengine.Selection{StartLine: a, EndLine: b} }
	for _, tc := range []struct {
		name     string
		blocks   []sdk.ContentBlock
		abs      string
		sel      *contextengine.Selection
		question string
		buffer   bool
		err      string
	}{
		{name: "link with a line fragment", blocks: []sdk.ContentBlock{text("why?"), sdk.ResourceLinkBlock("calc.js", uri+"#L2-L3")},
			abs: file, sel: sel(2, 3), question: "why?"},
		{name: "Zed's L2:3 fragment", blocks: []sdk.ContentBlock{text("why?"), sdk.ResourceLinkBlock("calc.js", uri+"#L2:3")},
			abs: file, sel: sel(2, 3), question: "why?"},
		{name: "embedded selection with _meta.range (0-based, end at column 0)", blocks: []sdk.ContentBlock{text("why?"),
			embedded(uri, "line2\nline3\n", map[string]any{"range": map[string]any{"start": map[string]any{"line": 1.0, "character": 0.0}, "end": map[string]any{"line": 3.0, "character": 0.0}}})},
			abs: file, sel: sel(2, 3), question: "why?"},
		{name: "embedded text located in the file", blocks: []sdk.ContentBlock{text("why?"), embedded(uri, "line3\nline4", nil)},
			abs: file, sel: sel(3, 4), question: "why?"},
		{name: "whole buffer is the file's unsaved text", blocks: []sdk.ContentBlock{text("why?"), embedded(uri, "edited\n", nil)},
			abs: file, question: "why?", buffer: true},
		{name: "second resource is attached", blocks: []sdk.ContentBlock{text("why?"), sdk.ResourceLinkBlock("calc.js", uri+"#L1"),
			embedded("file://"+filepath.ToSlash(filepath.Join(root, "b.txt")), "other text", nil)},
			abs: file, sel: sel(1, 1), question: "why?\n\nAttached b.txt:\n```\nother text\n```"},
		{name: "a file outside the workspace is only mentioned", blocks: []sdk.ContentBlock{text("why?"), sdk.ResourceLinkBlock("x", "file:///etc/passwd")},
			question: "why?\n\n(the user referred to file:///etc/passwd)"},
		{name: "an image is refused", blocks: []sdk.ContentBlock{text("why?"), sdk.ImageBlock("AAAA", "image/png")}, err: "not images"},
		{name: "no text", blocks: []sdk.ContentBlock{sdk.ResourceLinkBlock("calc.js", uri)}, err: "no text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := workspace.Open(root)
			if err != nil {
				t.Fatal(err)
			}
			q, err := parsePrompt(ws, read, tc.blocks)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if q.abs != tc.abs || q.question != tc.question || (q.bufferText != nil) != tc.buffer {
				t.Errorf("got abs %q question %q buffer %v", q.abs, q.question, q.bufferText != nil)
			}
			if (q.sel == nil) != (tc.sel == nil) || (q.sel != nil && *q.sel != *tc.sel) {
				t.Errorf("selection = %+v, want %+v", q.sel, tc.sel)
			}
		})
	}
}

func TestFragmentRange(t *testing.T) {
	for frag, want := range map[string][2]int{
		"L10": {10, 10}, "L10-L20": {10, 20}, "L10-20": {10, 20}, "L10:20": {10, 20}, "10-20": {10, 20},
		"L10,5-L12,3": {10, 12}, "": {0, 0}, "L0": {0, 0}, "L5-L2": {0, 0}, "section": {0, 0},
	} {
		got := fragmentRange(frag)
		if want == [2]int{} {
			if got != nil {
				t.Errorf("%q: got %+v, want none", frag, got)
			}
			continue
		}
		if got == nil || got.StartLine != want[0] || got.EndLine != want[1] {
			t.Errorf("%q: got %+v, want %v", frag, got, want)
		}
	}
}

func TestApplyTextEdits(t *testing.T) {
	text := "héllo 🙂 world\nsecond\n"
	edits := []protocol.TextEdit{
		// 🙂 is two UTF-16 units: "héllo " is 6, the emoji ends at 8.
		{Range: protocol.Range{Start: protocol.Position{Line: 0, Character: 6}, End: protocol.Position{Line: 0, Character: 8}}, NewText: ":)"},
		{Range: protocol.Range{Start: protocol.Position{Line: 1, Character: 0}, End: protocol.Position{Line: 1, Character: 6}}, NewText: "2nd"},
	}
	got, err := protocol.ApplyTextEdits(text, edits)
	if err != nil {
		t.Fatal(err)
	}
	if want := "héllo :) world\n2nd\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	overlap := append(edits, protocol.TextEdit{Range: protocol.Range{Start: protocol.Position{Line: 0, Character: 7}, End: protocol.Position{Line: 0, Character: 9}}})
	if _, err := protocol.ApplyTextEdits(text, overlap); err == nil {
		t.Error("overlapping edits were applied")
	}
}

func TestStopReasons(t *testing.T) {
	for _, tc := range []struct {
		ev   protocol.RunEvent
		want sdk.StopReason
		ok   bool
	}{
		{protocol.RunEvent{Kind: protocol.EventFinished}, sdk.StopReasonEndTurn, true},
		{protocol.RunEvent{Kind: protocol.EventCancelled}, sdk.StopReasonCancelled, true},
		{protocol.RunEvent{Kind: protocol.EventFailed, Class: "step_limit"}, sdk.StopReasonMaxTurnRequests, true},
		{protocol.RunEvent{Kind: protocol.EventFailed, Class: "token_budget"}, sdk.StopReasonMaxTokens, true},
		{protocol.RunEvent{Kind: protocol.EventFailed, Class: "refusal"}, sdk.StopReasonRefusal, true},
		{protocol.RunEvent{Kind: protocol.EventFailed, Class: "auth"}, "", false},
	} {
		got, ok := stopReason(tc.ev)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s/%s: got %q %v", tc.ev.Kind, tc.ev.Class, got, ok)
		}
	}
}

// A rejected edit is never written; an accepted one is written through the
// client with a checkpoint; a later revert by the user is found at the next
// turn's start, told to the model, and the checkpoint marked undone.
func TestEditReviewAndReconcile(t *testing.T) {
	script := editScript + `  - toolCalls:
      - id: call_edit2
        name: edit_file
        arguments: {path: calc.go, oldText: "return a - b", newText: "return a + b"}
  - text: "Fixed it again."
  - text: "Understood."
`
	h := newHarness(t, map[string]string{"calc.go": calc}, script, harnessConfig{interactive: true})
	h.client.answer = func(sdk.RequestPermissionRequest) string { return optRejectOnce }
	if resp := h.mustPrompt(sdk.TextBlock("fix Add")); resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", resp.StopReason)
	}
	updates, perms, writes := h.client.snapshot()
	if len(perms) != 1 || len(writes) != 0 || h.read("calc.go") != calc {
		t.Fatalf("rejected edit: %d permissions, %d writes, file %q", len(perms), len(writes), h.read("calc.go"))
	}
	if st := lastStatus(updates, "call_edit"); st != sdk.ToolCallStatusFailed {
		t.Errorf("rejected edit's status = %q", st)
	}
	d := perms[0].ToolCall.Content[0].Diff
	if d == nil || d.Path != h.abs("calc.go") || d.OldText == nil || *d.OldText != calc || d.NewText != strings.Replace(calc, "a - b", "a + b", 1) {
		t.Errorf("permission diff = %+v", d)
	}

	h.client.answer = func(sdk.RequestPermissionRequest) string { return optAllowOnce }
	h.mustPrompt(sdk.TextBlock("fix Add, please"))
	fixed := strings.Replace(calc, "a - b", "a + b", 1)
	_, _, writes = h.client.snapshot()
	if len(writes) != 1 || writes[0].Content != fixed || h.read("calc.go") != fixed {
		t.Fatalf("accepted edit: writes %+v", writes)
	}
	cps, _ := checkpoint.Open(h.stateDir)
	list, _ := cps.List()
	if len(list) != 1 || list[0].Status != checkpoint.StatusApplied {
		t.Fatalf("checkpoints after accept: %+v", list)
	}

	// The user rejects the change in the editor's review: the file is back.
	if err := os.WriteFile(h.abs("calc.go"), []byte(calc), 0o644); err != nil {
		t.Fatal(err)
	}
	h.mustPrompt(sdk.TextBlock("ok?"))
	reqs := h.provider.Received()
	last := reqs[len(reqs)-1].Messages[1].Content
	if !strings.Contains(last, "the user rejected your edit of calc.go") {
		t.Errorf("the model was not told of the revert:\n%s", last)
	}
	if cp, _ := cps.Get(list[0].ID); cp.Status != checkpoint.StatusUndone {
		t.Errorf("reverted checkpoint status = %q", cp.Status)
	}
	// The thread's history says the hunk was undone, and nothing was written.
	threads, _ := filepath.Glob(filepath.Join(h.stateDir, "threads", "*.json"))
	var thread []byte
	if len(threads) == 1 {
		thread, _ = os.ReadFile(threads[0])
	}
	if !strings.Contains(strings.ReplaceAll(string(thread), " ", ""), `"undone":true`) {
		t.Errorf("the thread does not record the undone hunk: %s", thread)
	}
	if _, _, writes := h.client.snapshot(); len(writes) != 1 {
		t.Errorf("reconcile wrote: %d writes", len(writes))
	}
}

// allow_always and reject_always persist for the session; Cairn's policy
// decides first (a read command never asks).
func TestPermissionsPersist(t *testing.T) {
	script := `turns:
  - toolCalls:
      - {id: c1, name: run_command, arguments: {command: "touch d/one.txt"}}
      - {id: c2, name: run_command, arguments: {command: "touch d/one.txt"}}
      - {id: c3, name: run_command, arguments: {command: "touch d/two.txt"}}
      - {id: c4, name: run_command, arguments: {command: "touch d/two.txt"}}
      - {id: c5, name: run_command, arguments: {command: "ls"}}
  - text: done
`
	// (Below the root: a sandboxed command cannot create entries directly
	// in the workspace root, where protected names would appear.)
	h := newHarness(t, map[string]string{"a.txt": "a\n", "d/a.txt": "a\n"}, script, harnessConfig{interactive: true})
	h.client.answer = func(p sdk.RequestPermissionRequest) string {
		if strings.Contains(*p.ToolCall.Title, "one.txt") {
			return optAllowAlways
		}
		return optRejectAlways
	}
	h.mustPrompt(sdk.TextBlock("make files"))
	updates, perms, _ := h.client.snapshot()
	if len(perms) != 2 {
		t.Fatalf("asked %d times, want 2 (once per command): %+v", len(perms), perms)
	}
	if *perms[0].ToolCall.Title != "Run `touch d/one.txt`" || *perms[0].ToolCall.Kind != sdk.ToolKindExecute {
		t.Errorf("permission tool call = %q %q", *perms[0].ToolCall.Title, *perms[0].ToolCall.Kind)
	}
	kinds := map[sdk.PermissionOptionKind]bool{}
	for _, o := range perms[0].Options {
		kinds[o.Kind] = true
	}
	if len(kinds) != 4 {
		t.Errorf("options = %+v", perms[0].Options)
	}
	for id, want := range map[string]sdk.ToolCallStatus{"c1": "completed", "c2": "completed", "c3": "failed", "c4": "failed", "c5": "completed"} {
		if got := lastStatus(updates, id); got != want {
			t.Errorf("%s: status %q, want %q", id, got, want)
		}
	}
	if _, err := os.Stat(h.abs("d/one.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	if _, err := os.Stat(h.abs("d/two.txt")); err == nil {
		t.Error("the rejected command ran")
	}
}

// In policy mode nothing is asked: what the policy would ask about is denied.
func TestPolicyMode(t *testing.T) {
	script := `turns:
  - toolCalls:
      - {id: c1, name: run_command, arguments: {command: "touch one.txt"}}
  - text: done
`
	h := newHarness(t, nil, script, harnessConfig{interactive: true})
	if _, err := h.conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: h.session, ModeId: modePolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.conn.SetSessionMode(context.Background(), sdk.SetSessionModeRequest{SessionId: h.session, ModeId: "yolo"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
	set := func(id, value string) (sdk.SetSessionConfigOptionResponse, error) {
		return h.conn.SetSessionConfigOption(context.Background(), sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: h.session, ConfigId: sdk.SessionConfigId(id), Value: sdk.SessionConfigValueId(value)}})
	}
	resp, err := set(configSandbox, "required")
	if err != nil {
		t.Fatal(err)
	}
	current := map[string]string{}
	for _, o := range resp.ConfigOptions {
		current[string(o.Select.Id)] = string(o.Select.CurrentValue)
	}
	if current[configSandbox] != "required" || current[configApproval] != modePolicy {
		t.Errorf("config options after set: %v", current)
	}
	if _, err := set(configSandbox, "maybe"); err == nil {
		t.Error("an unknown sandbox mode was accepted")
	}
	if _, err := set("colour", "blue"); err == nil {
		t.Error("an unknown config option was accepted")
	}
	h.mustPrompt(sdk.TextBlock("make a file"))
	updates, perms, _ := h.client.snapshot()
	if len(perms) != 0 {
		t.Errorf("policy mode asked %d times", len(perms))
	}
	if got := lastStatus(updates, "c1"); got != sdk.ToolCallStatusFailed {
		t.Errorf("denied call status %q", got)
	}
	sawMode := false
	for _, u := range updates {
		if m := u.Update.CurrentModeUpdate; m != nil && m.CurrentModeId == modePolicy {
			sawMode = true
		}
	}
	if !sawMode {
		t.Error("no current_mode_update")
	}
}

// /undo restores the last written edit through fs/write_text_file; /context
// answers with the report; /rewind needs a number.
func TestSlashCommands(t *testing.T) {
	h := newHarness(t, map[string]string{"calc.go": calc}, editScript, harnessConfig{interactive: true})
	h.mustPrompt(sdk.TextBlock("fix Add"))
	if h.read("calc.go") == calc {
		t.Fatal("the edit was not written")
	}
	h.mustPrompt(sdk.TextBlock("/undo"))
	_, _, writes := h.client.snapshot()
	if len(writes) != 2 || writes[1].Content != calc || h.read("calc.go") != calc {
		t.Fatalf("undo writes: %+v", writes)
	}
	if _, err := h.prompt(sdk.TextBlock("/undo")); err == nil || !strings.Contains(err.Error(), "no written edit") {
		t.Errorf("a second /undo: %v", err)
	}
	h.mustPrompt(sdk.TextBlock("/context"))
	updates, _, _ := h.client.snapshot()
	if !strings.Contains(agentText(updates), "Context report") {
		t.Error("/context sent no report")
	}
	if _, err := h.prompt(sdk.TextBlock("/rewind x")); err == nil || !strings.Contains(err.Error(), "step number") {
		t.Errorf("/rewind x: %v", err)
	}
	if h.provider.Remaining() != 0 {
		t.Errorf("slash commands called the model")
	}
}

// Without fs capabilities an accepted edit is written to disk by Cairn.
func TestWriteWithoutClientFS(t *testing.T) {
	h := newHarness(t, map[string]string{"calc.go": calc}, editScript, harnessConfig{interactive: true, noFS: true})
	h.mustPrompt(sdk.TextBlock("fix Add"))
	if _, _, writes := h.client.snapshot(); len(writes) != 0 {
		t.Errorf("fs/write_text_file used without the capability")
	}
	if got := h.read("calc.go"); got != strings.Replace(calc, "a - b", "a + b", 1) {
		t.Errorf("file = %q", got)
	}
}

// Cancel ends the turn with stop reason cancelled; the run ends cancelled.
func TestCancel(t *testing.T) {
	h := newHarness(t, nil, "turns:\n  - {chunks: [\"one \", \"two\"], stall: true}\n", harnessConfig{interactive: true})
	type result struct {
		resp sdk.PromptResponse
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r, err := h.prompt(sdk.TextBlock("go slowly"))
		done <- result{r, err}
	}()
	deadline := time.After(30 * time.Second)
	for {
		updates, _, _ := h.client.snapshot()
		if strings.Contains(agentText(updates), "two") {
			break
		}
		select {
		case <-deadline:
			t.Fatal("no text streamed")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := h.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: h.session}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.resp.StopReason != sdk.StopReasonCancelled {
			t.Errorf("got %+v %v", r.resp, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the prompt did not end after session/cancel")
	}
}

// The step limit is max_turn_requests; bad input is a clear error.
func TestLimitsAndBadInput(t *testing.T) {
	script := `turns:
  - toolCalls: [{id: c1, name: list_files, arguments: {}}]
  - toolCalls: [{id: c2, name: list_files, arguments: {path: "."}}]
`
	h := newHarness(t, map[string]string{"a.txt": "a\n"}, script, harnessConfig{interactive: true, maxSteps: 1})
	if resp := h.mustPrompt(sdk.TextBlock("list")); resp.StopReason != sdk.StopReasonMaxTurnRequests {
		t.Errorf("stop reason %q", resp.StopReason)
	}
	ctx := context.Background()
	if _, err := h.conn.Prompt(ctx, sdk.PromptRequest{SessionId: "session-nope", Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}}); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := h.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: "relative/dir", McpServers: []sdk.McpServer{}}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("relative cwd: %v", err)
	}
	if _, err := h.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: "../../etc", Cwd: h.root, McpServers: []sdk.McpServer{}}); err == nil || !strings.Contains(err.Error(), "invalid session id") {
		t.Errorf("bad session id: %v", err)
	}
	if _, err := h.prompt(sdk.TextBlock("hi"), sdk.ImageBlock("AAAA", "image/png")); err == nil {
		t.Error("an image was accepted")
	}
	// The connection still serves.
	list, err := h.conn.ListSessions(ctx, sdk.ListSessionsRequest{})
	if err != nil || len(list.Sessions) != 1 || list.Sessions[0].SessionId != h.session {
		t.Errorf("session/list: %+v %v", list, err)
	}
}

// session/load in a new adapter (a restart) replays from the journal and
// runs nothing again.
func TestLoadReplaysWithoutRunning(t *testing.T) {
	h := newHarness(t, map[string]string{"calc.go": calc}, editScript, harnessConfig{interactive: true})
	h.mustPrompt(sdk.TextBlock("fix Add"))
	h2 := newHarness(t, nil, "turns: []\n", harnessConfig{interactive: true, root: h.root, stateDir: h.stateDir})
	if _, err := h2.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: h.session, Cwd: h.root, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	updates, perms, writes := h2.client.snapshot()
	if len(perms) != 0 || len(writes) != 0 || len(h2.provider.Received()) != 0 {
		t.Fatalf("load ran something: %d permissions %d writes %d model calls", len(perms), len(writes), len(h2.provider.Received()))
	}
	var mine []sdk.SessionNotification
	for _, u := range updates {
		if u.SessionId == h.session {
			mine = append(mine, u)
		}
	}
	if len(mine) == 0 || mine[0].Update.UserMessageChunk == nil && mine[1].Update.UserMessageChunk == nil {
		t.Errorf("the replay does not start with the question")
	}
	if !strings.Contains(agentText(mine), "Fixed the sign.") {
		t.Errorf("replayed text = %q", agentText(mine))
	}
	if st := lastStatus(mine, "call_edit"); st != sdk.ToolCallStatusCompleted {
		t.Errorf("replayed edit status %q", st)
	}
	var diff *sdk.ToolCallContentDiff
	for _, tu := range toolUpdates(mine, "call_edit") {
		for _, c := range tu.Content {
			if c.Diff != nil {
				diff = c.Diff
			}
		}
	}
	if diff == nil || diff.NewText != strings.Replace(calc, "a - b", "a + b", 1) {
		t.Errorf("replayed diff = %+v", diff)
	}
	if _, err := h2.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: "session-unknown", Cwd: h.root, McpServers: []sdk.McpServer{}}); err == nil {
		t.Error("an unknown session loaded")
	}
}

// A session's mcpServers join Cairn's MCP client: the real filesystem MCP
// server from npm (pinned in test/mcp), untrusted as every server the
// client sends, so its tool call goes through the permission request.
func TestSessionMCPServers(t *testing.T) {
	node, err := exec.LookPath("node")
	serverJS, _ := filepath.Abs("../test/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
	if _, statErr := os.Stat(serverJS); err != nil || statErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or the pinned MCP servers are missing (run npm ci in test/mcp): %v %v", err, statErr)
		}
		t.Skip("node or test/mcp/node_modules missing")
	}
	root, _ := filepath.EvalSymlinks(t.TempDir())
	script := "turns:\n  - toolCalls:\n      - {id: m1, name: mcp__fs__read_text_file, arguments: {path: \"" + filepath.Join(root, "calc.go") + "\"}}\n  - text: done\n"
	h := newHarness(t, nil, script, harnessConfig{interactive: true, root: root})
	if err := os.WriteFile(h.abs("calc.go"), []byte(calc), 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err := h.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "fs", Command: node, Args: []string{serverJS, root}, Env: []sdk.EnvVariable{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.session = resp.SessionId
	h.mustPrompt(sdk.TextBlock("read calc.go through MCP"))
	updates, perms, _ := h.client.snapshot()
	if len(perms) != 1 || !strings.Contains(*perms[0].ToolCall.Title, "mcp__fs__read_text_file") {
		t.Errorf("permissions: %+v", perms)
	}
	if st := lastStatus(updates, "m1"); st != sdk.ToolCallStatusCompleted {
		t.Errorf("MCP call status %q", st)
	}
	reqs := h.provider.Received()
	found := false
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.ToolCallID == "m1" && strings.Contains(m.Content, "func Add") {
			found = true
		}
	}
	if !found {
		t.Error("the MCP tool's result did not reach the model")
	}
}

// Configuration problems and unusable MCP servers are shown at the start of
// the session's next turn, once.
func TestNoticesAtTurnStart(t *testing.T) {
	h := newHarness(t, nil, "turns:\n  - text: one\n  - text: two\n", harnessConfig{interactive: true, warnings: []string{"model.maxOutputTokens is too big"}})
	resp, err := h.conn.NewSession(context.Background(), sdk.NewSessionRequest{Cwd: h.root, McpServers: []sdk.McpServer{
		{Http: &sdk.McpServerHttpInline{Name: "web", Url: "http://127.0.0.1:1/mcp", Headers: []sdk.HttpHeader{}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	h.session = resp.SessionId
	h.mustPrompt(sdk.TextBlock("first"))
	updates, _, _ := h.client.snapshot()
	first := agentText(updates)
	// The http server cannot be reached (port 1): it is reported as an MCP
	// server that cannot be used.
	for _, want := range []string{"configuration: model.maxOutputTokens is too big", "MCP server web", "127.0.0.1:1", "one"} {
		if !strings.Contains(first, want) {
			t.Errorf("first turn lacks %q: %q", want, first)
		}
	}
	h.mustPrompt(sdk.TextBlock("second"))
	updates, _, _ = h.client.snapshot()
	if got := strings.Count(agentText(updates), "MCP server web"); got != 1 {
		t.Errorf("the notice was shown %d times", got)
	}
}

// A session is a thread: its second prompt continues the first one's
// conversation, and a restart keeps it so.
func TestSessionIsAThread(t *testing.T) {
	script := "turns:\n  - text: \"Add subtracts by mistake.\"\n  - text: \"Then fix it.\"\n  - text: \"Still the same thread.\"\n"
	h := newHarness(t, map[string]string{"calc.go": calc}, script, harnessConfig{interactive: true})
	h.mustPrompt(sdk.TextBlock("why is Add wrong?"))
	h.mustPrompt(sdk.TextBlock("and now?"))
	reqs := h.provider.Received()
	if got := reqs[1].Messages[1].Content; !strings.Contains(got, "why is Add wrong?") || !strings.Contains(got, "Add subtracts by mistake.") {
		t.Errorf("the second prompt does not see the first turn:\n%s", got)
	}
	h2 := newHarness(t, nil, script, harnessConfig{interactive: true, root: h.root, stateDir: h.stateDir})
	h2.session = h.session
	if _, err := h2.conn.LoadSession(context.Background(), sdk.LoadSessionRequest{SessionId: h.session, Cwd: h.root, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	h2.mustPrompt(sdk.TextBlock("and after a restart?"))
	got := h2.provider.Received()[0].Messages[1].Content
	if !strings.Contains(got, "and now?") || !strings.Contains(got, "Then fix it.") {
		t.Errorf("after a restart the thread is lost:\n%s", got)
	}
	list, err := h2.conn.ListSessions(context.Background(), sdk.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Sessions {
		if s.SessionId == h.session && (s.Title == nil || *s.Title != "why is Add wrong?") {
			t.Errorf("session title %v", s.Title)
		}
	}
}

// A prompt sent while another runs in the same session replaces it: the
// first ends cancelled, the second runs.
func TestPromptReplacesPrompt(t *testing.T) {
	h := newHarness(t, nil, "turns:\n  - {chunks: [\"one \", \"two\"], stall: true}\n  - text: second answer\n", harnessConfig{interactive: true})
	first := make(chan sdk.PromptResponse, 1)
	go func() {
		r, _ := h.prompt(sdk.TextBlock("go slowly"))
		first <- r
	}()
	deadline := time.After(30 * time.Second)
	for {
		updates, _, _ := h.client.snapshot()
		if strings.Contains(agentText(updates), "two") {
			break
		}
		select {
		case <-deadline:
			t.Fatal("no text streamed")
		case <-time.After(10 * time.Millisecond):
		}
	}
	second := h.mustPrompt(sdk.TextBlock("something else"))
	if second.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("second prompt: %q", second.StopReason)
	}
	select {
	case r := <-first:
		if r.StopReason != sdk.StopReasonCancelled {
			t.Errorf("first prompt: %q", r.StopReason)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first prompt never ended")
	}
	updates, _, _ := h.client.snapshot()
	if !strings.Contains(agentText(updates), "second answer") {
		t.Error("the second prompt's answer is missing")
	}
}

// /rewind N forgets the last run's steps after N and restores, through the
// client, the files its later accepted edits changed.
func TestRewindCommand(t *testing.T) {
	h := newHarness(t, map[string]string{"calc.go": calc}, editScript, harnessConfig{interactive: true})
	h.mustPrompt(sdk.TextBlock("fix Add"))
	if h.read("calc.go") == calc {
		t.Fatal("the edit was not written")
	}
	h.mustPrompt(sdk.TextBlock("/rewind 0"))
	_, _, writes := h.client.snapshot()
	if h.read("calc.go") != calc || len(writes) != 2 || writes[1].Content != calc {
		t.Errorf("after /rewind 0: file %q, writes %d", h.read("calc.go"), len(writes))
	}
	updates, _, _ := h.client.snapshot()
	if !strings.Contains(agentText(updates), "Rewound run") {
		t.Errorf("no rewind message: %q", agentText(updates))
	}
}
