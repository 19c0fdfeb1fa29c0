package workspace

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Protected locations are the files and directories of a workspace that
// change what code runs, with which powers, when a tool, an editor or CI next
// touches the tree: git's own directories (hooks, config with fsmonitor,
// pagers, filters), Cairn's policy, editor and CI configuration, direnv. A
// command never writes them (the sandbox mounts them read-only and
// ProtectedRootNames cannot be created), and an edit to one needs its own
// confirmation that names the path and why it matters.
//
// Names are compared case-insensitively and with Windows' trailing dots and
// spaces removed, so ".VSCode" or ".git." on a case-insensitive file system
// are the same place as ".vscode" and ".git". A name is protected at any
// depth, not only at the root: a nested repository, a sub-project opened as
// its own folder and direnv in a subdirectory all act on it.

// protectedName is one protected name and why it matters.
type protectedName struct {
	name string
	why  string
}

const (
	whyGit       = "git hooks and config run code when git runs"
	whyCairn     = "the workspace's Cairn policy decides what the agent may do"
	whyEditor    = "editor configuration can run tasks and start servers"
	whyCI        = "CI workflows run with the repository's secrets"
	whyDirenv    = "direnv runs .envrc when you enter the directory"
	whyContainer = "dev container configuration runs commands when the container is built or opened"
)

// protectedNames are protected wherever they appear (any depth), with
// everything below them.
var protectedNames = []protectedName{
	{".git", whyGit},
	{".cairn", whyCairn},
	{".vscode", whyEditor},
	{".idea", whyEditor},
	{".zed", whyEditor},
	{".nvim.lua", whyEditor},
	{".nvimrc", whyEditor},
	{".exrc", whyEditor},
	{".dir-locals.el", whyEditor},
	{".dir-locals-2.el", whyEditor},
	{".devcontainer", whyContainer},
	{".devcontainer.json", whyContainer},
	{".envrc", whyDirenv},
	{".gitlab-ci.yml", whyCI},
	{".circleci", whyCI},
}

// protectedUnderGitHub are the directories of .github whose content CI runs.
var protectedUnderGitHub = []string{"workflows", "actions"}

// ProtectedRootNames are names that must not be created at the root of the
// workspace (or of any directory) by a command: the protected names
// themselves. A sandbox that mounts the existing protected paths read-only
// also keeps these from being created where they do not exist yet.
var ProtectedRootNames = []string{
	".git", ".cairn", ".vscode", ".idea", ".zed", ".devcontainer", ".devcontainer.json",
	".envrc", ".github", ".nvim.lua", ".nvimrc", ".exrc", ".dir-locals.el", ".dir-locals-2.el",
	".gitlab-ci.yml", ".circleci",
}

// InDotGit reports whether rel (slash or OS separators) has a ".git"
// component, in any spelling a file system takes for it: the paths
// ResolveWritable refuses outright.
func InDotGit(rel string) bool {
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		if normName(c) == ".git" {
			return true
		}
	}
	return false
}

// normName folds a path component the way the file systems Cairn runs on
// could: case-insensitively, without Windows' trailing dots and spaces,
// without the code points HFS+ ignores in names (".g\u200cit" is ".git"
// there), and with NTFS's short name of .git.
func normName(s string) string {
	if strings.ContainsFunc(s, hfsIgnorable) {
		s = strings.Map(func(r rune) rune {
			if hfsIgnorable(r) {
				return -1
			}
			return r
		}, s)
	}
	t := strings.TrimRight(s, ". ")
	if t == "" {
		return s
	}
	t = strings.ToLower(t)
	if t == "git~1" {
		return ".git"
	}
	return t
}

// hfsIgnorable reports the code points HFS+ drops when it compares names
// (the list git checks in is_hfs_dotgit).
func hfsIgnorable(r rune) bool {
	switch {
	case r == 0x200c, r == 0x200d, r == 0x200e, r == 0x200f,
		r >= 0x202a && r <= 0x202e,
		r >= 0x206a && r <= 0x206f,
		r == 0xfeff:
		return true
	}
	return false
}

// nameWhy reports whether the component name is protected by name.
func nameWhy(name string) (string, bool) {
	// Every protected name starts with "." or is NTFS's "GIT~1" once the
	// ignorable code points (all above ASCII) are gone: most names are
	// settled by their first byte.
	if name == "" || name[0] != '.' && name[0] != 'g' && name[0] != 'G' && name[0] < 0x80 {
		return "", false
	}
	n := normName(name)
	for _, p := range protectedNames {
		if n == p.name {
			return p.why, true
		}
	}
	return "", false
}

// Protected reports whether rel (workspace-relative, slash or OS separators;
// it need not exist) is in a protected location of the workspace at root,
// and says why in one sentence a user can read. A path is checked as given
// and, where it goes through symlinks, as the real path it resolves to.
func Protected(root, rel string) (why string, ok bool) {
	rel = filepath.ToSlash(rel)
	if filepath.IsAbs(filepath.FromSlash(rel)) {
		if r, err := filepath.Rel(root, filepath.FromSlash(rel)); err == nil {
			rel = filepath.ToSlash(r)
		}
	}
	if why, ok := protectedRel(root, rel); ok {
		return why, true
	}
	// The same place reached through a symlink is the same place.
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", false
	}
	real, err := realPath(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil || !within(realRoot, real) {
		return "", false
	}
	r, err := filepath.Rel(realRoot, real)
	if err != nil {
		return "", false
	}
	if r = filepath.ToSlash(r); r == rel && realRoot == root {
		return "", false
	}
	return protectedRel(realRoot, r)
}

