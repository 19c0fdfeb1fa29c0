package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/agent"
)

// maxKnownRoots bounds the list of workspaces with ACP sessions; the oldest
// entry goes first.
const maxKnownRoots = 200

// rootsMu serializes this process's updates of the roots file (processes
// racing may lose an entry; the workspace is listed again once reopened).
var rootsMu sync.Mutex

// knownRoots reads the workspaces in which sessions were opened (most
// recent last); nil when Options.RootsFile is unset or unreadable.
func (a *adapter) knownRoots() []string {
	if a.opts.RootsFile == "" {
		return nil
	}
	b, err := os.ReadFile(a.opts.RootsFile)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			slog.Debug("reading the list of ACP workspaces", "file", a.opts.RootsFile, "err", err)
		}
		return nil
	}
	var roots []string
	if err := json.Unmarshal(b, &roots); err != nil {
		slog.Debug("the list of ACP workspaces is unreadable", "file", a.opts.RootsFile, "err", err)
		return nil
	}
	return roots
}

// rememberRoot records root in the roots file, so session/list without a
// cwd finds its sessions after a restart.
func (a *adapter) rememberRoot(root string) {
	if a.opts.RootsFile == "" {
		return
	}
	rootsMu.Lock()
	defer rootsMu.Unlock()
	roots := a.knownRoots()
	if n := len(roots); n > 0 && roots[n-1] == root {
		return
	}
	roots = append(slices.DeleteFunc(roots, func(r string) bool { return r == root }), root)
	if len(roots) > maxKnownRoots {
		roots = roots[len(roots)-maxKnownRoots:]
	}
	if err := writeJSONFile(a.opts.RootsFile, roots); err != nil {
		slog.Debug("recording an ACP workspace", "err", err)
	}
}

func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	_, werr := tmp.Write(b)
	if err := errors.Join(werr, tmp.Close()); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// savedSessions are the sessions on disk of the known workspaces this
// process has not opened (their engines are not started to list them).
func (a *adapter) savedSessions() []sdk.SessionInfo {
	var out []sdk.SessionInfo
	seenState := map[string]bool{}
	for _, root := range a.knownRoots() {
		a.mu.Lock()
		_, open := a.workspaces[root]
		a.mu.Unlock()
		if open {
			continue
		}
		if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
			continue // the folder is gone: its sessions cannot be loaded
		}
		stateDir, err := a.opts.StateDir(root)
		if err != nil || seenState[stateDir] {
			continue
		}
		seenState[stateDir] = true
		for _, t := range agent.SavedThreads(stateDir) {
			info := sdk.SessionInfo{SessionId: sdk.SessionId(t.ThreadID), Cwd: root}
			if t.Title != "" {
				title := t.Title
				info.Title = &title
			}
			if t.Updated != "" {
				u := t.Updated
				info.UpdatedAt = &u
			}
			out = append(out, info)
		}
	}
	return out
}

// sameRoot says whether cwd is the workspace root (after symlinks).
func sameRoot(cwd, root string) bool {
	if !filepath.IsAbs(cwd) {
		return false
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(cwd))
	return err == nil && real == root
}
