// Package mcp bridges Model Context Protocol servers into Cairn's tool
// registry, using the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// A Manager starts every configured stdio server as a child process in its
// own process group, or connects to a remote one (a URL: streamable HTTP or
// SSE, with its configured headers on every request; remote.go), performs
// the MCP handshake under a timeout, lists the
// server's tools and registers each one in a *tools.Registry as
// mcp__<server>__<tool> (see ToolName), with the server's input schema as
// the tool schema and a description that names the server. It follows
// notifications/tools/list_changed (re-list, register new tools, unregister
// vanished ones).
//
// Risk comes from the server's trust (see Classify): an untrusted server —
// the default — has every tool classified network, so the default policy
// asks before each call, and its annotations are ignored; a trusted
// server's readOnlyHint / destructiveHint annotations are believed.
//
// A server that cannot be started, fails or hangs in the handshake, writes
// something other than MCP JSON-RPC to stdout, or exits later is reported
// through Options.OnEvent and its tools are withdrawn from the registry; the
// other servers keep working. A call to a tool of a server that is gone
// returns an error result at once; a call never outlives the tool timeout.
//
// Use:
//
//	m := mcp.NewManager(mcp.Options{Registry: reg, Dir: root, OnEvent: notify, Logf: logf})
//	cfgs, err := mcp.ParseServers(settings.MCPServers) // the mcpServers object
//	go m.Update(ctx, cfgs)                            // again on didChangeConfiguration
//	defer m.Close()                                   // on shutdown/exit
//
// A server's environment is Cairn's own minus secret-looking variables
// (tools/shell.StripSecrets), plus the env configured for it.
package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/tools"
)

// Trust levels of a server.
const (
	TrustTrusted   = "trusted"
	TrustUntrusted = "untrusted"
)

