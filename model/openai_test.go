package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/tokencount"
)

func newTestOpenAI(t *testing.T, base string, mut ...func(*OpenAIConfig)) *OpenAI {
	t.Helper()
	cfg := OpenAIConfig{BaseURL: base + "/v1", Model: "test-model", APIKey: "sk-test"}
	for _, m := range mut {
		m(&cfg)
	}
	p, err := NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var testTools = []ToolSpec{
	{Name: "read_file", Description: "Read a file.", Schema: []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "list_files", Description: "List files."},
}

func testRequest() Request {
	return Request{
		Messages: []Message{
			{Role: RoleSystem, Content: "You are Cairn."},
			{Role: RoleUser, Content: "What does main do?"},
		},
		Tools:     testTools,
		MaxTokens: 512,
	}
}

type wantCall struct{ id, name, args string }

func TestOpenAIFixtures(t *testing.T) {
	cases := []struct {
		fixture   string
		text      string
		calls     []wantCall // id "" = synthesized: non-empty and stable
		finish    string
		usage     tokencount.Usage
		estimated bool
	}{
		{fixture: "openai_text.sse", text: "This function parses the “config” file.\n", finish: "stop", usage: tokencount.Usage{InputTokens: 42, OutputTokens: 9}},
		{fixture: "openai_tools.sse", finish: "tool_calls", usage: tokencount.Usage{InputTokens: 311, OutputTokens: 48}, calls: []wantCall{
			{"call_Wq3hTq0kqv1lLZ3oK8Hh2xYq", "read_file", `{"path": "cmd/main.go"}`},
			{"call_0pVlT8cI2BfYtX1dNnH2cqRk", "list_files", `{"dir": "internal"}`},
		}},
		// Ollama: no index on tool calls, finish "stop" after tool calls, no usage.
		{fixture: "ollama_tools.sse", finish: "tool_calls", estimated: true, calls: []wantCall{
			{"call_8fjq2k1x", "read_file", `{"path":"README.md"}`},
			{"call_r0x5mzde", "list_files", `{"dir":"."}`},
		}},
		// vLLM: id only on the first delta, name alone first, usage without details.
		{fixture: "vllm_tools.sse", finish: "tool_calls", usage: tokencount.Usage{InputTokens: 905, OutputTokens: 39}, calls: []wantCall{
			{"chatcmpl-tool-4f1e2b6a0c3d4e5f", "edit_file", `{"path": "util.go", "old": "a := 1", "new": "a := 2"}`},
		}},
		// llama.cpp: no ids at all, a ": ping" comment, finish "eos", no usage.
		{fixture: "llamacpp_noid.sse", finish: "tool_calls", estimated: true, calls: []wantCall{
			{"", "read_file", `{"path":"go.mod"}`},
		}},
	}
	for _, c := range cases {
		for _, crlf := range []bool{false, true} {
			for _, mode := range allSplits {
				name := fmt.Sprintf("%s/%s/crlf=%v", c.fixture, mode, crlf)
				t.Run(name, func(t *testing.T) {
					body := readFixture(t, c.fixture)
					if crlf {
						body = toCRLF(body)
					}
					ws := newWireServer(t, sseHandler(body, mode))
					p := newTestOpenAI(t, ws.URL)
					var streamed strings.Builder
					resp, err := p.Stream(context.Background(), testRequest(), func(d string) { streamed.WriteString(d) })
					if err != nil {
						t.Fatal(err)
					}
					if resp.Text != c.text || streamed.String() != c.text {
						t.Errorf("text = %q, streamed %q, want %q", resp.Text, streamed.String(), c.text)
					}
					if resp.FinishReason != c.finish {
						t.Errorf("finish = %q, want %q", resp.FinishReason, c.finish)
					}
					checkCalls(t, resp.ToolCalls, c.calls)
					if c.estimated {
						if !resp.Usage.Estimated || resp.Usage.InputTokens <= 0 {
							t.Errorf("usage = %+v, want a positive estimate", resp.Usage)
						}
					} else if resp.Usage != c.usage {
						t.Errorf("usage = %+v, want %+v", resp.Usage, c.usage)
					}
					// Synthesized ids are stable across identical responses.
					again, err := p.Stream(context.Background(), testRequest(), nil)
					if err != nil {
						t.Fatal(err)
					}
					for i := range again.ToolCalls {
						if again.ToolCalls[i].ID != resp.ToolCalls[i].ID {
							t.Errorf("call %d id changed: %q then %q", i, resp.ToolCalls[i].ID, again.ToolCalls[i].ID)
						}
					}
				})
			}
		}
	}
}

func checkCalls(t *testing.T, got []ToolCall, want []wantCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("tool calls = %+v, want %d", got, len(want))
	}
	seen := map[string]bool{}
	for i, w := range want {
		g := got[i]
		if g.Name != w.name || g.Arguments != w.args {
			t.Errorf("call %d = %s(%s), want %s(%s)", i, g.Name, g.Arguments, w.name, w.args)
		}
		if w.id != "" && g.ID != w.id {
			t.Errorf("call %d id = %q, want %q", i, g.ID, w.id)
		}
		if g.ID == "" || seen[g.ID] {
			t.Errorf("call %d id %q empty or duplicate", i, g.ID)
		}
		seen[g.ID] = true
	}
}

