package shell

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/workspace"
)

// Git run by a command of the tools ignores code the repository supplies:
// hooks, fsmonitor, pagers, editors, external diff and merge drivers,
// textconv and filters, credential helpers, aliases and the other settings
// of a repository's config that name a program. The environment built here
// overrides them at git's command scope (GIT_CONFIG_COUNT), which beats
// every config file, and makes git refuse bare repositories found by
// discovery (an embedded bare repository shipped as plain files, whose
// config would otherwise run when a command does `git -C vendor/dep status`).
//
// This is not a wall: the command line is the model's, and it may unset
// these variables or pass `-c` itself. What it buys is that an ordinary,
// read-rated `git status` or `git diff` runs no repository-supplied code;
// the sandbox (no host sockets, protected paths read-only) is the wall for
// a command that tries.

// gitAlways are set for every command: they are safe whatever the
// repository holds, and they beat the user's own config only where that
// config would run code on a repository's behalf.
var gitAlways = [][2]string{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"safe.bareRepository", "explicit"},
	{"protocol.ext.allow", "never"},
}

// gitEnvSet are variables set for every command; each beats the config
// setting of the same purpose (core.editor, sequence.editor, core.pager,
// pager.<cmd>). ":" as an editor leaves the message empty, so a commit
// without -m aborts instead of running the repository's editor.
var gitEnvSet = [][2]string{
	{"GIT_PAGER", "cat"},
	{"GIT_EDITOR", ":"},
	{"GIT_SEQUENCE_EDITOR", ":"},
}

// gitEnvDrop are variables removed: GIT_EXTERNAL_DIFF beats every config.
var gitEnvDrop = []string{"GIT_EXTERNAL_DIFF"}

// plainDiff is what an external diff driver named by the repository is
// replaced with: a unified diff of git's two temporary files. An empty
// value is not "no driver" to git (it tries to run ""), and a config
// setting cannot be unset from the environment.
const plainDiff = `sh -c 'diff -u -- "$2" "$5"; :' sh`

// plainMerge replaces a repository's merge driver: git's own three-way
// merge of the same files.
const plainMerge = "git merge-file --marker-size=%L %A %O %B"

// gitNeutral returns the override of one key a repository config sets, or
// false when the key runs nothing. key is canonical (git config --list):
// section and name lower case, the subsection as written.
func gitNeutral(key, value string) ([][2]string, bool) {
	section, rest, _ := strings.Cut(key, ".")
	sub, name := "", rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		sub, name = rest[:i], rest[i+1:]
	}
	one := func(v string) ([][2]string, bool) { return [][2]string{{key, v}}, true }
	switch section {
	case "filter":
		if sub == "" {
			return nil, false
		}
		switch name {
		case "clean", "smudge", "process":
			// An empty command is no filter; required=false lets git
			// go on without it.
			return [][2]string{{key, ""}, {"filter." + sub + ".required", "false"}}, true
		}
	case "diff":
		switch {
		case sub == "" && name == "external":
			return one(plainDiff)
		case sub != "" && name == "command":
			return one(plainDiff)
		case sub != "" && name == "textconv":
			return one("cat")
		}
	case "merge":
		if sub != "" && name == "driver" {
			return one(plainMerge)
		}
	case "alias":
		return one("")
	case "core":
		switch name {
		case "sshcommand":
			return one("ssh")
		case "askpass", "alternaterefscommand":
			return one("")
		case "editor":
			return one(":") // GIT_EDITOR beats it; belt and braces
		case "pager":
			return one("cat")
		}
	case "credential":
		if name == "helper" {
			return one("") // an empty helper clears the list
		}
	case "gpg":
		switch {
		case name == "program" && (sub == "" || sub == "openpgp"):
			return one("gpg")
		case name == "program" && sub == "ssh":
			return one("ssh-keygen")
		case name == "program" && sub == "x509":
			return one("gpgsm")
		case name == "defaultkeycommand":
			return one("")
		}
	case "remote":
		switch name {
		case "uploadpack":
			return one("git-upload-pack")
		case "receivepack":
			return one("git-receive-pack")
		}
	case "submodule":
		if name == "update" && strings.HasPrefix(strings.TrimSpace(value), "!") {
			return one("checkout")
		}
	case "interactive":
		if name == "difffilter" {
			return one("cat")
		}
	case "sequence":
		if name == "editor" {
			return one(":")
		}
	case "trailer":
		if name == "cmd" || name == "command" {
			return one("true")
		}
	case "sendemail":
		switch name {
		case "tocmd", "cccmd", "headercmd", "smtpserver":
			return one("")
		}
	}
	// Whatever else names a program (browser.<tool>.cmd, man.<tool>.path,
	// difftool.<tool>.cmd, mergetool.<tool>.cmd, ...).
	switch name {
	case "cmd", "command", "program":
		return one("false")
	case "path":
		switch section {
		case "man", "browser", "difftool", "mergetool":
			return one("false")
		}
	}
	return nil, false
}

