package acp

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/workspace"
)

// additionalDirectories (session/new, session/load, session/resume) are
// more workspace folders for the session's workspace: indexed, reachable
// by tools as "<name>/<path>", writable by commands under the same
// policy as cwd (agent.Engines.AddFolder). Sessions of one cwd share a
// workspace, so its folders are the union of what its sessions asked for.

// checkDirectories refuses additional directories that are not absolute
// paths of existing directories, before anything is opened.
func checkDirectories(dirs []string) error {
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("additionalDirectories: %q is not an absolute path", d)
		}
		st, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("additionalDirectories: %w", err)
		}
		if !st.IsDir() {
			return fmt.Errorf("additionalDirectories: %q is not a directory", d)
		}
	}
	return nil
}

// addDirectories adds dirs to w's workspace; a directory inside cwd (or
// holding it) is covered by cwd already.
func (w *workspaceEngines) addDirectories(s *session, dirs []string) error {
	for _, d := range dirs {
		f, err := w.engines.AddFolder(d, "")
		switch {
		case errors.Is(err, workspace.ErrNestedFolder):
			slog.Debug("additional directory inside the workspace: already covered", "dir", d)
		case err != nil && f.Name == "":
			return err
		case err != nil: // added, unindexed
			s.notice(fmt.Sprintf("%s is reachable as %s/ but not indexed: %v", d, f.Name, err))
		default:
			slog.Info("workspace folder added", "name", f.Name, "root", f.Root)
		}
	}
	return nil
}