func TestOpenAIRequestShape(t *testing.T) {
	ws := newWireServer(t, sseHandler(readFixture(t, "openai_text.sse"), splitWhole))
	p := newTestOpenAI(t, ws.URL)
	req := testRequest()
	req.Messages = append(req.Messages,
		Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}, {ID: "call_2", Name: "list_files"}}},
		Message{Role: RoleTool, ToolCallID: "call_1", ToolName: "read_file", Content: "package a"},
		Message{Role: RoleTool, ToolCallID: "call_2", ToolName: "list_files", Content: "a.go"},
	)
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := ws.last(t)
	if got.Path != "/v1/chat/completions" {
		t.Errorf("path = %s", got.Path)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer sk-test" {
		t.Errorf("Authorization = %q", h)
	}
	b := got.Body
	if b["model"] != "test-model" || b["stream"] != true || b["max_tokens"] != float64(512) {
		t.Errorf("body model/stream/max_tokens = %v %v %v", b["model"], b["stream"], b["max_tokens"])
	}
	if so, _ := b["stream_options"].(map[string]any); so["include_usage"] != true {
		t.Errorf("stream_options = %v", b["stream_options"])
	}
	tools := b["tools"].([]any)
	t0 := tools[0].(map[string]any)
	fn := t0["function"].(map[string]any)
	if t0["type"] != "function" || fn["name"] != "read_file" || fn["description"] != "Read a file." || fn["parameters"].(map[string]any)["type"] != "object" {
		t.Errorf("tool 0 = %v", t0)
	}
	if params := tools[1].(map[string]any)["function"].(map[string]any)["parameters"].(map[string]any); params["type"] != "object" {
		t.Errorf("a tool without schema gets an empty object schema, got %v", params)
	}
	msgs := b["messages"].([]any)
	if len(msgs) != 5 {
		t.Fatalf("messages = %v", msgs)
	}
	asst := msgs[2].(map[string]any)
	if asst["role"] != "assistant" || asst["content"] != nil {
		t.Errorf("assistant message = %v", asst)
	}
	calls := asst["tool_calls"].([]any)
	c1 := calls[1].(map[string]any)
	if c1["id"] != "call_2" || c1["type"] != "function" || c1["function"].(map[string]any)["arguments"] != "{}" {
		t.Errorf("tool call = %v", c1)
	}
	tool := msgs[3].(map[string]any)
	if tool["role"] != "tool" || tool["tool_call_id"] != "call_1" || tool["content"] != "package a" {
		t.Errorf("tool message = %v", tool)
	}

	// No key: no Authorization header (local servers); no stream_options on request.
	p2 := newTestOpenAI(t, ws.URL, func(c *OpenAIConfig) { c.APIKey = ""; c.NoStreamOptions = true; c.Model = "" })
	req.Model = "llama3"
	if _, err := p2.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got = ws.last(t)
	if _, ok := got.Header["Authorization"]; ok {
		t.Error("Authorization sent without a key")
	}
	if _, ok := got.Body["stream_options"]; ok || got.Body["model"] != "llama3" {
		t.Errorf("body = %v", got.Body)
	}
}