// protectedRel checks rel's components lexically and each of its
// directories on disk (git directories by content).
func protectedRel(root, rel string) (string, bool) {
	clean := strings.TrimPrefix(filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel))), "./")
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", false
	}
	var comps []string
	if clean != "." && clean != "" {
		comps = strings.Split(clean, "/")
	}
	dir := root
	for i, c := range comps {
		if why, ok := componentWhy(comps, i); ok {
			return why, true
		}
		// dir is a git directory, or becomes one once c exists (the
		// last piece of a repository assembled file by file).
		if isGitDir(dir, c) {
			return whyGit, true
		}
		dir = filepath.Join(dir, c)
	}
	if isGitDir(dir, "") {
		return whyGit, true
	}
	return "", false
}

// componentWhy reports whether comps[i] is protected by its name (and its
// parent's: .github/workflows).
func componentWhy(comps []string, i int) (string, bool) {
	if why, ok := nameWhy(comps[i]); ok {
		return why, true
	}
	if i > 0 && normName(comps[i-1]) == ".github" {
		for _, g := range protectedUnderGitHub {
			if normName(comps[i]) == g {
				return whyCI, true
			}
		}
	}
	return "", false
}

// ProtectedByName reports whether rel is protected by the names on its
// path alone (.vscode, a nested .git, .github/workflows), whatever the
// directories hold: Protected without the look at git directories by
// content.
func ProtectedByName(rel string) (why string, ok bool) {
	comps := strings.Split(strings.Trim(filepath.ToSlash(filepath.Clean(rel)), "/"), "/")
	for i := range comps {
		if why, ok := componentWhy(comps, i); ok {
			return why, true
		}
	}
	return "", false
}

// isGitDir reports whether dir holds a git directory by content (a HEAD file
// with objects/ and refs/, or with a config that has a [core] section),
// counting the entry named adding as present even when it does not exist
// yet. Git itself needs no ".git" name to use such a directory: `git -C dir`
// or discovery from below it runs its config.
func isGitDir(dir, adding string) bool {
	has := func(name string) bool {
		if adding != "" && normName(adding) == strings.ToLower(name) {
			return true
		}
		_, err := os.Lstat(filepath.Join(dir, name))
		return err == nil
	}
	if adding == "" || normName(adding) != "head" {
		if !headLooksValid(filepath.Join(dir, "HEAD")) {
			return false
		}
	}
	if has("objects") && has("refs") {
		return true
	}
	if adding != "" && normName(adding) == "config" {
		return true
	}
	return configHasCore(filepath.Join(dir, "config"))
}

// headLooksValid reports whether the file at p could be a git HEAD, as git
// checks before it takes a directory for a repository: a symbolic ref
// ("ref: refs/..."), an object id in hex, or (old repositories) a symlink.
func headLooksValid(p string) bool {
	st, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if st.Mode()&os.ModeSymlink != 0 {
		return true
	}
	if !st.Mode().IsRegular() {
		return false
	}
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := io.ReadFull(f, buf)
	line := strings.TrimSpace(string(buf[:n]))
	if strings.HasPrefix(line, "ref:") {
		return true
	}
	if len(line) < 40 {
		return false
	}
	for _, r := range line {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// configHasCore reports whether the file at p looks like a git config: it
// has a [core] section (section names are case-insensitive).
func configHasCore(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return false
	}
	for _, line := range bytes.Split(head, []byte("\n")) {
		line = bytes.ToLower(bytes.TrimSpace(line))
		if bytes.HasPrefix(line, []byte("[core]")) || bytes.HasPrefix(line, []byte("[core ")) {
			return true
		}
	}
	return false
}

// FindProtected walks root once (no symlinks followed, nothing skipped:
// node_modules and ignored directories included) and returns the absolute
// paths of the existing protected files and directories, outermost only
// (nothing below a returned directory). A protected name that is a symlink
// is returned as the link itself.
func FindProtected(root string) ([]string, error) {
	var out []string
	if err := findProtected(root, false, &out); err != nil {
		return out, err
	}
	return out, nil
}

func findProtected(dir string, inGitHub bool, out *[]string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("listing %s for protected paths: %w", dir, err)
	}
	if gitDirEntries(dir, entries) {
		*out = append(*out, dir)
		return nil
	}
	for _, e := range entries {
		if _, ok := nameWhy(e.Name()); ok || inGitHub && isGitHubProtected(e.Name()) {
			*out = append(*out, filepath.Join(dir, e.Name()))
			continue
		}
		if e.Type()&os.ModeSymlink != 0 || !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := findProtected(p, normName(e.Name()) == ".github", out); err != nil {
			if os.IsPermission(err) || os.IsNotExist(err) {
				// Unreadable to us is unreadable to the tools too; a
				// directory that vanished mid-walk holds nothing.
				continue
			}
			return err
		}
	}
	return nil
}

func isGitHubProtected(name string) bool {
	n := normName(name)
	for _, g := range protectedUnderGitHub {
		if n == g {
			return true
		}
	}
	return false
}

// gitDirEntries is isGitDir over an already read listing of dir.
func gitDirEntries(dir string, entries []os.DirEntry) bool {
	var head, objects, refs, config bool
	for _, e := range entries {
		switch e.Name() {
		case "HEAD":
			head = true
		case "objects":
			objects = true
		case "refs":
			refs = true
		case "config":
			config = true
		}
	}
	if !head || !headLooksValid(filepath.Join(dir, "HEAD")) {
		return false
	}
	return objects && refs || config && configHasCore(filepath.Join(dir, "config"))
}
