package model

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/tokencount"
)

// AnthropicConfig configures the Anthropic Messages API.
type AnthropicConfig struct {
	// BaseURL is the API root; default DefaultAnthropicBaseURL. Requests go
	// to {BaseURL}/v1/messages (a BaseURL already ending in "/v1" is
	// accepted too).
	BaseURL string
	// APIKey is sent as x-api-key; empty sends none (proxies, local gateways).
	APIKey string
	// Model is the default model id; Request.Model overrides it.
	Model string
	// MaxTokens is used when Request.MaxTokens is 0 (the API requires the
	// field). Default 4096.
	MaxTokens int
	// Version is the anthropic-version header; default "2023-06-01".
	Version string
	// HTTPClient defaults to a client without an overall timeout.
	HTTPClient *http.Client
	// Header holds extra request headers (e.g. anthropic-beta).
	Header http.Header
	// StreamIdleTimeout aborts a stream (ClassNetwork) when no byte arrives
	// for this long (the API sends ping events); 0 disables it.
	StreamIdleTimeout time.Duration
	// NoPromptCache omits the cache_control breakpoints (for gateways that
	// reject the field); every step then pays full price for its prompt.
	NoPromptCache bool
}

// DefaultAnthropicBaseURL is the Anthropic API root.
const DefaultAnthropicBaseURL = "https://api.anthropic.com"

// Anthropic is a Provider for the Anthropic Messages API with streaming.
// Like OpenAI it is written over net/http (rather than
// github.com/anthropics/anthropic-sdk-go) so that error bodies, headers and
// the event stream are classified by the same code as the OpenAI provider.
type Anthropic struct {
	cfg      AnthropicConfig
	endpoint string
	client   *http.Client
	wire     wireInfo
}

// NewAnthropic validates cfg and returns the provider.
func NewAnthropic(cfg AnthropicConfig) (*Anthropic, error) {
	base, err := baseURL("anthropic", cfg.BaseURL, DefaultAnthropicBaseURL)
	if err != nil {
		return nil, err
	}
	var endpoint string
	switch {
	case strings.HasSuffix(base, "/v1/messages"):
		endpoint = base
	case strings.HasSuffix(base, "/v1"):
		endpoint = base + "/messages"
	default:
		endpoint = base + "/v1/messages"
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 4096
	}
	if cfg.Version == "" {
		cfg.Version = "2023-06-01"
	}
	return &Anthropic{cfg: cfg, endpoint: endpoint, client: httpClient(cfg.HTTPClient), wire: wireInfo{name: "anthropic", keyEnv: "ANTHROPIC_API_KEY"}}, nil
}

// Name implements Provider.
func (p *Anthropic) Name() string { return "anthropic" }

// Endpoint returns the URL requests are posted to.
func (p *Anthropic) Endpoint() string { return p.endpoint }

// ---- request wire types ----

type antMessage struct {
	Role    string     `json:"role"`
	Content []antBlock `json:"content"`
}

type antBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   *string         `json:"content,omitempty"`
	// CacheControl marks a prompt-cache breakpoint: the provider caches
	// the request prefix up to and including this block.
	CacheControl *antCacheControl `json:"cache_control,omitempty"`
}

type antTool struct {
	Name         string           `json:"name"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"input_schema"`
	CacheControl *antCacheControl `json:"cache_control,omitempty"`
}

// antCacheControl is a cache breakpoint. "ephemeral" is the API's only
// type (a five-minute cache, refreshed by every hit).
type antCacheControl struct {
	Type string `json:"type"`
}

// ephemeral is shared by every breakpoint; it is never modified.
var ephemeral = &antCacheControl{Type: "ephemeral"}

var badToolIDChars = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// antToolID makes an id acceptable to the API (^[a-zA-Z0-9_-]+$); ids
// minted by other providers may contain other characters.
func antToolID(id string) string {
	if id == "" {
		return "toolu_missing"
	}
	return badToolIDChars.ReplaceAllString(id, "_")
}

