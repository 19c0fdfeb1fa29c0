package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/tools"
)

// openAIServer is an OpenAI-compatible endpoint: GET /v1/models lists
// models (when given), POST /v1/chat/completions streams the next answer
// and records the model each request asked for.
type openAIServer struct {
	mu      sync.Mutex
	asked   []string
	answers []string // SSE bodies, one per request
}

func (o *openAIServer) handler(models []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/models" && models != nil:
			var data []map[string]string
			for _, m := range models {
				data = append(data, map[string]string{"id": m, "object": "model"})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
		case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
			var req struct {
				Model string `json:"model"`
			}
			b, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(b, &req)
			o.mu.Lock()
			o.asked = append(o.asked, req.Model)
			n := len(o.asked)
			o.mu.Unlock()
			if n > len(o.answers) {
				http.Error(w, "no more answers", http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, o.answers[n-1])
		default:
			http.NotFound(w, r)
		}
	})
}

func (o *openAIServer) models() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.asked...)
}

// sseAnswer is a streamed text answer ending with finish reason finish.
func sseAnswer(text, finish string) string {
	chunk := func(v any) string { b, _ := json.Marshal(v); return "data: " + string(b) + "\n\n" }
	return chunk(map[string]any{"id": "c1", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": text}}}}) +
		chunk(map[string]any{"id": "c1", "choices": []any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": finish}},
			"usage": map[string]any{"prompt_tokens": 50, "completion_tokens": 7}}) +
		"data: [DONE]\n\n"
}

// openAIHarness runs the adapter with the real OpenAI provider against
// srv, configured with model configured.
func openAIHarness(t *testing.T, srv *httptest.Server, configured string) (*sdk.ClientSideConnection, *fakeClient, string) {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return openAIHarnessAt(t, srv, configured, root, t.TempDir())
}

// openAIHarnessAt is openAIHarness on a given workspace and state (a
// restart).
func openAIHarnessAt(t *testing.T, srv *httptest.Server, configured, root, stateDir string) (*sdk.ClientSideConnection, *fakeClient, string) {
	t.Helper()
	p, err := model.NewOpenAI(model.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: configured})
	if err != nil {
		t.Fatal(err)
	}
	client := &fakeClient{buffers: map[string]string{}}
	opts := Options{Version: "test",
		StateDir: func(string) (string, error) { return stateDir, nil },
		Configure: func(root, stateDir string) Setup {
			return Setup{Run: agent.Config{Provider: p, ModelName: configured, MaxRetries: -1}, Policy: tools.DefaultPolicy()}
		},
		Environ: []string{"PATH=" + os.Getenv("PATH")},
	}
	agentIn, clientOut := io.Pipe()
	clientIn, agentOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, agentIn, agentOut, opts) }()
	t.Cleanup(func() {
		_ = clientOut.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("Serve did not return after the client went away")
		}
	})
	conn := sdk.NewClientSideConnection(client, clientOut, clientIn)
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return conn, client, root
}

func findOption(opts []sdk.SessionConfigOption, id string) *sdk.SessionConfigOptionSelect {
	for _, o := range opts {
		if o.Select != nil && string(o.Select.Id) == id {
			return o.Select
		}
	}
	return nil
}

