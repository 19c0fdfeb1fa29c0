package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/tokencount"
)

func newTestAnthropic(t *testing.T, base string, mut ...func(*AnthropicConfig)) *Anthropic {
	t.Helper()
	cfg := AnthropicConfig{BaseURL: base, Model: "claude-test", APIKey: "sk-ant-test"}
	for _, m := range mut {
		m(&cfg)
	}
	p, err := NewAnthropic(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAnthropicFixtures(t *testing.T) {
	cases := []struct {
		fixture string
		text    string
		calls   []wantCall
		finish  string
		usage   tokencount.Usage
	}{
		{fixture: "anthropic_text.sse", text: "The loop retries on 5xx — with backoff.", finish: "stop", usage: tokencount.Usage{InputTokens: 472, OutputTokens: 15}},
		{fixture: "anthropic_tools.sse", text: "Let me read the file.", finish: "tool_calls", usage: tokencount.Usage{InputTokens: 1572, OutputTokens: 89, CachedInputTokens: 1000, CacheWriteTokens: 100}, calls: []wantCall{
			{"toolu_01T1x1fJ34qAmk2tNTrN7Up6", "read_file", `{"path": "model/model.go"}`},
			{"toolu_01AbCdEfGhIjKlMnOpQrStUv", "list_files", `{}`},
		}},
	}
	for _, c := range cases {
		for _, crlf := range []bool{false, true} {
			for _, mode := range allSplits {
				t.Run(fmt.Sprintf("%s/%s/crlf=%v", c.fixture, mode, crlf), func(t *testing.T) {
					body := readFixture(t, c.fixture)
					if crlf {
						body = toCRLF(body)
					}
					ws := newWireServer(t, sseHandler(body, mode))
					var streamed strings.Builder
					resp, err := newTestAnthropic(t, ws.URL).Stream(context.Background(), testRequest(), func(d string) { streamed.WriteString(d) })
					if err != nil {
						t.Fatal(err)
					}
					if resp.Text != c.text || streamed.String() != c.text {
						t.Errorf("text = %q, streamed %q, want %q", resp.Text, streamed.String(), c.text)
					}
					if resp.FinishReason != c.finish || resp.Usage != c.usage {
						t.Errorf("finish = %q usage = %+v, want %q %+v", resp.FinishReason, resp.Usage, c.finish, c.usage)
					}
					checkCalls(t, resp.ToolCalls, c.calls)
					if resp.ID == "" {
						t.Error("no response id")
					}
				})
			}
		}
	}
}

func TestAnthropicRequestShape(t *testing.T) {
	ws := newWireServer(t, sseHandler(readFixture(t, "anthropic_text.sse"), splitWhole))
	p := newTestAnthropic(t, ws.URL)
	req := Request{
		Messages: []Message{
			{Role: RoleSystem, Content: "You are Cairn."},
			{Role: RoleSystem, Content: "Be brief."},
			{Role: RoleUser, Content: "Fix a.go"},
			{Role: RoleAssistant, Content: "Reading.", ToolCalls: []ToolCall{
				{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`},
				{ID: "call.2", Name: "list_files", Arguments: ``},
				{ID: "call_3", Name: "read_file", Arguments: `{"path":`},
			}},
			{Role: RoleTool, ToolCallID: "call_1", ToolName: "read_file", Content: "package a"},
			{Role: RoleTool, ToolCallID: "call.2", ToolName: "list_files", Content: "a.go"},
			{Role: RoleTool, ToolCallID: "call_3", ToolName: "read_file", Content: "error: invalid JSON arguments"},
			{Role: RoleUser, Content: "Also check b.go"},
		},
		Tools: testTools,
	}
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := ws.last(t)
	if got.Path != "/v1/messages" {
		t.Errorf("path = %s", got.Path)
	}
	if got.Header.Get("X-Api-Key") != "sk-ant-test" || got.Header.Get("Anthropic-Version") != "2023-06-01" {
		t.Errorf("headers = %v", got.Header)
	}
	b := got.Body
	sys, _ := json.Marshal(b["system"])
	if string(sys) != `[{"cache_control":{"type":"ephemeral"},"text":"You are Cairn.\n\nBe brief.","type":"text"}]` ||
		b["model"] != "claude-test" || b["stream"] != true || b["max_tokens"] != float64(4096) {
		t.Errorf("body = system %s model %v stream %v max_tokens %v", sys, b["model"], b["stream"], b["max_tokens"])
	}
	tools := b["tools"].([]any)
	if t0 := tools[0].(map[string]any); t0["name"] != "read_file" || t0["input_schema"].(map[string]any)["type"] != "object" {
		t.Errorf("tool 0 = %v", t0)
	}
	msgs, _ := json.Marshal(b["messages"])
	want := `[{"content":[{"cache_control":{"type":"ephemeral"},"text":"Fix a.go","type":"text"}],"role":"user"},` +
		`{"content":[{"text":"Reading.","type":"text"},` +
		`{"id":"call_1","input":{"path":"a.go"},"name":"read_file","type":"tool_use"},` +
		`{"id":"call_2","input":{},"name":"list_files","type":"tool_use"},` +
		`{"id":"call_3","input":{"_raw_arguments":"{\"path\":"},"name":"read_file","type":"tool_use"}],"role":"assistant"},` +
		`{"content":[{"content":"package a","tool_use_id":"call_1","type":"tool_result"},` +
		`{"content":"a.go","tool_use_id":"call_2","type":"tool_result"},` +
		`{"content":"error: invalid JSON arguments","tool_use_id":"call_3","type":"tool_result"},` +
		`{"cache_control":{"type":"ephemeral"},"text":"Also check b.go","type":"text"}],"role":"user"}]`
	if string(msgs) != want {
		t.Errorf("messages =\n%s\nwant\n%s", msgs, want)
	}
}

func TestAnthropicConfig(t *testing.T) {
	for base, want := range map[string]string{
		"":                                   "https://api.anthropic.com/v1/messages",
		"http://127.0.0.1:9000/":             "http://127.0.0.1:9000/v1/messages",
		"http://127.0.0.1:9000/v1":           "http://127.0.0.1:9000/v1/messages",
		"http://127.0.0.1:9000/v1/messages":  "http://127.0.0.1:9000/v1/messages",
		"https://gateway.example/anthropic/": "https://gateway.example/anthropic/v1/messages",
	} {
		p, err := NewAnthropic(AnthropicConfig{BaseURL: base})
		if err != nil || p.Endpoint() != want {
			t.Errorf("NewAnthropic(%q) endpoint = %v, %v; want %s", base, p.Endpoint(), err, want)
		}
	}
	if _, err := NewAnthropic(AnthropicConfig{BaseURL: "api.anthropic.com"}); ClassOf(err) != ClassConfig {
		t.Errorf("bad URL err = %v", err)
	}
}

func TestAnthropicHTTPErrors(t *testing.T) {
	cases := []struct {
		name       string
		status     int
		hdr        map[string]string
		body       string
		class      ErrorClass
		retryAfter time.Duration
		mention    string
	}{
		{"401", 401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`, ClassAuth, 0, "ANTHROPIC_API_KEY"},
		{"403", 403, nil, `{"type":"error","error":{"type":"permission_error","message":"Your API key does not have permission to use the specified resource."}}`, ClassAuth, 0, "model.baseURL"},
		{"429", 429, map[string]string{"Retry-After": "12"}, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`, ClassRateLimit, 12 * time.Second, ""},
		{"529", 529, nil, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, ClassNetwork, 0, "Overloaded"},
		{"500", 500, nil, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, ClassNetwork, 0, ""},
		{"400 prompt too long", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 203154 tokens > 200000 maximum"}}`, ClassContextLength, 0, ""},
		{"413", 413, nil, `{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum allowed number of bytes."}}`, ClassContextLength, 0, ""},
		{"400 schema", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12"}}`, ClassSchema, 0, ""},
		{"400 other", 400, nil, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: roles must alternate"}}`, ClassOther, 0, "roles"},
		{"404", 404, nil, `{"type":"error","error":{"type":"not_found_error","message":"model: claude-nope"}}`, ClassConfig, 0, "model.name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := newWireServer(t, errorHandler(c.status, c.hdr, c.body))
			_, err := newTestAnthropic(t, ws.URL).Stream(context.Background(), testRequest(), nil)
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

func antEvents(evs ...string) []byte {
	var b strings.Builder
	for _, e := range evs {
		var head struct{ Type string }
		json.Unmarshal([]byte(e), &head)
		b.WriteString("event: " + head.Type + "\ndata: " + e + "\n\n")
	}
	return []byte(b.String())
}

const (
	antStart    = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
	antTextOpen = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	antTextHi   = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}`
	antStop0    = `{"type":"content_block_stop","index":0}`
	antEndTurn  = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`
	antMsgStop  = `{"type":"message_stop"}`
)

func TestAnthropicStreamErrors(t *testing.T) {
	cases := []struct {
		name  string
		body  []byte
		class ErrorClass // "" = success
	}{
		{"overloaded event", readFixture(t, "anthropic_overloaded.sse"), ClassNetwork},
		{"refusal", readFixture(t, "anthropic_refusal.sse"), ClassRefusal},
		{"rate limit event", antEvents(antStart, `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`), ClassRateLimit},
		{"cut after delta", antEvents(antStart, antTextOpen, antTextHi), ClassBadResponse},
		{"cut mid-line", append(antEvents(antStart, antTextOpen), []byte("event: content_block_delta\ndata: {\"type\":\"content_block_de")...), ClassBadResponse},
		{"garbage", antEvents(antStart, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`), ClassBadResponse},
		{"json delta for text block", antEvents(antStart, antTextOpen, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}`), ClassBadResponse},
		{"no message_stop after stop reason", antEvents(antStart, antTextOpen, antTextHi, antStop0, antEndTurn), ""},
		{"complete", antEvents(antStart, antTextOpen, antTextHi, antStop0, antEndTurn, antMsgStop), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := newWireServer(t, sseHandler(c.body, splitRandom))
			resp, err := newTestAnthropic(t, ws.URL).Stream(context.Background(), testRequest(), nil)
			if c.class == "" {
				if err != nil || resp.Text != "hi" || resp.FinishReason != "stop" || resp.Usage != (tokencount.Usage{InputTokens: 10, OutputTokens: 3}) {
					t.Fatalf("resp = %+v, err = %v", resp, err)
				}
				return
			}
			if ClassOf(err) != c.class {
				t.Fatalf("err = %v, want %s", err, c.class)
			}
		})
	}
}

func TestAnthropicMissingUsageEstimated(t *testing.T) {
	body := antEvents(`{"type":"message_start","message":{"id":"msg_2","content":[]}}`, antTextOpen, antTextHi, antStop0,
		`{"type":"message_delta","delta":{"stop_reason":"max_tokens"}}`, antMsgStop)
	ws := newWireServer(t, sseHandler(body, splitWhole))
	resp, err := newTestAnthropic(t, ws.URL).Stream(context.Background(), testRequest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Usage.Estimated || resp.Usage.InputTokens <= 0 || resp.FinishReason != "length" {
		t.Errorf("resp = %+v", resp)
	}
}

func TestAnthropicCancelWhileStalled(t *testing.T) {
	saw := make(chan struct{})
	ws := newWireServer(t, stallHandler(antEvents(antStart, antTextOpen, antTextHi), "text/event-stream", saw))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := newTestAnthropic(t, ws.URL).Stream(ctx, testRequest(), func(string) { cancel() })
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
