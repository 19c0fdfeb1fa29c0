package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"

	gitignore "github.com/sabhiram/go-gitignore"
)

// File is one file found by Walk.
type File struct {
	Rel  string // slash-separated, workspace-relative
	Abs  string
	Size int64
	Mod  int64 // mtime, UnixNano
}

// SkipReason says why a file was not offered to indexers.
type SkipReason string

const (
	SkipIgnored   SkipReason = "ignored"
	SkipBinary    SkipReason = "binary"
	SkipOversized SkipReason = "oversized"
	SkipVendored  SkipReason = "vendored"
	SkipBuilt     SkipReason = "build output"
	SkipUnread    SkipReason = "unreadable"
)

// WalkStats counts what a walk skipped, by reason.
type WalkStats struct {
	Files   int
	Skipped map[SkipReason]int
}

// WalkOptions tune Walk. The zero value is usable.
type WalkOptions struct {
	MaxFileSize int64 // default 1 MiB
}

// alwaysSkipDirs are never worth indexing and often huge.
var alwaysSkipDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, "node_modules": true, ".cairn-state": true}

// vendoredDirs hold third-party code: skipped and counted as vendored.
var vendoredDirs = map[string]bool{"vendor": true, "third_party": true, "bower_components": true}

// buildDirs are where JavaScript, TypeScript and Python builds write their
// output. A directory of that name is build output only next to a build
// manifest (cmd/dist and go/build in the Go tree are source), see builtDir.
var buildDirs = map[string]bool{"dist": true, "build": true, "out": true, ".next": true, ".nuxt": true, "__pycache__": true, "coverage": true}

// buildManifests name the files whose presence in a directory makes its
// buildDirs children build output.
var buildManifests = []string{"package.json", "tsconfig.json", "pyproject.toml", "setup.py", "setup.cfg"}

// lockFiles are package managers' lockfiles: long, generated, never the answer.
var lockFiles = map[string]bool{
	"package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true, "pnpm-lock.yaml": true,
	"bun.lockb": true, "Cargo.lock": true, "poetry.lock": true, "Pipfile.lock": true, "uv.lock": true,
	"composer.lock": true, "Gemfile.lock": true, "go.sum": true, "go.work.sum": true,
}