// GitEnv returns environ with git made to ignore repository-supplied code
// (see above) for the workspace at root. The user's own GIT_CONFIG_COUNT
// entries are kept, numbered first, so the overrides win. The repositories
// whose configs are read: every git directory in the workspace
// (workspace.FindProtected), the one git discovers above it, and the files
// their include.path and includeIf.*.path name, whatever the condition.
func GitEnv(environ []string, root string) []string {
	found, _ := workspace.FindProtected(root)
	return GitEnvFor(environ, root, found)
}

// GitEnvFor is GitEnv with the workspace's protected paths already walked
// (workspace.FindProtected), so that a caller that needs them too walks
// the workspace once per command.
func GitEnvFor(environ []string, root string, protected []string) []string {
	var keep []string
	userCount := -1
	user := map[string]string{}
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		switch {
		case name == "GIT_CONFIG_COUNT":
			if n, err := strconv.Atoi(strings.TrimSpace(val)); err == nil && n >= 0 {
				userCount = n
			}
			continue
		case strings.HasPrefix(name, "GIT_CONFIG_KEY_"), strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
			user[name] = val
			continue
		}
		if dropGitVar(name) {
			continue
		}
		keep = append(keep, kv)
	}
	var pairs [][2]string
	for i := 0; i < userCount; i++ {
		k, ok := user["GIT_CONFIG_KEY_"+strconv.Itoa(i)]
		if !ok {
			break // git itself would refuse a count with a missing key
		}
		pairs = append(pairs, [2]string{k, user["GIT_CONFIG_VALUE_"+strconv.Itoa(i)]})
	}
	pairs = append(pairs, gitAlways...)
	pairs = append(pairs, repoOverrides(root, protected)...)
	for _, kv := range gitEnvSet {
		keep = append(keep, kv[0]+"="+kv[1])
	}
	keep = append(keep, "GIT_CONFIG_COUNT="+strconv.Itoa(len(pairs)))
	for i, p := range pairs {
		n := strconv.Itoa(i)
		keep = append(keep, "GIT_CONFIG_KEY_"+n+"="+p[0], "GIT_CONFIG_VALUE_"+n+"="+p[1])
	}
	return keep
}

func dropGitVar(name string) bool {
	for _, d := range gitEnvDrop {
		if name == d {
			return true
		}
	}
	for _, s := range gitEnvSet {
		if name == s[0] {
			return true
		}
	}
	return false
}

// repoOverrides neutralizes each program-naming key of the workspace's
// repository configs, in a stable order.
func repoOverrides(root string, protected []string) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	for _, cfg := range repoConfigs(root, protected) {
		for _, e := range readGitConfig(cfg, map[string]bool{}, 0) {
			over, ok := gitNeutral(e[0], e[1])
			if !ok {
				continue
			}
			for _, o := range over {
				if k := o[0] + "\x00" + o[1]; !seen[k] {
					seen[k] = true
					out = append(out, o)
				}
			}
		}
	}
	return out
}

