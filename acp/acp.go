// Package acp is Cairn as an Agent Client Protocol (v1) agent: the adapter
// behind `cairn acp`, for Zed, JetBrains, CodeCompanion.nvim, avante.nvim,
// agent-shell and other ACP clients. It is as thin as server/: a session is
// a Cairn thread, a prompt is a run on the same agent.Manager that `cairn
// serve` uses (so traces, audit, redaction and evals apply unchanged), run
// events become session/update notifications, approvals become
// session/request_permission, and accepted edits are written through the
// client's fs/write_text_file. One file per method group: acp.go
// (initialize, connection), sessions.go (new, load, list, resume, close,
// modes), prompt.go (prompt blocks, turns, cancel), updates.go (run events
// → updates), review.go (edits, permissions, the fs bridge), buffers.go
// (every read of a turn sees the client's buffers), commands.go
// (slash commands), workspaces.go (the engines of each workspace),
// replay.go (session/load), framing.go (malformed lines answered, not fatal).
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/tools/mcp"
)

// Setup is what a workspace's settings say, read by the caller (cmd/cairn
// reads them exactly as `cairn serve` does, from the environment and an
// optional settings file).
type Setup struct {
	// Run is the run configuration: provider, model, limits.
	Run agent.Config
	// Interactive is approval mode "ask" (ask the user through
	// session/request_permission); false is mode "policy".
	Interactive bool
	Policy      tools.Policy
	// Sandbox confines run_command, as the `sandbox` settings say.
	Sandbox tools.SandboxSettings
	// MCPServers come from the settings; a session's own mcpServers are
	// added to them.
	MCPServers   []mcp.ServerConfig
	OTLPEndpoint string
	// Warnings are configuration problems to show the user.
	Warnings []string
}

// Options configure the adapter.
type Options struct {
	Version string
	// StateDir returns the state directory of the workspace at root.
	StateDir func(root string) (string, error)
	// Configure reads the settings of the workspace at root.
	Configure func(root, stateDir string) Setup
	// Environ is the environment MCP servers start with (os.Environ when nil).
	Environ []string
	// RootsFile lists the workspaces sessions were opened in, so
	// session/list without a cwd finds saved sessions (saved.go); "" lists
	// the open workspaces only.
	RootsFile string
}

// Serve speaks ACP on in/out until the client closes the connection or ctx
// ends. Nothing but protocol messages is written to out.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.StateDir == nil || opts.Configure == nil {
		return errors.New("acp: Options.StateDir and Options.Configure are required")
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(errors.New("the ACP connection ended"))
	a := newAdapter(ctx, opts)
	w := &lockedWriter{w: out}
	a.gate = newNotifyGate(ctx.Done())
	// The connection reads nothing before a.conn is set: its handlers use it.
	ready := make(chan struct{})
	conn := sdk.NewAgentSideConnection(a, &capsWriter{w: w}, &afterReady{r: a.interceptLines(guardInput(in, w, a.gate), w), ready: ready})
	conn.SetLogger(slog.Default())
	a.conn = conn
	close(ready)
	select {
	case <-conn.Done():
		slog.Info("the ACP client closed the connection")
	case <-ctx.Done():
	}
	a.close()
	return nil
}

// afterReady reads r once ready is closed.
type afterReady struct {
	r     io.Reader
	ready chan struct{}
}

func (a *afterReady) Read(p []byte) (int, error) {
	<-a.ready
	return a.r.Read(p)
}

// adapter implements sdk.Agent (and sdk.AgentLoader) over Cairn's engines.
type adapter struct {
	ctx  context.Context
	opts Options
	conn *sdk.AgentSideConnection
	gate *notifyGate // flow control of the client's notifications

	mu         sync.Mutex
	caps       sdk.ClientCapabilities
	workspaces map[string]*workspaceEngines // by root
	sessions   map[sdk.SessionId]*session
	runs       map[string]*session // run id → its session, for approvals
	modelLists sync.Map            // *workspaceEngines → *modelList (config.go)
}

var (
	_ sdk.Agent       = (*adapter)(nil)
	_ sdk.AgentLoader = (*adapter)(nil)
)

func newAdapter(ctx context.Context, opts Options) *adapter {
	return &adapter{ctx: ctx, opts: opts, workspaces: map[string]*workspaceEngines{},
		sessions: map[sdk.SessionId]*session{}, runs: map[string]*session{}}
}

