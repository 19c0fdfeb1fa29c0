// Package server is Cairn's language server: LSP lifecycle, text sync,
// commands, code actions and the callbacks to the client. One file per
// method group (lifecycle.go, text.go, commands.go, codeaction.go,
// diagnostics.go, client.go).
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/tools/mcp"
	"github.com/cairn-dev/cairn/trace"
	"github.com/cairn-dev/cairn/workspace"
)

// Version is the server's version, set by cmd/cairn.
var Version = "dev"

// Options configure a server. The zero value serves with the environment
// of the process.
type Options struct {
	// Getenv reads the environment (os.Getenv when nil); tests inject their own.
	Getenv func(string) string
	// Provider, when set, overrides the configured provider (tests, evals).
	Provider model.Provider
	// NewID, when set, makes run, edit and checkpoint ids (evals use a
	// deterministic counter so token counts repeat exactly).
	NewID func(prefix string) string
	// ForwardLogs sends the process's log records (slog.Default) to the
	// client as window/logMessage too; for `cairn serve`, one client per
	// process.
	ForwardLogs bool
	// ApprovalTimeout bounds the wait for an approval answer (10 minutes
	// when 0); ClientTimeout every other request to the client (60 s).
	ApprovalTimeout, ClientTimeout time.Duration
	// FaultPoint is the crash tests' hook (agent.Deps.FaultPoint); only
	// tests set it.
	FaultPoint func(point string)
}

// Server is one LSP session.
type Server struct {
	lsp.UnimplementedServer

	opts   Options
	conn   jsonrpc2.Conn
	stream *stream

	// ctx lives as long as the connection: runs hang off it, so a client
	// that disappears cancels them.
	ctx    context.Context
	cancel context.CancelCauseFunc

	// initReceived is set when the initialize request is read (before its
	// handler runs); gotInitialized is closed by the initialized
	// notification. Requests read in between wait for it (lifecycle.go).
	initReceived   atomic.Bool
	gotInitialized chan struct{}
	initOnce       sync.Once

	// announceMu orders the announcement of interrupted runs (sent after
	// initialized, off the read loop) with cairn.resume: a run resumed
	// before its announcement went out is not announced, so a client never
	// sees `interrupted` after the resumed run's own events.
	announceMu sync.Mutex
	resumed    map[string]bool

	mu          sync.Mutex
	initialized bool
	shutdown    bool
	exited      chan struct{}
	settings    Settings
	stateDir    string
	ws          *workspace.Workspace
	mgr         *agent.Manager
	registry    *tools.Registry
	gate        *tools.Gate
	sandbox     *tools.CommandSandbox
	sandboxSaid string // the sandbox status last shown to the user
	caps        clientCaps
	// launchSettings are the initializationOptions: the base that each
	// didChangeConfiguration's settings are laid over.
	launchSettings Settings
	diags          *diagnosticsStore
	askRequests    askRequestMap
	runProgress    sync.Map // run id → *runProgress, while the run goes on
	tracer         *trace.Recorder
	mcp            *mcp.Manager
	mcpReady       chan struct{} // closed when the latest MCP configuration has started
	index          *codeindex.Roots
	engines        *agent.Engines // adds and removes workspace folders (folders.go)
	guard          settingsGuard  // process-starting settings held for the user's word (sensitive.go)
}

type clientCaps struct {
	documentChanges bool
	resourceOps     bool
	progress        bool
	showMessageReq  bool
	// cairnClient: capabilities.experimental.cairn.runEvents is true; the
	// client shows cairn/runEvent itself (plain.go serves the others).
	cairnClient bool
	// approvalDetail: capabilities.experimental.cairn.approvalDetail is
	// true; approvals carry their structured detail under "cairn".
	approvalDetail bool
	showDocument   bool
}

