package workspace

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

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
	SkipScope     SkipReason = "outside index.include/exclude"
)

// WalkStats counts what a walk skipped, by reason.
type WalkStats struct {
	Files   int
	Skipped map[SkipReason]int
}

// WalkOptions tune Walk. The zero value is usable.
type WalkOptions struct {
	MaxFileSize int64 // default 1 MiB
	// AllFiles lists files outside the index scope (SetScope) too: what a
	// command may have changed, what the file tools list.
	AllFiles bool
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

// Lister lists the workspace's files as Walk does; a rescan hands one
// listing to both indexes through it (codeindex), so the tree is walked once.
type Lister func(WalkOptions) ([]File, WalkStats)

// Walk lists the workspace's indexable files in lexical order, honoring
// .gitignore and .cairnignore files at every level, and skipping VCS
// folders, vendored trees, build output (dist/, build/, out/ beside a
// package.json or pyproject.toml; minified files, bundles, source maps,
// lockfiles), binary files and oversized files (counted in the returned
// stats). Files outside the index scope (SetScope) are left out unless
// opts.AllFiles. A .gitignore or .cairnignore negation ("!dist/") does not bring
// build output back; .cairnignore can only take more away. Symlinks are not followed, so loops cannot hang it.
func (w *Workspace) Walk(opts WalkOptions) ([]File, WalkStats) {
	wk := &walker{max: opts.MaxFileSize, stats: WalkStats{Skipped: map[SkipReason]int{}}}
	if !opts.AllFiles {
		wk.scope = w.scope.Load()
	}
	if wk.max <= 0 {
		wk.max = 1 << 20
	}
	// Directories are listed by a few goroutines at once: a walk is mostly
	// waiting on getdents and lstat, and a short-lived `cairn search` walks
	// the whole tree before it can answer.
	wk.slots = make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	wk.dir(w.root, "", nil)
	wk.wg.Wait()
	sort.Slice(wk.files, func(i, j int) bool { return wk.files[i].Rel < wk.files[j].Rel })
	wk.stats.Files = len(wk.files)
	return wk.files, wk.stats
}

// ignoreRules are one directory's .gitignore or .cairnignore.
type ignoreRules struct {
	dir string // slash rel dir ("" for root)
	m   *gitignore.GitIgnore
}

// ignoredBy reports whether rel is excluded by any of the rules in stack
// (its ancestors' ignore files).
func ignoredByRules(stack []ignoreRules, rel string, isDir bool) bool {
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

// walker is one Walk: directories are listed concurrently, each with the
// ignore rules of its ancestors; results are merged under mu.
type walker struct {
	max   int64
	slots chan struct{} // bounds the goroutines listing directories
	wg    sync.WaitGroup

	scope *compiledScope // nil: every file

	mu    sync.Mutex
	files []File
	stats WalkStats
}

func (wk *walker) dir(absDir, relDir string, stack []ignoreRules) {
	skipped := map[SkipReason]int{}
	var files []File
	defer func() {
		wk.mu.Lock()
		wk.files = append(wk.files, files...)
		for k, v := range skipped {
			wk.stats.Skipped[k] += v
		}
		wk.mu.Unlock()
	}()
	entries, stat, done, err := listDir(absDir)
	if err != nil {
		skipped[SkipUnread]++
		return
	}
	files = make([]File, 0, len(entries))
	// Subdirectories are listed after this one is closed: a deep tree
	// would otherwise hold a descriptor per level and per lister.
	var subdirs [][2]string
	defer func() {
		for _, sd := range subdirs {
			abs, rel := sd[0], sd[1]
			select {
			case wk.slots <- struct{}{}:
				wk.wg.Add(1)
				go func() {
					defer func() { <-wk.slots; wk.wg.Done() }()
					wk.dir(abs, rel, stack)
				}()
			default: // every slot busy: list it here
				wk.dir(abs, rel, stack)
			}
		}
	}()
	defer done()
	// The ignore files are read only when the listing has them (most
	// directories have none: no failed open per directory).
	for _, e := range entries {
		if name := e.Name(); name == ".gitignore" || name == ".cairnignore" {
			if b, err := os.ReadFile(filepath.Join(absDir, name)); err == nil {
				// A fresh slice per directory: sibling directories' walks
				// run concurrently and must not share a backing array.
				stack = append(stack[:len(stack):len(stack)], ignoreRules{dir: relDir, m: gitignore.CompileIgnoreLines(strings.Split(string(b), "\n")...)})
			}
		}
	}
	for _, e := range entries {
		name := e.Name()
		rel := name
		if relDir != "" {
			rel = relDir + "/" + name
		}
		abs := filepath.Join(absDir, name)
		if e.IsDir() {
			switch {
			case alwaysSkipDirs[name]:
			case vendoredDirs[name]:
				skipped[SkipVendored]++
			case builtDir(absDir, name):
				skipped[SkipBuilt]++
			case ignoredByRules(stack, rel, true):
				skipped[SkipIgnored]++
			case !wk.scope.dir(rel):
				skipped[SkipScope]++
			default:
				subdirs = append(subdirs, [2]string{abs, rel})
			}
			continue
		}
		if !e.Type().IsRegular() { // symlinks, sockets, devices
			continue
		}
		if builtFile(name) {
			skipped[SkipBuilt]++
			continue
		}
		if ignoredByRules(stack, rel, false) {
			skipped[SkipIgnored]++
			continue
		}
		if !wk.scope.file(rel) {
			skipped[SkipScope]++
			continue
		}
		size, mod, err := stat(e)
		if err != nil {
			skipped[SkipUnread]++
			continue
		}
		if size > wk.max {
			skipped[SkipOversized]++
			continue
		}
		files = append(files, File{Rel: rel, Abs: abs, Size: size, Mod: mod})
	}
}

// Ignored reports whether a workspace-relative file is kept out of the
// indexes: excluded by the ignore rules of its ancestors, or outside the
// index scope (used for watcher events on single files).
func (w *Workspace) Ignored(rel string) bool {
	return !w.scope.Load().file(rel) || w.ignoredBy(rel, ".gitignore", ".cairnignore")
}

// IgnoredDir is Ignored for a directory: true when no file under it can
// be indexed (the watcher does not watch it).
func (w *Workspace) IgnoredDir(rel string) bool {
	return !w.scope.Load().dir(rel) || w.ignoredBy(rel, ".gitignore", ".cairnignore")
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