// antInput turns raw tool arguments into the JSON object the API requires.
// Arguments that are not a JSON object (the model produced bad JSON) are
// kept, as text, under "_raw_arguments" so the history stays truthful.
func antInput(args string) json.RawMessage {
	a := strings.TrimSpace(args)
	if a == "" {
		return json.RawMessage(`{}`)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(a), &obj) == nil && obj != nil {
		return json.RawMessage(a)
	}
	b, _ := json.Marshal(map[string]string{"_raw_arguments": args})
	return b
}

// convertMessages maps provider-neutral messages to the Messages API:
// system messages join the top-level system prompt; tool messages become
// tool_result blocks in a user message; consecutive messages of the same
// role are merged (the API wants user and assistant to alternate, and all
// tool results for one assistant turn in the next user message, first).
func convertAnthropicMessages(in []Message) (system string, out []antMessage) {
	var sys []string
	for _, m := range in {
		var role string
		var blocks []antBlock
		switch m.Role {
		case RoleSystem:
			if strings.TrimSpace(m.Content) != "" {
				sys = append(sys, m.Content)
			}
			continue
		case RoleTool:
			role = "user"
			content := m.Content
			blocks = []antBlock{{Type: "tool_result", ToolUseID: antToolID(m.ToolCallID), Content: &content}}
		case RoleAssistant:
			role = "assistant"
			if strings.TrimSpace(m.Content) != "" {
				blocks = append(blocks, antBlock{Type: "text", Text: m.Content})
			}
			for _, tc := range m.ToolCalls {
				blocks = append(blocks, antBlock{Type: "tool_use", ID: antToolID(tc.ID), Name: tc.Name, Input: antInput(tc.Arguments)})
			}
		default:
			role = "user"
			if strings.TrimSpace(m.Content) != "" {
				blocks = append(blocks, antBlock{Type: "text", Text: m.Content})
			}
		}
		if len(blocks) == 0 {
			continue // the API rejects empty content
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			prev := &out[n-1]
			if m.Role == RoleTool {
				// tool_result blocks must precede any text in the message.
				i := 0
				for i < len(prev.Content) && prev.Content[i].Type == "tool_result" {
					i++
				}
				merged := append([]antBlock{}, prev.Content[:i]...)
				merged = append(merged, blocks...)
				prev.Content = append(merged, prev.Content[i:]...)
			} else {
				prev.Content = append(prev.Content, blocks...)
			}
			continue
		}
		out = append(out, antMessage{Role: role, Content: blocks})
	}
	return strings.Join(sys, "\n\n"), out
}

func (p *Anthropic) requestBody(req Request) map[string]any {
	system, msgs := convertAnthropicMessages(req.Messages)
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.cfg.MaxTokens
	}
	body := map[string]any{
		"model":      p.modelName(req),
		"max_tokens": maxTokens,
		"messages":   msgs,
		"stream":     true,
	}
	if system != "" {
		body["system"] = []antBlock{{Type: "text", Text: system}}
	}
	var tools []antTool
	if len(req.Tools) > 0 {
		tools = make([]antTool, 0, len(req.Tools))
		for _, t := range req.Tools {
			schema := t.Schema
			if len(strings.TrimSpace(string(schema))) == 0 || string(schema) == "null" {
				schema = emptyObjectSchema
			}
			tools = append(tools, antTool{Name: t.Name, Description: t.Description, InputSchema: schema})
		}
		body["tools"] = tools
	}
	if !p.cfg.NoPromptCache {
		markCacheBreakpoints(tools, body["system"], msgs)
	}
	return body
}

// markCacheBreakpoints puts prompt-cache breakpoints on the request's
// stable prefix, in the order the API caches it (tools, system, messages):
// the last tool, the system prompt, the end of the first user message (the
// context Cairn built for the question) and the end of the last message
// (so the next step of the run reads this step's whole conversation from
// the cache). That is at most four, the API's limit. A breakpoint on a
// prefix shorter than the model's minimum cacheable length is ignored by
// the API, not an error.
func markCacheBreakpoints(tools []antTool, system any, msgs []antMessage) {
	if n := len(tools); n > 0 {
		tools[n-1].CacheControl = ephemeral
	}
	if sys, ok := system.([]antBlock); ok && len(sys) > 0 {
		sys[len(sys)-1].CacheControl = ephemeral
	}
	if len(msgs) == 0 {
		return
	}
	// The first user message ends with the context block; a note merged
	// into it later would come after, so mark the first block, which is
	// the context itself and never changes within a run.
	if first := msgs[0]; first.Role == "user" && len(first.Content) > 0 {
		first.Content[0].CacheControl = ephemeral
	}
	last := msgs[len(msgs)-1]
	last.Content[len(last.Content)-1].CacheControl = ephemeral
}

