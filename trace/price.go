package trace

import (
	"math"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/tokencount"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`  // USD per 1M uncached input (prompt) tokens
	Output float64 `json:"output"` // USD per 1M output (completion) tokens
	// CachedInput is the rate of input tokens read from the provider's
	// prompt cache; 0 means the model has no cache discount (Input).
	CachedInput float64 `json:"cachedInput,omitempty"`
	// CacheWrite is the rate of input tokens written to the prompt cache
	// (Anthropic charges extra for it); 0 means Input.
	CacheWrite float64 `json:"cacheWrite,omitempty"`
}

// Prices maps a model id (or a model id prefix, see Lookup) to its price.
// It decodes from JSON as {"gpt-4o": {"input": 2.5, "cachedInput": 1.25,
// "output": 10}}, the shape of the `model.prices` setting.
type Prices map[string]Price

// PricesAsOf is when the default prices were taken from the providers'
// public price pages (openai.com/api/pricing and Anthropic's pricing
// page). They change; override them with the `model.prices` setting.
const PricesAsOf = "2025-11"

// DefaultPrices returns list prices (standard tier, no batch discount) of
// common OpenAI and Anthropic models. Anthropic's cache writes are those
// of its default five-minute cache (1.25× input) and reads 0.1× input;
// OpenAI's cache has no write charge. Local and scripted models cost
// nothing (see Lookup).
func DefaultPrices() Prices {
	return Prices{
		// OpenAI: input, output, cached input.
		"gpt-4o":       {Input: 2.50, Output: 10.00, CachedInput: 1.25},
		"gpt-4o-mini":  {Input: 0.15, Output: 0.60, CachedInput: 0.075},
		"gpt-4.1":      {Input: 2.00, Output: 8.00, CachedInput: 0.50},
		"gpt-4.1-mini": {Input: 0.40, Output: 1.60, CachedInput: 0.10},
		"gpt-4.1-nano": {Input: 0.10, Output: 0.40, CachedInput: 0.025},
		"gpt-5":        {Input: 1.25, Output: 10.00, CachedInput: 0.125},
		"gpt-5-mini":   {Input: 0.25, Output: 2.00, CachedInput: 0.025},
		"gpt-5-nano":   {Input: 0.05, Output: 0.40, CachedInput: 0.005},
		"o3":           {Input: 2.00, Output: 8.00, CachedInput: 0.50},
		"o3-mini":      {Input: 1.10, Output: 4.40, CachedInput: 0.55},
		"o4-mini":      {Input: 1.10, Output: 4.40, CachedInput: 0.275},
		// Anthropic: input, output, cache read, cache write (5 minutes).
		"claude-opus-4-5":   {Input: 5.00, Output: 25.00, CachedInput: 0.50, CacheWrite: 6.25},
		"claude-opus-4-1":   {Input: 15.00, Output: 75.00, CachedInput: 1.50, CacheWrite: 18.75},
		"claude-opus-4":     {Input: 15.00, Output: 75.00, CachedInput: 1.50, CacheWrite: 18.75},
		"claude-sonnet-4-5": {Input: 3.00, Output: 15.00, CachedInput: 0.30, CacheWrite: 3.75},
		"claude-sonnet-4":   {Input: 3.00, Output: 15.00, CachedInput: 0.30, CacheWrite: 3.75},
		"claude-3-7-sonnet": {Input: 3.00, Output: 15.00, CachedInput: 0.30, CacheWrite: 3.75},
		"claude-3-5-sonnet": {Input: 3.00, Output: 15.00, CachedInput: 0.30, CacheWrite: 3.75},
		"claude-haiku-4-5":  {Input: 1.00, Output: 5.00, CachedInput: 0.10, CacheWrite: 1.25},
		"claude-3-5-haiku":  {Input: 0.80, Output: 4.00, CachedInput: 0.08, CacheWrite: 1.00},
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
// billionth of a dollar): the uncached input at the input rate, cache
// reads and writes at theirs, and the output.
func (pr Price) Cost(u tokencount.Usage) float64 {
	cachedRate, writeRate := pr.CachedInput, pr.CacheWrite
	if cachedRate == 0 {
		cachedRate = pr.Input
	}
	if writeRate == 0 {
		writeRate = pr.Input
	}
	cached := max(0, min(u.CachedInputTokens, u.InputTokens))
	written := max(0, min(u.CacheWriteTokens, u.InputTokens-cached))
	uncached := u.InputTokens - cached - written
	return roundCost((float64(uncached)*pr.Input + float64(cached)*cachedRate +
		float64(written)*writeRate + float64(u.OutputTokens)*pr.Output) / 1e6)
}

func roundCost(usd float64) float64 { return math.Round(usd*1e9) / 1e9 }

// Cost looks the model up and prices the usage; known is false when the
// model has no price (the cost is then 0, which callers must not show as
// a figure).
func (p Prices) Cost(provider, modelID string, u tokencount.Usage) (usd float64, known bool) {
	pr, known := p.Lookup(provider, modelID)
	return pr.Cost(u), known
}

// Usage is the accumulated usage and cost of a run.
type Usage struct {
	tokencount.Usage         // Estimated: some call's tokens were estimated by Cairn
	CostUSD          float64 `json:"costUsd"`
	// CostKnown is false when some model call had no price (its share is 0).
	CostKnown  bool `json:"costKnown"`
	ModelCalls int  `json:"modelCalls"`
}
