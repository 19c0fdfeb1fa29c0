package model

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// splitMode says how a test server cuts a body into separately flushed
// writes (each flush is its own chunk on the wire, usually its own TCP
// segment), so the client sees events split at arbitrary points.
type splitMode string

const (
	splitWhole    splitMode = "whole"
	splitBytes    splitMode = "bytes"     // one byte per write
	splitRandom   splitMode = "random"    // seeded random sizes 1..40
	splitMidEvent splitMode = "mid-event" // every event cut in its middle
)

var allSplits = []splitMode{splitWhole, splitBytes, splitRandom, splitMidEvent}

func splitBody(body []byte, mode splitMode) [][]byte {
	switch mode {
	case splitBytes:
		out := make([][]byte, len(body))
		for i := range body {
			out[i] = body[i : i+1]
		}
		return out
	case splitRandom:
		r := rand.New(rand.NewPCG(1, 2))
		var out [][]byte
		for len(body) > 0 {
			n := min(1+r.IntN(40), len(body))
			out = append(out, body[:n])
			body = body[n:]
		}
		return out
	case splitMidEvent:
		var out [][]byte
		for len(body) > 0 {
			end := bytes.Index(body, []byte("\n\n"))
			if end < 0 {
				end = len(body)
			} else {
				end += 2
			}
			if end > 1 {
				out = append(out, body[:end/2], body[end/2:end])
			} else {
				out = append(out, body[:end])
			}
			body = body[end:]
		}
		return out
	}
	return [][]byte{body}
}

// writeSplit writes body in pieces, flushing after each.
func writeSplit(w http.ResponseWriter, body []byte, mode splitMode) {
	f := w.(http.Flusher)
	for _, p := range splitBody(body, mode) {
		if _, err := w.Write(p); err != nil {
			return
		}
		f.Flush()
	}
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func toCRLF(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }

// recordedRequest is what a wire server saw.
type recordedRequest struct {
	Path   string
	Header http.Header
	Body   map[string]any
}

// wireServer is an httptest server whose handler the test sets; it
// records every request.
type wireServer struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []recordedRequest
	handler func(w http.ResponseWriter, r *http.Request)
}

func newWireServer(t *testing.T, h func(w http.ResponseWriter, r *http.Request)) *wireServer {
	t.Helper()
	ws := &wireServer{handler: h}
	ws.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		ws.mu.Lock()
		ws.reqs = append(ws.reqs, recordedRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		ws.mu.Unlock()
		ws.handler(w, r)
	}))
	t.Cleanup(ws.Close)
	return ws
}

func (ws *wireServer) last(t *testing.T) recordedRequest {
	t.Helper()
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if len(ws.reqs) == 0 {
		t.Fatal("server saw no request")
	}
	return ws.reqs[len(ws.reqs)-1]
}

// sseHandler serves body as an event stream, split by mode.
func sseHandler(body []byte, mode splitMode) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		writeSplit(w, body, mode)
	}
}

// errorHandler answers with status, headers and a JSON body.
func errorHandler(status int, hdr map[string]string, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range hdr {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)
	cases := []struct {
		hdr  map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-3"}, 0},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, 250 * time.Millisecond},
		{nil, 0},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.hdr {
			h.Set(k, v)
		}
		if got := parseRetryAfter(h, now); got != c.want {
			t.Errorf("parseRetryAfter(%v) = %v, want %v", c.hdr, got, c.want)
		}
	}
}

func TestParseAPIErrorShapes(t *testing.T) {
	cases := map[string]apiError{
		`{"error":{"message":"bad key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`: {Message: "bad key", Type: "invalid_request_error", Code: "invalid_api_key"},
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`:                          {Message: "Overloaded", Type: "overloaded_error"},
		`{"object":"error","message":"too long","type":"BadRequestError","param":null,"code":400}`:             {Message: "too long", Type: "BadRequestError", Code: "400"},
		`{"error":"model \"x\" not found, try pulling it first"}`:                                              {Message: `model "x" not found, try pulling it first`},
		`{"detail":"Not Found"}`:                    {Message: "Not Found"},
		`<html><body>502 Bad Gateway</body></html>`: {Message: "<html><body>502 Bad Gateway</body></html>"},
	}
	for in, want := range cases {
		if got := parseAPIError([]byte(in)); got != want {
			t.Errorf("parseAPIError(%s) = %+v, want %+v", in, got, want)
		}
	}
}

func TestClassifyTextWording(t *testing.T) {
	cases := map[string]ErrorClass{
		"this model's maximum context length is 8192 tokens. however, you requested 9000 tokens": ClassContextLength,
		"the request exceeds the available context size, try increasing it":                      ClassContextLength,
		"prompt is too long: 210000 tokens > 200000 maximum":                                     ClassContextLength,
		"invalid schema for function 'edit_file': 'oneof' is not permitted":                      ClassSchema,
		"tools.0.custom.input_schema: json schema is invalid":                                    ClassSchema,
		"registry.ollama.ai/library/gemma:2b does not support tools":                             ClassConfig,
		"the response was filtered due to the prompt triggering content management policy":       ClassRefusal,
		"something odd": ClassOther,
	}
	for in, want := range cases {
		if got := classifyText(in); got != want {
			t.Errorf("classifyText(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestEstimateUsage(t *testing.T) {
	req := Request{Messages: []Message{{Role: RoleUser, Content: strings.Repeat("hello world ", 20)}}}
	if n := estimateInput(req); n < 40 {
		t.Errorf("estimateInput = %d, want at least the text's tokens", n)
	}
	if n := estimateOutput(&Response{Text: "one two three"}); n < 3 {
		t.Errorf("estimateOutput = %d", n)
	}
}
