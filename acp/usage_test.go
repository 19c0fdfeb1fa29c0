package acp

import (
	"context"
	"math"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/tokencount"
)

// priced reports a priced provider's usage for the scripted turns: each
// call 2000 input tokens, 1024 of them from the prompt cache, 10 output.
type priced struct{ model.Provider }

func (priced) Name() string { return "openai" }

func (p priced) Stream(ctx context.Context, req model.Request, onText func(string)) (*model.Response, error) {
	resp, err := p.Provider.Stream(ctx, req, onText)
	if resp != nil {
		resp.Usage = tokencount.Usage{InputTokens: 2000, CachedInputTokens: 1024, OutputTokens: 10}
	}
	return resp, err
}

// TestUsageUpdateCost: usage_update carries the session's cumulative cost
// and the prompt's response its cached tokens.
func TestUsageUpdateCost(t *testing.T) {
	h := newHarness(t, map[string]string{"a.go": "package a\n"}, "turns:\n  - text: one\n  - text: two\n", harnessConfig{
		model: func(p model.Provider) model.Provider { return priced{p} }, modelName: "gpt-4o"})
	// gpt-4o: 2.50 input, 1.25 cached input, 10 output per Mtok.
	perTurn := (976*2.50 + 1024*1.25 + 10*10) / 1e6
	for turn := 1; turn <= 2; turn++ {
		resp := h.mustPrompt(sdk.TextBlock("What is a?"))
		if u := resp.Usage; u == nil || u.InputTokens != 2000 || u.CachedReadTokens == nil || *u.CachedReadTokens != 1024 {
			t.Fatalf("turn %d: response usage %+v", turn, resp.Usage)
		}
		updates, _, _ := h.client.snapshot()
		var last *sdk.SessionUsageUpdate
		for _, n := range updates {
			if u := n.Update.UsageUpdate; u != nil {
				last = u
			}
		}
		if last == nil || last.Cost == nil || last.Cost.Currency != "USD" || math.Abs(last.Cost.Amount-float64(turn)*perTurn) > 1e-9 {
			t.Fatalf("turn %d: usage_update %+v, want a cumulative cost of $%v", turn, last, float64(turn)*perTurn)
		}
	}
}
