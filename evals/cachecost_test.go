package evals

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/tokencount"
	"github.com/cairn-dev/cairn/trace"
)

// The prompt cache benchmark: every model request of the suite's scripted
// cases is replayed against each provider's prefix-cache rules, and the
// list-price input cost is compared with and without the cache. What the
// provider caches is decided by the requests Cairn actually sends, so a
// prefix that changes between steps (a timestamp, an unordered map, a
// rebuilt context) shows up here as cost.

// promptBlocks is a request as the provider's cache sees it: content
// blocks in the order it caches them (tools, system prompt, then each
// message's blocks), each with its token count, and the blocks that carry
// Cairn's Anthropic cache breakpoints (model/anthropic.go).
type promptBlocks struct {
	hash        []string // hash[i]: of blocks 0..i, so equal hashes mean equal prefixes
	cum         []int    // cum[i]: tokens of blocks 0..i-1; cum[len] is the total
	breakpoints []int
}

// salt is mixed into the hashes of the message blocks (not the tools nor
// the system prompt): requests of different salts never share a message.
func blocksOf(req model.Request, salt string) promptBlocks {
	var texts []string
	for _, t := range req.Tools {
		texts = append(texts, "tool\x00"+t.Name+"\x00"+t.Description+"\x00"+string(t.Schema))
	}
	var bps []int
	if len(texts) > 0 {
		bps = append(bps, len(texts)-1)
	}
	var sys []string
	for _, m := range req.Messages {
		if m.Role == model.RoleSystem && strings.TrimSpace(m.Content) != "" {
			sys = append(sys, m.Content)
		}
	}
	if len(sys) > 0 {
		texts = append(texts, "system\x00"+strings.Join(sys, "\n\n"))
		bps = append(bps, len(texts)-1)
	}
	first := true
	for _, m := range req.Messages {
		switch m.Role {
		case model.RoleSystem:
			continue
		case model.RoleAssistant:
			if strings.TrimSpace(m.Content) != "" {
				texts = append(texts, "assistant\x00"+m.Content)
			}
			for _, tc := range m.ToolCalls {
				texts = append(texts, "tool_use\x00"+tc.ID+"\x00"+tc.Name+"\x00"+tc.Arguments)
			}
		case model.RoleTool:
			texts = append(texts, "tool_result\x00"+m.ToolCallID+"\x00"+m.Content)
		default:
			if first {
				bps = append(bps, len(texts)) // the context message
			}
			texts = append(texts, "user\x00"+m.Content)
		}
		first = false
	}
	if len(texts) > 0 {
		bps = append(bps, len(texts)-1)
	}
	pb := promptBlocks{cum: []int{0}}
	h := sha256.New()
	shared := 0 // tools and system prompt
	if len(sys) > 0 || len(req.Tools) > 0 {
		shared = len(req.Tools)
		if len(sys) > 0 {
			shared++
		}
	}
	for i, t := range texts {
		if i == shared {
			h.Write([]byte(salt))
		}
		h.Write([]byte(t))
		h.Write([]byte{0xff})
		pb.hash = append(pb.hash, fmt.Sprintf("%x", h.Sum(nil)))
		pb.cum = append(pb.cum, pb.cum[len(pb.cum)-1]+tokencount.Count(t))
	}
	sort.Ints(bps)
	for i, b := range bps {
		if i == 0 || b != bps[i-1] {
			pb.breakpoints = append(pb.breakpoints, b)
		}
	}
	return pb
}

func (pb promptBlocks) total() int { return pb.cum[len(pb.cum)-1] }

// cacheSim is one provider's prompt cache over the requests of one case
// (one workspace, one short session: well inside the five-minute
// lifetime both providers give an entry).
type cacheSim interface {
	// next returns the cached (read) and written tokens of the request.
	next(pb promptBlocks) (read, written int)
}

// anthropicCache follows Anthropic's rules: only prefixes ending at a
// cache_control breakpoint are written, and only when at least minTokens
// long; a request reads the longest written prefix that ends at a block
// boundary no more than 20 blocks before one of its breakpoints; it
// writes what lies between that and its last cacheable breakpoint.
type anthropicCache struct {
	minTokens int
	written   map[string]bool
}

func (c *anthropicCache) next(pb promptBlocks) (read, written int) {
	for _, bp := range pb.breakpoints {
		for p := bp; p >= 0 && p > bp-20; p-- {
			if c.written[pb.hash[p]] {
				read = max(read, pb.cum[p+1])
				break
			}
		}
	}
	last := -1
	for _, bp := range pb.breakpoints {
		if pb.cum[bp+1] >= c.minTokens {
			last = bp
			c.written[pb.hash[bp]] = true
		}
	}
	if last >= 0 && pb.cum[last+1] > read {
		written = pb.cum[last+1] - read
	}
	return read, written
}

// openAICache follows OpenAI's automatic caching: a prompt of at least
// 1024 tokens reads the longest prefix it shares with an earlier prompt,
// counted in 1024 tokens and then 128-token steps. The shared prefix is
// taken at block granularity (a part of a differing block is not
// counted), which understates the hit a little.
type openAICache struct{ seen []promptBlocks }