func TestModelPickerIsPerSession(t *testing.T) {
	o := &openAIServer{answers: []string{sseAnswer("from b", "stop"), sseAnswer("from a", "stop")}}
	srv := httptest.NewServer(o.handler([]string{"gpt-a", "gpt-b", "gpt-b"}))
	defer srv.Close()
	conn, _, root := openAIHarness(t, srv, "gpt-a")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s1, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	m := findOption(s1.ConfigOptions, configModel)
	if m == nil || m.Category == nil || *m.Category != sdk.SessionConfigOptionCategoryModel || m.CurrentValue != "gpt-a" {
		t.Fatalf("model option = %+v", m)
	}
	var values []string
	for _, c := range *m.Options.Ungrouped {
		values = append(values, string(c.Value))
	}
	if strings.Join(values, ",") != "gpt-a,gpt-b" {
		t.Errorf("model choices = %v, want the endpoint's list, deduplicated", values)
	}
	if a := findOption(s1.ConfigOptions, configApproval); a == nil || a.Category == nil || *a.Category != sdk.SessionConfigOptionCategoryMode {
		t.Errorf("approval option has no category mode: %+v", a)
	}
	if s1.Models == nil || s1.Models.CurrentModelId != "gpt-a" || len(s1.Models.AvailableModels) != 2 {
		t.Errorf("models = %+v", s1.Models)
	}

	// An unknown model is refused; session/set_model changes only s1.
	if _, err := conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: s1.SessionId, ModelId: "gpt-nope"}); err == nil {
		t.Errorf("an unknown model was accepted")
	}
	if _, err := conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: s1.SessionId, ModelId: "gpt-b"}); err != nil {
		t.Fatalf("session/set_model: %v", err)
	}
	for _, s := range []sdk.SessionId{s1.SessionId, s2.SessionId} {
		if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s, Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}}); err != nil {
			t.Fatalf("prompt: %v", err)
		}
	}
	if got := o.models(); fmt.Sprint(got) != "[gpt-b gpt-a]" {
		t.Errorf("models asked = %v, want [gpt-b gpt-a] (s1 changed, s2 kept the configured one)", got)
	}
	// The config option says the same, per session.
	resp, err := conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: s2.SessionId, ConfigId: configModel, Value: "gpt-a"}})
	if err != nil {
		t.Fatal(err)
	}
	if m := findOption(resp.ConfigOptions, configModel); m == nil || m.CurrentValue != "gpt-a" {
		t.Errorf("s2's model option = %+v", m)
	}
}

func TestModelPickerFallsBackToTheConfiguredModel(t *testing.T) {
	o := &openAIServer{}
	srv := httptest.NewServer(o.handler(nil)) // no /v1/models route
	defer srv.Close()
	conn, _, root := openAIHarness(t, srv, "local-model")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	m := findOption(s.ConfigOptions, configModel)
	if m == nil || m.CurrentValue != "local-model" || len(*m.Options.Ungrouped) != 1 {
		t.Fatalf("model option = %+v", m)
	}
}

func TestStopReasonMaxTokensAndTitle(t *testing.T) {
	o := &openAIServer{answers: []string{sseAnswer("a cut answ", "length")}}
	srv := httptest.NewServer(o.handler([]string{"gpt-a"}))
	defer srv.Close()
	conn, client, root := openAIHarness(t, srv, "gpt-a")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	question := "Explain the whole repository in great detail please, every file and every function in it, leave nothing out"
	resp, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(question)}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != sdk.StopReasonMaxTokens {
		t.Errorf("stop reason = %q, want max_tokens (finish_reason length)", resp.StopReason)
	}
	updates, _, _ := client.snapshot()
	var title string
	for _, u := range updates {
		if i := u.Update.SessionInfoUpdate; i != nil && u.SessionId == s.SessionId && i.Title != nil {
			title = *i.Title
			if i.UpdatedAt == nil {
				t.Errorf("session_info_update without updatedAt")
			}
		}
	}
	if !strings.HasPrefix(title, "Explain the whole repository") || len([]rune(title)) > 80 {
		t.Errorf("session title = %q, want the first prompt, shortened", title)
	}
}

