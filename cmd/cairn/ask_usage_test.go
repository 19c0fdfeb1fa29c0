package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tokencount"
)

// cairn ask against an OpenAI-compatible server that reports cached
// prompt tokens prints them and the answer's cost on stderr; a model
// without a price gets no figure until model.prices names it.
func TestAskPrintsUsageAndCost(t *testing.T) {
	dir := t.TempDir()
	if err := copyEmbedded(sampleFS, "_sample/ws", dir); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", `{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":"Done."},"finish_reason":"stop"}]}`)
		fmt.Fprintf(w, "data: %s\n\n", `{"id":"c1","choices":[],"usage":{"prompt_tokens":4000,"completion_tokens":100,"prompt_tokens_details":{"cached_tokens":3072}}}`)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	t.Setenv("CAIRN_PROVIDER", "openai")
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	t.Setenv("OPENAI_API_KEY", "test")
	t.Setenv("CAIRN_LOG", "")
	for _, tc := range []struct{ model, want string }{
		// gpt-4o: 928 × 2.50 + 3072 × 1.25 + 100 × 10 per Mtok = $0.00716.
		{"gpt-4o-2024-08-06", "· usage: 4000 input tokens (3072 cached), 100 output; cost $0.0072\n"},
		{"my-local-model", "· usage: 4000 input tokens (3072 cached), 100 output; cost unknown: the model has no price (set model.prices)\n"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			t.Setenv("CAIRN_MODEL", tc.model)
			t.Setenv("CAIRN_STATE_DIR", t.TempDir())
			out, errOut, code := runCLI(t, "ask", "--root", dir, "--file", "greet/greet.go", "what is it")
			if code != 0 || out != "Done.\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, errOut)
			}
		})
	}
}

func TestUsageSummary(t *testing.T) {
	u := protocol.Usage{Usage: tokencount.Usage{InputTokens: 10, OutputTokens: 2, CacheWriteTokens: 8}, CostUSD: 0.00012}
	if got := usageSummary(u); got != "usage: 10 input tokens (8 written to the cache), 2 output; cost $0.0001" {
		t.Errorf("summary = %q", got)
	}
	u = protocol.Usage{Usage: tokencount.Usage{InputTokens: 10, OutputTokens: 2, Estimated: true}}
	if got := usageSummary(u); got != "usage: 10 input tokens, 2 output (estimated); cost $0.0000" {
		t.Errorf("summary = %q", got)
	}
}
