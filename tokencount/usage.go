package tokencount

// Usage is how many tokens model calls took: as the provider reported
// them, or as Cairn estimated them when it did not (Estimated). It is the
// one token-count type: a model response carries it, the trace adds cost
// to it, and the finished event sends it to the editor.
//
// InputTokens counts every prompt token; CachedInputTokens and
// CacheWriteTokens are the parts of it the provider read from, or wrote
// to, its prompt cache (priced at their own rates), so they never exceed
// InputTokens together.
type Usage struct {
	InputTokens  int `json:"inputTokens"`
	OutputTokens int `json:"outputTokens"`
	// CachedInputTokens: input tokens the provider served from its prompt
	// cache (Anthropic cache_read_input_tokens, OpenAI
	// prompt_tokens_details.cached_tokens).
	CachedInputTokens int `json:"cachedInputTokens,omitempty"`
	// CacheWriteTokens: input tokens the provider wrote to its prompt cache
	// (Anthropic cache_creation_input_tokens; OpenAI's cache has no write
	// charge and reports none).
	CacheWriteTokens int  `json:"cacheWriteTokens,omitempty"`
	Estimated        bool `json:"estimated,omitempty"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.InputTokens += u2.InputTokens
	u.OutputTokens += u2.OutputTokens
	u.CachedInputTokens += u2.CachedInputTokens
	u.CacheWriteTokens += u2.CacheWriteTokens
	u.Estimated = u.Estimated || u2.Estimated
}