// builtFile reports build output recognizable by its name: minified code and
// bundles, source maps, lockfiles.
func builtFile(name string) bool {
	if lockFiles[name] {
		return true
	}
	for _, suf := range []string{".min.js", ".min.mjs", ".min.css", ".umd.js", ".bundle.js", ".js.map", ".mjs.map", ".css.map", ".d.ts.map"} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// builtDir reports whether the directory name inside absParent is build
// output: one of buildDirs next to a build manifest (__pycache__ anywhere).
func builtDir(absParent, name string) bool {
	if !buildDirs[name] {
		return false
	}
	if name == "__pycache__" {
		return true
	}
	for _, m := range buildManifests {
		if _, err := os.Stat(filepath.Join(absParent, m)); err == nil {
			return true
		}
	}
	return false
}

// Walk lists the workspace's indexable files in lexical order, honoring
// .gitignore and .cairnignore files at every level, and skipping VCS
// folders, vendored trees, build output (dist/, build/, out/ beside a
// package.json or pyproject.toml; minified files, bundles, source maps,
// lockfiles), binary files and oversized files (counted in the returned
// stats). A .gitignore or .cairnignore negation ("!dist/") does not bring
// build output back; .cairnignore can only take more away. Symlinks are not followed, so loops cannot hang it.
func (w *Workspace) Walk(opts WalkOptions) ([]File, WalkStats) {
	max := opts.MaxFileSize
	if max <= 0 {
		max = 1 << 20
	}
	stats := WalkStats{Skipped: map[SkipReason]int{}}
	type rules struct {
		dir string // slash rel dir ("" for root)
		m   *gitignore.GitIgnore
	}
	var stack []rules
	ignored := func(rel string, isDir bool) bool {
		for _, r := range stack {
			sub := rel
			if r.dir != "" {
				if !strings.HasPrefix(rel, r.dir+"/") {
					continue
				}
				sub = rel[len(r.dir)+1:]
			}
			if isDir {
				sub += "/"
			}
			if r.m.MatchesPath(sub) {
				return true
			}
		}
		return false
	}
	var files []File
	var walk func(absDir, relDir string)
	walk = func(absDir, relDir string) {
		entries, err := os.ReadDir(absDir)
		if err != nil {
			stats.Skipped[SkipUnread]++
			return
		}
		pushed := 0
		for _, name := range []string{".gitignore", ".cairnignore"} {
			if b, err := os.ReadFile(filepath.Join(absDir, name)); err == nil {
				stack = append(stack, rules{dir: relDir, m: gitignore.CompileIgnoreLines(strings.Split(string(b), "\n")...)})
				pushed++
			}
		}
		defer func() { stack = stack[:len(stack)-pushed] }()
		for _, e := range entries {
			name := e.Name()
			rel := name
			if relDir != "" {
				rel = relDir + "/" + name
			}
			abs := filepath.Join(absDir, name)
			if e.IsDir() {
				if alwaysSkipDirs[name] {
					continue
				}
				if vendoredDirs[name] {
					stats.Skipped[SkipVendored]++
					continue
				}
				if builtDir(absDir, name) {
					stats.Skipped[SkipBuilt]++
					continue
				}
				if ignored(rel, true) {
					stats.Skipped[SkipIgnored]++
					continue
				}
				walk(abs, rel)
				continue
			}
			if !e.Type().IsRegular() { // symlinks, sockets, devices
				continue
			}
			if builtFile(name) {
				stats.Skipped[SkipBuilt]++
				continue
			}
			if ignored(rel, false) {
				stats.Skipped[SkipIgnored]++
				continue
			}
			info, err := e.Info()
			if err != nil {
				stats.Skipped[SkipUnread]++
				continue
			}
			if info.Size() > max {
				stats.Skipped[SkipOversized]++
				continue
			}
			files = append(files, File{Rel: rel, Abs: abs, Size: info.Size(), Mod: info.ModTime().UnixNano()})
		}
	}
	walk(w.root, "")
	sort.Slice(files, func(i, j int) bool { return files[i].Rel < files[j].Rel })
	stats.Files = len(files)
	return files, stats
}

// Ignored reports whether a workspace-relative path is excluded by the
// ignore rules of its ancestors (used for watcher events on single files).
func (w *Workspace) Ignored(rel string) bool {
	return w.ignoredBy(rel, ".gitignore", ".cairnignore")
}

// CairnIgnored reports whether .cairnignore excludes a path: the user's
// word that Cairn must not look at it, so the file tools refuse it
// (.gitignore only keeps build output out of indexes).
func (w *Workspace) CairnIgnored(rel string) bool {
	return w.ignoredBy(rel, ".cairnignore")
}

func (w *Workspace) ignoredBy(rel string, files ...string) bool {
	parts := strings.Split(rel, "/")
	if len(files) == 2 {
		parent := w.root
		for _, p := range parts[:len(parts)-1] {
			if alwaysSkipDirs[p] || vendoredDirs[p] || builtDir(parent, p) {
				return true
			}
			parent = filepath.Join(parent, p)
		}
		if builtFile(parts[len(parts)-1]) {
			return true
		}
	}
	dir := ""
	for i := 0; i < len(parts); i++ {
		for _, name := range files {
			b, err := os.ReadFile(filepath.Join(w.root, filepath.FromSlash(dir), name))
			if err != nil {
				continue
			}
			m := gitignore.CompileIgnoreLines(strings.Split(string(b), "\n")...)
			sub := strings.Join(parts[i:], "/")
			if m.MatchesPath(sub) {
				return true
			}
		}
		if i < len(parts)-1 {
			if dir == "" {
				dir = parts[i]
			} else {
				dir += "/" + parts[i]
			}
		}
	}
	return false
}

// IsBinary reports whether content looks binary: a NUL byte in the first 8000
// bytes, as git decides.
func IsBinary(content []byte) bool {
	n := len(content)
	if n > 8000 {
		n = 8000
	}
	return bytes.IndexByte(content[:n], 0) >= 0
}
