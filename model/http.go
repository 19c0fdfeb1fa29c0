package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/tokencount"
)

// Finish reasons the network providers normalise to (Response.FinishReason).
// Provider-specific reasons that have no equivalent are passed through.
const (
	finishStop      = "stop"       // the model ended its turn
	finishToolCalls = "tool_calls" // the model wants tool results
	finishLength    = "length"     // the output hit max tokens
)

// FinishLength is Response.FinishReason when the model stopped at its
// output-token limit (OpenAI "length", Anthropic "max_tokens").
const FinishLength = finishLength

// wireInfo names a provider in error messages.
type wireInfo struct {
	name   string // "openai"
	keyEnv string // "OPENAI_API_KEY"
}

// errIdle is the cancellation cause when a stream delivered no bytes for the
// configured idle timeout.
var errIdle = errors.New("stream idle timeout")

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// postJSON sends body to url and returns the response when it is 2xx.
// Otherwise it returns ctx.Err() when ctx is done, or a classified *Error.
// The caller must close the returned body.
func postJSON(ctx context.Context, w wireInfo, client *http.Client, url string, header http.Header, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, &Error{Class: ClassConfig, Message: w.name + ": cannot encode request", Err: err}
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, &Error{Class: ClassConfig, Message: fmt.Sprintf("%s: bad endpoint URL %q (check model.baseURL)", w.name, url), Err: err}
	}
	for k, v := range header {
		hreq.Header[k] = v
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	if hreq.Header.Get("User-Agent") == "" {
		hreq.Header.Set("User-Agent", "cairn")
	}
	resp, err := client.Do(hreq)
	if err != nil {
		if cerr := ctxDone(ctx); cerr != nil {
			return nil, cerr
		}
		return nil, &Error{Class: ClassNetwork, Message: fmt.Sprintf("%s: cannot reach %s", w.name, url), Err: err}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	eb, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if rerr != nil {
		if cerr := ctxDone(ctx); cerr != nil {
			return nil, cerr
		}
	}
	return nil, classifyHTTP(w, resp.StatusCode, resp.Header, eb, time.Now())
}

// ctxDone returns ctx.Err() (context.Canceled or DeadlineExceeded, so
// errors.Is works for callers) when ctx is done; nil otherwise.
func ctxDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return nil
}

// streamReadError turns a failed body read into the right error: ctx.Err()
// when the caller cancelled, a network error when the idle watchdog fired,
// else a bad response (the stream was cut).
func streamReadError(ctx, streamCtx context.Context, w wireInfo, err error) error {
	if cerr := ctxDone(ctx); cerr != nil {
		return cerr
	}
	if context.Cause(streamCtx) == errIdle {
		return &Error{Class: ClassNetwork, Message: w.name + ": stream stalled (no data before the idle timeout)", Err: errIdle}
	}
	if err == io.EOF || err == errSSETruncated {
		return &Error{Class: ClassBadResponse, Message: w.name + ": stream ended before the response was complete", Err: io.ErrUnexpectedEOF}
	}
	return &Error{Class: ClassBadResponse, Message: w.name + ": stream cut mid-way", Err: err}
}

// requestError refines an error from postJSON made under streamCtx:
// the caller's cancellation wins, then the idle watchdog.
func requestError(ctx, streamCtx context.Context, w wireInfo, err error) error {
	if cerr := ctxDone(ctx); cerr != nil {
		return cerr
	}
	if context.Cause(streamCtx) == errIdle {
		return &Error{Class: ClassNetwork, Message: w.name + ": no response before the idle timeout", Err: errIdle}
	}
	return err
}

// idleBody wraps a response body so that every successful Read pushes back
// a watchdog; when the watchdog fires, cancel aborts the request.
type idleBody struct {
	io.ReadCloser
	timer *time.Timer
	d     time.Duration
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.d)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	return b.ReadCloser.Close()
}

