package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Profile names how much a sandboxed command may do (after Codex and
// Claude Code).
type Profile string

const (
	// ReadOnly: nothing writable but a private temporary directory; no
	// network. Every command the classifier rates read runs like this.
	ReadOnly Profile = "read-only"
	// WorkspaceWrite: the workspace (minus .git/hooks, .git/config and
	// the state directory), temp and the declared caches are writable;
	// the network only when Policy.Network says so.
	WorkspaceWrite Profile = "workspace-write"
	// Full is no sandbox. Only a user's approval of the exact command
	// may choose it.
	Full Profile = "full"
)

// Policy is what one sandboxed command may touch.
type Policy struct {
	Profile Profile
	// Workspace is the absolute workspace root (the command's working
	// directory). Readable always, writable under WorkspaceWrite.
	Workspace string
	// StateDir is the server's state directory: never writable.
	StateDir string
	// TempDir is the command's private temporary directory ($TMPDIR);
	// always writable. Required.
	TempDir string
	// Home is the user's home directory; "" means os.UserHomeDir. Only
	// the declared caches and git configuration below it are readable.
	Home string
	// Caches are tool caches (readable always, writable under
	// WorkspaceWrite). Nil means DefaultCaches(Home, getenv).
	Caches []string
	// Toolchains are directories below home that programs on PATH need
	// (readable always). Nil means DefaultToolchains(Home, $PATH).
	Toolchains []string
	// ReadableRoots and WritableRoots are extra absolute directories
	// (sandbox.readableRoots, sandbox.writableRoots). Writable roots are
	// only writable under WorkspaceWrite; they are readable always.
	ReadableRoots []string
	WritableRoots []string
	// Network allows network access (sandbox.network).
	Network bool
	// Protected are existing paths below the writable roots that a
	// command must not change (every .git at any depth, git directories
	// by content, editor and CI configuration: the caller's walk of the
	// workspace). Nil means the workspace's .git only.
	Protected []string
	// ProtectedNames are entries that must not be created at the
	// workspace root when they do not exist (.git, .cairn, .vscode, ...):
	// without namespaces the root is granted piecewise to keep them out.
	// Nil means DefaultProtectedNames.
	ProtectedNames []string
	// Limits bound the command's resources; zero fields take
	// DefaultLimits.
	Limits Limits
}

// DefaultProtectedNames are the names Policy.ProtectedNames defaults to.
var DefaultProtectedNames = []string{".git", ".cairn", ".vscode", ".idea", ".zed", ".devcontainer", ".envrc", ".github"}

// systemRoots are readable in every profile: programs, libraries,
// configuration and the kernel's views. Missing ones are skipped.
var systemRoots = []string{
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/nix/store", "/snap", "/proc", "/sys", "/run/current-system",
	"/dev/zero", "/dev/random", "/dev/urandom", "/dev/full",
}

// secretSystemFiles are never readable, even where permissions would let
// the user (root, in a container) read them. Landlock cannot deny a path
// below a readable one, so their directories are granted entry by entry.
var secretSystemFiles = []string{"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/ssl/private", "/etc/security/opasswd", "/etc/krb5.keytab"}

func secretReads() []string {
	out := append([]string(nil), secretSystemFiles...)
	keys, _ := filepath.Glob("/etc/ssh/ssh_host_*_key")
	return append(out, keys...)
}

// deviceFiles are writable in every profile.
var deviceFiles = []string{"/dev/null", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// DefaultCaches lists the usual tool caches below home, honouring the
// variables that move them.
func DefaultCaches(home string, getenv func(string) string) []string {
	var out []string
	add := func(env, def string) {
		if v := getenv(env); v != "" && filepath.IsAbs(v) {
			out = append(out, v)
			return
		}
		if def != "" {
			out = append(out, def)
		}
	}
	cache := getenv("XDG_CACHE_HOME")
	if cache == "" && home != "" {
		cache = filepath.Join(home, ".cache")
	}
	gopath := ""
	if home != "" {
		gopath = filepath.Join(home, "go")
	}
	if v := getenv("GOPATH"); v != "" {
		gopath = strings.Split(v, string(os.PathListSeparator))[0]
	}
	if cache != "" {
		add("GOCACHE", filepath.Join(cache, "go-build"))
		add("PIP_CACHE_DIR", filepath.Join(cache, "pip"))
	}
	if gopath != "" {
		add("GOMODCACHE", filepath.Join(gopath, "pkg", "mod"))
	}
	if home != "" {
		add("npm_config_cache", filepath.Join(home, ".npm"))
		out = append(out, filepath.Join(home, ".cargo", "registry"))
	}
	return out
}

// toolchainHomes are directories below home that hold whole toolchains
// (version managers); a PATH entry inside one makes all of it readable.
// Others (~/.local, ~/.cargo, which keeps registry tokens) only get the
// PATH entry itself.
var toolchainHomes = map[string]bool{".pyenv": true, ".nvm": true, ".rbenv": true, ".rustup": true, "go": true,
	".volta": true, ".bun": true, ".deno": true, ".sdkman": true, ".asdf": true, ".goenv": true, ".nodenv": true, "sdk": true}

// DefaultToolchains lists the readable directories the user's PATH needs
// below home (everything outside home is covered by the system roots or
// is not readable).
func DefaultToolchains(home, path string) []string {
	if home == "" {
		return nil
	}
	var out []string
	for _, dir := range filepath.SplitList(path) {
		rel, err := filepath.Rel(home, dir)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		top := strings.Split(filepath.ToSlash(rel), "/")[0]
		if toolchainHomes[top] {
			out = append(out, filepath.Join(home, top))
		} else {
			out = append(out, filepath.Clean(dir))
		}
	}
	return out
}

// gitDirs returns the repository directories a workspace whose .git is a
// file (a worktree or submodule: "gitdir: PATH") lives on, so that git
// can read them.
func gitDirs(ws string) []string {
	b, err := os.ReadFile(filepath.Join(ws, ".git"))
	if err != nil {
		return nil
	}
	dir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return nil
	}
	dir = strings.TrimSpace(dir)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(ws, dir)
	}
	out := []string{filepath.Clean(dir)}
	if c, err := os.ReadFile(filepath.Join(dir, "commondir")); err == nil {
		common := strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(dir, common)
		}
		out = append(out, filepath.Clean(common))
	}
	return out
}