func (c *openAICache) next(pb promptBlocks) (read, written int) {
	best := 0
	for _, prev := range c.seen {
		k := 0
		for k < len(prev.hash) && k < len(pb.hash) && prev.hash[k] == pb.hash[k] {
			k++
		}
		best = max(best, pb.cum[k])
	}
	c.seen = append(c.seen, pb)
	if pb.total() < 1024 || best < 1024 {
		return 0, 0
	}
	return 1024 + (best-1024)/128*128, 0
}

// cacheCost is the input cost of a suite under one model's list prices.
type cacheCost struct {
	model                string
	requests, tokens     int
	read, written        int
	uncachedUSD, withUSD float64
}

func (c cacheCost) saving() float64 { return 1 - c.withUSD/c.uncachedUSD }

// simulate prices the cases' requests under one model. With perCase each
// case starts with an empty cache: its runs share only what they send
// each other. Otherwise the cases run in name order as one working
// session on one cache, as the provider keeps it (by prefix, for every
// request of the account, for five minutes after the last hit; the suite
// runs in seconds), but as if every case asked about different code: the
// cases share the tools and the system prompt and never a message (the
// suite's cases share workspaces and questions, which would overstate
// the hits).
func simulate(modelID string, newSim func() cacheSim, byCase map[string][]model.Request, perCase bool) cacheCost {
	pr, ok := trace.DefaultPrices().Lookup("", modelID)
	if !ok {
		panic("no price for " + modelID)
	}
	out := cacheCost{model: modelID}
	sim := newSim()
	for _, name := range sortedKeys(byCase) {
		if perCase {
			sim = newSim()
		}
		for _, r := range byCase[name] {
			pb := blocksOf(r, name)
			read, written := sim.next(pb)
			out.requests++
			out.tokens += pb.total()
			out.read += read
			out.written += written
			u := tokencount.Usage{InputTokens: pb.total(), CachedInputTokens: read, CacheWriteTokens: written}
			out.uncachedUSD += pr.Cost(tokencount.Usage{InputTokens: pb.total()})
			out.withUSD += pr.Cost(u)
		}
	}
	return out
}

// TestPromptCacheCost replays the model requests of the suite's multi-step
// scripted cases (those whose model is called more than once) against
// Anthropic's and OpenAI's prompt caches and reports the list-price input
// cost with and without caching; the target is at least 50% lower on
// both providers' current models. Figures: docs/benchmarks.md.
func TestPromptCacheCost(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the eval suite")
	}
	cases, err := LoadDir("cases")
	if err != nil {
		t.Fatal(err)
	}
	var inProcess []*Case
	for _, c := range cases {
		if c.Scripted() && !c.needsProcess() {
			inProcess = append(inProcess, c)
		}
	}
	var mu sync.Mutex
	byCase := map[string][]model.Request{}
	rep := RunCases(context.Background(), inProcess, Options{Timeout: 2 * time.Minute, EchoMCP: echoMCP,
		OnModelRequest: func(name string, req model.Request) {
			mu.Lock()
			defer mu.Unlock()
			byCase[name] = append(byCase[name], req)
		}})
	if !rep.OK() {
		var b strings.Builder
		rep.WriteText(&b, false)
		t.Fatalf("the suite failed:\n%s", b.String())
	}
	multi := map[string][]model.Request{}
	for name, reqs := range byCase {
		if len(reqs) > 1 {
			multi[name] = reqs
		}
	}
	if len(multi) < 5 {
		t.Fatalf("only %d multi-step cases", len(multi))
	}
	anthropic := func(min int) func() cacheSim {
		return func() cacheSim { return &anthropicCache{minTokens: min, written: map[string]bool{}} }
	}
	openai := func() cacheSim { return &openAICache{} }
	run := func(perCase bool) []cacheCost {
		return []cacheCost{
			simulate("claude-sonnet-4-5", anthropic(1024), multi, perCase),
			simulate("claude-haiku-4-5", anthropic(2048), multi, perCase),
			simulate("gpt-5", openai, multi, perCase),
			simulate("gpt-4.1", openai, multi, perCase),
			simulate("gpt-4o", openai, multi, perCase),
		}
	}
	steps := 0
	for _, reqs := range multi {
		steps += len(reqs)
	}
	first := blocksOf(multi[sortedKeys(multi)[0]][0], "")
	t.Logf("%d multi-step cases, %d model requests; tools and system prompt: %d tokens", len(multi), steps, first.cum[first.breakpoints[1]+1])
	for _, perCase := range []bool{true, false} {
		if perCase {
			t.Logf("each case on its own cache:")
		} else {
			t.Logf("one session on one cache (the cases share tools and system prompt):")
		}
		t.Logf("| model | input tokens | cached | written | input cost, no cache | with cache | lower by |")
		t.Logf("|---|---|---|---|---|---|---|")
		for _, r := range run(perCase) {
			t.Logf("| %s | %d | %d | %d | $%.4f | $%.4f | %.1f%% |", r.model, r.tokens, r.read, r.written, r.uncachedUSD, r.withUSD, 100*r.saving())
			if r.read == 0 && r.model != "claude-haiku-4-5" {
				t.Errorf("%s: nothing read from the cache", r.model)
			}
		}
	}
	for _, r := range run(false)[:4] {
		if r.model != "claude-haiku-4-5" && r.saving() < 0.5 {
			t.Errorf("%s: input cost %.1f%% lower with the prompt cache, want at least 50%%", r.model, 100*r.saving())
		}
	}
}
