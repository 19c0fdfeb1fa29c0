package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Remote transports of a server configured with a URL.
const (
	TypeHTTP = "http" // streamable HTTP (MCP 2025-03-26 and later)
	TypeSSE  = "sse"  // HTTP with server-sent events (MCP 2024-11-05)
)

// headerTransport adds a server's configured headers (an API key, a
// bearer token) to every request of its connection.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// remoteTransport is the SDK client transport for the server's URL.
func (s *server) remoteTransport() (sdk.Transport, error) {
	u, err := url.Parse(s.cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url %q is not an http(s) URL", s.cfg.URL)
	}
	// No client timeout: an SSE stream lasts as long as the session; the
	// handshake and each call have their own deadlines.
	hc := &http.Client{Transport: headerTransport{base: http.DefaultTransport, headers: s.cfg.Headers}}
	switch s.cfg.Type {
	case TypeHTTP, "":
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}, nil
	case TypeSSE:
		return &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}, nil
	}
	return nil, fmt.Errorf("unknown transport type %q (use %q or %q)", s.cfg.Type, TypeHTTP, TypeSSE)
}

// startRemote connects to a server over HTTP, performs the handshake and
// registers the tools; any failure is reported and leaves it failed.
func (s *server) startRemote(ctx context.Context) {
	transport, err := s.remoteTransport()
	if err != nil {
		s.fail("cannot connect: " + err.Error())
		return
	}
	// The connection lives until the server is stopped, not with ctx (the
	// SSE transport's event stream is bound to the context it connects
	// with): the handshake's deadline is kept by the timer below.
	life, cancel := context.WithCancel(s.m.ctx)
	s.mu.Lock()
	s.cancelRemote = cancel
	s.mu.Unlock()
	s.m.logf("mcp %s: connecting to %s (%s)", s.cfg.Name, s.cfg.URL, orDefault(s.cfg.Type, TypeHTTP))

	client := sdk.NewClient(&sdk.Implementation{Name: "cairn", Version: s.m.opts.ClientVersion}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { s.requestRelist() },
	})
	type connected struct {
		cs  *sdk.ClientSession
		err error
	}
	ch := make(chan connected, 1)
	go func() {
		cs, err := client.Connect(life, transport, nil)
		ch <- connected{cs, err}
	}()
	timeout := s.m.opts.HandshakeTimeout
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var r connected
	select {
	case r = <-ch:
	case <-timer.C:
		cancel()
		if r = <-ch; r.err == nil {
			_ = r.cs.Close()
		}
		s.fail(fmt.Sprintf("no answer to the MCP handshake at %s within %s", s.cfg.URL, timeout))
		return
	case <-ctx.Done():
		cancel()
		if r = <-ch; r.err == nil {
			_ = r.cs.Close()
		}
		s.abandon()
		return
	}
	if r.err != nil {
		s.fail(fmt.Sprintf("the MCP handshake at %s failed: %v", s.cfg.URL, r.err))
		return
	}
	s.serve(ctx, r.cs, nil)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