// homeReadable are configuration files below home that tools need and
// that hold no credentials by convention.
var homeReadable = []string{".gitconfig", ".config/git", ".gitignore_global", ".config/go", "go/bin", ".cargo/bin", ".local/bin"}

// Spec is what the launcher enforces: the result of a Policy, with every
// path absolute and cleaned.
type Spec struct {
	// Unconfined: the Full profile. The launcher only supervises: it
	// adopts the command's orphans and kills them when it ends.
	Unconfined bool     `json:"unconfined,omitempty"`
	Read       []string `json:"read"`
	Write      []string `json:"write"`
	// List are directories whose entries may be listed (and their
	// programs run) but whose files are read only through Read: the
	// directories on the way to a secret system file.
	List    []string `json:"list,omitempty"`
	Network bool     `json:"network"`
	// Protect are paths below writable roots that the launcher
	// bind-mounts read-only in its own mount namespace (only when
	// Namespaces is set; otherwise Write already leaves them out).
	Protect []string `json:"protect,omitempty"`
	// Namespaces: the launcher runs in fresh user, mount, PID and IPC
	// namespaces (and network, unless Network), builds the command's
	// filesystem from Binds, Masks and Protect on a new root mounted at
	// Root, and is PID 1 of the command's PID namespace.
	Namespaces bool `json:"namespaces,omitempty"`
	// Binds are the host paths the command's filesystem holds (at the
	// same paths), read-only unless Write.
	Binds []Bind `json:"binds,omitempty"`
	// Masks are paths inside Binds hidden behind an empty file or
	// directory (the secret system files).
	Masks []string `json:"masks,omitempty"`
	// Root is an empty directory the launcher mounts the new root on
	// (the private temporary directory).
	Root string `json:"root,omitempty"`
	// Limits are applied by the launcher as rlimits and as the size of
	// the private /tmp.
	Limits Limits `json:"limits"`
	// Argv is the program to exec (Argv[0] absolute) and its arguments.
	Argv []string `json:"argv"`
}