// streamContext derives the context a request runs under: with an idle
// timeout, the returned wrap func guards the response body with a watchdog
// that cancels the request when no byte arrives for d.
func streamContext(ctx context.Context, d time.Duration) (context.Context, func(io.ReadCloser) io.ReadCloser, context.CancelCauseFunc) {
	sctx, cancel := context.WithCancelCause(ctx)
	if d <= 0 {
		return sctx, func(r io.ReadCloser) io.ReadCloser { return r }, cancel
	}
	t := time.AfterFunc(d, func() { cancel(errIdle) })
	wrap := func(r io.ReadCloser) io.ReadCloser {
		return &idleBody{ReadCloser: r, timer: t, d: d}
	}
	return sctx, wrap, func(cause error) { t.Stop(); cancel(cause) }
}

// apiError is the union of the error bodies model servers send:
// OpenAI {"error":{"message","type","code","param"}}, Anthropic
// {"type":"error","error":{"type","message"}}, vLLM {"object":"error",
// "message","type","code"}, Ollama {"error":"text"}, FastAPI {"detail":...}.
type apiError struct {
	Message string
	Type    string
	Code    string
	Param   string
}

func parseAPIError(body []byte) apiError {
	var raw struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Type    json.RawMessage `json:"type"`
		Code    json.RawMessage `json:"code"`
		Param   json.RawMessage `json:"param"`
		Detail  json.RawMessage `json:"detail"`
	}
	var out apiError
	trimmed := bytes.TrimSpace(body)
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		out.Message = clip(string(trimmed), 500)
		return out
	}
	if len(raw.Error) > 0 && raw.Error[0] == '{' {
		var inner struct {
			Message json.RawMessage `json:"message"`
			Type    json.RawMessage `json:"type"`
			Code    json.RawMessage `json:"code"`
			Param   json.RawMessage `json:"param"`
		}
		if json.Unmarshal(raw.Error, &inner) == nil {
			out = apiError{jsonText(inner.Message), jsonText(inner.Type), jsonText(inner.Code), jsonText(inner.Param)}
		}
	} else if s := jsonText(raw.Error); s != "" {
		out.Message = s
	}
	if out.Message == "" {
		out.Message = jsonText(raw.Message)
	}
	if out.Message == "" {
		out.Message = jsonText(raw.Detail)
	}
	if out.Type == "" && jsonText(raw.Type) != "error" {
		out.Type = jsonText(raw.Type)
	}
	if out.Code == "" {
		out.Code = jsonText(raw.Code)
	}
	if out.Param == "" {
		out.Param = jsonText(raw.Param)
	}
	if out.Message == "" {
		out.Message = clip(string(trimmed), 500)
	}
	return out
}

// jsonText renders a JSON scalar as text: strings unquoted, numbers as
// written, objects and arrays compactly; null and absent as "".
func jsonText(r json.RawMessage) string {
	r = bytes.TrimSpace(r)
	if len(r) == 0 || string(r) == "null" {
		return ""
	}
	var s string
	if r[0] == '"' && json.Unmarshal(r, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, r) == nil {
		return clip(buf.String(), 500)
	}
	return clip(string(r), 500)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

var contextLengthWords = []string{
	"context_length_exceeded", "maximum context length", "context length", "too many tokens",
	"prompt is too long", "context window", "exceeds the context", "exceed_context_size",
	"context size", "input is too long", "maximum input length", "reduce the length",
	"request_too_large", "prompt too long", "input length and `max_tokens` exceed",
}

var toolConfigWords = []string{
	"does not support tools", "tool-call-parser", "enable-auto-tool-choice", "tools are not supported",
	"tool use is not supported", "does not support function calling",
}

var schemaWords = []string{
	"schema", "invalid_function_parameters", "function.parameters", "tools[", "tools.",
	"input_schema", "tool_choice", "not supported in tool", "$ref", "anyof", "oneof", "allof",
}

var refusalWords = []string{"content_filter", "content_policy", "content management policy", "safety system"}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// classifyHTTP classifies a non-2xx response.
func classifyHTTP(w wireInfo, status int, h http.Header, body []byte, now time.Time) *Error {
	ae := parseAPIError(body)
	e := &Error{Status: status, Message: w.name + ": " + ae.Message}
	text := strings.ToLower(ae.Message + " " + ae.Type + " " + ae.Code + " " + ae.Param)
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Class = ClassAuth
		e.Message = fmt.Sprintf("%s: authentication failed (%s); check %s and model.baseURL", w.name, ae.Message, w.keyEnv)
	case status == http.StatusTooManyRequests:
		if strings.Contains(text, "insufficient_quota") || strings.Contains(text, "exceeded your current quota") {
			// Waiting does not bring the quota back.
			e.Class = ClassAuth
			e.Message = fmt.Sprintf("%s: quota exhausted (%s); check the account behind %s", w.name, ae.Message, w.keyEnv)
			break
		}
		e.Class = ClassRateLimit
		e.RetryAfter = parseRetryAfter(h, now)
	case status == http.StatusRequestTimeout || status >= 500:
		// 5xx, and Anthropic's 529 overloaded.
		e.Class = ClassNetwork
		e.RetryAfter = parseRetryAfter(h, now)
	case status == http.StatusRequestEntityTooLarge:
		e.Class = ClassContextLength
	case status == http.StatusNotFound:
		e.Class = ClassConfig
		e.Message = fmt.Sprintf("%s: not found (%s); check model.name and model.baseURL", w.name, ae.Message)
	default:
		e.Class = classifyText(text)
	}
	return e
}

