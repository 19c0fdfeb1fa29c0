//go:build unix

package shell

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// needTool fails under CI=true and skips elsewhere when a tool is missing
// (gopls' testenv.NeedsTool).
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required under CI: %v", name, err)
		}
		t.Skipf("%s not found: %v", name, err)
	}
}

// hostileRepo is a workspace repository whose config and hooks each write a
// marker file into marks when git runs them: fsmonitor, a pre-commit hook,
// the pager, an external diff, a filter (clean, smudge and process), a
// textconv, a merge driver, an alias, an editor and a credential helper. It
// also ships an embedded bare repository as plain files whose config sets
// core.fsmonitor.
func hostileRepo(t *testing.T) (root, marks string) {
	t.Helper()
	needTool(t, "git")
	root, marks = t.TempDir(), t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(rel, content string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	git("config", "user.name", "Repo")
	git("config", "user.email", "repo@example.com")
	write("a.txt", "one\n", 0o644)
	write("b.bin", "bin\n", 0o644)
	git("add", "-A")
	git("commit", "-qm", "init")
	git("branch", "other")

	mark := func(name string) string { return "echo " + name + " >> " + filepath.Join(marks, name) }
	write(".git/hooks/pre-commit", "#!/bin/sh\n"+mark("pre-commit")+"\n", 0o755)
	write(".git/hooks/post-checkout", "#!/bin/sh\n"+mark("post-checkout")+"\n", 0o755)
	write("marks.sh", "#!/bin/sh\n"+`echo "$MARK" >> `+marks+`/"$MARK"`+"\ncat\n", 0o755)
	cfg := `
[core]
	fsmonitor = "` + mark("fsmonitor") + `; true"
	pager = "` + mark("pager") + `; cat"
	editor = "` + mark("editor") + `; true"
[diff]
	external = "` + mark("diff-external") + `; true"
[filter "hide"]
	clean = "` + mark("filter-clean") + `; cat"
	smudge = "` + mark("filter-smudge") + `; cat"
	required = true
[filter "proc"]
	process = "` + mark("filter-process") + `; false"
[diff "bin"]
	textconv = "sh -c '` + mark("textconv") + `; cat \"$0\"'"
[merge "mine"]
	driver = "` + mark("merge-driver") + `; false"
[alias]
	st = "!` + mark("alias") + `"
[credential]
	helper = "!` + mark("credential") + `"
[pager]
	log = "` + mark("pager-log") + `; cat"
`
	f, err := os.OpenFile(filepath.Join(root, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(cfg); err != nil {
		t.Fatal(err)
	}
	f.Close()
	write(".gitattributes", "a.txt filter=hide merge=mine\n*.bin diff=bin\n*.proc filter=proc\n", 0o644)

	write("vendor/dep/HEAD", "ref: refs/heads/main\n", 0o644)
	write("vendor/dep/config", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = \""+mark("bare-fsmonitor")+"; true\"\n", 0o644)
	write("vendor/dep/objects/info/.keep", "", 0o644)
	write("vendor/dep/refs/heads/.keep", "", 0o644)
	return root, marks
}

func markers(t *testing.T, marks string) []string {
	t.Helper()
	ents, err := os.ReadDir(marks)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// hostileCommands exercise every hook of hostileRepo: status, diff (with
// the external diff and the textconv), log -p, add (clean), commit (hook,
// editor), checkout (smudge, post-checkout), merge (driver), an alias, a
// pager forced through a terminal, and the embedded bare repository.
var hostileCommands = []string{
	"git status --short",
	"echo two >> a.txt; echo more >> b.bin; git diff; git diff --stat",
	"git log -p -2",
	"git add -A",
	"git commit -q -m change",
	"git commit -q --allow-empty",
	"git checkout -q other && git checkout -q main",
	"git checkout -q other && echo theirs > a.txt && git commit -qam theirs && git checkout -q main && echo ours > a.txt && git commit -qam ours && git merge other; git merge --abort",
	"git st",
	"script -qec 'git log -1' /dev/null",
	"git -C vendor/dep status",
	"echo p > p.proc && git add p.proc",
}

func runAll(t *testing.T, root string, env []string) map[string]RunResult {
	t.Helper()
	out := map[string]RunResult{}
	for _, c := range hostileCommands {
		res, err := Run(context.Background(), RunOptions{Dir: root, Command: c, Timeout: 2 * time.Minute, Env: env})
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		out[c] = res
	}
	return out
}

func TestGitEnvIgnoresRepositoryCode(t *testing.T) {
	needTool(t, "script")
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "TERM=dumb",
		// The user's own command-scope config is kept, before the overrides.
		"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=Cairn User",
		"GIT_CONFIG_KEY_1=user.email", "GIT_CONFIG_VALUE_1=user@example.com"}

	// The same commands without the overrides run the repository's code:
	// the setup does what it claims.
	root, marks := hostileRepo(t)
	runAll(t, root, base)
	got := markers(t, marks)
	for _, want := range []string{"fsmonitor", "pre-commit", "post-checkout", "editor", "diff-external", "filter-clean", "filter-smudge",
		"filter-process", "textconv", "merge-driver", "alias", "pager-log", "bare-fsmonitor"} {
		if !slices.Contains(got, want) {
			t.Errorf("without GitEnv, %s did not run (markers %q): the test does not test it", want, got)
		}
	}

	root, marks = hostileRepo(t)
	// The user's GIT_EXTERNAL_DIFF, which beats every config, is dropped.
	env := GitEnv(append(base, "GIT_EXTERNAL_DIFF=sh -c 'echo env >> "+filepath.Join(marks, "env-external-diff")+"' --"), root)
	results := runAll(t, root, env)
	if got := markers(t, marks); len(got) > 0 {
		t.Errorf("repository-supplied code ran under GitEnv: %q", got)
	}
	// git still works.
	if r := results["git status --short"]; r.ExitCode != 0 {
		t.Errorf("git status failed: %s", r.Output)
	}
	d := results["echo two >> a.txt; echo more >> b.bin; git diff; git diff --stat"]
	if d.ExitCode != 0 || !strings.Contains(d.Output, "+two") || !strings.Contains(d.Output, "+more") {
		t.Errorf("git diff under GitEnv: exit %d\n%s", d.ExitCode, d.Output)
	}
	if r := results["git commit -q -m change"]; r.ExitCode != 0 {
		t.Errorf("git commit failed: %s", r.Output)
	}
	if r := results["echo p > p.proc && git add p.proc"]; r.ExitCode != 0 {
		t.Errorf("git add with the process filter neutralized failed: %s", r.Output)
	}
	if r := results["git -C vendor/dep status"]; r.ExitCode == 0 || !strings.Contains(r.Output, "bare repository") {
		t.Errorf("the embedded bare repository was used: exit %d %s", r.ExitCode, r.Output)
	}
	author, err := Run(context.Background(), RunOptions{Dir: root, Command: "git log -1 --format=%an", Env: env})
	if err != nil || strings.TrimSpace(author.Output) != "Cairn User" {
		t.Errorf("the user's GIT_CONFIG entries were lost: %q %v", author.Output, err)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "GIT_EXTERNAL_DIFF=") {
			t.Errorf("GIT_EXTERNAL_DIFF kept: %q", kv)
		}
	}
}

// A config the repository includes (whatever the include's condition) is
// neutralized too.
func TestGitEnvFollowsIncludes(t *testing.T) {
	root, marks := hostileRepo(t)
	inc := filepath.Join(root, "extra.cfg")
	if err := os.WriteFile(inc, []byte("[filter \"inc\"]\n\tclean = \"echo inc >> "+filepath.Join(marks, "included")+"; cat\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(root, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[includeIf \"onbranch:main\"]\n\tpath = ../extra.cfg\n")
	f.Close()
	if err := os.WriteFile(filepath.Join(root, "c.inc"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".gitattributes"), []byte("*.inc filter=inc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := GitEnv([]string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1"}, root)
	res, err := Run(context.Background(), RunOptions{Dir: root, Command: "git add c.inc && git status --short", Env: env})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v %s", err, res.Output)
	}
	if got := markers(t, marks); len(got) > 0 {
		t.Errorf("an included filter ran: %q", got)
	}
}

func TestGitEnvMergesUserConfigCount(t *testing.T) {
	env := GitEnv([]string{"A=1", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=color.ui", "GIT_CONFIG_VALUE_0=never", "GIT_PAGER=less"}, t.TempDir())
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := m[k]; dup {
			t.Errorf("%s set twice", k)
		}
		m[k] = v
	}
	if m["GIT_CONFIG_KEY_0"] != "color.ui" || m["GIT_CONFIG_VALUE_0"] != "never" || m["A"] != "1" || m["GIT_PAGER"] != "cat" {
		t.Errorf("env: %q", env)
	}
	if m["GIT_CONFIG_COUNT"] != "6" || m["GIT_CONFIG_KEY_1"] != "core.fsmonitor" || m["GIT_CONFIG_KEY_5"] != "protocol.ext.allow" {
		t.Errorf("overrides: %q", env)
	}
}
