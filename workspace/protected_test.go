package workspace

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
)

// needGit fails (under CI=true) or skips when git is missing, like gopls'
// testenv.NeedsTool.
func needGit(t testing.TB) {
	t.Helper()
	testenv.NeedTool(t, "git")
}

func gitCmd(t testing.TB, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
}

func writeFile(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// protectedTree builds a workspace with every kind of protected location,
// made by git where git makes them.
func protectedTree(t *testing.T) string {
	t.Helper()
	needGit(t)
	root := t.TempDir()
	gitCmd(t, root, "init", "-q")
	writeFile(t, root, "main.go", "package main\n")
	gitCmd(t, root, "init", "-q", "nested/sub")
	writeFile(t, root, "nested/sub/lib.go", "package sub\n")
	gitCmd(t, root, "init", "-q", "--bare", "third_party/bare.git")
	// An embedded bare repository shipped as plain files: no ".git" name.
	writeFile(t, root, "vendor/dep/HEAD", "ref: refs/heads/main\n")
	writeFile(t, root, "vendor/dep/config", "[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tfsmonitor = ./hook.sh\n")
	writeFile(t, root, "vendor/dep/objects/info/.keep", "")
	writeFile(t, root, "vendor/dep/refs/heads/.keep", "")
	// HEAD and a [core] config only: git's config is still read from it.
	writeFile(t, root, "vendor/min/HEAD", "ref: refs/heads/main\n")
	writeFile(t, root, "vendor/min/config", "[Core]\n\tbare = true\n")
	// A submodule-style gitfile.
	writeFile(t, root, "mods/m/.git", "gitdir: ../../.git/modules/m\n")
	writeFile(t, root, ".cairn/policy.json", "{}\n")
	writeFile(t, root, ".vscode/settings.json", "{}\n")
	writeFile(t, root, ".vscode/tasks.json", "{}\n")
	writeFile(t, root, ".idea/workspace.xml", "<x/>\n")
	writeFile(t, root, ".zed/settings.json", "{}\n")
	writeFile(t, root, ".github/workflows/ci.yml", "on: push\n")
	writeFile(t, root, ".github/CODEOWNERS", "* @x\n")
	writeFile(t, root, ".devcontainer/devcontainer.json", "{}\n")
	writeFile(t, root, "other/.devcontainer.json", "{}\n")
	writeFile(t, root, ".envrc", "use flake\n")
	writeFile(t, root, "node_modules/pkg/.envrc", "export X=1\n")
	// Things that only look like it.
	writeFile(t, root, "docs/HEAD", "not git\n")
	writeFile(t, root, "docs/config", "[user]\n")
	writeFile(t, root, "src/git/hooks.go", "package git\n")
	writeFile(t, root, "src/vscode.go", "package src\n")
	return root
}

func TestProtected(t *testing.T) {
	root := protectedTree(t)
	cases := []struct {
		rel  string
		want bool
		why  string // a substring of the reason
	}{
		{".git", true, "git"},
		{".git/config", true, "git hooks and config"},
		{".git/hooks/pre-commit", true, "git"},
		{"nested/sub/.git/config", true, "git"},
		{"nested/sub/.git/hooks/post-checkout", true, "git"},
		{"nested/sub/lib.go", false, ""},
		{"third_party/bare.git/config", true, "git"},
		{"third_party/bare.git/hooks/pre-receive", true, "git"},
		{"third_party/bare.git", true, "git"},
		{"vendor/dep/config", true, "git"},
		{"vendor/dep/hooks/post-checkout", true, "git"},
		{"vendor/dep", true, "git"},
		{"vendor/min/config", true, "git"},
		{"mods/m/.git", true, "git"},
		{".cairn/policy.json", true, "Cairn policy"},
		{".vscode/settings.json", true, "editor configuration"},
		{".vscode/tasks.json", true, "editor"},
		{".idea/workspace.xml", true, "editor"},
		{".zed/settings.json", true, "editor"},
		{".github/workflows/ci.yml", true, "CI workflows"},
		{".github/workflows/new.yml", true, "CI"},
		{".github/CODEOWNERS", false, ""},
		{".devcontainer/devcontainer.json", true, "container"},
		{".devcontainer.json", true, "container"},
		{"other/.devcontainer.json", true, "container"},
		{".envrc", true, "direnv"},
		{"deep/down/.envrc", true, "direnv"},
		{"node_modules/pkg/.envrc", true, "direnv"},
		// Not existing yet: protected by name all the same.
		{"new/.git/config", true, "git"},
		{"new/.vscode/settings.json", true, "editor"},
		// Case and Windows trailing-dot spellings of the same place.
		{".VSCode/settings.json", true, "editor"},
		{".git./config", true, "git"},
		{".g\u200cit/config", true, "git"},
		{"sub/GIT~1/config", true, "git"},
		{".vs\u200dcode/settings.json", true, "editor"},
		// OS separators.
		{filepath.Join("nested", "sub", ".git", "config"), true, "git"},
		// Lookalikes.
		{"main.go", false, ""},
		{"docs/config", false, ""},
		{"docs/HEAD", false, ""},
		{"src/git/hooks.go", false, ""},
		{"src/vscode.go", false, ""},
		{".gitignore", false, ""},
		{".github", false, ""},
		{"../outside/.git", false, ""},
	}
	for _, c := range cases {
		why, ok := Protected(root, c.rel)
		if ok != c.want {
			t.Errorf("Protected(%q) = %v (%q), want %v", c.rel, ok, why, c.want)
			continue
		}
		if ok && !strings.Contains(why, c.why) {
			t.Errorf("Protected(%q) reason %q, want it to mention %q", c.rel, why, c.why)
		}
	}
}

// A repository assembled one file at a time: the file that completes it is
// protected, and so is everything after.
func TestProtectedGitDirBeingAssembled(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "x/objects/.keep", "")
	writeFile(t, root, "x/refs/.keep", "")
	if why, ok := Protected(root, "x/HEAD"); !ok {
		t.Errorf("x/HEAD next to objects/ and refs/ is not protected")
	} else if !strings.Contains(why, "git") {
		t.Errorf("reason %q", why)
	}
	writeFile(t, root, "y/HEAD", "ref: refs/heads/main\n")
	if _, ok := Protected(root, "y/config"); !ok {
		t.Errorf("y/config next to HEAD is not protected")
	}
	if _, ok := Protected(root, "z/config"); ok {
		t.Errorf("z/config with no HEAD is protected")
	}
}

