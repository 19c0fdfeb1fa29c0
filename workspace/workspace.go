// Package workspace owns the boundary of the user's project: resolving
// model-supplied paths safely, walking files with ignore rules, and the
// layered view of file contents (a run's drafts over the editor's open
// documents over the disk).
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
)

// ErrOutside is returned (wrapped) when a path resolves outside the workspace.
var ErrOutside = errors.New("path is outside the workspace")

// Workspace is one project root. It is safe for concurrent use.
type Workspace struct {
	root     string // absolute, symlinks resolved
	opened   string // absolute, as the client named it (may go through symlinks)
	Docs     *Documents
	Recent   *RecentEdits
	stateDir string
	scope    atomic.Pointer[compiledScope] // nil: everything is indexed (SetScope)
	extra    *folderSet                    // the folders besides this one (folders.go)
}

// Open returns the workspace rooted at dir.
func Open(dir string) (*Workspace, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolving workspace root %q: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("resolving workspace root %q: %w", dir, err)
	}
	st, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("opening workspace root: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("workspace root %q is not a directory", dir)
	}
	return &Workspace{root: real, opened: filepath.Clean(abs), Docs: NewDocuments(), Recent: NewRecentEdits(50), extra: &folderSet{}}, nil
}

// Root is the absolute, symlink-free path of the workspace.
func (w *Workspace) Root() string { return w.root }

// SetStateDir records the server state directory so that writes into it are
// refused even when it lies inside the workspace. It is compared as a real
// path (symlinks resolved), like every path Resolve returns.
func (w *Workspace) SetStateDir(dir string) {
	if real, err := realPath(dir); err == nil {
		dir = real
	}
	w.stateDir = dir
	for _, f := range w.Folders() {
		f.WS.stateDir = dir
	}
}

// ClientPath returns abs (a real path inside the workspace) as the client
// names it: under the root it opened, which may go through a symlink (macOS
// /tmp is /private/tmp), so URIs sent back match the editor's documents.
func (w *Workspace) ClientPath(abs string) string {
	if f, ok := w.FolderOf(abs); ok {
		return f.WS.ClientPath(abs)
	}
	if w.opened == w.root || !within(w.root, abs) {
		return abs
	}
	return w.opened + abs[len(w.root):]
}

// realPath resolves the symlinks of p's longest existing prefix; the rest
// (not yet created) is joined unchanged.
func realPath(p string) (string, error) {
	existing := filepath.Clean(p)
	var rest []string
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = append([]string{filepath.Base(existing)}, rest...)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", err
	}
	return filepath.Join(append([]string{real}, rest...)...), nil
}

// Resolve turns a workspace-relative path from an untrusted source (the model,
// a tool input, a command line) into an absolute path inside the workspace.
// It refuses empty paths, NUL bytes, "~", absolute paths outside the root,
// ".." escapes, and symlinks whose target leaves the root. The file need not
// exist; its nearest existing ancestor is checked instead.
func (w *Workspace) Resolve(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte: %w", p, ErrOutside)
	}
	if p == "" || p == "." || p == "./" {
		return w.root, nil
	}
	// Another workspace folder: by its name, or by an absolute path in it.
	if f, rest, ok := w.folderOfRel(p); ok {
		return f.WS.Resolve(rest)
	}
	if filepath.IsAbs(p) && !within(w.root, filepath.Clean(p)) && !within(w.opened, filepath.Clean(p)) {
		if f, ok := w.folderOfAbs(filepath.Clean(p)); ok {
			return f.WS.Resolve(p)
		}
	}
	if strings.HasPrefix(p, "~") {
		return "", fmt.Errorf("path %q: home-relative paths are not allowed: %w", p, ErrOutside)
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
		switch {
		case within(w.root, abs):
		case within(w.opened, abs):
			// The root as the client named it (through a symlink).
			abs = w.root + abs[len(w.opened):]
		default:
			// Another way in through a symlink (/tmp → /private/tmp).
			if real, err := realPath(abs); err == nil && within(w.root, real) {
				abs = real
			}
		}
	} else {
		abs = filepath.Join(w.root, p)
	}
	if !within(w.root, abs) {
		return "", fmt.Errorf("path %q: %w", p, ErrOutside)
	}
	// Resolve symlinks on the longest existing prefix: every check compares
	// real paths.
	real, err := realPath(abs)
	if err != nil {
		return "", fmt.Errorf("resolving %q: %w", p, err)
	}
	if !within(w.root, real) {
		return "", fmt.Errorf("path %q leaves the workspace through a symlink: %w", p, ErrOutside)
	}
	return real, nil
}

// ResolveWritable is Resolve plus the refusal of places the agent must never
// write: every .git (the root's and any nested repository's, directory or
// gitfile, in any spelling a case-insensitive file system takes for it) and
// the server's state directory. Other protected paths (Protected) are
// writable only after their own confirmation, which is the caller's part.
func (w *Workspace) ResolveWritable(p string) (string, error) {
	abs, err := w.Resolve(p)
	if err != nil {
		return "", err
	}
	if InDotGit(w.Rel(abs)) {
		return "", fmt.Errorf("path %q: writing inside a .git directory is not allowed: %w", p, ErrOutside)
	}
	if w.stateDir != "" && within(w.stateDir, abs) {
		return "", fmt.Errorf("path %q: writing into Cairn's state directory is not allowed: %w", p, ErrOutside)
	}
	return abs, nil
}

// Rel returns the slash-separated workspace-relative form of an absolute path.
func (w *Workspace) Rel(abs string) string {
	if f, ok := w.FolderOf(abs); ok {
		if r := f.WS.Rel(abs); r != "." {
			return f.Name + "/" + r
		}
		return f.Name
	}
	r, err := filepath.Rel(w.root, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(r)
}

// Abs returns the absolute path of a workspace-relative path without checks;
// use Resolve for untrusted input.
func (w *Workspace) Abs(rel string) string {
	if f, rest, ok := w.folderOfRel(rel); ok {
		return f.WS.Abs(rest)
	}
	return filepath.Join(w.root, filepath.FromSlash(rel))
}

func within(root, p string) bool {
	if p == root {
		return true
	}
	r := root
	if !strings.HasSuffix(r, string(filepath.Separator)) {
		r += string(filepath.Separator)
	}
	return strings.HasPrefix(p, r)
}
