package acp

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/tools/mcp"
	"github.com/cairn-dev/cairn/workspace"
)

// workspaceEngines are the engines of one workspace root, shared by the
// sessions whose cwd it is: the same parts `cairn serve` assembles for its
// workspace (registry, gate with audit, checkpoints, redactor, tracer, MCP
// bridge, code index, run manager).
type workspaceEngines struct {
	ws       *workspace.Workspace
	stateDir string
	mgr      *agent.Manager
	gate     *tools.Gate
	engines  *agent.Engines
	policy   tools.Policy
	sandbox  *tools.CommandSandbox
	bridge   *mcp.Manager
	setup    Setup

	mu         sync.Mutex
	sessionMCP map[sdk.SessionId][]mcp.ServerConfig
	mcpReady   chan struct{}
	// active are the sessions with a turn in progress (buffers.go).
	active []*session
}

// workspaceFor opens (once) the engines of the workspace at cwd.
func (a *adapter) workspaceFor(cwd string) (*workspaceEngines, error) {
	if !filepath.IsAbs(cwd) {
		return nil, fmt.Errorf("cwd %q is not an absolute path", cwd)
	}
	ws, err := workspace.Open(cwd)
	if err != nil {
		return nil, fmt.Errorf("opening the workspace %s: %w", cwd, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if w, ok := a.workspaces[ws.Root()]; ok {
		return w, nil
	}
	w, err := a.openEngines(ws)
	if err != nil {
		return nil, err
	}
	a.workspaces[ws.Root()] = w
	a.rememberRoot(ws.Root())
	return w, nil
}

func (a *adapter) openEngines(ws *workspace.Workspace) (*workspaceEngines, error) {
	stateDir, err := a.opts.StateDir(ws.Root())
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the state directory %s: %w", stateDir, err)
	}
	ws.SetStateDir(stateDir)
	setup := a.opts.Configure(ws.Root(), stateDir)
	for _, w := range setup.Warnings {
		slog.Warn("configuration: " + w)
	}
	// The same engines `cairn serve` assembles, then this workspace's
	// settings on them.
	e, err := agent.OpenEngines(a.ctx, agent.EngineOptions{WS: ws, StateDir: stateDir, Version: a.opts.Version,
		Asker: &asker{a: a}, Environ: a.opts.Environ, OTLPEndpoint: setup.OTLPEndpoint,
		OnMCPEvent: func(msg string) { a.mcpProblem(ws.Root(), msg) }})
	if err != nil {
		return nil, err
	}
	for _, problem := range e.Sandbox.Configure(setup.Sandbox, stateDir) {
		slog.Warn("configuration: " + problem)
	}
	e.Gate.SetPolicy(setup.Policy, setup.Interactive)
	e.Gate.InteractiveFor = a.runInteractive
	cfg := setup.Run
	cfg.StateDir = stateDir
	e.Manager.SetConfig(cfg)
	for _, note := range e.Manager.RecoverCheckpoints() {
		slog.Warn(note)
	}
	w := &workspaceEngines{ws: ws, stateDir: stateDir, engines: e, mgr: e.Manager, gate: e.Gate, policy: setup.Policy,
		sandbox: e.Sandbox, bridge: e.MCP, setup: setup, sessionMCP: map[sdk.SessionId][]mcp.ServerConfig{}}
	ws.Docs.SetSource(func(abs string) (string, bool) { return a.bufferSource(w, abs) })
	w.updateMCP(a.ctx)
	w.reportSandbox()
	slog.Info("workspace opened", "root", ws.Root(), "state", stateDir)
	return w, nil
}

// setSessionMCP records a session's MCP servers and restarts the bridge with
// the union of the settings' servers and every session's.
func (w *workspaceEngines) setSessionMCP(ctx context.Context, id sdk.SessionId, servers []sdk.McpServer) []string {
	var cfgs []mcp.ServerConfig
	var problems []string
	for _, s := range servers {
		c, ok := sessionServerConfig(s)
		if !ok {
			problems = append(problems, "an MCP server of a transport Cairn does not support (only stdio, http and sse) was ignored")
			continue
		}
		// A server the client sends is untrusted, as any server without a
		// trust level is; the user's settings may mark a server of the same
		// name (and command or URL) trusted.
		for _, t := range w.setup.MCPServers {
			if t.Name == c.Name && t.Command == c.Command && t.URL == c.URL {
				c.Trust = t.Trust
			}
		}
		cfgs = append(cfgs, c)
	}
	w.mu.Lock()
	w.sessionMCP[id] = cfgs
	w.mu.Unlock()
	w.updateMCP(ctx)
	return problems
}

// mcpProblem logs an MCP server that cannot be used (it failed to start or
// connect, or went away) and tells the folder's sessions at their next
// turn: the user must act on it.
func (a *adapter) mcpProblem(root, msg string) {
	slog.Warn(msg)
	a.mu.Lock()
	var sessions []*session
	for _, s := range a.sessions {
		if s.w != nil && s.w.ws.Root() == root {
			sessions = append(sessions, s)
		}
	}
	a.mu.Unlock()
	for _, s := range sessions {
		s.notice(msg)
	}
}

// sessionServerConfig is the bridge's config of an MCP server a client
// sent: stdio, or remote over streamable HTTP or SSE with its headers.
func sessionServerConfig(s sdk.McpServer) (mcp.ServerConfig, bool) {
	headers := func(hs []sdk.HttpHeader) map[string]string {
		m := map[string]string{}
		for _, h := range hs {
			m[h.Name] = h.Value
		}
		return m
	}
	switch {
	case s.Stdio != nil:
		c := mcp.ServerConfig{Name: s.Stdio.Name, Command: s.Stdio.Command, Args: s.Stdio.Args, Env: map[string]string{}}
		for _, e := range s.Stdio.Env {
			c.Env[e.Name] = e.Value
		}
		return c, true
	case s.Http != nil:
		return mcp.ServerConfig{Name: s.Http.Name, Type: mcp.TypeHTTP, URL: s.Http.Url, Headers: headers(s.Http.Headers)}, true
	case s.Sse != nil:
		return mcp.ServerConfig{Name: s.Sse.Name, Type: mcp.TypeSSE, URL: s.Sse.Url, Headers: headers(s.Sse.Headers)}, true
	}
	return mcp.ServerConfig{}, false
}

// updateMCP starts the union of configured servers in the background; a
// prompt waits (bounded) for it.
func (w *workspaceEngines) updateMCP(ctx context.Context) {
	byName := map[string]mcp.ServerConfig{}
	for _, c := range w.setup.MCPServers {
		byName[c.Name] = c
	}
	w.mu.Lock()
	for _, cfgs := range w.sessionMCP {
		for _, c := range cfgs {
			byName[c.Name] = c
		}
	}
	ready := make(chan struct{})
	w.mcpReady = ready
	w.mu.Unlock()
	all := make([]mcp.ServerConfig, 0, len(byName))
	for _, c := range byName {
		all = append(all, c)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	go func() {
		defer close(ready)
		w.bridge.Update(ctx, all)
	}()
}

// mcpStartWait bounds how long a prompt waits for MCP servers still starting.
const mcpStartWait = 20 * time.Second

func (w *workspaceEngines) waitForMCP(ctx context.Context) {
	w.mu.Lock()
	ready := w.mcpReady
	w.mu.Unlock()
	if ready == nil {
		return
	}
	select {
	case <-ready:
	case <-time.After(mcpStartWait):
		slog.Warn("MCP servers are still starting; asking without their tools")
	case <-ctx.Done():
	}
}

func (w *workspaceEngines) interactive() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.setup.Interactive
}

func (w *workspaceEngines) close() {
	w.engines.Close("the ACP connection ended")
}

// setSandboxMode switches sandbox.mode (auto, required, off) for the
// workspace's commands.
func (w *workspaceEngines) setSandboxMode(mode string) error {
	switch mode {
	case tools.SandboxAuto, tools.SandboxRequired, tools.SandboxOff:
	default:
		return fmt.Errorf("unknown sandbox mode %q: use auto, required or off", mode)
	}
	w.mu.Lock()
	w.setup.Sandbox.Mode = mode
	settings := w.setup.Sandbox
	w.mu.Unlock()
	w.sandbox.Configure(settings, w.stateDir)
	w.reportSandbox()
	return nil
}

func (w *workspaceEngines) sandboxMode() string {
	_, mode := w.sandbox.Status()
	return mode
}

// reportSandbox logs how commands are confined.
func (w *workspaceEngines) reportSandbox() {
	st, mode := w.sandbox.Status()
	switch {
	case mode == tools.SandboxOff:
		slog.Warn("commands are not sandboxed (sandbox.mode is off): every command that is not read-only asks first")
	case !st.Available():
		slog.Warn(st.Describe() + "; every command that is not read-only asks first")
	case !st.Isolated() || !st.Limited():
		slog.Warn(st.Describe())
	default:
		slog.Info(st.Describe())
	}
}