func TestProtectedThroughSymlink(t *testing.T) {
	root := protectedTree(t)
	if err := os.Symlink(filepath.Join(root, "nested", "sub", ".git"), filepath.Join(root, "innocent")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "vendor", "dep"), filepath.Join(root, "dep")); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"innocent/config", "innocent/hooks/pre-commit", "dep/config"} {
		if _, ok := Protected(root, rel); !ok {
			t.Errorf("Protected(%q) through a symlink = false", rel)
		}
	}
}

func TestFindProtected(t *testing.T) {
	root := protectedTree(t)
	// A symlink to a protected directory is reported as itself and not
	// followed; a symlink loop does not hang the walk.
	if err := os.Symlink(filepath.Join(root, ".vscode"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(root, "loop")); err != nil {
		t.Fatal(err)
	}
	got, err := FindProtected(root)
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, p := range got {
		if !filepath.IsAbs(p) {
			t.Errorf("FindProtected returned a relative path %q", p)
		}
		r, _ := filepath.Rel(root, p)
		rels = append(rels, filepath.ToSlash(r))
	}
	slices.Sort(rels)
	want := []string{
		".cairn", ".devcontainer", ".envrc", ".git", ".github/workflows", ".idea", ".vscode", ".zed",
		"mods/m/.git", "nested/sub/.git", "node_modules/pkg/.envrc", "other/.devcontainer.json",
		"third_party/bare.git", "vendor/dep", "vendor/min",
	}
	if !slices.Equal(rels, want) {
		t.Errorf("FindProtected:\n got %q\nwant %q", rels, want)
	}
	// Everything found is Protected, and nothing is below another result.
	for _, r := range rels {
		if _, ok := Protected(root, r); !ok {
			t.Errorf("FindProtected found %q but Protected says no", r)
		}
		for _, o := range rels {
			if o != r && strings.HasPrefix(r, o+"/") {
				t.Errorf("%q is below %q", r, o)
			}
		}
	}
}

func TestProtectedRootNamesAreProtected(t *testing.T) {
	root := t.TempDir()
	for _, n := range ProtectedRootNames {
		if n == ".github" {
			if _, ok := Protected(root, ".github/workflows/x.yml"); !ok {
				t.Errorf(".github/workflows is not protected")
			}
			continue
		}
		if _, ok := Protected(root, n); !ok {
			t.Errorf("root name %q is not Protected", n)
		}
	}
}

// BenchmarkFindProtected walks the Go source tree, the corpus the project
// measures its walks on.
func BenchmarkFindProtected(b *testing.B) {
	src := filepath.Join(testenv.GOROOT(b), "src")
	var n int
	for b.Loop() {
		got, err := FindProtected(src)
		if err != nil {
			b.Fatal(err)
		}
		n = len(got)
	}
	b.ReportMetric(float64(n), "found")
}

// Every .git is refused outright, not only the root's: a nested
// repository's hooks and config run code just the same.
func TestResolveWritableRefusesEveryGitDir(t *testing.T) {
	root := protectedTree(t)
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".git/config", "nested/sub/.git/config", "nested/sub/.git/hooks/pre-commit",
		"mods/m/.git", "new/.git/config", ".GIT/config", "nested/sub/.Git/hooks/x"} {
		if _, err := ws.ResolveWritable(p); !errors.Is(err, ErrOutside) {
			t.Errorf("ResolveWritable(%q) = %v, want a refusal", p, err)
		}
	}
	for _, p := range []string{".gitignore", "nested/sub/lib.go", ".github/CODEOWNERS", "src/git/hooks.go"} {
		if _, err := ws.ResolveWritable(p); err != nil {
			t.Errorf("ResolveWritable(%q) = %v", p, err)
		}
	}
}
