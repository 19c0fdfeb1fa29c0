package tokencount

// Usage is how many tokens model calls took: as the provider reported
// them, or as Cairn estimated them when it did not (Estimated). It is the
// one token-count type: a model response carries it, the trace adds cost
// to it, and the finished event sends it to the editor.
type Usage struct {
	InputTokens  int  `json:"inputTokens"`
	OutputTokens int  `json:"outputTokens"`
	Estimated    bool `json:"estimated,omitempty"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.InputTokens += u2.InputTokens
	u.OutputTokens += u2.OutputTokens
	u.Estimated = u.Estimated || u2.Estimated
}
