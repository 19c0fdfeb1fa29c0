package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/acp"
	"github.com/cairn-dev/cairn/agent"
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