// Bind is one host path in the command's filesystem.
type Bind struct {
	Path  string `json:"path"`
	Write bool   `json:"write,omitempty"`
}

// Spec computes the rules of p for running argv. With namespaces, the
// command's filesystem is built from Binds (the read list read-only, the
// writable roots read-write) and the existing protected paths are
// read-only bind mounts; without, the writable roots are granted
// piecewise around them, and protected names missing from the workspace
// root are kept from being created by granting the root piecewise (no new
// entry can be made directly in it). Protected symlinks cannot be bound
// over: the directory holding one is granted piecewise in both modes.
func (p Policy) Spec(argv []string, namespaces bool) (Spec, error) {
	if err := p.check(argv); err != nil {
		return Spec{}, err
	}
	home := p.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	caches := p.Caches
	if caches == nil {
		caches = DefaultCaches(home, os.Getenv)
	}
	s := Spec{Network: p.Network, Argv: argv, Namespaces: namespaces, Limits: p.Limits.WithDefaults()}
	read := p.readRoots(argv, home, caches)

	tmp := p.TempDir
	if namespaces {
		// The private /tmp is a size-limited tmpfs; the temporary
		// directory only holds the new root's mount point.
		tmp = "/tmp"
		s.Root = clean(p.TempDir)
	}
	write := append([]string{tmp}, deviceFiles...)
	if namespaces {
		write = append(write, "/dev/shm")
	}
	var writeRoots []string
	if p.Profile == WorkspaceWrite {
		w, roots, err := p.writeGrants(caches, namespaces, &s)
		if err != nil {
			return Spec{}, err
		}
		write, writeRoots = append(write, w...), roots
	}
	secrets := secretReads()
	var readable []string
	for _, r := range read {
		if !filepath.IsAbs(r) {
			return Spec{}, fmt.Errorf("sandbox: readable root %q is not absolute", r)
		}
		g, split, err := grantExcept(filepath.Clean(r), secrets)
		if err != nil {
			return Spec{}, err
		}
		readable = append(readable, g...)
		s.List = append(s.List, split...)
	}
	s.Read = dedupe(readable)
	s.List = dedupe(s.List)
	s.Write = dedupe(write)
	s.Protect = dedupe(s.Protect)
	if namespaces {
		// Every directory of the command's filesystem may be listed: it
		// holds nothing but what is readable (the secrets are masked).
		s.List = append(s.List, "/")
		s.Binds = binds(read, writeRoots)
		for _, m := range secrets {
			if _, err := os.Lstat(m); err == nil {
				s.Masks = append(s.Masks, m)
			}
		}
	}
	return s, nil
}

// check refuses a policy the sandbox cannot enforce and a program it
// cannot place.
func (p Policy) check(argv []string) error {
	if p.Profile != ReadOnly && p.Profile != WorkspaceWrite {
		return fmt.Errorf("sandbox: profile %q cannot be enforced (use read-only or workspace-write)", p.Profile)
	}
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return fmt.Errorf("sandbox: the program must be an absolute path, got %q", argv)
	}
	if p.TempDir == "" || !filepath.IsAbs(p.TempDir) {
		return fmt.Errorf("sandbox: a private temporary directory is required")
	}
	return nil
}

