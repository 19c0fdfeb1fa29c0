package model

import (
	"context"
	"fmt"
	"sync"
)

// Replay re-serves recorded model responses in order, so a recorded run
// can be replayed deterministically (the server builds it from a run's
// journal: provider "replay"). Text is streamed back in the recorded
// response as word deltas.
type Replay struct {
	mu        sync.Mutex
	responses []Response
	next      int
}

// NewReplay returns a provider that serves responses in order.
func NewReplay(responses []Response) *Replay { return &Replay{responses: responses} }

func (p *Replay) Name() string { return "replay" }

func (p *Replay) Stream(ctx context.Context, req Request, onText func(string)) (*Response, error) {
	p.mu.Lock()
	if p.next >= len(p.responses) {
		p.mu.Unlock()
		return nil, &Error{Class: ClassBadResponse, Message: fmt.Sprintf("the recording has only %d responses", len(p.responses))}
	}
	resp := p.responses[p.next]
	p.next++
	p.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if onText != nil && resp.Text != "" {
		for _, w := range splitWords(resp.Text) {
			onText(w)
		}
	}
	resp.ToolCalls = append([]ToolCall(nil), resp.ToolCalls...)
	return &resp, nil
}
