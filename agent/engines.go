package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/tools/mcp"
	"github.com/cairn-dev/cairn/trace"
	"github.com/cairn-dev/cairn/workspace"
)

// EngineOptions say what OpenEngines assembles for one workspace.
type EngineOptions struct {
	WS       *workspace.Workspace
	StateDir string
	// Version is Cairn's, for traces and the MCP handshake.
	Version string
	// Asker asks the user about calls the policy says to ask about.
	Asker tools.Asker
	// Getenv reads the environment (nil: os.Getenv); Environ is the
	// environment whose secret-looking values are redacted and MCP servers
	// start with (nil: os.Environ()).
	Getenv  func(string) string
	Environ []string
	// OTLPEndpoint is the trace.otlpEndpoint setting.
	OTLPEndpoint string
	// NewID makes run, edit and checkpoint ids (nil: checkpoint.NewID).
	NewID       func(prefix string) string
	Diagnostics tools.DiagnosticsSource
	// IndexProgress, when set, hears how indexing advances.
	IndexProgress func(codeindex.Progress)
	// Log reports what happens while assembling and running the engines
	// (traces off, no index, MCP servers starting); OnMCPEvent is an MCP
	// server's problem the user should see. Both default to slog.
	Log        func(level slog.Level, msg string)
	OnMCPEvent func(msg string)
	// FaultPoint is the crash tests' hook (Deps.FaultPoint).
	FaultPoint func(point string)
}

// Engines are the parts one workspace's runs use, assembled the same way
// for every front end (`cairn serve`, `cairn acp`): checkpoints, the
// redactor, the audit log, the sandboxed built-in tools, the approval
// gate, the tracer, the MCP bridge, the code index and the run manager.
// The gate starts interactive with the default policy, the sandbox in mode
// auto and the manager without a provider: the front end applies its
// settings after.
type Engines struct {
	Manager  *Manager
	Registry *tools.Registry
	Gate     *tools.Gate
	Sandbox  *tools.CommandSandbox
	Tracer   *trace.Recorder // nil when traces are off
	MCP      *mcp.Manager
	Index    *codeindex.Roots // one index per workspace folder; nil when the first could not open
	ws       *workspace.Workspace
}