func (p *Anthropic) modelName(req Request) string {
	if req.Model != "" {
		return req.Model
	}
	return p.cfg.Model
}

// ---- stream wire types ----

type antEvent struct {
	Type         string          `json:"type"`
	Index        int             `json:"index"`
	Message      *antMsgStart    `json:"message"`
	ContentBlock *antBlockStart  `json:"content_block"`
	Delta        *antDelta       `json:"delta"`
	Usage        *antUsage       `json:"usage"`
	Error        json.RawMessage `json:"error"`
}

type antMsgStart struct {
	ID         string   `json:"id"`
	Usage      antUsage `json:"usage"`
	StopReason string   `json:"stop_reason"`
}

type antBlockStart struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type antDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

type antUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (u antUsage) input() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

type antToolBlock struct {
	call  *ToolCall
	start json.RawMessage // input given in content_block_start
}

// Stream implements Provider.
func (p *Anthropic) Stream(ctx context.Context, req Request, onText func(delta string)) (*Response, error) {
	if p.modelName(req) == "" {
		return nil, &Error{Class: ClassConfig, Message: "anthropic: no model name (set model.name or CAIRN_MODEL)"}
	}
	sctx, wrap, cancel := streamContext(ctx, p.cfg.StreamIdleTimeout)
	defer cancel(nil)
	header := http.Header{}
	for k, v := range p.cfg.Header {
		header[k] = v
	}
	if err := missingKey(p.wire, p.cfg.APIKey, p.endpoint, DefaultAnthropicBaseURL, header, "X-Api-Key"); err != nil {
		return nil, err
	}
	if p.cfg.APIKey != "" {
		header.Set("X-Api-Key", p.cfg.APIKey)
	}
	header.Set("Anthropic-Version", p.cfg.Version)
	resp, err := postJSON(sctx, p.wire, p.client, p.endpoint, header, p.requestBody(req))
	if err != nil {
		return nil, requestError(ctx, sctx, p.wire, err)
	}
	body := wrap(resp.Body)
	defer body.Close()

	var (
		r          = &Response{}
		text       strings.Builder
		blocks     = map[int]*antToolBlock{}
		order      []*antToolBlock
		usage      antUsage
		haveUsage  bool
		stopReason string
		stopped    bool
	)
	sse := newSSEReader(body)
	for !stopped {
		ev, err := sse.Next()
		if err != nil {
			if err == io.EOF && stopReason != "" {
				break // message_delta carried the stop reason; tolerate a missing message_stop
			}
			return nil, streamReadError(ctx, sctx, p.wire, err)
		}
		data := strings.TrimSpace(ev.Data)
		if data == "" {
			continue
		}
		var e antEvent
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			return nil, &Error{Class: ClassBadResponse, Message: "anthropic: malformed JSON in stream event " + ev.Event + ": " + clip(data, 200), Err: err}
		}
		if e.Type == "" {
			e.Type = ev.Event
		}
		switch e.Type {
		case "message_start":
			if e.Message != nil {
				r.ID = e.Message.ID
				usage = e.Message.Usage
				haveUsage = true
			}
		case "content_block_start":
			if cb := e.ContentBlock; cb != nil {
				switch cb.Type {
				case "text":
					if cb.Text != "" {
						text.WriteString(cb.Text)
						if onText != nil {
							onText(cb.Text)
						}
					}
				case "tool_use":
					tb := &antToolBlock{call: &ToolCall{ID: cb.ID, Name: cb.Name}, start: cb.Input}
					blocks[e.Index] = tb
					order = append(order, tb)
				}
			}
		case "content_block_delta":
			if d := e.Delta; d != nil {
				switch d.Type {
				case "text_delta":
					if d.Text != "" {
						text.WriteString(d.Text)
						if onText != nil {
							onText(d.Text)
						}
					}
				case "input_json_delta":
					tb := blocks[e.Index]
					if tb == nil {
						return nil, &Error{Class: ClassBadResponse, Message: fmt.Sprintf("anthropic: input_json_delta for block %d, which is not a tool_use block", e.Index)}
					}
					tb.call.Arguments += d.PartialJSON
				case "thinking_delta":
					if d.Thinking != "" && req.OnReasoning != nil {
						req.OnReasoning(d.Thinking)
					}
				}
				// signature_delta, citations_delta: not used.
			}
		case "content_block_stop", "ping":
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				stopReason = e.Delta.StopReason
			}
			if u := e.Usage; u != nil {
				haveUsage = true
				usage.OutputTokens = u.OutputTokens // cumulative
				if u.input() > 0 {
					usage.InputTokens, usage.CacheCreationInputTokens, usage.CacheReadInputTokens =
						u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens
				}
			}
		case "message_stop":
			stopped = true
		case "error":
			return nil, p.streamError(data)
		}
	}

	r.Text = text.String()
	if err := settleAnthropic(r, order, stopReason); err != nil {
		return nil, err
	}
	if haveUsage && (usage.input() > 0 || usage.OutputTokens > 0) {
		r.Usage = tokencount.Usage{InputTokens: usage.input(), OutputTokens: usage.OutputTokens,
			CachedInputTokens: usage.CacheReadInputTokens, CacheWriteTokens: usage.CacheCreationInputTokens}
	} else {
		r.Usage = tokencount.Usage{InputTokens: estimateInput(req), OutputTokens: estimateOutput(r), Estimated: true}
	}
	return r, nil
}

