package model

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Reasoning deltas reach Request.OnReasoning and stay out of the answer.
func TestOpenAIReasoningDeltas(t *testing.T) {
	body := streamOf(
		choice(`{"role":"assistant","reasoning_content":"think "}`, `null`),
		choice(`{"reasoning":"harder"}`, `null`),
		choice(`{"reasoning":{"effort":"high"}}`, `null`), // an object is not text
		choice(`{"content":"answer"}`, `"stop"`), "[DONE]")
	ws := newWireServer(t, sseHandler(body, splitRandom))
	var thought strings.Builder
	req := testRequest()
	req.OnReasoning = func(d string) { thought.WriteString(d) }
	resp, err := newTestOpenAI(t, ws.URL).Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if thought.String() != "think harder" || resp.Text != "answer" {
		t.Errorf("thought %q, text %q", thought.String(), resp.Text)
	}
}

func TestAnthropicThinkingDeltas(t *testing.T) {
	body := antEvents(antStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"let me see"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2ln"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"hi"}}`,
		`{"type":"content_block_stop","index":1}`, antEndTurn, antMsgStop)
	ws := newWireServer(t, sseHandler(body, splitWhole))
	var thought strings.Builder
	req := testRequest()
	req.OnReasoning = func(d string) { thought.WriteString(d) }
	resp, err := newTestAnthropic(t, ws.URL).Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if thought.String() != "let me see" || resp.Text != "hi" {
		t.Errorf("thought %q, text %q", thought.String(), resp.Text)
	}
}

// GET /models lists the endpoint's ids, deduplicated, with the key.
func TestOpenAIListModels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, "no", http.StatusNotFound)
			return
		}
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"a"},{"id":"b"},{"id":"a"},{"id":""}]}`))
	}))
	defer srv.Close()
	ids, err := newTestOpenAI(t, srv.URL).ListModels(context.Background())
	if err != nil || strings.Join(ids, ",") != "a,b" {
		t.Fatalf("ids %v, err %v", ids, err)
	}
	if _, err := newTestOpenAI(t, srv.URL, func(c *OpenAIConfig) { c.APIKey = "" }).ListModels(context.Background()); err == nil {
		t.Errorf("a 404 listed models")
	}
}