// classifyText classifies a 4xx (or an in-stream error) by its wording.
func classifyText(text string) ErrorClass {
	switch {
	case containsAny(text, contextLengthWords):
		return ClassContextLength
	case containsAny(text, refusalWords):
		return ClassRefusal
	case containsAny(text, toolConfigWords):
		return ClassConfig
	case containsAny(text, schemaWords):
		return ClassSchema
	}
	return ClassOther
}

// parseRetryAfter reads retry-after-ms (OpenAI) or Retry-After (seconds,
// possibly fractional, or an HTTP date). It returns 0 when absent or bad.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// estimateInput estimates prompt tokens for a request whose provider did
// not report usage: message text plus a small per-message overhead, plus
// the tool definitions.
func estimateInput(req Request) int {
	n := 3
	for _, m := range req.Messages {
		n += 4 + tokencount.Count(m.Content)
		for _, tc := range m.ToolCalls {
			n += 3 + tokencount.Count(tc.Name) + tokencount.Count(tc.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += 8 + tokencount.Count(t.Name) + tokencount.Count(t.Description) + tokencount.Count(string(t.Schema))
	}
	return n
}

// estimateOutput estimates completion tokens of a response.
func estimateOutput(r *Response) int {
	n := tokencount.Count(r.Text)
	for _, tc := range r.ToolCalls {
		n += 3 + tokencount.Count(tc.Name) + tokencount.Count(tc.Arguments)
	}
	return n
}

// baseURL validates a provider's model.baseURL (the default when empty) and
// returns it without a trailing slash.
func baseURL(provider, raw, def string) (string, error) {
	base := strings.TrimSpace(raw)
	if base == "" {
		base = def
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", &Error{Class: ClassConfig, Message: fmt.Sprintf("%s: model.baseURL %q is not an http(s) URL", provider, raw), Err: err}
	}
	return strings.TrimRight(base, "/"), nil
}

// missingKey is the error of a request that would go without a key to the
// vendor's own endpoint (defaultBase), which always refuses one: said by
// name before any request, so no retry hides it. An empty key elsewhere is
// allowed (a local gateway, a proxy that adds the key), as is a key sent in
// a configured header.
func missingKey(w wireInfo, key, endpoint, defaultBase string, header http.Header, keyHeader string) error {
	if key != "" || header.Get(keyHeader) != "" {
		return nil
	}
	u, err1 := url.Parse(endpoint)
	d, err2 := url.Parse(defaultBase)
	if err1 != nil || err2 != nil || u.Host != d.Host {
		return nil
	}
	return &Error{Class: ClassConfig, Message: fmt.Sprintf("%s: %s is not set: %s needs an API key (set model.baseURL for a gateway that needs none)", w.name, w.keyEnv, d.Host)}
}

// httpClient is the configured client, or a fresh one with its own
// transport (so one provider's connections never affect another's).
func httpClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
}
