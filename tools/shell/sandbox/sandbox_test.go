//go:build linux

package sandbox

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// requireSandbox skips where the sandbox cannot run, except under
// CI=true, where a missing kernel feature fails the test.
func requireSandbox(t *testing.T) Status {
	t.Helper()
	st := Probe()
	if !st.Available() {
		need(t, "the Landlock sandbox is not available on this system: %v", st.Err)
	}
	return st
}

// need skips the test, or fails it under CI=true (gopls' testenv style).
func need(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and "+format, args...)
	}
	t.Skipf("SKIP: "+format, args...)
}

// run executes script with bash under p and returns its output and exit code.
func run(t *testing.T, p Policy, script string) (string, int) {
	return runNS(t, p, script, Probe().NetNS)
}

// runNS is run with or without namespaces (the fallback where they are
// not permitted).
func runNS(t *testing.T, p Policy, script string, namespaces bool) (string, int) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := command(p, []string{bash, "-c", script}, append(os.Environ(), "TMPDIR="+p.TempDir), namespaces, Probe().Cgroup != "")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Cmd.Dir = p.Workspace
	b, err := cmd.CombinedOutput()
	out := bytes.NewBuffer(b)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if Failed(code, out.String()) {
		t.Fatalf("launcher failed: %s", out.String())
	}
	return out.String(), code
}

type fixture struct {
	ws, outside, home, tmp string
}

func newFixture(t *testing.T) fixture {
	f := fixture{ws: t.TempDir(), outside: t.TempDir(), home: t.TempDir(), tmp: t.TempDir()}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(f.ws, "main.go"), []byte("package main\n"), 0o644))
	must(os.MkdirAll(filepath.Join(f.ws, ".git", "hooks"), 0o755))
	must(os.WriteFile(filepath.Join(f.ws, ".git", "config"), []byte("[core]\n"), 0o644))
	must(os.MkdirAll(filepath.Join(f.ws, "src"), 0o755))
	must(os.WriteFile(filepath.Join(f.outside, "canary"), []byte("OUTSIDE-CANARY\n"), 0o644))
	must(os.MkdirAll(filepath.Join(f.home, ".ssh"), 0o700))
	must(os.WriteFile(filepath.Join(f.home, ".ssh", "id_rsa"), []byte("SSH-CANARY\n"), 0o600))
	return f
}

func (f fixture) policy(p Profile) Policy {
	return Policy{Profile: p, Workspace: f.ws, TempDir: f.tmp, Home: f.home, Caches: []string{}}
}

func TestReadOnly(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	p := f.policy(ReadOnly)
	if out, code := run(t, p, "cat main.go && echo ok > $TMPDIR/x && cat $TMPDIR/x && echo hi > /dev/null"); code != 0 || !strings.Contains(out, "package main") || !strings.Contains(out, "ok") {
		t.Fatalf("allowed operations failed (%d): %s", code, out)
	}
	for _, script := range []string{
		"echo x > new.txt",
		"echo x >> main.go",
		"touch " + filepath.Join(f.outside, "new"),
		"cat " + filepath.Join(f.outside, "canary"),
		"cat " + filepath.Join(f.home, ".ssh", "id_rsa"),
		"ls " + f.home,
	} {
		out, code := run(t, p, script)
		if code == 0 {
			t.Errorf("%q succeeded in read-only: %s", script, out)
		}
		if strings.Contains(out, "CANARY") {
			t.Errorf("%q read a canary: %s", script, out)
		}
	}
	if _, err := os.Stat(filepath.Join(f.ws, "new.txt")); err == nil {
		t.Error("new.txt was written")
	}
}

