package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Multi-root workspaces. The first folder (the one Open was given) stays
// the workspace's Root: its paths are plain relative paths, the state
// directory is keyed by it, and everything written before multi-root
// support reads the same. Every other folder gets a name (the client's,
// else its base name, made unique against the other folders and against
// the first folder's own top-level entries, so a path's first component
// never means two places), and its paths read "<name>/<rel>". Resolve, Rel,
// Abs and ClientPath understand both forms; a folder itself is a
// single-root Workspace (Folder.WS) sharing the first folder's document
// overlays, so the index, the watcher and the walk of a folder work
// exactly as they do for the first.

// Folder is a workspace folder besides the first.
type Folder struct {
	Name string     // the first component of its paths
	Root string     // absolute, symlinks resolved
	WS   *Workspace // the folder on its own, sharing Docs and Recent
}

// folderSet is the mutable list of extra folders. A pointer, so that a
// Workspace value copied by a caller still sees folders added later.
type folderSet struct {
	mu   sync.RWMutex
	list []Folder
}

// ErrNestedFolder is returned (wrapped) by AddFolder for a folder inside
// the first folder or holding it: its files are the first folder's already.
var ErrNestedFolder = errors.New("the folder overlaps the first workspace folder")

// AddFolder adds dir as a workspace folder named name (empty: dir's base
// name). Adding a folder already present returns it unchanged.
func (w *Workspace) AddFolder(dir, name string) (Folder, error) {
	sub, err := Open(dir)
	if err != nil {
		return Folder{}, fmt.Errorf("adding workspace folder %q: %w", dir, err)
	}
	if within(w.root, sub.root) || within(sub.root, w.root) {
		return Folder{}, fmt.Errorf("adding workspace folder %q: %w", dir, ErrNestedFolder)
	}
	sub.Docs, sub.Recent, sub.stateDir = w.Docs, w.Recent, w.stateDir
	fs := w.extra
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, f := range fs.list {
		if f.Root == sub.root {
			return f, nil
		}
		if within(f.Root, sub.root) || within(sub.root, f.Root) {
			return Folder{}, fmt.Errorf("adding workspace folder %q: it overlaps the folder %s", dir, f.Name)
		}
	}
	f := Folder{Name: w.uniqueName(fs.list, folderName(name, sub.root)), Root: sub.root, WS: sub}
	sub.setFolderScope(w.Scope().ForFolder(f.Name))
	fs.list = append(fs.list, f)
	return f, nil
}

// RemoveFolder removes the folder at dir (as given to AddFolder, or its
// real path); false when there is none.
func (w *Workspace) RemoveFolder(dir string) (Folder, bool) {
	fs := w.extra
	real := filepath.Clean(dir)
	if abs, err := filepath.Abs(dir); err == nil {
		real = abs
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			real = r
		}
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, f := range fs.list {
		if f.Root == real || f.WS.opened == filepath.Clean(dir) {
			fs.list = append(fs.list[:i:i], fs.list[i+1:]...)
			return f, true
		}
	}
	return Folder{}, false
}

// Folders returns the folders besides the first, in the order added.
func (w *Workspace) Folders() []Folder {
	if w.extra == nil {
		return nil
	}
	w.extra.mu.RLock()
	defer w.extra.mu.RUnlock()
	return append([]Folder(nil), w.extra.list...)
}

// Roots returns the real paths of every folder, the first one first.
func (w *Workspace) Roots() []string {
	roots := []string{w.root}
	for _, f := range w.Folders() {
		roots = append(roots, f.Root)
	}
	return roots
}

// folderName is the name a client gave, else the base name, reduced to
// one path component.
func folderName(name, root string) string {
	name = strings.TrimSpace(name)
	if name == "" {
		name = filepath.Base(root)
	}
	name = strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '-'
		}
		return r
	}, name)
	if name == "" || name == "." || name == ".." || strings.HasPrefix(name, "~") || InDotGit(name) {
		name = "folder"
	}
	return name
}

// uniqueName suffixes name (-2, -3, ...) until no other folder has it and
// the first folder has no top-level entry of that name.
func (w *Workspace) uniqueName(others []Folder, name string) string {
	taken := func(n string) bool {
		for _, f := range others {
			if strings.EqualFold(f.Name, n) {
				return true
			}
		}
		_, err := os.Lstat(filepath.Join(w.root, n))
		return err == nil
	}
	if !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		if n := fmt.Sprintf("%s-%d", name, i); !taken(n) {
			return n
		}
	}
}

// folderOfRel returns the folder a relative path begins with, and the rest.
func (w *Workspace) folderOfRel(p string) (Folder, string, bool) {
	if w.extra == nil || filepath.IsAbs(p) {
		return Folder{}, "", false
	}
	s := filepath.ToSlash(p)
	s = strings.TrimPrefix(s, "./")
	first, rest, _ := strings.Cut(s, "/")
	for _, f := range w.Folders() {
		if f.Name == first {
			return f, rest, true
		}
	}
	return Folder{}, "", false
}

// folderOfAbs returns the folder holding the absolute path abs (real or as
// the client opened it).
func (w *Workspace) folderOfAbs(abs string) (Folder, bool) {
	for _, f := range w.Folders() {
		if within(f.Root, abs) || within(f.WS.opened, abs) {
			return f, true
		}
	}
	return Folder{}, false
}

// FolderOf returns the folder besides the first holding the absolute path
// abs; false for the first folder's paths and paths outside every folder.
func (w *Workspace) FolderOf(abs string) (Folder, bool) {
	if within(w.root, abs) {
		return Folder{}, false
	}
	return w.folderOfAbs(abs)
}

// RootOf returns the real root of the folder holding abs ("" when none).
func (w *Workspace) RootOf(abs string) string {
	if within(w.root, abs) || within(w.opened, abs) {
		return w.root
	}
	if f, ok := w.folderOfAbs(abs); ok {
		return f.Root
	}
	return ""
}

// Protected is the package's Protected for a path of this workspace (plain
// or "<folder>/<rel>"), checked against the folder that holds it.
func (w *Workspace) Protected(rel string) (string, bool) {
	if f, rest, ok := w.folderOfRel(rel); ok {
		return Protected(f.Root, rest)
	}
	return Protected(w.root, rel)
}

// WalkAll walks every folder: the first folder's files with their plain
// paths, then each other folder's with "<name>/" before theirs.
func (w *Workspace) WalkAll(opts WalkOptions) ([]File, WalkStats) {
	files, st := w.Walk(opts)
	for _, f := range w.Folders() {
		more, fst := f.WS.Walk(opts)
		for _, m := range more {
			m.Rel = f.Name + "/" + m.Rel
			files = append(files, m)
		}
		st.Files += fst.Files
		for k, v := range fst.Skipped {
			st.Skipped[k] += v
		}
	}
	return files, st
}
