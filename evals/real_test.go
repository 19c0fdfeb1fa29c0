package evals

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestRealProviderCases runs the suite's `provider: real` cases on a local
// OpenAI-compatible SSE endpoint, and checks they are skipped (not failed)
// without a provider.
func TestRealProviderCases(t *testing.T) {
	all, err := LoadDir("cases")
	if err != nil {
		t.Fatal(err)
	}
	var cases []*Case
	for _, c := range all {
		if !c.Scripted() {
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		t.Skip("no real-provider cases in the suite")
	}
	noEnv := func(string) string { return "" }
	rep := RunCases(context.Background(), cases, Options{Getenv: noEnv})
	if rep.Skipped != len(cases) || !rep.OK() {
		t.Fatalf("without a provider: %d skipped, %d failed; want all skipped", rep.Skipped, rep.Failed)
	}

	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		requests.Add(1)
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") || !strings.Contains(string(body), "Greet") {
			http.Error(w, "unexpected request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, d := range []string{
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Greet prefixes "},"finish_reason":null}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"the name with Hello."},"finish_reason":"stop"}]}`,
			`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":321,"completion_tokens":7,"total_tokens":328}}`,
			`[DONE]`,
		} {
			io.WriteString(w, "data: "+d+"\n\n")
		}
	}))
	defer srv.Close()
	rep = RunCases(context.Background(), cases, Options{Getenv: noEnv,
		Real: RealProvider{Provider: "openai", Model: "m", BaseURL: srv.URL + "/v1"}})
	if !rep.OK() || rep.Passed != len(cases) {
		var b strings.Builder
		rep.WriteText(&b, true)
		t.Fatalf("on a local endpoint:\n%s", b.String())
	}
	if r := rep.Results[0]; r.Scripted || r.InputTokens != 321 || r.OutputTokens != 7 || r.Steps != 1 {
		t.Errorf("metrics of a real case: %+v", r)
	}
	if n := int(requests.Load()); n != len(cases) {
		t.Errorf("%d requests to the endpoint, want %d", n, len(cases))
	}
}
