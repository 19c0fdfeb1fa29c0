package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/acp"
	"github.com/cairn-dev/cairn/agent"
	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/tools/mcp"
)

func init() {
	register(command{"acp", "run as an Agent Client Protocol (v1) agent on stdin/stdout (Zed, JetBrains, CodeCompanion, avante, agent-shell)", runACP})
}

// runACP serves ACP on stdin/stdout. ACP has no initializationOptions:
// settings come from the environment, as for `cairn serve`, and from an
// optional JSON file holding the same `cairn` section.
func runACP(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("acp", "cairn acp [--settings FILE]")
	settingsFile := fs.String("settings", os.Getenv("CAIRN_SETTINGS"), "a JSON `FILE` with Cairn's settings: the cairn section that cairn serve takes as initializationOptions (default $CAIRN_SETTINGS)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("takes no arguments (got %q)", fs.Args())
	}
	var raw []byte
	if *settingsFile != "" {
		b, err := os.ReadFile(*settingsFile)
		if err != nil {
			return fmt.Errorf("--settings: %w", err)
		}
		if !json.Valid(b) {
			return fmt.Errorf("--settings: %s is not valid JSON", *settingsFile)
		}
		raw = b
	}
	closeLog := quietACPLog(os.Getenv)
	defer closeLog()
	return acp.Serve(ctx, os.Stdin, stdout, acp.Options{
		Version:   version,
		StateDir:  func(root string) (string, error) { return server.StateDir(root, os.Getenv) },
		Configure: func(root, stateDir string) acp.Setup { return acpSetup(raw, root, stateDir) },
		RootsFile: acpRootsFile(os.Getenv),
	})
}

// acpRootsFile is where `cairn acp` lists the workspaces it opened sessions
// in (for session/list without a cwd): beside the per-workspace state
// directories, or in $CAIRN_STATE_DIR when that is set.
func acpRootsFile(getenv func(string) string) string {
	if d := getenv("CAIRN_STATE_DIR"); d != "" {
		return filepath.Join(d, "acp-workspaces.json")
	}
	any, err := server.StateDir("/", getenv)
	if err != nil {
		return ""
	}
	return filepath.Join(filepath.Dir(any), "acp-workspaces.json")
}

// acpSetup reads the settings of one workspace exactly as `cairn serve`
// does: provider, limits, approval mode, policy, MCP servers.
func acpSetup(raw []byte, root, stateDir string) acp.Setup {
	st, warnings := server.ReadSettings(raw, os.Getenv)
	provider, providerErr := server.NewProvider(st, stateDir, os.Getenv)
	if providerErr != nil {
		warnings = append(warnings, providerErr.Error())
	}
	policy, problems := server.LoadPolicy(root, st)
	warnings = append(warnings, problems...)
	b, _ := json.Marshal(st.MCPServers)
	servers, err := mcp.ParseServers(b)
	if err != nil {
		warnings = append(warnings, err.Error())
	}
	run := st.RunConfig(agent.Config{}, provider)
	run.ProviderErr = providerErr
	return acp.Setup{
		Run:          run,
		Interactive:  st.Approval.Mode != "policy",
		Policy:       policy,
		Sandbox:      st.Sandbox,
		MCPServers:   servers,
		OTLPEndpoint: st.Trace.OTLPEndpoint,
		Warnings:     warnings,
	}
}

// quietACPLog sends the log to a file unless CAIRN_LOG asks for stderr:
// ACP clients show every stderr line of an agent to the user (acp.el turns
// each into an error event), so at the default level `cairn acp` writes
// nothing there. What the user must act on reaches the session as a
// message (acp.Session notices). The file is CAIRN_LOG_FILE, else acp.log
// in Cairn's cache directory (beside the per-workspace state directories).
func quietACPLog(getenv func(string) string) (closeLog func()) {
	if getenv("CAIRN_LOG") != "" {
		return func() {} // main set a stderr logger at that level
	}
	path := acpLogPath(getenv)
	var w io.Writer = io.Discard
	var f *os.File
	if path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
			f, _ = os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		}
	}
	if f != nil {
		w = f
	}
	slog.SetDefault(slog.New(redact.NewHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}), nil)))
	return func() {
		if f != nil {
			f.Close()
		}
	}
}

// acpLogPath is where `cairn acp` logs by default ("" when there is no
// cache directory).
func acpLogPath(getenv func(string) string) string {
	if p := getenv("CAIRN_LOG_FILE"); p != "" {
		return p
	}
	if d := getenv("CAIRN_STATE_DIR"); d != "" {
		return filepath.Join(d, "acp.log")
	}
	base := getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "cairn", "acp.log")
}