// close cancels every turn and stops every workspace's engines.
func (a *adapter) close() {
	a.mu.Lock()
	wss := make([]*workspaceEngines, 0, len(a.workspaces))
	for _, w := range a.workspaces {
		wss = append(wss, w)
	}
	a.mu.Unlock()
	for _, w := range wss {
		w.close()
	}
}

// Initialize negotiates the protocol version and says what Cairn supports:
// session/load, session/list, session/resume, session/close, embedded
// context in prompts, stdio MCP servers; no authentication.
func (a *adapter) Initialize(ctx context.Context, p sdk.InitializeRequest) (_ sdk.InitializeResponse, err error) {
	defer recoverTo(&err, "Initialize")
	a.mu.Lock()
	a.caps = p.ClientCapabilities
	a.mu.Unlock()
	client := "unknown client"
	if p.ClientInfo != nil {
		client = p.ClientInfo.Name + " " + p.ClientInfo.Version
	}
	slog.Info("ACP client connected", "client", client, "protocolVersion", p.ProtocolVersion,
		"readTextFile", p.ClientCapabilities.Fs.ReadTextFile, "writeTextFile", p.ClientCapabilities.Fs.WriteTextFile)
	title := "Cairn"
	return sdk.InitializeResponse{
		// Version 1 is the only one there is and the one this SDK speaks;
		// a client asking for a later one gets 1 and decides.
		ProtocolVersion: sdk.ProtocolVersionNumber,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true},
			// A session's MCP servers may be remote too (tools/mcp connects
			// with the MCP SDK's streamable HTTP and SSE transports).
			McpCapabilities: sdk.McpCapabilities{Http: true, Sse: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List:   &sdk.SessionListCapabilities{},
				Resume: &sdk.SessionResumeCapabilities{},
				Close:  &sdk.SessionCloseCapabilities{},
				// additionalDirectories on session/new, load and resume (folders.go).
				AdditionalDirectories: &sdk.SessionAdditionalDirectoriesCapabilities{},
			},
		},
		AgentInfo:   &sdk.Implementation{Name: "cairn", Title: &title, Version: a.opts.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate is never needed: Cairn advertises no auth methods (model keys
// come from the environment), so any method a client names is unknown.
func (a *adapter) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (_ sdk.AuthenticateResponse, err error) {
	defer recoverTo(&err, "Authenticate")
	return sdk.AuthenticateResponse{}, invalidParams("unknown authentication method %q: Cairn offers none (model keys come from the environment)", truncateID(string(p.MethodId)))
}

func (a *adapter) clientCaps() sdk.ClientCapabilities {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.caps
}

// send delivers one session/update; a failure means the client is gone,
// which the connection reports on its own.
func (a *adapter) send(id sdk.SessionId, u sdk.SessionUpdate) {
	if err := a.conn.SessionUpdate(a.ctx, sdk.SessionNotification{SessionId: id, Update: u}); err != nil {
		slog.Debug("session/update failed", "session", id, "err", err)
	}
}

// invalidParams is a JSON-RPC InvalidParams error whose message says what is
// wrong (the SDK's constructors put a fixed message first).
func invalidParams(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: -32602, Message: fmt.Sprintf(format, args...)}
}

// invalidRequest is a JSON-RPC InvalidRequest error with its reason.
func invalidRequest(format string, args ...any) *sdk.RequestError {
	return &sdk.RequestError{Code: -32600, Message: fmt.Sprintf(format, args...)}
}

// notice tells the user something beside the answer (a configuration
// problem, an MCP server that cannot be used): logged now, and shown at the
// start of the session's next turn (clients expect messages within turns).
func (s *session) notice(text string) {
	slog.Warn(text, "session", s.id)
	s.mu.Lock()
	s.notices = append(s.notices, text)
	s.mu.Unlock()
}

// flushNotices shows the queued notices as the turn's first message.
func (a *adapter) flushNotices(s *session) {
	s.mu.Lock()
	notices := s.notices
	s.notices = nil
	s.mu.Unlock()
	for _, n := range notices {
		a.send(s.id, sdk.UpdateAgentMessageText("[Cairn] "+n+"\n\n"))
	}
}

// recoverTo turns a panic in a request handler into an internal error
// answer: the SDK runs handlers without a recover, and input must never
// bring the agent down.
func recoverTo(err *error, method string) {
	if p := recover(); p != nil {
		slog.Error("ACP handler panicked", "method", method, "panic", p)
		*err = &sdk.RequestError{Code: -32603, Message: fmt.Sprintf("internal error in %s: %v", method, p)}
	}
}
