package model

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/tokencount"
)

// OpenAIConfig configures an OpenAI-compatible Chat Completions endpoint.
type OpenAIConfig struct {
	// BaseURL is the API root, e.g. "http://127.0.0.1:8080/v1" (llama.cpp),
	// "http://localhost:11434/v1" (Ollama). Default DefaultOpenAIBaseURL.
	// A URL that already ends in "/chat/completions" is used as is.
	BaseURL string
	// APIKey is sent as a Bearer token; empty sends no Authorization header
	// (local servers).
	APIKey string
	// Model is the default model id; Request.Model overrides it.
	Model string
	// HTTPClient defaults to a client without an overall timeout (streams
	// are long); cancellation comes from the ctx passed to Stream.
	HTTPClient *http.Client
	// Header holds extra request headers (OpenRouter, Azure "api-key", ...).
	Header http.Header
	// MaxTokensField is the request field that carries Request.MaxTokens:
	// "max_tokens" (understood by every compatible server) or
	// "max_completion_tokens" (required by OpenAI's reasoning models).
	// Default: max_completion_tokens for api.openai.com, else max_tokens.
	MaxTokensField string
	// NoStreamOptions omits stream_options.include_usage, for servers that
	// reject unknown request fields. Usage is then estimated.
	NoStreamOptions bool
	// StreamIdleTimeout aborts a stream (ClassNetwork) when no byte arrives
	// for this long. 0 disables the watchdog: a local model may think for
	// minutes before its first token.
	StreamIdleTimeout time.Duration
}

// DefaultOpenAIBaseURL is the OpenAI API root.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// OpenAI is a Provider for OpenAI's Chat Completions API and the servers
// that imitate it (Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter).
//
// It is a hand-written client over net/http rather than the official
// github.com/openai/openai-go/v3 SDK, for three reasons. The compatible
// servers deviate from OpenAI in ways a typed SDK either rejects or hides:
// tool-call deltas without ids or without an index, finish reasons such as
// "eos" or "stop" after tool calls, usage that is absent or repeated on
// every chunk, bare JSON error objects written into the event stream, and
// non-streamed JSON answers to a streaming request. Cairn needs the raw
// error bodies and headers (Retry-After, retry-after-ms) to classify
// failures precisely. And the SDK is a large dependency with a slow first
// compile for the one endpoint Cairn calls. The wire format used here is
// the documented one: POST {base}/chat/completions with stream=true,
// answered by text/event-stream chunks ending in "data: [DONE]".
type OpenAI struct {
	cfg      OpenAIConfig
	endpoint string
	client   *http.Client
	wire     wireInfo
}

// NewOpenAI validates cfg and returns the provider.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	base, err := baseURL("openai", cfg.BaseURL, DefaultOpenAIBaseURL)
	if err != nil {
		return nil, err
	}
	endpoint := base
	if !strings.HasSuffix(base, "/chat/completions") {
		endpoint = base + "/chat/completions"
	}
	switch cfg.MaxTokensField {
	case "":
		cfg.MaxTokensField = "max_tokens"
		if u, _ := url.Parse(base); u.Host == "api.openai.com" {
			cfg.MaxTokensField = "max_completion_tokens"
		}
	case "max_tokens", "max_completion_tokens":
	default:
		return nil, &Error{Class: ClassConfig, Message: fmt.Sprintf("openai: MaxTokensField %q is neither max_tokens nor max_completion_tokens", cfg.MaxTokensField)}
	}
	return &OpenAI{cfg: cfg, endpoint: endpoint, client: httpClient(cfg.HTTPClient), wire: wireInfo{name: "openai", keyEnv: "OPENAI_API_KEY"}}, nil
}

// Name implements Provider.
func (p *OpenAI) Name() string { return "openai" }

// Endpoint returns the URL requests are posted to.
func (p *OpenAI) Endpoint() string { return p.endpoint }

// ---- request wire types ----

