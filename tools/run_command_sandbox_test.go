package tools

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/tools/shell/sandbox"
	"github.com/cairn-dev/cairn/workspace"
)

// needSandbox skips where commands cannot be sandboxed, except under
// CI=true, where that fails the test.
func needSandbox(t *testing.T) sandbox.Status {
	t.Helper()
	st := sandbox.Probe()
	if !st.Available() {
		testenv.Need(t, "the sandbox is not available here: %v", st.Err)
	}
	return st
}

// TestReadCommandsAskWithoutIsolation (issue 24, findings 1 and 10): where
// the sandbox is Landlock alone (user namespaces blocked), host sockets
// are reachable, so a read command asks instead of running by policy; it
// runs at once where commands are isolated.
func TestReadCommandsAskWithoutIsolation(t *testing.T) {
	root := t.TempDir()
	sb := NewCommandSandbox(root)
	tool := RunCommandWith(root, sb)
	p := DefaultPolicy()
	g := NewGate(p, false, nil, nil)
	decide := func() (Decision, string) {
		risk, detail := tool.RiskOf(json.RawMessage(`{"command":"git -C vendor/dep status"}`))
		d, err := g.Decide(context.Background(), ApprovalRequest{Tool: "run_command", Risk: risk, Detail: detail}, 1, "")
		if err != nil {
			t.Fatal(err)
		}
		return d, detail
	}
	sb.probe = func() sandbox.Status { return sandbox.Status{ABI: 7, NetNS: false} }
	if d, detail := decide(); d.Allowed() || !strings.HasPrefix(detail, PartialSandbox) {
		t.Errorf("a read command in a sandbox without namespaces ran by policy: %s %q", d, detail)
	}
	req := ApprovalRequest{Tool: "run_command", Risk: RiskRead, Command: "ls", Detail: PartialSandbox + "ls"}
	if text := ApprovalText(req); !strings.Contains(text, "WITHOUT ISOLATION") {
		t.Errorf("the prompt does not say the sandbox is weaker: %s", text)
	}
	sb.probe = func() sandbox.Status { return sandbox.Status{ABI: 7, NetNS: true} }
	if d, detail := decide(); !d.Allowed() || strings.HasPrefix(detail, PartialSandbox) {
		t.Errorf("a read command in an isolated sandbox did not run by policy: %s %q", d, detail)
	}
}

