package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/workspace"
)

// Multi-root workspaces: the first workspace folder of initialize is the
// workspace root (state directory, plain relative paths, the commands'
// working directory); every other folder, at initialize or from
// workspace/didChangeWorkspaceFolders, is added to the engines
// (agent.Engines.AddFolder): indexed, searchable, mapped, watched,
// reachable by tools as "<name>/<path>" and writable by commands under
// the same policy. See protocol/README.md, "Workspace folders".

// workspaceFoldersCapability advertises folder support and asks for
// workspace/didChangeWorkspaceFolders.
func workspaceFoldersCapability() *lsp.WorkspaceOptions {
	yes := true
	return &lsp.WorkspaceOptions{WorkspaceFolders: &lsp.WorkspaceFoldersServerCapabilities{
		Supported: &yes, ChangeNotifications: lsp.Boolean(true),
	}}
}

// otherFolders are the initialize request's workspace folders after the first.
func otherFolders(params *lsp.InitializeParams) []lsp.WorkspaceFolder {
	folders, ok := params.WorkspaceFolders.Get()
	if !ok || len(folders) < 2 {
		return nil
	}
	return folders[1:]
}

// addFolders adds folders to the engines, telling the user about any that
// cannot be added (the rest go on).
func (s *Server) addFolders(folders []lsp.WorkspaceFolder) {
	s.mu.Lock()
	e := s.engines
	s.mu.Unlock()
	if e == nil {
		return
	}
	for _, f := range folders {
		dir := uriToPath(string(f.URI))
		added, err := e.AddFolder(dir, f.Name)
		if errors.Is(err, workspace.ErrNestedFolder) {
			// VS Code workspaces often list a subfolder of the first: its
			// files are indexed with the first folder's already.
			slog.Info("workspace folder inside the first one: already covered", "folder", dir)
			continue
		}
		if err != nil && added.Name == "" {
			s.logToClient(slog.LevelWarn, fmt.Sprintf("Cairn: workspace folder %s: %v", dir, err))
			continue
		}
		if err != nil { // added, but its index could not open
			s.logToClient(slog.LevelWarn, fmt.Sprintf("Cairn: workspace folder %s: %v", added.Name, err))
		}
		slog.Info("workspace folder added", "name", added.Name, "root", added.Root)
	}
}

// DidChangeWorkspaceFolders adds and removes workspace folders live. The
// first folder cannot be removed while the server runs (it holds the
// state directory); the editor restarts the server for that.
func (s *Server) DidChangeWorkspaceFolders(ctx context.Context, params *lsp.DidChangeWorkspaceFoldersParams) error {
	s.mu.Lock()
	e, ws := s.engines, s.ws
	s.mu.Unlock()
	if e == nil {
		return errors.New("workspace/didChangeWorkspaceFolders before initialize")
	}
	for _, f := range params.Event.Removed {
		dir := uriToPath(string(f.URI))
		if removed, ok := e.RemoveFolder(dir); ok {
			slog.Info("workspace folder removed", "name", removed.Name, "root", removed.Root)
			continue
		}
		if ws.RootOf(dir) == ws.Root() {
			s.logToClient(slog.LevelWarn, fmt.Sprintf("Cairn: %s is the first workspace folder, where Cairn keeps its state; it stays until the server restarts", dir))
		}
	}
	s.addFolders(params.Event.Added)
	return nil
}
