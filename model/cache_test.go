package model

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/tokencount"
)

// A request of a run's later step: system, context, a tool round trip.
func multiStepRequest() Request {
	return Request{
		Messages: []Message{
			{Role: RoleSystem, Content: "You are Cairn."},
			{Role: RoleUser, Content: "## Context\npackage a\n\nWhat does main do?"},
			{Role: RoleAssistant, Content: "Reading.", ToolCalls: []ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
			{Role: RoleTool, ToolCallID: "call_1", ToolName: "read_file", Content: "package a"},
		},
		Tools: testTools,
	}
}

// cacheMarks lists where the body carries cache_control, as JSON paths.
func cacheMarks(t *testing.T, body map[string]any) []string {
	t.Helper()
	var marks []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if cc, ok := x["cache_control"]; ok {
				if m, _ := cc.(map[string]any); m["type"] != "ephemeral" {
					t.Errorf("%s: cache_control = %v", path, cc)
				}
				marks = append(marks, path)
			}
			for _, k := range []string{"tools", "system", "messages", "content"} {
				if c, ok := x[k]; ok {
					walk(path+"."+k, c)
				}
			}
		case []any:
			for i, e := range x {
				walk(path+"["+itoa(i)+"]", e)
			}
		}
	}
	walk("", body)
	return marks
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestAnthropicCacheBreakpoints(t *testing.T) {
	ws := newWireServer(t, sseHandler(readFixture(t, "anthropic_text.sse"), splitWhole))
	if _, err := newTestAnthropic(t, ws.URL).Stream(context.Background(), multiStepRequest(), nil); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(cacheMarks(t, ws.last(t).Body), " ")
	// The last tool, the system prompt, the context message, the end of
	// the conversation: four, the API's limit.
	want := ".tools[1] .system[0] .messages[0].content[0] .messages[2].content[0]"
	if got != want {
		t.Errorf("breakpoints = %s\nwant %s", got, want)
	}

	// The first step: the context message is also the last one.
	if _, err := newTestAnthropic(t, ws.URL).Stream(context.Background(), testRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cacheMarks(t, ws.last(t).Body), " "); got != ".tools[1] .system[0] .messages[0].content[0]" {
		t.Errorf("first step breakpoints = %s", got)
	}

	off := newTestAnthropic(t, ws.URL, func(c *AnthropicConfig) { c.NoPromptCache = true })
	if _, err := off.Stream(context.Background(), multiStepRequest(), nil); err != nil {
		t.Fatal(err)
	}
	if got := cacheMarks(t, ws.last(t).Body); len(got) != 0 {
		t.Errorf("NoPromptCache: breakpoints %v", got)
	}
}

func TestAnthropicCachedUsage(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","stop_reason":null,` +
		`"usage":{"input_tokens":30,"cache_creation_input_tokens":200,"cache_read_input_tokens":1500,"output_tokens":1}}}`
	cases := []struct {
		name  string
		delta string
		want  tokencount.Usage
	}{
		{"start only", antEndTurn, tokencount.Usage{InputTokens: 1730, OutputTokens: 3, CachedInputTokens: 1500, CacheWriteTokens: 200}},
		// Newer API versions repeat the (final) input usage in message_delta.
		{"delta repeats", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":31,"cache_creation_input_tokens":0,"cache_read_input_tokens":1700,"output_tokens":4}}`,
			tokencount.Usage{InputTokens: 1731, OutputTokens: 4, CachedInputTokens: 1700}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := newWireServer(t, sseHandler(antEvents(start, antTextOpen, antTextHi, antStop0, c.delta, antMsgStop), splitRandom))
			resp, err := newTestAnthropic(t, ws.URL).Stream(context.Background(), testRequest(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != c.want {
				t.Errorf("usage = %+v, want %+v", resp.Usage, c.want)
			}
		})
	}
}

func TestOpenAICachedUsage(t *testing.T) {
	chunk := func(usage string) string {
		return `data: {"id":"c1","choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":"stop"}]}` + "\n\n" +
			`data: {"id":"c1","choices":[],"usage":` + usage + `}` + "\n\ndata: [DONE]\n\n"
	}
	cases := []struct {
		name, usage string
		want        tokencount.Usage
	}{
		{"cached", `{"prompt_tokens":2006,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":1920}}`,
			tokencount.Usage{InputTokens: 2006, OutputTokens: 300, CachedInputTokens: 1920}},
		{"no details", `{"prompt_tokens":42,"completion_tokens":9}`, tokencount.Usage{InputTokens: 42, OutputTokens: 9}},
		{"more cached than prompt", `{"prompt_tokens":42,"completion_tokens":9,"prompt_tokens_details":{"cached_tokens":99}}`,
			tokencount.Usage{InputTokens: 42, OutputTokens: 9, CachedInputTokens: 42}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := newWireServer(t, sseHandler([]byte(chunk(c.usage)), splitRandom))
			p, err := NewOpenAI(OpenAIConfig{BaseURL: ws.URL, Model: "gpt-test"})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.Stream(context.Background(), testRequest(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Usage != c.want {
				t.Errorf("usage = %+v, want %+v", resp.Usage, c.want)
			}
			so, _ := ws.last(t).Body["stream_options"].(map[string]any)
			if so["include_usage"] != true {
				t.Errorf("stream_options = %v: usage is not asked for", ws.last(t).Body["stream_options"])
			}
		})
	}
}