func TestOpenAIConfig(t *testing.T) {
	p, err := NewOpenAI(OpenAIConfig{Model: "gpt-4.1"})
	if err != nil || p.Endpoint() != "https://api.openai.com/v1/chat/completions" || p.cfg.MaxTokensField != "max_completion_tokens" {
		t.Errorf("default: %v %v %v", err, p.Endpoint(), p.cfg.MaxTokensField)
	}
	p, _ = NewOpenAI(OpenAIConfig{BaseURL: "http://127.0.0.1:8080/v1/"})
	if p.Endpoint() != "http://127.0.0.1:8080/v1/chat/completions" || p.cfg.MaxTokensField != "max_tokens" {
		t.Errorf("local: %v %v", p.Endpoint(), p.cfg.MaxTokensField)
	}
	for _, bad := range []string{"127.0.0.1:8080", "ftp://x/v1", "http://"} {
		if _, err := NewOpenAI(OpenAIConfig{BaseURL: bad}); ClassOf(err) != ClassConfig {
			t.Errorf("NewOpenAI(%q) err = %v, want config", bad, err)
		}
	}
	p, _ = NewOpenAI(OpenAIConfig{BaseURL: "http://x/v1"})
	if _, err := p.Stream(context.Background(), Request{}, nil); ClassOf(err) != ClassConfig || !strings.Contains(err.Error(), "model.name") {
		t.Errorf("no model: %v", err)
	}
}

