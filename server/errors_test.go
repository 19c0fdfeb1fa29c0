package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/protocol"
)

// openaiReply is one scripted answer of the fake OpenAI endpoint.
type openaiReply struct {
	status  int
	header  map[string]string
	body    string   // for errors
	events  []string // SSE data payloads for 200
	checkFn func(t *testing.T, req map[string]any)
}

func textEvents(text string) []string {
	return []string{
		fmt.Sprintf(`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":%q}}]}`, text),
		`{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":3}}`,
	}
}

// fakeOpenAI serves replies in order and records the requests.
func fakeOpenAI(t *testing.T, replies ...openaiReply) (*httptest.Server, func() int) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if i >= len(replies) {
			w.WriteHeader(500)
			return
		}
		rep := replies[i]
		if rep.checkFn != nil {
			var req map[string]any
			json.Unmarshal(body, &req)
			rep.checkFn(t, req)
		}
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		if rep.status != 0 && rep.status != 200 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.status)
			io.WriteString(w, rep.body)
			return
		}
		sse(w, append(rep.events, "[DONE]")...)
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

func openaiEnv(t *testing.T, url string) *env {
	return newEnv(t, greetWS, withSettings(map[string]any{
		"model": map[string]any{"provider": "openai", "name": "gpt-test", "baseURL": url + "/v1"},
	}))
}

func TestModelErrorClasses(t *testing.T) {
	hasMinimum := func(req map[string]any) bool {
		b, _ := json.Marshal(req["tools"])
		return strings.Contains(string(b), "minimum")
	}
	cases := []struct {
		name      string
		replies   []openaiReply
		wantKind  string
		wantClass string
		wantCalls int
		errHas    string
	}{
		{"5xx then success", []openaiReply{{status: 503, body: `{"error":{"message":"overloaded"}}`}, {events: textEvents("ok")}}, protocol.EventFinished, "", 2, ""},
		{"429 waits for Retry-After", []openaiReply{{status: 429, header: map[string]string{"Retry-After": "0"}, body: `{"error":{"message":"rate limited","type":"requests"}}`}, {events: textEvents("ok")}}, protocol.EventFinished, "", 2, ""},
		{"auth fails at once, naming the setting", []openaiReply{{status: 401, body: `{"error":{"message":"Incorrect API key provided"}}`}}, protocol.EventFailed, "auth", 1, "OPENAI_API_KEY"},
		{"refusal stops", []openaiReply{{events: []string{`{"id":"c","choices":[{"index":0,"delta":{"content":""},"finish_reason":"content_filter"}]}`}}}, protocol.EventFailed, "refusal", 1, ""},
		{"schema feature rejected: retried with simplified schemas", []openaiReply{
			{status: 400, body: `{"error":{"message":"Invalid schema for function 'read_file': 'minimum' is not permitted.","type":"invalid_request_error","code":"invalid_function_parameters"}}`,
				checkFn: func(t *testing.T, req map[string]any) {
					if !hasMinimum(req) {
						t.Error("the first request should carry the full schemas")
					}
				}},
			{events: textEvents("ok"), checkFn: func(t *testing.T, req map[string]any) {
				if hasMinimum(req) {
					t.Error("the retry should carry simplified schemas")
				}
			}},
		}, protocol.EventFinished, "", 2, ""},
		{"context too long: rebuilt smaller, retried once", []openaiReply{
			{status: 400, body: `{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}`},
			{status: 400, body: `{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}`},
		}, protocol.EventFailed, "context_length", 2, ""},
		{"context too long once, then fits", []openaiReply{
			{status: 400, body: `{"error":{"message":"maximum context length exceeded","code":"context_length_exceeded"}}`},
			{events: textEvents("ok")},
		}, protocol.EventFinished, "", 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv, calls := fakeOpenAI(t, c.replies...)
			e := openaiEnv(t, srv.URL)
			evs := e.waitRun(e.ask("greet/greet.go", 0, 0, "q"))
			checkSeq(t, evs)
			l := last(evs)
			if l.Kind != c.wantKind || l.Class != c.wantClass {
				t.Fatalf("ended %s/%s (%s), want %s/%s", l.Kind, l.Class, l.Error, c.wantKind, c.wantClass)
			}
			if !strings.Contains(l.Error, c.errHas) {
				t.Errorf("error %q should mention %q", l.Error, c.errHas)
			}
			if calls() != c.wantCalls {
				t.Errorf("the endpoint saw %d calls, want %d", calls(), c.wantCalls)
			}
		})
	}
}

func TestCancelAbortsHTTPRequest(t *testing.T) {
	aborted := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sse(w, `{"id":"c","choices":[{"index":0,"delta":{"content":"thinking"}}]}`)
		<-r.Context().Done() // stall mid-stream until the client goes away
		close(aborted)
	}))
	defer srv.Close()
	e := openaiEnv(t, srv.URL)
	run := e.ask("greet/greet.go", 0, 0, "q")
	if _, err := e.ed.WaitKind(e.ctx, run, protocol.EventText); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.Cancel(e.ctx, run); err != nil {
		t.Fatal(err)
	}
	if evs := e.waitRun(run); last(evs).Kind != protocol.EventCancelled {
		t.Fatalf("want cancelled: %s", kinds(evs))
	}
	select {
	case <-aborted:
	case <-e.ctx.Done():
		t.Fatal("the HTTP request was not aborted")
	}
}