// readRoots lists what the command may read: the system, the program,
// the workspace and its git directories, toolchains, parts of the home
// directory, caches, and the extra readable and writable roots.
func (p Policy) readRoots(argv []string, home string, caches []string) []string {
	read := append([]string(nil), systemRoots...)
	read = append(read, argv[0])
	if p.Workspace != "" {
		read = append(read, p.Workspace)
		read = append(read, gitDirs(p.Workspace)...)
	}
	toolchains := p.Toolchains
	if toolchains == nil {
		toolchains = DefaultToolchains(home, os.Getenv("PATH"))
	}
	read = append(read, toolchains...)
	if home != "" {
		for _, h := range homeReadable {
			read = append(read, filepath.Join(home, h))
		}
	}
	read = append(read, caches...)
	read = append(read, p.ReadableRoots...)
	read = append(read, p.WritableRoots...)
	if p.Network {
		// Name resolution: /etc/resolv.conf is often a link into /run
		// (systemd-resolved), which is otherwise not in the command's
		// filesystem.
		read = append(read, "/etc/resolv.conf")
	}
	return read
}

// writeGrants grants writes under workspace-write: the caches, the
// writable roots and the workspace, except the protected paths below
// them. With namespaces those are bound read-only over the writable
// roots (added to s.Protect); without, each root is granted piecewise
// around them. It returns the write grants and the writable roots.
func (p Policy) writeGrants(caches []string, namespaces bool, s *Spec) (write, writeRoots []string, err error) {
	protected, unbindable := p.protectedPaths(namespaces)
	roots := append([]string(nil), caches...)
	roots = append(roots, p.WritableRoots...)
	if p.Workspace != "" {
		roots = append(roots, clean(p.Workspace))
	}
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			return nil, nil, fmt.Errorf("sandbox: writable root %q is not absolute", r)
		}
		writeRoots = append(writeRoots, r)
		r = clean(r)
		except := unbindable
		if namespaces {
			for _, pr := range protected {
				if pr == r || strings.HasPrefix(pr, r+string(filepath.Separator)) {
					s.Protect = append(s.Protect, pr)
				}
			}
		} else {
			except = append(append([]string(nil), protected...), unbindable...)
		}
		w, err := grantWrite(r, except)
		if err != nil {
			return nil, nil, err
		}
		write = append(write, w...)
	}
	return write, writeRoots, nil
}

// protectedPaths lists the paths a command may not write: protected
// (bound read-only with namespaces, else granted around) and unbindable
// (symlinks, and anything without namespaces: granted around).
func (p Policy) protectedPaths(namespaces bool) (protected, unbindable []string) {
	if p.StateDir != "" {
		protected = append(protected, clean(p.StateDir))
	}
	if p.Workspace == "" {
		return protected, nil
	}
	ws := clean(p.Workspace)
	given := p.Protected
	if given == nil {
		// All of .git, not only hooks and config: a writable .git
		// lets a command plant a commondir file or replace config
		// by rename, which moves hooks and config elsewhere.
		given = []string{filepath.Join(ws, ".git")}
	}
	for _, pr := range given {
		// The walk names paths below the workspace as given;
		// rebase them on its real path without resolving the
		// protected entry itself (it may be a symlink).
		if rel, err := filepath.Rel(filepath.Clean(p.Workspace), filepath.Clean(pr)); err == nil && filepath.IsLocal(rel) {
			pr = filepath.Join(ws, rel)
		}
		fi, err := os.Lstat(pr)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0 || !namespaces:
			unbindable = append(unbindable, pr)
		default:
			protected = append(protected, pr)
		}
	}
	if namespaces {
		return protected, unbindable
	}
	names := p.ProtectedNames
	if names == nil {
		names = DefaultProtectedNames
	}
	// Without a mount namespace nothing can be bound over a name that
	// does not exist yet: the root is granted piecewise so that no new
	// entry can be made in it. With one, the root stays writable and the
	// caller removes protected paths a command created (see
	// tools.revertProtected): a command must be able to make `bin/` or
	// `go.mod` in a fresh workspace.
	for _, n := range names {
		pr := filepath.Join(ws, n)
		if _, err := os.Lstat(pr); err != nil {
			unbindable = append(unbindable, pr)
		}
	}
	return protected, unbindable
}