func TestWorkspaceWrite(t *testing.T) {
	st := requireSandbox(t)
	for _, ns := range []bool{false, true} {
		t.Run(map[bool]string{false: "landlock-only", true: "namespaces"}[ns], func(t *testing.T) {
			if ns && !st.NetNS {
				need(t, "no user namespaces here (%v): only the piecewise fallback can be tested", st.NamespacesErr)
			}
			f := newFixture(t)
			p := f.policy(WorkspaceWrite)
			p.StateDir = filepath.Join(f.ws, ".state")
			if err := os.MkdirAll(p.StateDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if out, code := runNS(t, p, "echo x >> main.go && echo y > src/new.go && mkdir -p src/a/b && mv src/new.go src/a/b/ && cat .git/config", ns); code != 0 {
				t.Fatalf("workspace writes failed (%d): %s", code, out)
			}
			if out, code := runNS(t, p, "mkdir -p src/node_modules && echo x > src/new.txt && echo y > $TMPDIR/t", ns); code != 0 {
				t.Fatalf("creating below the workspace root failed (%d): %s", code, out)
			}
			for _, script := range []string{
				"echo evil > .git/hooks/pre-commit",
				"echo '[core] fsmonitor = evil' >> .git/config",
				"mv .git/config .git/config.old",
				"echo /elsewhere > .git/commondir",
				"mv .git .git.old",
				"rm -rf .git",
				"umount .git",
				"echo x > .state/journal",
				"mv .state .state-old",
				"echo x > " + filepath.Join(f.outside, "canary"),
				"cat " + filepath.Join(f.home, ".ssh", "id_rsa"),
			} {
				if out, code := runNS(t, p, script, ns); code == 0 {
					t.Errorf("%q succeeded in workspace-write: %s", script, out)
				}
			}
			// A protected name that does not exist cannot be bound over.
			// Without namespaces the root is granted piecewise, so
			// nothing new can be made in it; with them the root is
			// writable, and the caller removes what a command created
			// (shell.Run's RevertProtected).
			for _, script := range []string{"mkdir .vscode", "echo 'eval x' > .envrc", "mkdir -p .cairn && echo '{}' > .cairn/policy.json", "echo x > new.txt"} {
				out, code := runNS(t, p, script, ns)
				if ns && code != 0 {
					t.Errorf("%q failed with namespaces (the root is writable): %s", script, out)
				}
				if !ns && code == 0 {
					t.Errorf("%q succeeded without namespaces (the root is granted piecewise): %s", script, out)
				}
			}
			if b, _ := os.ReadFile(filepath.Join(f.ws, ".git", "config")); string(b) != "[core]\n" {
				t.Errorf(".git/config changed: %q", b)
			}
			if entries, _ := os.ReadDir(filepath.Join(f.ws, ".git", "hooks")); len(entries) != 0 {
				t.Errorf(".git/hooks has %d entries", len(entries))
			}
			if b, _ := os.ReadFile(filepath.Join(f.outside, "canary")); string(b) != "OUTSIDE-CANARY\n" {
				t.Errorf("canary changed: %q", b)
			}
		})
	}
}

func TestNoNetwork(t *testing.T) {
	st := requireSandbox(t)
	t.Logf("%s", st.Describe())
	if !st.BlocksTCP() {
		need(t, "this kernel has neither Landlock TCP rules (ABI 4) nor user namespaces: sandboxed commands keep the network")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	reached := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			reached <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	f := newFixture(t)
	script := "exec 3<>/dev/tcp/127.0.0.1/" + strconv.Itoa(port) + " && echo connected"
	for _, prof := range []Profile{ReadOnly, WorkspaceWrite} {
		// Without namespaces Landlock's TCP rules alone must hold.
		for _, ns := range []bool{false, st.NetNS} {
			if !ns && st.ABI < 4 {
				continue // Landlock alone cannot close TCP before ABI 4
			}
			if out, code := runNS(t, f.policy(prof), script, ns); code == 0 || strings.Contains(out, "connected") {
				t.Errorf("%s (namespaces %v): connect succeeded: %s", prof, ns, out)
			}
		}
	}
	p := f.policy(WorkspaceWrite)
	p.Network = true
	if out, code := run(t, p, script); code != 0 {
		t.Errorf("with network allowed the connect failed: %s", out)
	}
	<-reached // the one connection allowed arrived
}

// BenchmarkLaunch measures what the sandbox adds to starting a command:
// compare with BenchmarkLaunchUnconfined (go test -bench Launch).
func BenchmarkLaunch(b *testing.B) {
	if st := Probe(); !st.Available() {
		need(b, "no sandbox here: %v", st.Err)
	}
	tmp, ws := b.TempDir(), b.TempDir()
	p := Policy{Profile: WorkspaceWrite, Workspace: ws, TempDir: tmp, Caches: []string{}}
	for b.Loop() {
		cmd, err := Command(p, []string{"/bin/true"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		cmd.Cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
	}
}

func BenchmarkLaunchUnconfined(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSystemSecretsUnreadable: /etc stays readable, its secrets do not,
// even for root.
func TestSystemSecretsUnreadable(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	p := f.policy(ReadOnly)
	if out, code := run(t, p, "cat /etc/passwd > /dev/null && ls /etc > /dev/null"); code != 0 {
		t.Fatalf("/etc is not readable: %s", out)
	}
	for _, secret := range []string{"/etc/shadow", "/etc/gshadow", "/etc/sudoers"} {
		if _, err := os.Stat(secret); err != nil {
			continue
		}
		if out, code := run(t, p, "cat "+secret); code == 0 {
			t.Errorf("%s is readable in the sandbox: %.40q", secret, out)
		}
	}
}