// settleAnthropic completes r from a finished stream: its tool calls (an
// empty input is {}, a missing id a synthetic one) and its finish reason.
func settleAnthropic(r *Response, order []*antToolBlock, stopReason string) error {
	for _, tb := range order {
		tc := *tb.call
		if strings.TrimSpace(tc.Arguments) == "" {
			// No input_json_delta (or only empty ones): a tool without input.
			tc.Arguments = "{}"
			if s := strings.TrimSpace(string(tb.start)); s != "" && s != "null" {
				tc.Arguments = s
			}
		}
		if tc.ID == "" {
			tc.ID = syntheticCallID(r.ID, len(r.ToolCalls), tc.Name, tc.Arguments)
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	switch stopReason {
	case "refusal":
		return &Error{Class: ClassRefusal, Message: "anthropic: the model declined the request (stop_reason refusal)"}
	case "end_turn", "stop_sequence", "":
		r.FinishReason = finishStop
	case "tool_use":
		r.FinishReason = finishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		r.FinishReason = finishLength
	default:
		r.FinishReason = stopReason // e.g. pause_turn
	}
	if len(r.ToolCalls) > 0 && r.FinishReason == finishStop {
		r.FinishReason = finishToolCalls
	}
	return nil
}

// streamError classifies an "error" event:
// {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}.
func (p *Anthropic) streamError(data string) error {
	ae := parseAPIError([]byte(data))
	msg := "anthropic: error in stream: " + ae.Message
	switch ae.Type {
	case "overloaded_error", "api_error", "timeout_error":
		return &Error{Class: ClassNetwork, Message: msg}
	case "rate_limit_error":
		return &Error{Class: ClassRateLimit, Message: msg}
	case "authentication_error", "permission_error":
		return &Error{Class: ClassAuth, Message: msg + "; check ANTHROPIC_API_KEY and model.baseURL"}
	case "request_too_large":
		return &Error{Class: ClassContextLength, Message: msg}
	case "not_found_error":
		return &Error{Class: ClassConfig, Message: msg + "; check model.name and model.baseURL"}
	}
	return &Error{Class: classifyText(strings.ToLower(ae.Message + " " + ae.Type)), Message: msg}
}