// specialRoots are built by the launcher itself in the command's
// filesystem: a fresh /proc, /sys read-only, a minimal /dev and /tmp.
var specialRoots = []string{"/proc", "/sys", "/dev", "/tmp"}

// binds lists the command's filesystem: every readable root read-only and
// every writable one read-write (a path on both lists is writable).
func binds(read, write []string) []Bind {
	mode := map[string]bool{}
	var order []string
	add := func(p string, w bool) {
		p = filepath.Clean(p)
		for _, sp := range specialRoots {
			// What is kept below /tmp (a workspace, a test's files) is
			// bound onto the private /tmp.
			if p == sp || (sp != "/tmp" && strings.HasPrefix(p, sp+"/")) {
				return
			}
		}
		if p == "/" {
			return
		}
		if _, seen := mode[p]; !seen {
			order = append(order, p)
		}
		mode[p] = mode[p] || w
	}
	for _, r := range read {
		addResolved(r, false, add)
	}
	for _, w := range write {
		addResolved(w, true, add)
	}
	out := make([]Bind, 0, len(order))
	for _, p := range order {
		if !mode[p] && coveredBy(p, mode) {
			continue
		}
		out = append(out, Bind{Path: p, Write: mode[p]})
	}
	return out
}

// addResolved adds p at its real path, and the first symlink on the way
// to it (recreated as a link by the launcher) so that p's own name
// resolves there too.
func addResolved(p string, w bool, add func(string, bool)) {
	p = filepath.Clean(p)
	real := clean(p)
	if real != p {
		q := "/"
		for _, c := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
			q = filepath.Join(q, c)
			if fi, err := os.Lstat(q); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				add(q, false)
				break
			}
		}
	}
	add(real, w)
}

// coveredBy reports whether read-only p is already in the bind of a
// read-only ancestor (the same file, reached without a symlink).
func coveredBy(p string, mode map[string]bool) bool {
	if clean(p) != p {
		return false
	}
	for q := filepath.Dir(p); q != "/" && q != "."; q = filepath.Dir(q) {
		if w, ok := mode[q]; ok {
			return !w
		}
	}
	return false
}

// clean resolves symbolic links where the path exists (Landlock rules
// name inodes; a later check compares real paths).
func clean(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// grantWrite returns the paths to grant so that everything below root is
// granted except the protected paths (the directories on the way to them
// get nothing from this rule: read-only from the read list, or nothing).
// Landlock rights hold for a whole hierarchy, so a hole can only be made
// by granting the siblings. Used for the read list too.
func grantWrite(root string, protected []string) ([]string, error) {
	g, _, err := grantExcept(root, protected)
	return g, err
}

// grantExcept is grantWrite that also returns the directories that were
// split (root and those on the way to a protected path).
func grantExcept(root string, protected []string) (granted, split []string, err error) {
	if slices.Contains(protected, root) {
		return nil, nil, nil
	}
	inside := false
	for _, p := range protected {
		if strings.HasPrefix(p, root+string(filepath.Separator)) {
			inside = true
		}
	}
	if !inside {
		return []string{root}, nil, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("sandbox: listing %s to exclude protected paths: %w", root, err)
	}
	split = []string{root}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			// A rule on a link would grant its target, which may be
			// anywhere; the link itself needs no right.
			continue
		}
		g, sp, err := grantExcept(filepath.Join(root, e.Name()), protected)
		if err != nil {
			return nil, nil, err
		}
		granted = append(granted, g...)
		split = append(split, sp...)
	}
	return granted, split, nil
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, p := range in {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}
