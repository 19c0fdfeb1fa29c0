package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/tools/mcp"
	"github.com/cairn-dev/cairn/workspace"
)

// initializeRoot is the workspace root an initialize request names: the
// first of its workspaceFolders (the others are added by addFolders), else the
// rootUri, else the rootPath that LSP 3.0 clients still send. The older
// fields are deprecated in the protocol, not in the clients that send them
// (Emacs' eglot and Neovim's older LSP client send rootUri alone).
func initializeRoot(params *lsp.InitializeParams) string {
	if folders, ok := params.WorkspaceFolders.Get(); ok && len(folders) > 0 {
		return uriToPath(string(folders[0].URI))
	}
	//lint:ignore SA1019 the fallback for clients that send no workspaceFolders
	if u := params.RootURI; u != nil && *u != "" {
		return uriToPath(string(*u))
	}
	//lint:ignore SA1019 the fallback for clients older than rootUri
	if p, ok := params.RootPath.Get(); ok && p != "" {
		return p
	}
	return ""
}

func (s *Server) Initialize(ctx context.Context, params *lsp.InitializeParams) (*lsp.InitializeResult, error) {
	s.mu.Lock()
	if s.initialized {
		s.mu.Unlock()
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "initialize was already received")
	}
	s.mu.Unlock()

	root := initializeRoot(params)
	if root == "" {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "initialize: no workspaceFolders or rootUri: Cairn needs a workspace folder")
	}
	ws, err := workspace.Open(root)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidParams, "initialize: %v", err)
	}
	stateDir, err := StateDir(ws.Root(), s.opts.Getenv)
	if err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "initialize: %v", err)
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "initialize: creating the state directory %s: %v", stateDir, err)
	}
	ws.SetStateDir(stateDir)

	caps := clientCaps{}
	if w := params.Capabilities.Workspace; w != nil && w.WorkspaceEdit != nil {
		we := w.WorkspaceEdit
		caps.documentChanges = we.DocumentChanges != nil && *we.DocumentChanges
		caps.resourceOps = slices.Contains(we.ResourceOperations, lsp.ResourceOperationKindCreate) &&
			slices.Contains(we.ResourceOperations, lsp.ResourceOperationKindDelete)
	}
	if w := params.Capabilities.Window; w != nil {
		caps.progress = w.WorkDoneProgress != nil && *w.WorkDoneProgress
		caps.showMessageReq = w.ShowMessage != nil
		caps.showDocument = w.ShowDocument != nil && w.ShowDocument.Support
	}
	caps.cairnClient = declaresRunEvents(params.Capabilities.Experimental)
	caps.approvalDetail = declaresCairn(params.Capabilities.Experimental, protocol.ExperimentalApprovalDetail)

	settings, warnings := parseSettings(params.InitializationOptions)
	s.mu.Lock()
	s.ws, s.stateDir, s.caps = ws, stateDir, caps
	s.launchSettings = settings
	s.initialized = true
	s.mu.Unlock()
	if err := s.setupEngines(settings); err != nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.InternalError, "initialize: %v", err)
	}
	s.applySettings(settings, warnings)
	s.addFolders(otherFolders(params))
	slog.Info("initialized", "root", ws.Root(), "state", stateDir)

	change := lsp.TextDocumentSyncKindIncremental
	openClose := true
	return &lsp.InitializeResult{
		Capabilities: lsp.ServerCapabilities{
			TextDocumentSync: &lsp.TextDocumentSyncOptions{
				OpenClose: &openClose,
				Change:    &change,
				Save:      &lsp.SaveOptions{IncludeText: &openClose},
			},
			CodeActionProvider:     lsp.Boolean(true),
			ExecuteCommandProvider: lsp.ExecuteCommandOptions{Commands: append([]string(nil), protocol.Commands...)},
			Workspace:              workspaceFoldersCapability(),
		},
		ServerInfo: lsp.ServerInfo{Name: "cairn", Version: lsp.NewOptional(Version)},
	}, nil
}