// ServerConfig is one entry of the mcpServers setting:
// { name: { command, args, env, trust } } for a server Cairn starts, or
// { name: { type, url, headers, trust } } for one it connects to over HTTP.
type ServerConfig struct {
	Name    string `json:"-"` // the key in mcpServers
	Command string `json:"command,omitempty"`
	// URL, when set, makes the server remote: Type TypeHTTP (streamable
	// HTTP, the default) or TypeSSE, with Headers sent on every request;
	// Command, Args and Env are then unused.
	Type    string            `json:"type,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Trust is "trusted" or "untrusted"; empty (and anything else) means untrusted.
	Trust string `json:"trust,omitempty"`
}

func (c ServerConfig) equal(d ServerConfig) bool {
	if c.Name != d.Name || c.Command != d.Command || c.Trust != d.Trust || len(c.Args) != len(d.Args) || len(c.Env) != len(d.Env) ||
		c.Type != d.Type || c.URL != d.URL || len(c.Headers) != len(d.Headers) {
		return false
	}
	for k, v := range c.Headers {
		if w, ok := d.Headers[k]; !ok || w != v {
			return false
		}
	}
	for i := range c.Args {
		if c.Args[i] != d.Args[i] {
			return false
		}
	}
	for k, v := range c.Env {
		if w, ok := d.Env[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// ParseServers decodes the mcpServers setting (a JSON object keyed by server
// name) into configs sorted by name. null or an empty value gives none.
func ParseServers(raw json.RawMessage) ([]ServerConfig, error) {
	if len(strings.TrimSpace(string(raw))) == 0 || strings.TrimSpace(string(raw)) == "null" {
		return nil, nil
	}
	var m map[string]ServerConfig
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("mcpServers: %w", err)
	}
	out := make([]ServerConfig, 0, len(m))
	for name, c := range m {
		c.Name = name
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Options configure a Manager.
type Options struct {
	// Registry receives the tools (required).
	Registry *tools.Registry
	// OnEvent reports a problem with one server, in a sentence meant for
	// the user (window/showMessage) and the log: it failed to start, failed
	// or timed out in the handshake, broke the protocol, exited, or a tool's
	// schema had to be replaced. It is never called with a lock held, and
	// may be called from any goroutine.
	OnEvent func(server, message string)
	// Logf, when set, receives informational lines (servers started, tool
	// counts, the servers' stderr).
	Logf func(format string, args ...any)
	// Dir is the servers' working directory (the workspace root); empty
	// means Cairn's own.
	Dir string
	// Environ is the base environment of the servers (nil: os.Environ()).
	// Variables that look secret are removed from it (tools/shell
	// StripSecrets); a server's configured env is then added as given.
	Environ []string
	// HandshakeTimeout bounds starting a server, the initialize handshake
	// and each tools/list (default 30s; `npx -y` downloading a package on
	// first use may need more).
	HandshakeTimeout time.Duration
	// ToolTimeout is the timeout of each tool call (default 60s).
	ToolTimeout time.Duration
	// MaxOutputBytes is the output cap of each tool (0: the registry's default).
	MaxOutputBytes int
	// ClientVersion is sent as the client version in the handshake (default "dev").
	ClientVersion string
}

// Server states, as reported by Servers.
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateFailed   = "failed"
	StateStopped  = "stopped"
)

// ServerStatus describes one configured server.
type ServerStatus struct {
	Name  string   `json:"name"`
	State string   `json:"state"`
	Trust string   `json:"trust"`
	Error string   `json:"error,omitempty"`
	Info  string   `json:"info,omitempty"`  // the server's name and version from the handshake
	Tools []string `json:"tools,omitempty"` // registry names, sorted
}

// Manager runs the configured MCP servers and keeps their tools registered.
type Manager struct {
	opts   Options
	ctx    context.Context // cancelled by Close: aborts handshakes in progress
	cancel context.CancelFunc

	updateMu sync.Mutex // serializes Update and Close

	mu      sync.Mutex
	servers map[string]*server
	closed  bool
}

// NewManager returns a Manager with no servers; call Update to start them.
func NewManager(opts Options) *Manager {
	if opts.Registry == nil {
		panic("mcp.NewManager: nil Registry")
	}
	if opts.HandshakeTimeout <= 0 {
		opts.HandshakeTimeout = 30 * time.Second
	}
	if opts.ToolTimeout <= 0 {
		opts.ToolTimeout = 60 * time.Second
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = "dev"
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{opts: opts, ctx: ctx, cancel: cancel, servers: map[string]*server{}}
}

// Update makes the running servers match configs: servers no longer listed
// or whose configuration changed are stopped (their tools withdrawn), new
// and changed ones are started, and servers that had failed are retried.
// Unchanged running servers are left alone. Servers start in parallel;
// Update returns when each has either registered its tools or been
// reported through OnEvent (at most about HandshakeTimeout twice: the
// handshake, then tools/list). It is safe to call from a goroutine; calls
// are serialized. Cancelling ctx abandons the starts in progress.
func (m *Manager) Update(ctx context.Context, configs []ServerConfig) {
	m.updateMu.Lock()
	defer m.updateMu.Unlock()
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return
	}

	desired := map[string]ServerConfig{}
	labels := map[string]string{}
	var order []string
	for _, c := range configs {
		if c.Name == "" {
			m.event("", "MCP server without a name in mcpServers: ignored")
			continue
		}
		if _, dup := desired[c.Name]; dup {
			m.event(c.Name, "MCP server "+c.Name+": configured twice; the first entry is used")
			continue
		}
		if other, clash := labels[sanitize(c.Name)]; clash {
			m.event(c.Name, fmt.Sprintf("MCP server %s: its tool names would clash with those of MCP server %s (both become mcp__%s__…); rename one of them. Not started.", c.Name, other, sanitize(c.Name)))
			continue
		}
		labels[sanitize(c.Name)] = c.Name
		desired[c.Name] = c
		order = append(order, c.Name)
	}

	var stop, start []*server
	m.mu.Lock()
	for name, s := range m.servers {
		d, keep := desired[name]
		if keep && d.equal(s.cfg) && s.healthy() {
			continue
		}
		stop = append(stop, s)
		delete(m.servers, name)
	}
	for _, name := range order {
		if _, ok := m.servers[name]; ok {
			continue
		}
		s := newServer(m, desired[name])
		m.servers[name] = s
		start = append(start, s)
	}
	m.mu.Unlock()

	var wg sync.WaitGroup
	for _, s := range stop {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop() }()
	}
	wg.Wait()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopWatch := context.AfterFunc(m.ctx, cancel)
	defer stopWatch()
	for _, s := range start {
		wg.Add(1)
		go func() { defer wg.Done(); s.start(ctx) }()
	}
	wg.Wait()
}

// Close stops every server (closing its stdin, then SIGTERM and SIGKILL to
// its process group) and withdraws their tools. Starts in progress are
// abandoned. The Manager cannot be used afterwards.
func (m *Manager) Close() error {
	m.cancel()
	m.updateMu.Lock()
	defer m.updateMu.Unlock()
	m.mu.Lock()
	m.closed = true
	var all []*server
	for name, s := range m.servers {
		all = append(all, s)
		delete(m.servers, name)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() { defer wg.Done(); s.stop() }()
	}
	wg.Wait()
	return nil
}

// Servers reports the state of every configured server, sorted by name.
func (m *Manager) Servers() []ServerStatus {
	m.mu.Lock()
	all := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		all = append(all, s)
	}
	m.mu.Unlock()
	out := make([]ServerStatus, 0, len(all))
	for _, s := range all {
		out = append(out, s.status())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (m *Manager) event(server, msg string) {
	m.logf("mcp %s: %s", server, msg)
	if m.opts.OnEvent != nil {
		m.opts.OnEvent(server, msg)
	}
}

func (m *Manager) logf(format string, args ...any) {
	if m.opts.Logf != nil {
		m.opts.Logf(format, args...)
	}
}