// OpenEngines assembles the engines of o.WS. Indexing starts in the
// background under ctx; nothing waits for it.
func OpenEngines(ctx context.Context, o EngineOptions) (*Engines, error) {
	if o.Log == nil {
		o.Log = func(level slog.Level, msg string) { slog.Log(context.Background(), level, msg) }
	}
	if o.OnMCPEvent == nil {
		o.OnMCPEvent = func(msg string) { o.Log(slog.LevelWarn, msg) }
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	root := o.WS.Root()
	cps, err := checkpoint.Open(o.StateDir)
	if err != nil {
		return nil, err
	}
	cps.NewID = o.NewID
	// Secrets: the standard rules, the values of secret-looking environment
	// variables, and the values in the workspace's .env files.
	red, err := redact.New(redact.Options{Environ: o.Environ})
	if err != nil {
		return nil, fmt.Errorf("loading the secret-detection rules: %w", err)
	}
	if n, err := red.LoadDotEnv(root); err != nil {
		slog.Warn("reading .env files for redaction", "err", err)
	} else if n > 0 {
		slog.Info("secrets from .env files will be redacted", "values", n)
	}
	audit, err := tools.OpenAuditLog(filepath.Join(o.StateDir, "audit.jsonl"), red.String)
	if err != nil {
		return nil, err
	}
	sb := tools.NewCommandSandbox(root)
	reg := tools.NewBuiltinRegistryWith(root, sb)
	gate := tools.NewGate(tools.DefaultPolicy(), true, o.Asker, audit)
	rec, err := trace.NewRecorder(trace.Options{
		StateDir: o.StateDir, Redact: red.String, Getenv: o.Getenv, ServiceVersion: o.Version,
		OTLPEndpoint: o.OTLPEndpoint,
		OnError:      func(err error) { slog.Warn("trace", "err", err) },
	})
	if err != nil {
		o.Log(slog.LevelWarn, fmt.Sprintf("traces are off: %v", err))
		rec = nil
	}
	bridge := mcp.NewManager(mcp.Options{
		Registry: reg, Dir: root, ClientVersion: o.Version, Environ: o.Environ,
		OnEvent: func(server, message string) { o.OnMCPEvent(message) },
		Logf:    func(format string, args ...any) { o.Log(slog.LevelInfo, fmt.Sprintf(format, args...)) },
	})
	// The repo map and the search index build in the background; questions
	// use what is indexed so far.
	ixOpts := codeindex.Options{StateDir: o.StateDir, Progress: o.IndexProgress,
		ExcludePath: func(rel string) bool { return redact.IsSecretPath(red, rel) },
		Redact:      func(text []byte) []byte { return []byte(red.KeepLines(string(text))) }}
	local, err := codeindex.Open(o.WS, ixOpts)
	if err != nil {
		o.Log(slog.LevelWarn, err.Error())
	}
	var ix *codeindex.Roots
	if local != nil {
		ix = codeindex.NewRoots(o.WS, local, ixOpts)
	}
	deps := Deps{WS: o.WS, Registry: reg, Gate: gate, Checkpoints: cps, Diagnostics: o.Diagnostics, Redactor: red, Tracer: rec,
		FaultPoint: o.FaultPoint}
	if ix != nil {
		deps.Index = ix
		ix.Start(ctx)
	}
	mgr := NewManager(Config{StateDir: o.StateDir, NewID: o.NewID}, deps)
	e := &Engines{Manager: mgr, Registry: reg, Gate: gate, Sandbox: sb, Tracer: rec, MCP: bridge, Index: ix, ws: o.WS}
	for _, f := range o.WS.Folders() { // folders added before the engines
		if err := e.indexFolder(f); err != nil {
			o.Log(slog.LevelWarn, err.Error())
		}
	}
	return e, nil
}

// AddFolder adds dir as a workspace folder named name (empty: its base
// name): its paths resolve for every tool, commands may write it under
// workspace-write, and it is indexed in the background. The returned
// folder says the name its paths begin with.
func (e *Engines) AddFolder(dir, name string) (workspace.Folder, error) {
	f, err := e.ws.AddFolder(dir, name)
	if err != nil {
		return f, err
	}
	return f, e.indexFolder(f)
}

// indexFolder opens the index of f and lets commands write it. An index
// that cannot open leaves the folder reachable by path, unsearched: the
// error says why.
func (e *Engines) indexFolder(f workspace.Folder) error {
	e.Sandbox.SetFolders(e.folderRoots())
	if e.Index == nil {
		return nil
	}
	return e.Index.Add(f)
}

// RemoveFolder removes the workspace folder at dir: its paths stop
// resolving and its files leave the index.
func (e *Engines) RemoveFolder(dir string) (workspace.Folder, bool) {
	f, ok := e.ws.RemoveFolder(dir)
	if !ok {
		return f, false
	}
	e.Sandbox.SetFolders(e.folderRoots())
	if e.Index != nil {
		e.Index.Remove(f.Root)
	}
	return f, true
}

func (e *Engines) folderRoots() []string {
	var roots []string
	for _, f := range e.ws.Folders() {
		roots = append(roots, f.Root)
	}
	return roots
}

// Close cancels the runs, stops the MCP servers' process groups, closes
// the index and flushes the trace exporter.
func (e *Engines) Close(cause string) {
	e.Manager.CancelAll(errors.New(cause))
	_ = e.MCP.Close()
	if e.Index != nil {
		_ = e.Index.Close()
	}
	if e.Tracer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = e.Tracer.Close(ctx)
		cancel()
	}
}
