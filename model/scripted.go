package model

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/tokencount"
)

// Script is the file format of the scripted provider: the model's turns, in
// order. Each call to Stream consumes the next turn. It is YAML (JSON is
// valid YAML, so a .json script works too). See model/README.md.
type Script struct {
	Turns []ScriptTurn `yaml:"turns" json:"turns"`
}

// ScriptTurn is one model response.
type ScriptTurn struct {
	// Text is the assistant's text, streamed in Chunks pieces (default: by word).
	Text string `yaml:"text" json:"text"`
	// Chunks, when set, overrides how Text is split into deltas.
	Chunks []string `yaml:"chunks" json:"chunks"`
	// DelayMS waits this long before each delta (to exercise cancellation).
	DelayMS int `yaml:"delayMs" json:"delayMs"`
	// ToolCalls are the calls the model makes in this turn.
	ToolCalls []ScriptToolCall `yaml:"toolCalls" json:"toolCalls"`
	// Error makes this turn fail with a classified provider error instead.
	Error *ScriptError `yaml:"error" json:"error"`
	// Stall blocks until the request is cancelled (a model that hangs mid-stream).
	Stall bool `yaml:"stall" json:"stall"`
}

// ScriptToolCall is a tool call. Arguments is any YAML value, sent as JSON;
// ArgumentsRaw is sent verbatim (to script invalid JSON).
type ScriptToolCall struct {
	ID           string `yaml:"id" json:"id"`
	Name         string `yaml:"name" json:"name"`
	Arguments    any    `yaml:"arguments" json:"arguments"`
	ArgumentsRaw string `yaml:"argumentsRaw" json:"argumentsRaw"`
}

// ScriptError scripts a provider failure.
type ScriptError struct {
	Class        ErrorClass `yaml:"class" json:"class"`
	Message      string     `yaml:"message" json:"message"`
	RetryAfterMS int        `yaml:"retryAfterMs" json:"retryAfterMs"`
}

// Scripted replays a Script. It is safe for concurrent use; each Stream call
// takes the next turn.
type Scripted struct {
	mu     sync.Mutex
	script Script
	next   int
	// Requests records every request received; read it with Received.
	Requests []Request
}

// LoadScript reads a script file.
func LoadScript(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading script: %w", err)
	}
	return ParseScript(b)
}

// ParseScript parses script text (YAML or JSON).
func ParseScript(b []byte) (*Script, error) {
	var s Script
	if err := yaml.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("parsing script: %w", err)
	}
	for i, t := range s.Turns {
		for j, c := range t.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("parsing script: turn %d tool call %d has no name", i+1, j+1)
			}
		}
	}
	return &s, nil
}

// NewScripted returns a provider that replays s.
func NewScripted(s *Script) *Scripted { return &Scripted{script: *s} }

func (p *Scripted) Name() string { return "scripted" }

// Received returns a copy of the requests served so far.
func (p *Scripted) Received() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.Requests...)
}

// Remaining is the number of turns not yet served.
func (p *Scripted) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.script.Turns) - p.next
}

func (p *Scripted) Stream(ctx context.Context, req Request, onText func(string)) (*Response, error) {
	p.mu.Lock()
	p.Requests = append(p.Requests, req)
	if p.next >= len(p.script.Turns) {
		p.mu.Unlock()
		return nil, &Error{Class: ClassBadResponse, Message: "the script has no more turns"}
	}
	turn := p.script.Turns[p.next]
	p.next++
	n := p.next
	p.mu.Unlock()

	if turn.Error != nil {
		return nil, &Error{Class: turn.Error.Class, Message: turn.Error.Message,
			RetryAfter: time.Duration(turn.Error.RetryAfterMS) * time.Millisecond}
	}
	chunks := turn.Chunks
	if len(chunks) == 0 && turn.Text != "" {
		chunks = splitWords(turn.Text)
	}
	var text strings.Builder
	for _, c := range chunks {
		if turn.DelayMS > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Duration(turn.DelayMS) * time.Millisecond):
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		text.WriteString(c)
		if onText != nil {
			onText(c)
		}
	}
	if turn.Stall {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	resp := &Response{ID: fmt.Sprintf("scripted-%d", n), Text: text.String(), FinishReason: "stop"}
	for i, c := range turn.ToolCalls {
		args := c.ArgumentsRaw
		if args == "" {
			v := c.Arguments
			if v == nil {
				v = map[string]any{}
			}
			b, err := json.Marshal(normalizeYAML(v))
			if err != nil {
				return nil, &Error{Class: ClassBadResponse, Message: "scripted arguments do not encode as JSON", Err: err}
			}
			args = string(b)
		}
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", n, i+1)
		}
		resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: id, Name: c.Name, Arguments: args})
	}
	if len(resp.ToolCalls) > 0 {
		resp.FinishReason = "tool_calls"
	}
	in := 0
	for _, m := range req.Messages {
		in += tokencount.Count(m.Content)
	}
	resp.Usage = tokencount.Usage{InputTokens: in, OutputTokens: tokencount.Count(resp.Text) + 10*len(resp.ToolCalls), Estimated: true}
	return resp, nil
}

func splitWords(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\n' {
			out = append(out, s[start:i])
			start = i
		}
	}
	return append(out, s[start:])
}

// normalizeYAML turns map[string]any trees from yaml.v3 into JSON-encodable values.
func normalizeYAML(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = normalizeYAML(e)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = normalizeYAML(e)
		}
		return m
	case []any:
		out := make([]any, len(x)) // a copy: the script is shared by every Stream call
		for i := range x {
			out[i] = normalizeYAML(x[i])
		}
		return out
	default:
		return v
	}
}