// setupEngines creates the tool registry, the approval gate, the checkpoint
// store, the trace recorder, the MCP bridge and the run manager once the
// workspace is known.
func (s *Server) setupEngines(initial Settings) error {
	initial, _ = initial.withEnv(s.opts.Getenv)
	// The first build walks only the index scope (its problems are
	// reported by applySettings).
	_, _ = s.applyScope(initial)
	progress := newIndexProgress(s)
	e, err := agent.OpenEngines(s.ctx, agent.EngineOptions{
		WS: s.ws, StateDir: s.stateDir, Version: Version, Asker: s, Getenv: s.opts.Getenv,
		OTLPEndpoint: initial.Trace.OTLPEndpoint, NewID: s.opts.NewID, Diagnostics: s.diags,
		IndexProgress: progress.report, FaultPoint: s.opts.FaultPoint,
		Log: func(level slog.Level, msg string) { s.logToClient(level, msg) },
		OnMCPEvent: func(msg string) {
			s.logToClient(slog.LevelWarn, msg)
			s.showMessage(lsp.MessageTypeWarning, "Cairn: "+msg)
		},
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.registry, s.gate, s.tracer, s.mcp, s.index, s.sandbox = e.Registry, e.Gate, e.Tracer, e.MCP, e.Index, e.Sandbox
	s.mgr, s.engines = e.Manager, e
	s.mu.Unlock()
	e.Manager.SetEndedRunEvents(s.notifyRunEvent)
	e.Manager.SetIndexWaitObserver(func(w agent.IndexWait) {
		if p, ok := s.runProgress.Load(w.RunID); ok {
			p.(*runProgress).indexWait(w)
		}
	})
	return nil
}

// applySettings validates settings, reports problems to the user, and
// reconfigures the run manager. The server keeps serving whatever the
// settings: a missing provider only fails the runs that need it.
func (s *Server) applySettings(settings Settings, warnings []string) {
	settings, envWarnings := settings.withEnv(s.opts.Getenv)
	warnings = append(warnings, envWarnings...)
	provider, err := s.newProvider(settings)
	if err != nil {
		warnings = append(warnings, err.Error())
	}
	s.mu.Lock()
	s.settings = settings
	mgr, gate, sb := s.mgr, s.gate, s.sandbox
	s.mu.Unlock()
	warnings = append(warnings, s.applyIndexSettings(settings)...)
	if sb != nil {
		warnings = append(warnings, sb.Configure(settings.Sandbox, s.stateDir)...)
		s.reportSandbox(sb)
	}
	if gate != nil {
		policy, problems := s.loadPolicy(settings)
		warnings = append(warnings, problems...)
		gate.SetPolicy(policy, settings.Approval.Mode != "policy")
	}
	if mgr != nil {
		cfg := settings.RunConfig(mgr.Config(), provider)
		cfg.ProviderErr = err
		mgr.SetConfig(cfg)
	}
	s.mu.Lock()
	bridge := s.mcp
	s.mu.Unlock()
	if bridge != nil {
		raw, _ := json.Marshal(settings.MCPServers)
		if cfgs, err := mcp.ParseServers(raw); err != nil {
			warnings = append(warnings, fmt.Sprintf("mcpServers: %v", err))
		} else {
			// Servers start in the background; problems are reported as they
			// happen. A question asked meanwhile waits (bounded) for them.
			ready := make(chan struct{})
			s.mu.Lock()
			s.mcpReady = ready
			s.mu.Unlock()
			go func() {
				defer close(ready)
				bridge.Update(s.ctx, cfgs)
			}()
		}
	}
	for _, w := range warnings {
		s.logToClient(slog.LevelWarn, "configuration: "+w)
		s.showMessage(lsp.MessageTypeWarning, "Cairn configuration: "+w)
	}
}

// reportSandbox logs how commands are confined and, when they cannot be,
// tells the user once (again only if that changes).
func (s *Server) reportSandbox(sb *tools.CommandSandbox) {
	st, mode := sb.Status()
	msg := st.Describe()
	switch {
	case mode == tools.SandboxOff:
		msg = "commands are not sandboxed (sandbox.mode is off): every command that is not read-only asks first"
	case !st.Available() && mode == tools.SandboxRequired:
		msg += "; sandbox.mode is required, so run_command will refuse every command"
	case !st.Available():
		msg += "; every command that is not read-only asks first"
	}
	s.mu.Lock()
	said := s.sandboxSaid == msg
	s.sandboxSaid = msg
	s.mu.Unlock()
	if said {
		return
	}
	// A sandbox without namespaces or limits is worth a warning: read
	// commands ask there, and Describe names the missing layers.
	if st.Isolated() && st.Limited() && mode != tools.SandboxOff {
		s.logToClient(slog.LevelInfo, "Cairn: "+msg)
		return
	}
	s.logToClient(slog.LevelWarn, "Cairn: "+msg)
	s.showMessage(lsp.MessageTypeWarning, "Cairn: "+msg)
}

// loadPolicy builds the permission policy: the defaults with the user's
// settings on top (which may loosen them), and the workspace's
// .cairn/policy.json as a layer of its own, which can only make decisions
// stricter (it comes with the repository).
func (s *Server) loadPolicy(st Settings) (tools.Policy, []string) {
	return LoadPolicy(s.ws.Root(), st)
}

// LoadPolicy builds the permission policy of the workspace at root (see
// loadPolicy); `cairn acp` uses it too. The problems include every user
// rule that lifts the destructive deny, so that the user is told.
func LoadPolicy(root string, st Settings) (tools.Policy, []string) {
	policy := tools.DefaultPolicy()
	var problems []string
	if st.Policy != nil {
		var p []string
		policy, p = policy.Overlay(*st.Policy, false)
		problems = append(problems, p...)
		for _, l := range policy.LiftsDestructive(*st.Policy) {
			problems = append(problems, "settings "+l)
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, ".cairn", "policy.json")); err == nil {
		var file tools.Policy
		if err := json.Unmarshal(b, &file); err != nil {
			problems = append(problems, fmt.Sprintf(".cairn/policy.json is not valid (%v); none of its rules apply", err))
		} else {
			var p []string
			policy, p = policy.WithWorkspace(file)
			problems = append(problems, p...)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		problems = append(problems, fmt.Sprintf("reading .cairn/policy.json: %v", err))
	}
	return policy, problems
}

// Initialized settles what a previous server left behind: checkpoints of an
// accept that was cut short, and runs that were interrupted. Each
// interrupted run is announced with a cairn/runEvent of kind interrupted and
// one window/showMessage; cairn.resume continues it.
func (s *Server) Initialized(ctx context.Context, params *lsp.InitializedParams) error {
	s.initOnce.Do(func() { close(s.gotInitialized) })
	mgr, err := s.ready()
	if err != nil {
		return nil
	}
	for _, note := range mgr.RecoverCheckpoints() {
		s.logToClient(slog.LevelWarn, note)
	}
	runs, err := mgr.FindInterrupted()
	if err != nil {
		s.logToClient(slog.LevelWarn, "looking for interrupted runs", "err", err)
		return nil
	}
	// Announce the recent ones (at most 10, from the last day); older runs
	// stay resumable with cairn.resume, they just do not greet every start.
	const announce = 10
	var recent []agent.InterruptedRun
	for _, ir := range runs {
		if time.Since(ir.LastActive) < 24*time.Hour && len(recent) < announce {
			recent = append(recent, ir)
		}
	}
	runs = recent
	if len(runs) == 0 {
		return nil
	}
	// Sent off the read loop: this handler runs in wire order, and a client
	// that writes while it does not read (a synchronous pipe) would otherwise
	// deadlock with it.
	go func() {
		for _, ir := range runs {
			s.announceMu.Lock()
			if !s.resumed[ir.ID] {
				s.notifyRunEvent(mgr.MarkInterrupted(ir))
			}
			s.announceMu.Unlock()
		}
		msg := fmt.Sprintf("Cairn: %d run(s) were interrupted when the server stopped, the latest: %q. Resume with cairn.resume {runId: %q}.",
			len(runs), truncate(runs[0].Question, 80), runs[0].ID)
		s.showMessage(lsp.MessageTypeInfo, msg)
	}()
	return nil
}

func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.initialized {
		s.mu.Unlock()
		return jsonrpc2.Errorf(jsonrpc2.Code(-32002), "shutdown before initialize: the server is not initialized") // ServerNotInitialized
	}
	s.shutdown = true
	mgr := s.mgr
	s.mu.Unlock()
	if mgr != nil {
		mgr.CancelAll(errors.New("the editor is shutting down"))
	}
	return nil
}

func (s *Server) Exit(ctx context.Context) error {
	select {
	case <-s.exited:
	default:
		close(s.exited)
	}
	return nil
}

func (s *Server) DidChangeConfiguration(ctx context.Context, params *lsp.DidChangeConfigurationParams) error {
	s.mu.Lock()
	launch := s.launchSettings
	s.mu.Unlock()
	settings, warnings := parseSettingsOnto(params.Settings, launch)
	s.applySettings(s.holdSensitive(settings), warnings)
	return nil
}

// declaresRunEvents reads capabilities.experimental.cairn.runEvents.
func declaresRunEvents(experimental lsp.LSPAny) bool {
	return declaresCairn(experimental, protocol.ExperimentalRunEvents)
}

// declaresCairn reads the boolean capabilities.experimental.cairn.<key>.
func declaresCairn(experimental lsp.LSPAny, key string) bool {
	raw, err := json.Marshal(experimental)
	if err != nil {
		return false
	}
	var exp map[string]map[string]any
	if json.Unmarshal(raw, &exp) != nil {
		return false
	}
	v, _ := exp[protocol.ExperimentalKey][key].(bool)
	return v
}

// initializedWait bounds how long a request read after initialize waits
// for the initialized notification of a client that never sends it.
var initializedWait = 30 * time.Second

// awaitInitialized holds a request read after the initialize request but
// before the initialized notification until that notification (LSP: the
// server does not process requests before initialized; a client that
// races, such as an editor command issued right after the server starts,
// is answered then instead of refused). A request read before any
// initialize goes on at once: ready refuses it (ServerNotInitialized).
func (s *Server) awaitInitialized(ctx context.Context) {
	if !s.initReceived.Load() {
		return
	}
	t := time.NewTimer(initializedWait)
	defer t.Stop()
	select {
	case <-s.gotInitialized:
	case <-ctx.Done():
	case <-s.ctx.Done():
	case <-t.C:
	}
}

// ready returns the manager, or an error saying initialize has not happened.
func (s *Server) ready() (*agent.Manager, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.initialized || s.mgr == nil {
		return nil, jsonrpc2.Errorf(jsonrpc2.Code(-32002), "the server is not initialized")
	}
	if s.shutdown {
		return nil, jsonrpc2.Errorf(jsonrpc2.InvalidRequest, "the server is shutting down")
	}
	return s.mgr, nil
}

// uriToPath converts a file:// URI to a path; other strings pass through.
func uriToPath(u string) string {
	if p, err := workspace.URIPath(u); err == nil {
		return p
	}
	return u
}

// pathFromURI resolves a document URI to an absolute path inside the workspace.
func (s *Server) pathFromURI(u string) (string, error) {
	p, err := workspace.URIPath(u)
	if err != nil {
		return "", err
	}
	return s.ws.Resolve(p)
}