func TestOpenAIHTTPErrors(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		hdr        map[string]string
		body       string
		class      ErrorClass
		retryAfter time.Duration
		mention    string
	}{
		{"401", 401, nil, `{"error":{"message":"Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, ClassAuth, 0, "OPENAI_API_KEY"},
		{"403", 403, nil, `{"error":{"message":"Project does not have access to model","type":"invalid_request_error","code":"model_not_found"}}`, ClassAuth, 0, "model.baseURL"},
		{"429 seconds", 429, map[string]string{"Retry-After": "3"}, `{"error":{"message":"Rate limit reached for gpt-4.1 in organization org-x on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`, ClassRateLimit, 3 * time.Second, "Rate limit"},
		{"429 ms", 429, map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}, `{"error":{"message":"slow down","code":"rate_limit_exceeded"}}`, ClassRateLimit, 1500 * time.Millisecond, ""},
		{"429 none", 429, nil, `{"error":{"message":"slow down"}}`, ClassRateLimit, 0, ""},
		{"429 quota", 429, nil, `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, ClassAuth, 0, "quota"},
		{"500", 500, nil, `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error"}}`, ClassNetwork, 0, ""},
		{"502 html", 502, nil, `<html><head><title>502 Bad Gateway</title></head></html>`, ClassNetwork, 0, "502 Bad Gateway"},
		{"503 retry-after", 503, map[string]string{"Retry-After": "5"}, `{"error":{"message":"overloaded"}}`, ClassNetwork, 5 * time.Second, ""},
		{"400 context openai", 400, nil, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, ClassContextLength, 0, ""},
		{"400 context vllm", 400, nil, `{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 33000 tokens (31000 in the messages, 2000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`, ClassContextLength, 0, ""},
		{"400 context llama.cpp", 400, nil, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`, ClassContextLength, 0, ""},
		{"400 too many tokens", 400, nil, `{"error":"too many tokens in prompt"}`, ClassContextLength, 0, ""},
		{"400 schema", 400, nil, `{"error":{"message":"Invalid schema for function 'edit_file': In context=('properties', 'path'), 'format' is not permitted.","type":"invalid_request_error","param":"tools[2].function.parameters","code":"invalid_function_parameters"}}`, ClassSchema, 0, ""},
		{"400 no tools ollama", 400, nil, `{"error":{"message":"registry.ollama.ai/library/gemma2:2b does not support tools","type":"api_error","param":null,"code":null}}`, ClassConfig, 0, ""},
		{"400 content policy", 400, nil, `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}`, ClassRefusal, 0, ""},
		{"400 other", 400, nil, `{"error":{"message":"Unrecognized request argument supplied: foo","type":"invalid_request_error"}}`, ClassOther, 0, "foo"},
		{"404", 404, nil, `{"error":{"message":"The model 'gpt-9' does not exist","type":"invalid_request_error","code":"model_not_found"}}`, ClassConfig, 0, "model.name"},
		{"413", 413, nil, `request entity too large`, ClassContextLength, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := newWireServer(t, errorHandler(c.status, c.hdr, c.body))
			p := newTestOpenAI(t, ws.URL)
			_, err := p.Stream(context.Background(), testRequest(), nil)
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if me.Class != c.class || me.Status != c.status || me.RetryAfter != c.retryAfter {
				t.Errorf("got class=%s status=%d retryAfter=%v, want %s %d %v (%v)", me.Class, me.Status, me.RetryAfter, c.class, c.status, c.retryAfter, err)
			}
			if c.mention != "" && !strings.Contains(err.Error(), c.mention) {
				t.Errorf("error %q does not mention %q", err, c.mention)
			}
		})
	}
}

func TestOpenAIRetryAfterHTTPDate(t *testing.T) {
	when := time.Now().Add(2 * time.Minute).UTC().Format(http.TimeFormat)
	ws := newWireServer(t, errorHandler(429, map[string]string{"Retry-After": when}, `{"error":{"message":"slow down"}}`))
	_, err := newTestOpenAI(t, ws.URL).Stream(context.Background(), testRequest(), nil)
	var me *Error
	if !errors.As(err, &me) || me.Class != ClassRateLimit {
		t.Fatalf("err = %v", err)
	}
	if me.RetryAfter <= time.Minute || me.RetryAfter > 2*time.Minute {
		t.Errorf("RetryAfter = %v, want about 2m", me.RetryAfter)
	}
}

func TestOpenAIConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = newTestOpenAI(t, "http://"+addr).Stream(context.Background(), testRequest(), nil)
	if ClassOf(err) != ClassNetwork {
		t.Fatalf("err = %v, want network", err)
	}
}

// streamOf renders chunk JSON objects as an event stream.
func streamOf(chunks ...string) []byte {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return []byte(b.String())
}

const chunkHead = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[`

func choice(delta, finish string) string {
	return chunkHead + `{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
}

func TestOpenAIFinishReasons(t *testing.T) {
	cases := []struct {
		name   string
		body   []byte
		finish string
		calls  int
		class  ErrorClass // "" = success
	}{
		{"stop", streamOf(choice(`{"content":"hi"}`, `"stop"`), "[DONE]"), "stop", 0, ""},
		{"length", streamOf(choice(`{"content":"hi"}`, `"length"`), "[DONE]"), "length", 0, ""},
		{"eos", streamOf(choice(`{"content":"hi"}`, `"eos"`), "[DONE]"), "stop", 0, ""},
		{"null then DONE", streamOf(choice(`{"content":"hi"}`, `null`), "[DONE]"), "stop", 0, ""},
		{"finish without DONE", streamOf(choice(`{"content":"hi"}`, `"stop"`)), "stop", 0, ""},
		{"legacy function_call", streamOf(
			choice(`{"role":"assistant","content":null,"function_call":{"name":"read_file","arguments":""}}`, `null`),
			choice(`{"function_call":{"arguments":"{\"path\":"}}`, `null`),
			choice(`{"function_call":{"arguments":"\"x\"}"}}`, `null`),
			choice(`{}`, `"function_call"`), "[DONE]"), "tool_calls", 1, ""},
		{"parallel calls all index 0", streamOf(
			choice(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]}`, `null`),
			choice(`{"tool_calls":[{"index":0,"function":{"arguments":"\"a\"}"}}]}`, `null`),
			choice(`{"tool_calls":[{"index":0,"id":"c2","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"b\"}"}}]}`, `null`),
			choice(`{}`, `"tool_calls"`), "[DONE]"), "tool_calls", 2, ""},
		{"arguments as object", streamOf(
			choice(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"read_file","arguments":{"path":"x"}}}]}`, `"tool_calls"`), "[DONE]"), "tool_calls", 1, ""},
		{"content_filter", streamOf(choice(`{"content":"I"}`, `"content_filter"`), "[DONE]"), "", 0, ClassRefusal},
		{"refusal", streamOf(choice(`{"refusal":"I can't help with that."}`, `null`), choice(`{}`, `"stop"`), "[DONE]"), "", 0, ClassRefusal},
		{"in-stream error", streamOf(choice(`{"content":"hi"}`, `null`), `{"error":{"message":"upstream connect error","type":"server_error","code":502}}`), "", 0, ClassNetwork},
		{"in-stream context error", streamOf(`{"error":{"message":"This model's maximum context length is 4096 tokens","code":400}}`), "", 0, ClassContextLength},
		{"garbage", streamOf(choice(`{"content":"hi"}`, `null`), `{"choices":[{"delta":{"content":"oops"`), "", 0, ClassBadResponse},
		{"not json", streamOf(`<html>`), "", 0, ClassBadResponse},
		{"cut after content", streamOf(choice(`{"content":"hi"}`, `null`)), "", 0, ClassBadResponse},
		{"cut mid-line", []byte("data: " + choice(`{"content":"hi"}`, `null`) + "\n\ndata: {\"id\":\"chatcmpl-1\",\"choi"), "", 0, ClassBadResponse},
		{"empty body", nil, "", 0, ClassBadResponse},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := newWireServer(t, sseHandler(c.body, splitRandom))
			resp, err := newTestOpenAI(t, ws.URL).Stream(context.Background(), testRequest(), nil)
			if c.class != "" {
				if ClassOf(err) != c.class {
					t.Fatalf("err = %v, want class %s", err, c.class)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.FinishReason != c.finish || len(resp.ToolCalls) != c.calls {
				t.Errorf("finish = %q calls = %+v, want %q %d", resp.FinishReason, resp.ToolCalls, c.finish, c.calls)
			}
			for _, tc := range resp.ToolCalls {
				if tc.ID == "" || tc.Name != "read_file" {
					t.Errorf("call = %+v", tc)
				}
			}
		})
	}
}

func TestOpenAIGarbageMessage(t *testing.T) {
	ws := newWireServer(t, sseHandler(streamOf(`{"choices":[{"delta":{"content":"oops"`), splitWhole))
	_, err := newTestOpenAI(t, ws.URL).Stream(context.Background(), testRequest(), nil)
	if ClassOf(err) != ClassBadResponse || !strings.Contains(err.Error(), "malformed JSON") {
		t.Fatalf("err = %v", err)
	}
}

// A server that ignores stream=true and answers with one JSON object.
func TestOpenAINonStreamedAnswer(t *testing.T) {
	body := `{"id":"chatcmpl-9","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"x\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`
	ws := newWireServer(t, errorHandler(200, nil, body))
	resp, err := newTestOpenAI(t, ws.URL).Stream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkCalls(t, resp.ToolCalls, []wantCall{{"call_a", "read_file", `{"path":"x"}`}})
	if resp.Usage != (tokencount.Usage{InputTokens: 10, OutputTokens: 5}) || resp.FinishReason != "tool_calls" {
		t.Errorf("resp = %+v", resp)
	}
}

// The connection drops (no chunked terminator) in the middle of the stream.
func TestOpenAIConnectionDropMidStream(t *testing.T) {
	ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.Write(streamOf(choice(`{"content":"partial"}`, `null`)))
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	var got string
	_, err := newTestOpenAI(t, ws.URL).Stream(context.Background(), testRequest(), func(d string) { got += d })
	if ClassOf(err) != ClassBadResponse {
		t.Fatalf("err = %v, want bad_response", err)
	}
	if got != "partial" {
		t.Errorf("streamed %q before the cut", got)
	}
}

// stallHandler sends a first chunk, then waits for the client to go away
// and reports that it saw its request context cancelled.
func stallHandler(first []byte, contentType string, sawCancel chan<- struct{}) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(200)
		w.Write(first)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(sawCancel)
	}
}

// waitClosed waits for ch; the bound only keeps a broken test from hanging.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestOpenAICancelWhileStalled(t *testing.T) {
	saw := make(chan struct{})
	ws := newWireServer(t, stallHandler(streamOf(choice(`{"content":"thinking"}`, `null`)), "text/event-stream", saw))
	p := newTestOpenAI(t, ws.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := p.Stream(ctx, testRequest(), func(string) { cancel() })
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Stream did not return after cancel")
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	waitClosed(t, saw, "the server to see the request cancelled")
}

func TestOpenAICancelBeforeHeaders(t *testing.T) {
	saw := make(chan struct{})
	arrived := make(chan struct{})
	ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
		close(saw)
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, err := newTestOpenAI(t, ws.URL).Stream(ctx, testRequest(), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	waitClosed(t, saw, "the server to see the request cancelled")
}

func TestOpenAIStreamIdleTimeout(t *testing.T) {
	saw := make(chan struct{})
	ws := newWireServer(t, stallHandler(streamOf(choice(`{"content":"x"}`, `null`)), "text/event-stream", saw))
	p := newTestOpenAI(t, ws.URL, func(c *OpenAIConfig) { c.StreamIdleTimeout = 50 * time.Millisecond })
	_, err := p.Stream(context.Background(), testRequest(), nil)
	if ClassOf(err) != ClassNetwork || !strings.Contains(err.Error(), "stalled") {
		t.Fatalf("err = %v, want network stall", err)
	}
	waitClosed(t, saw, "the server to see the request cancelled")
}

// A large argument split into many deltas and flushed byte by byte.
func TestOpenAIManyArgumentDeltas(t *testing.T) {
	args := `{"path":"a.go","content":"` + strings.Repeat(`line \"q\"\n`, 300) + `"}`
	chunks := []string{choice(`{"role":"assistant","tool_calls":[{"index":0,"id":"call_big","type":"function","function":{"name":"edit_file","arguments":""}}]}`, `null`)}
	for i := 0; i < len(args); i += 5 {
		part := args[i:min(i+5, len(args))]
		q := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(part)
		chunks = append(chunks, choice(`{"tool_calls":[{"index":0,"function":{"arguments":"`+q+`"}}]}`, `null`))
	}
	chunks = append(chunks, choice(`{}`, `"tool_calls"`), "[DONE]")
	ws := newWireServer(t, sseHandler(streamOf(chunks...), splitRandom))
	resp, err := newTestOpenAI(t, ws.URL).Stream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkCalls(t, resp.ToolCalls, []wantCall{{"call_big", "edit_file", args}})
}

// Bodies whose Content-Type lies: a stream labelled JSON, JSON labelled as
// nothing at all.
func TestOpenAIMislabelledBodies(t *testing.T) {
	stream := readFixture(t, "openai_text.sse")
	ws := newWireServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		writeSplit(w, stream, splitRandom)
	})
	resp, err := newTestOpenAI(t, ws.URL).Stream(context.Background(), testRequest(), nil)
	if err != nil || resp.Text != "This function parses the “config” file.\n" {
		t.Fatalf("stream labelled JSON: %+v %v", resp, err)
	}
	ws2 := newWireServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		io.WriteString(w, "\n  {\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hello\"},\"finish_reason\":\"stop\"}]}")
	})
	var streamed string
	resp, err = newTestOpenAI(t, ws2.URL).Stream(context.Background(), testRequest(), func(d string) { streamed += d })
	if err != nil || resp.Text != "hello" || streamed != "hello" || !resp.Usage.Estimated {
		t.Fatalf("unlabelled JSON: %+v %v", resp, err)
	}
}

// Gemini-style: no index and no id on tool-call deltas; a new call starts
// when a delta names a function, later fragments continue it.
func TestOpenAIToolDeltasWithoutIndexOrID(t *testing.T) {
	body := streamOf(
		choice(`{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"read_file","arguments":"{\"path\":"}}]}`, `null`),
		choice(`{"tool_calls":[{"function":{"arguments":"\"a.go\"}"}}]}`, `null`),
		choice(`{"tool_calls":[{"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"b.go\"}"}},{"type":"function","function":{"name":"list_files","arguments":"{}"}}]}`, `null`),
		choice(`{}`, `"stop"`), "[DONE]")
	ws := newWireServer(t, sseHandler(body, splitBytes))
	resp, err := newTestOpenAI(t, ws.URL).Stream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	checkCalls(t, resp.ToolCalls, []wantCall{{"", "read_file", `{"path":"a.go"}`}, {"", "read_file", `{"path":"b.go"}`}, {"", "list_files", `{}`}})
	if resp.FinishReason != "tool_calls" {
		t.Errorf("finish = %q", resp.FinishReason)
	}
}

// TestMissingKeyNamedBeforeAnyRequest: with no key, a request bound for
// the vendor's own endpoint fails at once as a configuration error that
// names the environment variable (not retryable: no request is sent, so no
// network error is retried in its place); a gateway of one's own may need
// none, and a key in a configured header counts.
func TestMissingKeyNamedBeforeAnyRequest(t *testing.T) {
	var calls atomic.Int32
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer gw.Close()
	// Every request goes to the gateway, whatever its URL says: a request to
	// the vendor's endpoint would be counted, not sent out.
	toGW := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", gw.Listener.Addr().String())
	}}}
	req := Request{Messages: []Message{{Role: RoleUser, Content: "hi"}}}
	for _, tc := range []struct {
		name    string
		p       func() (Provider, error)
		wantEnv string // "" when the request must go out
	}{
		{"openai default endpoint", func() (Provider, error) {
			return NewOpenAI(OpenAIConfig{Model: "m", BaseURL: "http://api.openai.com/v1", HTTPClient: toGW})
		}, "OPENAI_API_KEY"},
		{"anthropic default endpoint", func() (Provider, error) {
			return NewAnthropic(AnthropicConfig{Model: "m", BaseURL: "http://api.anthropic.com", HTTPClient: toGW})
		}, "ANTHROPIC_API_KEY"},
		{"openai gateway without a key", func() (Provider, error) {
			return NewOpenAI(OpenAIConfig{Model: "m", BaseURL: gw.URL + "/v1"})
		}, ""},
		{"openai key in a header", func() (Provider, error) {
			return NewOpenAI(OpenAIConfig{Model: "m", BaseURL: "http://api.openai.com/v1", HTTPClient: toGW,
				Header: http.Header{"Authorization": {"Bearer k"}}})
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.p()
			if err != nil {
				t.Fatal(err)
			}
			before := calls.Load()
			_, err = p.Stream(context.Background(), req, nil)
			sent := calls.Load() - before
			if tc.wantEnv == "" {
				if sent != 1 || (err != nil && ClassOf(err) == ClassConfig) {
					t.Fatalf("requests sent %d, err %v; want the request to go out", sent, err)
				}
				return
			}
			if sent != 0 || ClassOf(err) != ClassConfig || ClassOf(err).Retryable() || !strings.Contains(err.Error(), tc.wantEnv+" is not set") {
				t.Fatalf("requests sent %d, err %v (%s); want no request and a config error naming %s", sent, err, ClassOf(err), tc.wantEnv)
			}
		})
	}
}