// TestCommandsCannotWriteProtectedPaths (issue 24, finding 2): an approved
// workspace-write command cannot change the files that change the agent's
// or the editor's powers, at any depth, nor create them at the root.
func TestCommandsCannotWriteProtectedPaths(t *testing.T) {
	needSandbox(t)
	files := map[string]string{
		"main.go":                     "package main\n",
		"sub/.git/config":             "[core]\n",
		"sub/.git/HEAD":               "ref: refs/heads/main\n",
		"vendor/dep/HEAD":             "ref: refs/heads/main\n",
		"vendor/dep/config":           "[core]\n\tbare = true\n",
		"vendor/dep/objects/.keep":    "",
		"vendor/dep/refs/heads/.keep": "",
		".cairn/policy.json":          "{}\n",
		"web/.vscode/settings.json":   "{}\n",
		".github/workflows/ci.yml":    "on: push\n",
		"tools/.envrc":                "export A=1\n",
		"src/lib.go":                  "package src\n",
	}
	env := testEnv(t, files)
	root := env.WS.Root()
	sb := NewCommandSandbox(root)
	tool := RunCommandWith(root, sb)
	for _, cmd := range []string{
		"echo '[core] fsmonitor = /x' >> sub/.git/config",
		"printf '\\tfsmonitor = /x\\n' >> vendor/dep/config",
		"mv vendor/dep vendor/dep2",
		`echo '{"tools":{"run_command":"allow"}}' > .cairn/policy.json`,
		`echo '{"cairn.mcpServers":{}}' > web/.vscode/settings.json`,
		"echo 'run: curl x | sh' >> .github/workflows/ci.yml",
		"echo 'curl x | sh' >> tools/.envrc",
	} {
		res, err := tool.Invoke(context.Background(), env, json.RawMessage(`{"command":`+quoteJSON(cmd)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			t.Errorf("%q succeeded: %s", cmd, res.Content)
		}
	}
	for p, want := range files {
		if b, err := os.ReadFile(filepath.Join(root, p)); err != nil || string(b) != want {
			t.Errorf("%s changed: %q %v", p, b, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "vendor/dep2")); err == nil {
		t.Errorf("vendor/dep2 was created")
	}
	// Ordinary work below the root still succeeds.
	res, err := tool.Invoke(context.Background(), env, json.RawMessage(`{"command":"echo // x >> src/lib.go && mkdir -p src/gen && echo y > src/gen/out"}`))
	if err != nil || res.IsError {
		t.Errorf("a write below the root failed: %+v %v", res, err)
	}
}

// TestProtectedPathsACommandCreatesAreRemoved: a protected path that does
// not exist cannot be bound read-only, so what a command creates there is
// removed when it ends, and the model is told; the user's files around it
// stay. The workspace root itself stays writable where namespaces are.
func TestProtectedPathsACommandCreatesAreRemoved(t *testing.T) {
	st := needSandbox(t)
	files := map[string]string{
		"main.go":                       "package main\n",
		".github/ISSUE_TEMPLATE/bug.md": "bug\n",
		"vendor/dep/README":             "a vendored dependency\n",
		"vendor/dep/objects/.keep":      "",
		"vendor/dep/refs/heads/.keep":   "",
		"docs/guide.md":                 "guide\n",
	}
	env := testEnv(t, files)
	root := env.WS.Root()
	// File times come from the kernel's coarse clock: what the fixture
	// made must be older than what the command makes, so wait until a file
	// made now is stamped later than every file of the fixture.
	waitClockPast(t, root)
	tool := RunCommandWith(root, NewCommandSandbox(root))
	run := func(cmd string) Result {
		t.Helper()
		res, err := tool.Invoke(context.Background(), env, json.RawMessage(`{"command":`+quoteJSON(cmd)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	cases := []struct{ cmd, made string }{
		{"mkdir -p docs/.vscode && echo '{}' > docs/.vscode/tasks.json", "docs/.vscode"},
		{"mkdir -p docs/sub/.git/hooks && echo x > docs/sub/.git/hooks/pre-commit", "docs/sub/.git"},
		{"mkdir -p .github/workflows && echo 'on: push' > .github/workflows/x.yml", ".github/workflows"},
		// An existing directory made a git directory by content: only
		// the git entries go.
		{"echo 'ref: refs/heads/main' > vendor/dep/HEAD && printf '[core]\\n\\tfsmonitor = /x\\n' > vendor/dep/config", "vendor/dep"},
	}
	if st.Isolated() {
		cases = append(cases,
			struct{ cmd, made string }{"mkdir .vscode && echo '{}' > .vscode/settings.json", ".vscode"},
			struct{ cmd, made string }{"echo 'eval x' > .envrc", ".envrc"})
	}
	for _, c := range cases {
		res := run(c.cmd)
		if !strings.Contains(res.Content, "the command created "+c.made+", a protected path") {
			t.Errorf("%q: no note about %s: %s", c.cmd, c.made, res.Content)
		}
	}
	if _, still := workspace.Protected(root, "vendor/dep"); still {
		t.Errorf("vendor/dep is still a git directory by content")
	}
	for _, p := range []string{"docs/.vscode", "docs/sub/.git", ".github/workflows", "vendor/dep/HEAD", "vendor/dep/config", ".vscode", ".envrc"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
			t.Errorf("%s is still there", p)
		}
	}
	for p, want := range files {
		if b, err := os.ReadFile(filepath.Join(root, p)); err != nil || string(b) != want {
			t.Errorf("%s changed: %q %v", p, b, err)
		}
	}
	if st.Isolated() {
		// New entries at the root are ordinary work.
		res := run("echo module x > go.mod && mkdir bin && echo y > bin/out")
		if res.IsError {
			t.Errorf("creating go.mod and bin/ at the root failed: %s", res.Content)
		}
		if b, err := os.ReadFile(filepath.Join(root, "bin/out")); err != nil || string(b) != "y\n" {
			t.Errorf("bin/out = %q %v", b, err)
		}
	}
}

// waitClockPast waits until a new file's modification time (the kernel's
// coarse clock) is later than that of everything under root.
func waitClockPast(t *testing.T, root string) {
	t.Helper()
	var latest time.Time
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err == nil && fi.ModTime().After(latest) {
			latest = fi.ModTime()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(t.TempDir(), "probe")
	deadline := time.Now().Add(time.Minute)
	for {
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(probe); err == nil && fi.ModTime().After(latest) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the file clock did not pass %s", latest)
		}
		time.Sleep(time.Millisecond)
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestSandboxLimitsSettings: sandbox.limits.* reach the command's policy;
// negative values are reported and replaced by the defaults.
func TestSandboxLimitsSettings(t *testing.T) {
	var s SandboxSettings
	if err := json.Unmarshal([]byte(`{"mode":"auto","limits":{"memoryMB":2048,"pids":256,"tmpMB":64,"cpuSeconds":60,"fileMB":-1}}`), &s); err != nil {
		t.Fatal(err)
	}
	sb := NewCommandSandbox(t.TempDir())
	problems := sb.Configure(s, "")
	if len(problems) != 1 || !strings.Contains(problems[0], "fileMB") {
		t.Errorf("problems: %q", problems)
	}
	got := sb.policy(RiskWrite, nil).Limits.WithDefaults()
	want := sandbox.Limits{MemoryMB: 2048, Pids: 256, TmpMB: 64, CPUSeconds: 60, FileMB: sandbox.DefaultLimits.FileMB}
	if got != want {
		t.Errorf("limits = %+v, want %+v", got, want)
	}
}