// A model that numbers its calls from call_0 in every response must not
// give two ACP tool calls of a session the same id, live or replayed.
func TestToolCallIDsUniqueAcrossTurns(t *testing.T) {
	script := `turns:
  - toolCalls:
      - {id: call_0, name: read_file, arguments: {path: calc.go}}
  - toolCalls:
      - {id: call_0, name: list_files, arguments: {}}
  - text: "first"
  - toolCalls:
      - {id: call_0, name: read_file, arguments: {path: calc.go}}
  - text: "second"
`
	h := newHarness(t, map[string]string{"calc.go": calc}, script, harnessConfig{})
	for i := 0; i < 2; i++ {
		if r := h.mustPrompt(sdk.TextBlock(fmt.Sprintf("question %d", i))); r.StopReason != sdk.StopReasonEndTurn {
			t.Fatalf("stop reason %q", r.StopReason)
		}
	}
	updates, _, _ := h.client.snapshot()
	ids := toolCallIDs(updates, h.session)
	if len(ids) != 3 || ids[0] != "call_0" || ids[1] == ids[0] || ids[2] == ids[0] || ids[2] == ids[1] {
		t.Fatalf("tool_call ids = %q, want three distinct ids, the first the model's", ids)
	}
	// Every update of a call refers to its own id.
	for _, id := range ids {
		if st := lastStatus(updates, id); st != sdk.ToolCallStatusCompleted {
			t.Errorf("call %s ended %q", id, st)
		}
	}

	// session/load replays the same ids.
	before := len(updates)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := h.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: h.session, Cwd: h.root, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	updates, _, _ = h.client.snapshot()
	if replayed := toolCallIDs(updates[before:], h.session); fmt.Sprint(replayed) != fmt.Sprint(ids) {
		t.Errorf("replayed ids = %q, live ids = %q", replayed, ids)
	}
}

func toolCallIDs(updates []sdk.SessionNotification, s sdk.SessionId) []string {
	var ids []string
	for _, u := range updates {
		if tc := u.Update.ToolCall; tc != nil && u.SessionId == s {
			ids = append(ids, string(tc.ToolCallId))
		}
	}
	return ids
}

// A reasoning model's thinking is an agent_thought_chunk, not answer text.
func TestReasoningIsAThoughtChunk(t *testing.T) {
	thinking := `data: {"id":"c1","choices":[{"index":0,"delta":{"reasoning_content":"pondering"}}]}` + "\n\n"
	o := &openAIServer{answers: []string{thinking + sseAnswer("the answer", "stop")}}
	srv := httptest.NewServer(o.handler([]string{"gpt-a"}))
	defer srv.Close()
	conn, client, root := openAIHarness(t, srv, "gpt-a")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("why?")}}); err != nil {
		t.Fatal(err)
	}
	updates, _, _ := client.snapshot()
	var thought strings.Builder
	for _, u := range updates {
		if c := u.Update.AgentThoughtChunk; c != nil && c.Content.Text != nil {
			thought.WriteString(c.Content.Text.Text)
		}
	}
	if thought.String() != "pondering" || agentText(updates) != "the answer" {
		t.Errorf("thought %q, answer %q", thought.String(), agentText(updates))
	}
}

// The approval mode is the session's own: set to policy in one session, the
// other session of the same workspace still asks.
func TestApprovalModeIsPerSession(t *testing.T) {
	script := `turns:
  - toolCalls:
      - {id: c1, name: run_command, arguments: {command: "touch one.txt"}}
  - text: done
  - toolCalls:
      - {id: c2, name: run_command, arguments: {command: "touch two.txt"}}
  - text: done
`
	h := newHarness(t, nil, script, harnessConfig{interactive: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	other, err := h.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: h.root, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: h.session, ModeId: modePolicy}); err != nil {
		t.Fatal(err)
	}
	h.mustPrompt(sdk.TextBlock("make one"))
	if _, err := h.conn.Prompt(ctx, sdk.PromptRequest{SessionId: other.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("make two")}}); err != nil {
		t.Fatal(err)
	}
	updates, perms, _ := h.client.snapshot()
	if len(perms) != 1 || perms[0].SessionId != other.SessionId || perms[0].ToolCall.ToolCallId != "c2" {
		t.Fatalf("permission requests = %+v, want one, for c2 in the other session", perms)
	}
	if st := lastStatus(updates, "c1"); st != sdk.ToolCallStatusFailed {
		t.Errorf("c1 (policy mode) ended %q, want failed (denied)", st)
	}
	for _, u := range updates {
		if u.SessionId == other.SessionId && u.Update.CurrentModeUpdate != nil {
			t.Errorf("the other session was told of a mode change: %+v", u.Update.CurrentModeUpdate)
		}
	}
	if _, err := os.Stat(h.abs("two.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
}