// repoConfigs lists the config files of the git directories a command in
// the workspace may use.
func repoConfigs(root string, protected []string) []string {
	var dirs []string
	// Every protected directory is taken: a .vscode has no config file,
	// and a file that is no git config lists nothing.
	for _, p := range protected {
		st, err := os.Stat(p) // a .git that is a symlink counts as its target
		if err != nil {
			continue
		}
		switch {
		case st.IsDir():
			dirs = append(dirs, p)
		case strings.EqualFold(filepath.Base(p), ".git"):
			if d := gitfileTarget(p); d != "" {
				dirs = append(dirs, d)
			}
		}
	}
	// The repository git discovers from the root upwards, when the
	// workspace is inside one.
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		g := filepath.Join(d, ".git")
		if st, err := os.Lstat(g); err == nil {
			if st.IsDir() {
				dirs = append(dirs, g)
			} else if t := gitfileTarget(g); t != "" {
				dirs = append(dirs, t)
			}
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, d := range dirs {
		add(filepath.Join(d, "config"))
		add(filepath.Join(d, "config.worktree"))
		if b, err := os.ReadFile(filepath.Join(d, "commondir")); err == nil {
			c := strings.TrimSpace(string(b))
			if !filepath.IsAbs(c) {
				c = filepath.Join(d, c)
			}
			add(filepath.Join(c, "config"))
		}
	}
	return out
}

// gitfileTarget reads a ".git" file ("gitdir: path") and returns the
// directory it names, or "".
func gitfileTarget(p string) string {
	b, err := os.ReadFile(p)
	if err != nil || len(b) > 4096 {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	d, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	if !ok {
		return ""
	}
	d = strings.TrimSpace(d)
	if !filepath.IsAbs(d) {
		d = filepath.Join(filepath.Dir(p), d)
	}
	return d
}

type configCacheEntry struct {
	mod     time.Time
	size    int64
	entries [][2]string
}

var configCache struct {
	sync.Mutex
	m map[string]configCacheEntry
}

// readGitConfig lists the entries of one config file as git reads it
// (git config --file --list parses it: no second parser to disagree with
// git about what a line means), and of the files it includes, whatever the
// include's condition. Nothing in a config runs when it is only listed.
func readGitConfig(p string, visited map[string]bool, depth int) [][2]string {
	if depth > 10 || visited[p] {
		return nil
	}
	visited[p] = true
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return nil
	}
	configCache.Lock()
	c, ok := configCache.m[p]
	configCache.Unlock()
	if !ok || !c.mod.Equal(st.ModTime()) || c.size != st.Size() {
		c = configCacheEntry{mod: st.ModTime(), size: st.Size(), entries: listGitConfig(p)}
		configCache.Lock()
		if configCache.m == nil {
			configCache.m = map[string]configCacheEntry{}
		}
		configCache.m[p] = c
		configCache.Unlock()
	}
	out := append([][2]string(nil), c.entries...)
	for _, e := range c.entries {
		if e[0] != "include.path" && !(strings.HasPrefix(e[0], "includeif.") && strings.HasSuffix(e[0], ".path")) {
			continue
		}
		inc := e[1]
		switch {
		case strings.HasPrefix(inc, "~/"):
			home, err := os.UserHomeDir()
			if err != nil {
				continue
			}
			inc = filepath.Join(home, inc[2:])
		case !filepath.IsAbs(inc):
			inc = filepath.Join(filepath.Dir(p), inc)
		}
		out = append(out, readGitConfig(inc, visited, depth+1)...)
	}
	return out
}

// listGitConfig runs `git config --file p --null --list`.
func listGitConfig(p string) [][2]string {
	if !filepath.IsAbs(p) {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "config", "--file", p, "--null", "--list")
	// Run from "/" with discovery stopped there: the repository a config
	// belongs to is never set up (listing a file needs none).
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent",
		"GIT_CEILING_DIRECTORIES=/", "GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=safe.bareRepository", "GIT_CONFIG_VALUE_0=explicit",
		"GIT_CONFIG_KEY_1=core.fsmonitor", "GIT_CONFIG_VALUE_1=false"}
	cmd.Dir = string(filepath.Separator)
	out, err := cmd.Output()
	if err != nil {
		// No git, or a file git cannot parse (then git refuses the
		// repository as well, and runs none of it).
		return nil
	}
	var entries [][2]string
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		k, v, _ := bytes.Cut(rec, []byte{'\n'})
		entries = append(entries, [2]string{string(k), string(v)})
	}
	return entries
}