// Serve runs a server on in/out until the client sends exit or goes away.
// It returns nil after a clean shutdown+exit and an error otherwise.
func Serve(ctx context.Context, in io.Reader, out io.Writer, opts Options) error {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	var closer io.Closer
	if c, ok := in.(io.Closer); ok {
		closer = c
	}
	s := &Server{opts: opts, exited: make(chan struct{}), diags: newDiagnosticsStore(), gotInitialized: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	defer s.cancel(errors.New("server stopped"))
	s.stream = newStream(in, out, closer)
	s.conn = jsonrpc2.NewConn(s.stream, jsonrpc2.WithCodec(codec{}))
	if opts.ForwardLogs {
		prev := slog.Default()
		slog.SetDefault(slog.New(&clientLogHandler{inner: prev.Handler(), s: s}))
		defer slog.SetDefault(prev)
	}
	s.conn.Go(lsp.WithClient(s.ctx, lsp.ClientDispatcher(s.conn)), s.handler())

	select {
	case <-s.exited:
	case <-s.conn.Done():
		slog.Info("client connection closed")
	case <-ctx.Done():
	}
	s.cancel(errors.New("the client went away"))
	s.mu.Lock()
	mgr, bridge, rec, ix := s.mgr, s.mcp, s.tracer, s.index
	s.mu.Unlock()
	if ix != nil {
		defer ix.Close()
	}
	if mgr != nil {
		mgr.CancelAll(errors.New("the server is stopping"))
	}
	if bridge != nil {
		_ = bridge.Close() // stops the MCP servers' process groups
	}
	if rec != nil {
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = rec.Close(cctx) // flushes the OTLP exporter
		ccancel()
	}
	s.mu.Lock()
	clean := s.shutdown
	s.mu.Unlock()
	select {
	case <-s.exited:
		if !clean {
			return errors.New("exit without shutdown")
		}
		return nil
	default:
	}
	if err := s.conn.Err(); err != nil {
		return fmt.Errorf("connection failed: %w", err)
	}
	if !clean {
		return errors.New("the client closed the connection without shutdown")
	}
	return nil
}

// handler keeps notifications in wire order (didOpen, didChange... must
// apply in sequence) and releases calls to run concurrently, so a long
// command or a callback to the client never blocks reading.
func (s *Server) handler() jsonrpc2.Handler {
	inner := lsp.ServerHandler(s, jsonrpc2.MethodNotFoundHandler)
	ordered := func(ctx context.Context, req *jsonrpc2.Request) (res any, err error) {
		defer func() {
			if p := recover(); p != nil {
				slog.Error("handler panicked", "method", req.Method(), "panic", p)
				err = jsonrpc2.Errorf(jsonrpc2.InternalError, "internal error handling %s: %v", req.Method(), p)
			}
		}()
		if req.IsCall() {
			ctx = context.WithValue(ctx, requestIDKey{}, req.ID())
			jsonrpc2.Async(ctx)
			return inner(ctx, req)
		}

		// A notification's error would end the connection: log it instead.
		if _, err := inner(ctx, req); err != nil {
			slog.Warn("notification failed", "method", req.Method(), "err", err)
		}
		return nil, nil
	}
	cancelling := lsp.CancelHandler(ordered)
	return func(ctx context.Context, req *jsonrpc2.Request) (any, error) {
		if req.IsCall() {
			if req.Method() == lsp.MethodInitialize {
				s.initReceived.Store(true) // in wire order: later requests wait for initialized
			}
			return cancelling(ctx, req)
		}
		if req.Method() == lsp.MethodCancelRequest {
			s.cancelAskRun(req.Params())
		}
		if _, err := cancelling(ctx, req); err != nil {
			slog.Warn("notification failed", "method", req.Method(), "err", err)
		}
		return nil, nil
	}
}

// cancelAskRun cancels the run started by a cairn.ask request that the
// client cancels with $/cancelRequest (the request itself was answered at
// once, so only the run is left to stop).
func (s *Server) cancelAskRun(params []byte) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	var id jsonrpc2.ID
	var n int64
	var str string
	switch {
	case json.Unmarshal(p.ID, &n) == nil:
		id = jsonrpc2.NewNumberID(n)
	case json.Unmarshal(p.ID, &str) == nil:
		id = jsonrpc2.NewStringID(str)
	default:
		return
	}
	runID, ok := s.askRequests.Load(id)
	if !ok || s.mgr == nil {
		return
	}
	if run, ok := s.mgr.Run(runID.(string)); ok {
		run.Cancel()
	}
}

// logToClient sends a log line to the client's log as well as stderr.
func (s *Server) logToClient(level slog.Level, msg string, args ...any) {
	slog.Log(context.Background(), level, msg, args...)
	if s.opts.ForwardLogs {
		return // the log handler already sent it
	}
	t := lsp.MessageTypeInfo
	switch {
	case level >= slog.LevelError:
		t = lsp.MessageTypeError
	case level >= slog.LevelWarn:
		t = lsp.MessageTypeWarning
	}
	text := msg
	for i := 0; i+1 < len(args); i += 2 {
		text += fmt.Sprintf(" %v=%v", args[i], args[i+1])
	}
	_ = s.conn.Notify(s.ctx, "window/logMessage", &lsp.LogMessageParams{Type: t, Message: text})
}

// showMessage shows a message in the editor.
func (s *Server) showMessage(t lsp.MessageType, msg string) {
	_ = s.conn.Notify(s.ctx, "window/showMessage", &lsp.ShowMessageParams{Type: t, Message: msg})
}
