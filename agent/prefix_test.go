package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/trace"
)

// antWire is an Anthropic Messages API server: odd requests answer with a
// read_file call, even ones with text; every answer reports usage with a
// cache read of cachedPerCall tokens. It keeps each request body.
type antWire struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
}

const (
	inputPerCall  = 3000
	cachedPerCall = 2000
	writePerCall  = 500
	outputPerCall = 40
)

func newAntWire(t *testing.T) *antWire {
	w := &antWire{}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		w.mu.Lock()
		w.bodies = append(w.bodies, body)
		n := len(w.bodies)
		w.mu.Unlock()
		rw.Header().Set("Content-Type", "text/event-stream")
		ev := func(data string) {
			var head struct{ Type string }
			_ = json.Unmarshal([]byte(data), &head)
			fmt.Fprintf(rw, "event: %s\ndata: %s\n\n", head.Type, data)
		}
		ev(fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_%d","content":[],"usage":{"input_tokens":%d,"cache_read_input_tokens":%d,"cache_creation_input_tokens":%d,"output_tokens":1}}}`,
			n, inputPerCall-cachedPerCall-writePerCall, cachedPerCall, writePerCall))
		stop := "end_turn"
		if n%2 == 1 {
			ev(`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_` + fmt.Sprint(n) + `","name":"read_file","input":{}}}`)
			ev(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\":\"a.go\"}"}}`)
			stop = "tool_use"
		} else {
			ev(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
			ev(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"A returns 1."}}`)
		}
		ev(`{"type":"content_block_stop","index":0}`)
		ev(fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q},"usage":{"output_tokens":%d}}`, stop, outputPerCall))
		ev(`{"type":"message_stop"}`)
	}))
	t.Cleanup(w.Close)
	return w
}

// promptParts is a request as the provider's cache sees it, in its order:
// the tools, the system prompt, then each message. Cache breakpoints are
// markers, not content: they are dropped before comparing.
func promptParts(t *testing.T, body map[string]any) []string {
	t.Helper()
	strip := func(v any) string {
		var walk func(any) any
		walk = func(v any) any {
			switch x := v.(type) {
			case map[string]any:
				out := map[string]any{}
				for k, e := range x {
					if k != "cache_control" {
						out[k] = walk(e)
					}
				}
				return out
			case []any:
				out := make([]any, len(x))
				for i, e := range x {
					out[i] = walk(e)
				}
				return out
			}
			return v
		}
		b, err := json.Marshal(walk(v))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	parts := []string{"tools " + strip(body["tools"]), "system " + strip(body["system"])}
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		parts = append(parts, "message "+strip(m))
	}
	return parts
}

func commonParts(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestStablePrefix runs a two-step question and a follow-up in its thread
// against an Anthropic wire server and checks what automatic prefix
// caches need: every step of a run resends the previous request
// unchanged (tools, system prompt, context message, earlier turns) and
// only appends, and the follow-up starts with the same tools and system
// prompt. It also checks the usage and cost the finished events and the
// thread total report.
func TestStablePrefix(t *testing.T) {
	srv := newAntWire(t)
	p, err := model.NewAnthropic(model.AnthropicConfig{BaseURL: srv.URL, APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := newManager(t, "turns: []\n", t.TempDir())
	cfg := m.Config()
	cfg.Provider, cfg.ModelName = p, "claude-sonnet-4-5-20250929"
	m.SetConfig(cfg)

	ask := func(threadID string) (protocol.RunEvent, string) {
		ch := make(chan protocol.RunEvent, 1000)
		r, err := m.Start(context.Background(), AskRequest{Question: "What does A return?", ThreadID: threadID}, func(ev protocol.RunEvent) { ch <- ev })
		if err != nil {
			t.Fatal(err)
		}
		return waitEvent(t, ch, protocol.EventFinished), r.ThreadID
	}
	first, thread := ask("")
	second, _ := ask(thread)

	srv.mu.Lock()
	bodies := srv.bodies
	srv.mu.Unlock()
	if len(bodies) != 4 {
		t.Fatalf("%d requests, want 4 (two steps per run)", len(bodies))
	}
	var parts [][]string
	for _, b := range bodies {
		parts = append(parts, promptParts(t, b))
	}
	for run := 0; run < 2; run++ {
		a, b := parts[2*run], parts[2*run+1]
		if n := commonParts(a, b); n != len(a) {
			t.Errorf("run %d: step 2 shares %d of step 1's %d parts; first difference:\n%s\nvs\n%s", run+1, n, len(a), a[n], b[n])
		}
		if len(a) < 3 {
			t.Errorf("run %d: step 1 has no context message: %v", run+1, a)
		}
	}
	if n := commonParts(parts[1], parts[2]); n < 2 {
		t.Errorf("the follow-up shares %d parts with the run before it, want tools and system (2)", n)
	}

	// Usage: two calls per run, each 3000 input of which 2000 read from
	// the cache and 500 written to it.
	for i, ev := range []protocol.RunEvent{first, second} {
		u := ev.Usage
		if u == nil || u.InputTokens != 2*inputPerCall || u.CachedInputTokens != 2*cachedPerCall || u.CacheWriteTokens != 2*writePerCall || u.OutputTokens != 2*outputPerCall {
			t.Fatalf("run %d usage = %+v", i+1, u)
		}
		// claude-sonnet-4-5: 3 input, 0.30 cache read, 3.75 cache write, 15 output per Mtok.
		want := (1000*3 + 4000*0.30 + 1000*3.75 + 80*15) / 1e6
		if u.CostUnknown || math.Abs(u.CostUSD-want) > 1e-9 {
			t.Errorf("run %d cost = %v (unknown %v), want %v", i+1, u.CostUSD, u.CostUnknown, want)
		}
	}
	var total *protocol.Usage
	for _, s := range m.Threads() {
		if s.ThreadID == thread {
			total = s.Usage
		}
	}
	if total == nil || total.InputTokens != 4*inputPerCall || total.CachedInputTokens != 4*cachedPerCall ||
		math.Abs(total.CostUSD-first.Usage.CostUSD-second.Usage.CostUSD) > 1e-9 {
		t.Errorf("thread total = %+v", total)
	}
	if th, ok := m.Thread(thread); !ok || th.Usage == nil || *th.Usage != *total {
		t.Errorf("getThread usage = %+v, list says %+v", th.Usage, total)
	}
}

// TestUnknownModelCost: a model without a price reports tokens and no
// cost until model.prices names it.
func TestUnknownModelCost(t *testing.T) {
	srv := newAntWire(t)
	p, err := model.NewAnthropic(model.AnthropicConfig{BaseURL: srv.URL, APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := newManager(t, "turns: []\n", t.TempDir())
	run := func(prices trace.Prices) *protocol.Usage {
		cfg := m.Config()
		cfg.Provider, cfg.ModelName, cfg.Prices = p, "my-local-model", prices
		m.SetConfig(cfg)
		ch := make(chan protocol.RunEvent, 1000)
		if _, err := m.Start(context.Background(), AskRequest{Question: "q"}, func(ev protocol.RunEvent) { ch <- ev }); err != nil {
			t.Fatal(err)
		}
		return waitEvent(t, ch, protocol.EventFinished).Usage
	}
	if u := run(nil); u == nil || !u.CostUnknown || u.CostUSD != 0 || u.InputTokens == 0 {
		t.Errorf("unknown model: usage %+v", u)
	}
	b, _ := json.Marshal(run(nil))
	var wire map[string]any
	_ = json.Unmarshal(b, &wire)
	if _, has := wire["costUSD"]; has {
		t.Errorf("unknown model: the wire carries a cost: %s", b)
	}
	u := run(trace.Prices{"my-local-model": {Input: 1, CachedInput: 0.5, Output: 2}})
	// 2 calls: 1000 uncached + 1000 written (no write rate: input rate) at 1,
	// 4000 cached at 0.5, 80 output at 2.
	if want := (2000*1 + 4000*0.5 + 80*2) / 1e6; u == nil || u.CostUnknown || math.Abs(u.CostUSD-want) > 1e-9 {
		t.Errorf("priced by model.prices: %+v, want %v", u, want)
	}
}
