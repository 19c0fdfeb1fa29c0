package trace

import (
	"math"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/tokencount"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`  // USD per 1M input (prompt) tokens
	Output float64 `json:"output"` // USD per 1M output (completion) tokens
}

// Prices maps a model id (or a model id prefix, see Lookup) to its price.
// It decodes from JSON as {"gpt-4o": {"input": 2.5, "output": 10}}, the
// shape of the `trace.prices` setting.
type Prices map[string]Price

// PricesAsOf is when the default prices were taken from the providers'
// public price lists. They change; override them in the settings.
const PricesAsOf = "2025-10"

// DefaultPrices returns list prices (standard tier, no caching or batch
// discounts) of common OpenAI and Anthropic models. Local and scripted
// models cost nothing (see Lookup).
func DefaultPrices() Prices {
	return Prices{
		// OpenAI
		"gpt-4o":       {2.50, 10.00},
		"gpt-4o-mini":  {0.15, 0.60},
		"gpt-4.1":      {2.00, 8.00},
		"gpt-4.1-mini": {0.40, 1.60},
		"gpt-4.1-nano": {0.10, 0.40},
		"gpt-5":        {1.25, 10.00},
		"gpt-5-mini":   {0.25, 2.00},
		"gpt-5-nano":   {0.05, 0.40},
		"o3":           {2.00, 8.00},
		"o3-mini":      {1.10, 4.40},
		"o4-mini":      {1.10, 4.40},
		// Anthropic
		"claude-opus-4-1":   {15.00, 75.00},
		"claude-opus-4":     {15.00, 75.00},
		"claude-sonnet-4-5": {3.00, 15.00},
		"claude-sonnet-4":   {3.00, 15.00},
		"claude-3-7-sonnet": {3.00, 15.00},
		"claude-3-5-sonnet": {3.00, 15.00},
		"claude-haiku-4-5":  {1.00, 5.00},
		"claude-3-5-haiku":  {0.80, 4.00},
	}
}

// freeProviders never cost anything.
var freeProviders = map[string]bool{"scripted": true, "replay": true}

// With returns a copy of p with overrides applied on top (an override of
// {0, 0} makes a model free).
func (p Prices) With(overrides Prices) Prices {
	out := make(Prices, len(p)+len(overrides))
	for k, v := range p {
		out[k] = v
	}
	for k, v := range overrides {
		out[strings.ToLower(k)] = v
	}
	return out
}

// Lookup finds the price of a model. The scripted and replay providers are
// free. Otherwise the model id is lowercased, a routing prefix such as
// "openai/" is dropped, and the longest table key that equals the id or is
// a prefix of it followed by '-', '@', ':' or '.' wins, so a dated snapshot
// ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06") costs what its family
// costs. known is false for a model not in the table (a local model, say):
// its cost is reported as 0 and marked unknown.
func (p Prices) Lookup(provider, modelID string) (price Price, known bool) {
	if freeProviders[strings.ToLower(provider)] {
		return Price{}, true
	}
	id := strings.ToLower(strings.TrimSpace(modelID))
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	if v, ok := p[id]; ok {
		return v, true
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		return len(keys[a]) > len(keys[b]) || len(keys[a]) == len(keys[b]) && keys[a] < keys[b]
	})
	for _, k := range keys {
		lk := strings.ToLower(k)
		if id == lk || len(id) > len(lk) && strings.HasPrefix(id, lk) && strings.ContainsRune("-@:.", rune(id[len(lk)])) {
			return p[k], true
		}
	}
	return Price{}, false
}

// Cost is the price of the given usage in US dollars (rounded to a
// billionth of a dollar).
func (pr Price) Cost(inputTokens, outputTokens int) float64 {
	return roundCost((float64(inputTokens)*pr.Input + float64(outputTokens)*pr.Output) / 1e6)
}

func roundCost(usd float64) float64 { return math.Round(usd*1e9) / 1e9 }

// Cost looks the model up and prices the usage; known is false when the
// model has no price (the cost is then 0).
func (p Prices) Cost(provider, modelID string, inputTokens, outputTokens int) (usd float64, known bool) {
	pr, known := p.Lookup(provider, modelID)
	return pr.Cost(inputTokens, outputTokens), known
}

// Usage is the accumulated usage and cost of a run.
type Usage struct {
	tokencount.Usage         // Estimated: some call's tokens were estimated by Cairn
	CostUSD          float64 `json:"costUsd"`
	// CostKnown is false when some model call had no price (its share is 0).
	CostKnown  bool `json:"costKnown"`
	ModelCalls int  `json:"modelCalls"`
}