type oaiMessage struct {
	Role       string        `json:"role"`
	Content    *string       `json:"content"`
	ToolCalls  []oaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

type oaiToolCall struct {
	ID       string      `json:"id"`
	Type     string      `json:"type"`
	Function oaiFunction `json:"function"`
}

type oaiFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type oaiTool struct {
	Type     string         `json:"type"`
	Function oaiFunctionDef `json:"function"`
}

type oaiFunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptyObjectSchema is the schema of a tool without parameters.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

func (p *OpenAI) requestBody(req Request) map[string]any {
	msgs := make([]oaiMessage, 0, len(req.Messages))
	for _, m := range req.Messages {
		content := m.Content
		om := oaiMessage{Role: string(m.Role), Content: &content}
		switch m.Role {
		case RoleAssistant:
			for _, tc := range m.ToolCalls {
				args := tc.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				om.ToolCalls = append(om.ToolCalls, oaiToolCall{ID: tc.ID, Type: "function", Function: oaiFunction{Name: tc.Name, Arguments: args}})
			}
			if content == "" && len(om.ToolCalls) > 0 {
				om.Content = nil
			}
		case RoleTool:
			om.ToolCallID = m.ToolCallID
		}
		msgs = append(msgs, om)
	}
	body := map[string]any{
		"model":    p.modelName(req),
		"messages": msgs,
		"stream":   true,
	}
	if !p.cfg.NoStreamOptions {
		body["stream_options"] = map[string]any{"include_usage": true}
	}
	if req.MaxTokens > 0 {
		body[p.cfg.MaxTokensField] = req.MaxTokens
	}
	if len(req.Tools) > 0 {
		tools := make([]oaiTool, 0, len(req.Tools))
		for _, t := range req.Tools {
			schema := t.Schema
			if len(strings.TrimSpace(string(schema))) == 0 || string(schema) == "null" {
				schema = emptyObjectSchema
			}
			tools = append(tools, oaiTool{Type: "function", Function: oaiFunctionDef{Name: t.Name, Description: t.Description, Parameters: schema}})
		}
		body["tools"] = tools
	}
	return body
}

func (p *OpenAI) modelName(req Request) string {
	if req.Model != "" {
		return req.Model
	}
	return p.cfg.Model
}

// ---- response wire types ----

type oaiChunk struct {
	ID      string          `json:"id"`
	Choices []oaiChoice     `json:"choices"`
	Usage   *oaiUsage       `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

type oaiChoice struct {
	Index        int             `json:"index"`
	Delta        *oaiDelta       `json:"delta"`
	Message      *oaiDelta       `json:"message"` // non-streamed answers
	FinishReason json.RawMessage `json:"finish_reason"`
}

type oaiDelta struct {
	Content *string `json:"content"`
	// ReasoningContent (DeepSeek, vLLM, llama.cpp server) and Reasoning
	// (OpenRouter, Ollama) carry a reasoning model's thinking.
	ReasoningContent *string          `json:"reasoning_content"`
	Reasoning        json.RawMessage  `json:"reasoning"`
	Refusal          *string          `json:"refusal"`
	ToolCalls        []oaiToolDelta   `json:"tool_calls"`
	FunctionCall     *oaiFunctionPart `json:"function_call"`
}

type oaiToolDelta struct {
	Index    *int            `json:"index"`
	ID       string          `json:"id"`
	Function oaiFunctionPart `json:"function"`
}

type oaiFunctionPart struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type oaiUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		// CachedTokens is the part of the prompt served from OpenAI's
		// automatic prefix cache (also reported by vLLM and others).
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// cached is the cached part of the prompt, never more than the prompt (a
// server that reports nonsense does not get a negative uncached part).
func (u *oaiUsage) cached() int {
	if u.PromptTokensDetails == nil {
		return 0
	}
	return max(0, min(u.PromptTokensDetails.CachedTokens, u.PromptTokens))
}

// argumentsText returns the arguments fragment as text. OpenAI sends a JSON
// string; a few servers send the arguments as a JSON object.
func (f oaiFunctionPart) argumentsText() string {
	r := f.Arguments
	if len(r) == 0 || string(r) == "null" {
		return ""
	}
	var s string
	if r[0] == '"' && json.Unmarshal(r, &s) == nil {
		return s
	}
	return string(r)
}

// oaiAssembler accumulates a streamed turn.
type oaiAssembler struct {
	id       string
	text     strings.Builder
	refusal  strings.Builder
	calls    []*ToolCall
	byIndex  map[int]*ToolCall
	finish   string // raw finish_reason, "" while none seen
	finished bool
	usage    *oaiUsage
	onText   func(string)
	// onReasoning receives reasoning deltas (Request.OnReasoning).
	onReasoning func(string)
}

func (a *oaiAssembler) addChoice(c oaiChoice) {
	d := c.Delta
	if d == nil {
		d = c.Message
	}
	if d != nil {
		if d.Content != nil && *d.Content != "" {
			a.text.WriteString(*d.Content)
			if a.onText != nil {
				a.onText(*d.Content)
			}
		}
		if d.Refusal != nil {
			a.refusal.WriteString(*d.Refusal)
		}
		if a.onReasoning != nil {
			if d.ReasoningContent != nil && *d.ReasoningContent != "" {
				a.onReasoning(*d.ReasoningContent)
			}
			// Only a string is reasoning text (some servers send an object).
			if r := d.Reasoning; len(r) > 0 && r[0] == '"' {
				if s := jsonText(r); s != "" {
					a.onReasoning(s)
				}
			}
		}
		for _, td := range d.ToolCalls {
			a.addToolDelta(td)
		}
		if fc := d.FunctionCall; fc != nil {
			zero := 0
			a.addToolDelta(oaiToolDelta{Index: &zero, Function: *fc})
		}
	}
	if fr := jsonText(c.FinishReason); fr != "" {
		a.finish = fr
		a.finished = true
	}
}

// addToolDelta merges one tool-call fragment. Fragments are matched by
// index (a different id under a known index starts a new call); without an
// index (some servers), by id; else the fragment starts a new call when it
// names a function and continues the last one otherwise.
func (a *oaiAssembler) addToolDelta(td oaiToolDelta) {
	if a.byIndex == nil {
		a.byIndex = map[int]*ToolCall{}
	}
	var tc *ToolCall
	switch {
	case td.Index != nil:
		tc = a.byIndex[*td.Index]
		if tc != nil && td.ID != "" && tc.ID != "" && td.ID != tc.ID {
			// A new id under a used index (some proxies number every
			// parallel call 0): a new call, which now owns the index.
			tc = nil
		}
		if tc == nil {
			tc = &ToolCall{}
			a.byIndex[*td.Index] = tc
			a.calls = append(a.calls, tc)
		}
	case td.ID != "":
		for _, c := range a.calls {
			if c.ID == td.ID {
				tc = c
			}
		}
	case td.Function.Name == "" && len(a.calls) > 0:
		tc = a.calls[len(a.calls)-1]
	}
	if tc == nil {
		tc = &ToolCall{}
		a.calls = append(a.calls, tc)
	}
	if td.ID != "" && tc.ID == "" {
		tc.ID = td.ID
	}
	if n := td.Function.Name; n != "" && n != tc.Name {
		tc.Name += n
	}
	tc.Arguments += td.Function.argumentsText()
}

func (a *oaiAssembler) response(req Request) *Response {
	r := &Response{ID: a.id, Text: a.text.String()}
	for i, c := range a.calls {
		tc := *c
		if tc.ID == "" {
			tc.ID = syntheticCallID(a.id, i, tc.Name, tc.Arguments)
		}
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	switch a.finish {
	case "stop", "eos", "eos_token", "end_turn", "stop_sequence", "":
		r.FinishReason = finishStop
	case "tool_calls", "function_call", "tool_use":
		r.FinishReason = finishToolCalls
	case "length", "max_tokens", "model_length":
		r.FinishReason = finishLength
	default:
		r.FinishReason = a.finish
	}
	if len(r.ToolCalls) > 0 && r.FinishReason == finishStop {
		// Ollama and some llama.cpp builds say "stop" after tool calls.
		r.FinishReason = finishToolCalls
	}
	if u := a.usage; u != nil && (u.PromptTokens > 0 || u.CompletionTokens > 0) {
		r.Usage = tokencount.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedInputTokens: u.cached()}
	} else {
		r.Usage = tokencount.Usage{InputTokens: estimateInput(req), OutputTokens: estimateOutput(r), Estimated: true}
	}
	return r
}

// syntheticCallID makes a stable id for a tool call the server sent
// without one: the same response yields the same ids.
func syntheticCallID(respID string, i int, name, args string) string {
	h := sha256.Sum256([]byte(respID + "\x00" + strconv.Itoa(i) + "\x00" + name + "\x00" + args))
	return "call_" + hex.EncodeToString(h[:8])
}

// Stream implements Provider.
func (p *OpenAI) Stream(ctx context.Context, req Request, onText func(delta string)) (*Response, error) {
	if p.modelName(req) == "" {
		return nil, &Error{Class: ClassConfig, Message: "openai: no model name (set model.name or CAIRN_MODEL)"}
	}
	sctx, wrap, cancel := streamContext(ctx, p.cfg.StreamIdleTimeout)
	defer cancel(nil)
	header := http.Header{}
	for k, v := range p.cfg.Header {
		header[k] = v
	}
	if err := missingKey(p.wire, p.cfg.APIKey, p.endpoint, DefaultOpenAIBaseURL, header, "Authorization"); err != nil {
		return nil, err
	}
	if p.cfg.APIKey != "" {
		header.Set("Authorization", "Bearer "+p.cfg.APIKey)
	}
	resp, err := postJSON(sctx, p.wire, p.client, p.endpoint, header, p.requestBody(req))
	if err != nil {
		return nil, requestError(ctx, sctx, p.wire, err)
	}
	body := wrap(resp.Body)
	defer body.Close()

	a := &oaiAssembler{onText: onText, onReasoning: req.OnReasoning}
	br := bufio.NewReaderSize(body, sseBufferSize)
	if isPlainJSON(resp.Header.Get("Content-Type"), br) {
		// A server that ignored stream=true and answered in one piece.
		b, err := io.ReadAll(io.LimitReader(br, 64<<20))
		if err != nil {
			return nil, streamReadError(ctx, sctx, p.wire, err)
		}
		if err := p.handleChunk(a, b); err != nil {
			return nil, err
		}
		if !a.finished && len(a.calls) == 0 && a.text.Len() == 0 {
			return nil, &Error{Class: ClassBadResponse, Status: resp.StatusCode, Message: "openai: JSON response without choices: " + clip(string(b), 300)}
		}
		a.finished = true
		return p.finish(a, req)
	}

	sse := newSSEReader(br)
	for {
		ev, err := sse.Next()
		if err != nil {
			if err == io.EOF && a.finished {
				// Some servers close after the finish chunk without [DONE].
				return p.finish(a, req)
			}
			return nil, streamReadError(ctx, sctx, p.wire, err)
		}
		data := strings.TrimSpace(ev.Data)
		if data == "" {
			continue
		}
		if data == "[DONE]" {
			return p.finish(a, req)
		}
		if ev.Event == "error" && !strings.HasPrefix(data, "{") {
			return nil, &Error{Class: ClassNetwork, Message: "openai: error event in stream: " + clip(data, 300)}
		}
		if err := p.handleChunk(a, []byte(data)); err != nil {
			return nil, err
		}
	}
}

// isPlainJSON decides whether a 2xx body is one JSON document rather than
// an event stream: by its Content-Type, and for a mislabelled body by its
// first byte ("{" for JSON, "data:" / ":" / "event:" for a stream).
func isPlainJSON(contentType string, br *bufio.Reader) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "text/event-stream" {
		return false
	}
	for i := 1; i <= 64; i++ {
		b, err := br.Peek(i)
		if len(b) < i || err != nil {
			return false
		}
		switch c := b[i-1]; c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			return true
		default:
			return false
		}
	}
	return false
}

// handleChunk folds one chunk into a; garbage and in-stream errors become
// classified errors.
func (p *OpenAI) handleChunk(a *oaiAssembler, data []byte) error {
	var ch oaiChunk
	if err := json.Unmarshal(data, &ch); err != nil {
		return &Error{Class: ClassBadResponse, Message: "openai: malformed JSON in stream chunk: " + clip(string(data), 200), Err: err}
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		// vLLM, OpenRouter and llama.cpp report failures mid-stream this way.
		ae := parseAPIError(data)
		class := classifyText(strings.ToLower(ae.Message + " " + ae.Type + " " + ae.Code))
		if class == ClassOther {
			class = ClassNetwork
			if code, _ := strconv.Atoi(ae.Code); code >= 400 && code < 500 {
				class = ClassOther
			}
		}
		return &Error{Class: class, Message: "openai: error in stream: " + ae.Message}
	}
	if ch.ID != "" && a.id == "" {
		a.id = ch.ID
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue // n>1 is never requested; ignore other choices
		}
		a.addChoice(c)
	}
	if ch.Usage != nil {
		a.usage = ch.Usage
	}
	return nil
}

func (p *OpenAI) finish(a *oaiAssembler, req Request) (*Response, error) {
	if a.finish == "content_filter" {
		return nil, &Error{Class: ClassRefusal, Message: "openai: the response was stopped by the provider's content filter"}
	}
	if a.refusal.Len() > 0 && a.text.Len() == 0 && len(a.calls) == 0 {
		return nil, &Error{Class: ClassRefusal, Message: "openai: the model refused: " + clip(a.refusal.String(), 500)}
	}
	return a.response(req), nil
}
