// Package model defines the Provider interface that the agent loop talks to,
// the provider-neutral message types, and the classified errors that tell the
// loop what to do about a failure (retry, wait, shrink, stop).
//
// Providers: openai (Chat Completions with SSE; any OpenAI-compatible
// endpoint), scripted (a script file of turns, for tests, the demo and
// evals). Each lives in its own file; the server picks one from the settings.
package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairn-dev/cairn/tokencount"
)

// Role of a message in the conversation.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one provider-neutral conversation message.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message made.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string `json:"toolCallId,omitempty"`
	// ToolName is the tool a tool message answers (Anthropic-style providers need it).
	ToolName string `json:"toolName,omitempty"`
}

// ToolCall is one tool invocation requested by the model. Arguments are kept
// as the raw text the model produced: it may not even be valid JSON, and the
// agent loop must be able to report that back to the model.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec is what the model is told about a tool.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// Request is one model call.
type Request struct {
	Model     string
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int
	// OnReasoning, when set, receives the model's reasoning as it streams
	// (OpenAI-compatible reasoning_content / reasoning deltas, Anthropic
	// thinking deltas), for clients that show it apart from the answer.
	// Reasoning is never part of Response.Text nor sent back to the model.
	OnReasoning func(delta string) `json:"-"`
}

// Response is a complete model turn.
type Response struct {
	ID           string           `json:"id,omitempty"`
	Text         string           `json:"text,omitempty"`
	ToolCalls    []ToolCall       `json:"toolCalls,omitempty"`
	FinishReason string           `json:"finishReason,omitempty"`
	Usage        tokencount.Usage `json:"usage"`
}

// Provider is a model endpoint. Stream sends the request and calls onText
// with each text delta as it arrives, then returns the whole turn. It must
// return promptly with ctx.Err() when ctx is cancelled (aborting the HTTP
// request), and classify failures as *Error.
type Provider interface {
	Name() string
	Stream(ctx context.Context, req Request, onText func(delta string)) (*Response, error)
}

// ErrorClass tells the agent loop how to react to a failed model call.
type ErrorClass string

const (
	ClassNetwork       ErrorClass = "network"        // connection failure or 5xx: retry with backoff
	ClassRateLimit     ErrorClass = "rate_limit"     // 429: wait Retry-After, retry
	ClassContextLength ErrorClass = "context_length" // prompt too long: rebuild smaller, retry once
	ClassSchema        ErrorClass = "schema"         // tool schema feature rejected: simplify, retry
	ClassAuth          ErrorClass = "auth"           // bad or missing key: fail at once
	ClassRefusal       ErrorClass = "refusal"        // safety refusal: stop, never route around
	ClassBadResponse   ErrorClass = "bad_response"   // garbage or a stream cut mid-way
	ClassInvalidTool   ErrorClass = "invalid_tool_call"
	ClassConfig        ErrorClass = "config" // provider misconfigured
	ClassOther         ErrorClass = "other"
)

// Error is a classified provider failure.
type Error struct {
	Class      ErrorClass
	Status     int           // HTTP status, when there was one
	RetryAfter time.Duration // from Retry-After, when given
	Message    string
	Err        error
}

func (e *Error) Error() string {
	s := string(e.Class)
	if e.Status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// ClassOf returns the class of err, or ClassOther.
func ClassOf(err error) ErrorClass {
	var me *Error
	if errors.As(err, &me) {
		return me.Class
	}
	return ClassOther
}

// Retryable reports whether the loop may retry the same request.
func (c ErrorClass) Retryable() bool {
	return c == ClassNetwork || c == ClassRateLimit || c == ClassBadResponse
}

// SimplifySchema strips a JSON Schema down to what every provider accepts:
// type, properties, required, items, enum and descriptions. It is used once
// when a provider rejects a schema feature (ClassSchema); validation still
// uses the full schema on Cairn's side, so nothing is lost but the hint.
func SimplifySchema(schema json.RawMessage) json.RawMessage {
	var v any
	if err := json.Unmarshal(schema, &v); err != nil {
		return schema
	}
	b, err := json.Marshal(simplify(v))
	if err != nil {
		return schema
	}
	return b
}

func simplify(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := map[string]any{}
	for _, k := range []string{"type", "required", "enum", "description"} {
		if x, ok := m[k]; ok {
			out[k] = x
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		np := map[string]any{}
		for name, p := range props {
			np[name] = simplify(p)
		}
		out["properties"] = np
	}
	if items, ok := m["items"]; ok {
		out["items"] = simplify(items)
	}
	if t, ok := out["type"].([]any); ok && len(t) > 0 {
		out["type"] = t[0] // some providers reject type unions
	}
	return out
}
