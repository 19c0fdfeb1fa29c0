//go:build linux

package sandbox

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requireNamespaces returns the status where commands get their own
// namespaces; elsewhere it skips (fails under CI=true).
func requireNamespaces(t *testing.T) Status {
	t.Helper()
	st := requireSandbox(t)
	if !st.NetNS {
		need(t, "user namespaces are not permitted here (%v): commands cannot be isolated", st.NamespacesErr)
	}
	return st
}

func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		need(t, "%s is not installed", name)
	}
	return p
}

func marker(t *testing.T) string {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// modes are the ways commands can be launched here: with namespaces where
// permitted, and Landlock alone (the fallback where they are not).
func modes(st Status) []bool {
	if st.NetNS {
		return []bool{true, false}
	}
	return []bool{false}
}

func modeName(ns bool) string { return map[bool]string{true: "namespaces", false: "landlock-only"}[ns] }

// unixListener listens on a pathname socket at p and reports every
// connection on the returned channel.
func unixListener(t *testing.T, p string) <-chan string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); os.Remove(p) })
	got := make(chan string, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 64)
			n, _ := c.Read(buf)
			got <- string(buf[:n])
			c.Close()
		}
	}()
	return got
}

// reachedBefore connects to p itself with a marker and reports what
// arrived before it: everything a command sent came first.
func reachedBefore(t *testing.T, p string, got <-chan string) []string {
	t.Helper()
	c, err := net.Dial("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("MARKER"))
	c.Close()
	var out []string
	for m := range got {
		if m == "MARKER" {
			break
		}
		out = append(out, m)
	}
	return out
}

// connectScript connects to the UNIX socket at p and says whether it did.
func connectScript(p string) string {
	return `perl -MIO::Socket::UNIX -e '$s = IO::Socket::UNIX->new(Peer => "` + p + `") or exit 3; print $s "PAYLOAD"; print "CONNECTED\n"'`
}

// TestHostUnixSocketsUnreachable (issue 24, finding 1): pathname sockets
// of the host (/run, /tmp, the home directory: a docker or D-Bus socket,
// an ssh agent) cannot be reached from a command, in either profile.
func TestHostUnixSocketsUnreachable(t *testing.T) {
	requireNamespaces(t)
	requireTool(t, "perl")
	f := newFixture(t)
	runDir := filepath.Join("/run", "cairn-test-"+marker(t))
	t.Cleanup(func() { os.RemoveAll(runDir) })
	socks := []string{
		filepath.Join(runDir, "docker.sock"),
		filepath.Join(t.TempDir(), "bus"),
		filepath.Join(f.home, ".ssh", "agent.sock"),
	}
	for _, sock := range socks {
		got := unixListener(t, sock)
		for _, prof := range []Profile{ReadOnly, WorkspaceWrite} {
			out, _ := run(t, f.policy(prof), connectScript(sock))
			if strings.Contains(out, "CONNECTED") {
				t.Errorf("%s: a command connected to %s: %s", prof, sock, out)
			}
		}
		if reached := reachedBefore(t, sock, got); len(reached) > 0 {
			t.Errorf("%s was reached from the sandbox: %q", sock, reached)
		}
	}
}

// TestEmbeddedRepoFsmonitorCannotReachSocket (issue 24, finding 1): the
// repository ships a bare git repository as plain files whose config runs
// a script as core.fsmonitor; `git -C vendor/dep status` (read-only) runs
// it in the sandbox, and the script cannot reach a host socket.
func TestEmbeddedRepoFsmonitorCannotReachSocket(t *testing.T) {
	requireNamespaces(t)
	git := requireTool(t, "git")
	requireTool(t, "perl")
	f := newFixture(t)
	sock := filepath.Join("/run", "cairn-test-"+marker(t), "bus")
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(sock)) })
	got := unixListener(t, sock)
	dep := embeddedRepo(t, f.ws, "#!/bin/sh\necho HOOK-RAN >&2\n"+connectScript(sock)+" >&2\n")
	out, _ := run(t, f.policy(ReadOnly), git+" -C "+dep+" status")
	if !strings.Contains(out, "HOOK-RAN") {
		t.Fatalf("the fsmonitor hook did not run, so the chain was not exercised: %s", out)
	}
	if strings.Contains(out, "CONNECTED") {
		t.Errorf("the hook connected to the host socket: %s", out)
	}
	if reached := reachedBefore(t, sock, got); len(reached) > 0 {
		t.Errorf("the host socket was reached: %q", reached)
	}
}

// embeddedRepo writes vendor/dep: a git directory by content (HEAD,
// objects/, refs/, config) whose work tree is its parent and whose
// core.fsmonitor is hook. It returns the directory.
func embeddedRepo(t *testing.T, ws, hook string) string {
	t.Helper()
	dep := filepath.Join(ws, "vendor", "dep")
	for _, d := range []string{"objects", "refs/heads"} {
		if err := os.MkdirAll(filepath.Join(dep, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hookPath := filepath.Join(ws, "vendor", "fsmonitor.sh")
	for name, content := range map[string]string{
		filepath.Join(dep, "HEAD"):   "ref: refs/heads/main\n",
		filepath.Join(dep, "config"): "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = " + hookPath + "\n",
		hookPath:                     hook,
	} {
		if err := os.WriteFile(name, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dep
}

// procsWith lists the host's processes whose command line contains s.
func procsWith(s string) []string {
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

// TestNothingOutlivesTheCommand (issue 24, finding 6): daemons a command
// starts (setsid, setsid -f, double forks, nohup) are gone when it
// returns, with namespaces and with Landlock alone.
func TestNothingOutlivesTheCommand(t *testing.T) {
	st := requireSandbox(t)
	requireTool(t, "setsid")
	for _, ns := range modes(st) {
		t.Run(modeName(ns), func(t *testing.T) {
			f := newFixture(t)
			m := "1001." + strconv.Itoa(int(time.Now().UnixNano()%1e6))
			script := fmt.Sprintf(`setsid sleep %[1]s1 > /dev/null 2>&1 < /dev/null &
setsid -f sleep %[1]s2 > /dev/null 2>&1 < /dev/null
( ( sleep %[1]s3 > /dev/null 2>&1 < /dev/null & ) & )
nohup sleep %[1]s4 > /dev/null 2>&1 < /dev/null &
sh -c 'sleep %[1]s5 > /dev/null 2>&1 < /dev/null &'
sleep 0.2; echo started`, m)
			out, code := runNS(t, f.policy(ReadOnly), script, ns)
			if code != 0 || !strings.Contains(out, "started") {
				t.Fatalf("the command failed (%d): %s", code, out)
			}
			if left := procsWith("sleep " + m); len(left) > 0 {
				t.Errorf("processes outlived the command: %q", left)
			}
		})
	}
}

// TestNothingOutlivesAnUnconfinedCommand: a command the user approved to
// run outside the sandbox has no walls, yet what it starts (setsid,
// double forks) still ends with it.
func TestNothingOutlivesAnUnconfinedCommand(t *testing.T) {
	requireTool(t, "setsid")
	m := "1002." + strconv.Itoa(int(time.Now().UnixNano()%1e6))
	script := fmt.Sprintf(`setsid sleep %[1]s1 > /dev/null 2>&1 < /dev/null &
setsid -f sleep %[1]s2 > /dev/null 2>&1 < /dev/null
( ( sleep %[1]s3 > /dev/null 2>&1 < /dev/null & ) & )
sleep 0.2; echo started; cat /proc/self/status | grep -c CapEff`, m)
	cmd, err := Command(Policy{Profile: Full}, []string{"/bin/sh", "-c", script}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	cmd.Cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "started") {
		t.Fatalf("the command failed: %v %s", err, out)
	}
	if left := procsWith("sleep " + m); len(left) > 0 {
		t.Errorf("processes outlived the unconfined command: %q", left)
	}
}

// TestHelperSandboxedSleep is the "server" of TestServerKillLeavesNothing:
// it runs a sandboxed sleep and waits to be killed.
func TestHelperSandboxedSleep(t *testing.T) {
	m := os.Getenv("CAIRN_TEST_SLEEP_MARKER")
	if m == "" {
		return // only a helper process of TestServerKillLeavesNothing
	}
	// The parent's temp dir: this process is killed, so its own
	// t.TempDir would never be removed.
	dir := os.Getenv("CAIRN_TEST_SLEEP_DIR")
	ws, tmp := filepath.Join(dir, "ws"), filepath.Join(dir, "tmp")
	for _, d := range []string{ws, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd, err := Command(Policy{Profile: ReadOnly, Workspace: ws, TempDir: tmp, Caches: []string{}}, []string{"/bin/sh", "-c", "setsid sleep " + m + " & sleep " + m + "; wait"}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	cmd.Cmd.Dir = ws
	cmd.Cmd.Stdout, cmd.Cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fmt.Println("STARTED")
	if os.Getenv("CAIRN_TEST_SERVER_EXITS") == "1" {
		// A server that shuts down without waiting for its command, once
		// the command runs.
		for deadline := time.Now().Add(30 * time.Second); len(procsWith("sleep "+m)) < 2 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if len(procsWith("sleep "+m)) >= 2 {
			fmt.Println("RUNNING")
		}
		os.Exit(0)
	}
	cmd.Wait()
}

// TestServerKillLeavesNothing (issue 24, finding 6): when the server is
// killed with SIGKILL, or exits without waiting for its command, the
// running command dies with it (daemons it started included).
func TestServerKillLeavesNothing(t *testing.T) {
	st := requireSandbox(t)
	for _, exits := range []bool{false, true} {
		for _, ns := range modes(st) {
			t.Run(modeName(ns)+map[bool]string{false: "/kill-9", true: "/exit"}[exits], func(t *testing.T) {
				m := "1005." + strconv.Itoa(int(time.Now().UnixNano()%1e6))
				server := exec.Command(os.Args[0], "-test.run=^TestHelperSandboxedSleep$", "-test.v")
				server.Env = append(os.Environ(), "CAIRN_TEST_SLEEP_MARKER="+m, "CAIRN_TEST_SLEEP_DIR="+t.TempDir())
				if exits {
					server.Env = append(server.Env, "CAIRN_TEST_SERVER_EXITS=1")
				}
				if !ns {
					server.Env = append(server.Env, NoNamespacesEnv+"=1")
				}
				out, err := server.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				server.Stderr = os.Stderr
				if err := server.Start(); err != nil {
					t.Fatal(err)
				}
				sc := bufio.NewScanner(out)
				want := map[bool]string{false: "STARTED", true: "RUNNING"}[exits]
				seen := false
				for !seen && sc.Scan() {
					seen = strings.Contains(sc.Text(), want)
				}
				if !seen {
					t.Fatalf("the server never said %s", want)
				}
				deadline := time.Now().Add(30 * time.Second)
				for !exits && len(procsWith("sleep "+m)) < 2 {
					if time.Now().After(deadline) {
						server.Process.Kill()
						t.Fatalf("the sandboxed sleeps never started")
					}
					time.Sleep(10 * time.Millisecond)
				}
				if !exits {
					server.Process.Signal(syscall.SIGKILL)
				}
				server.Wait()
				for left := procsWith("sleep " + m); len(left) > 0; left = procsWith("sleep " + m) {
					if time.Now().After(deadline.Add(30 * time.Second)) {
						for _, l := range left {
							if pid, err := strconv.Atoi(strings.SplitN(l, ":", 2)[0]); err == nil {
								syscall.Kill(pid, syscall.SIGKILL)
							}
						}
						t.Fatalf("the command outlived the server: %q", left)
					}
					time.Sleep(10 * time.Millisecond)
				}
			})
		}
	}
}

// TestPsShowsOnlyTheSandbox (issue 24, finding 7): another process's
// command line (a password in argv) is not visible to `ps`.
func TestPsShowsOnlyTheSandbox(t *testing.T) {
	requireNamespaces(t)
	ps := requireTool(t, "ps")
	m := marker(t)
	victim := exec.Command("sh", "-c", "sleep 3600; : --db-password="+m)
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer victim.Wait()
	defer victim.Process.Kill()
	f := newFixture(t)
	out, code := run(t, f.policy(ReadOnly), ps+" auxww; ls /proc")
	if code != 0 || !strings.Contains(out, "auxww") {
		t.Fatalf("ps failed (%d): %s", code, out)
	}
	if strings.Contains(out, m) {
		t.Errorf("ps showed a process outside the sandbox: %s", out)
	}
	if strings.Contains(out, " "+strconv.Itoa(os.Getpid())+"\n") || strings.Contains(out, "\n"+strconv.Itoa(victim.Process.Pid)+"\n") {
		t.Errorf("/proc lists processes outside the sandbox: %s", out)
	}
}

// TestSysVSharedMemoryInvisible (issue 24, finding 7): a SysV shared
// memory segment made outside is not visible inside.
func TestSysVSharedMemoryInvisible(t *testing.T) {
	requireNamespaces(t)
	ipcmk := requireTool(t, "ipcmk")
	ipcs := requireTool(t, "ipcs")
	b, err := exec.Command(ipcmk, "-M", "4096").CombinedOutput()
	if err != nil {
		t.Fatalf("ipcmk: %v %s", err, b)
	}
	fields := strings.Fields(string(b))
	id := fields[len(fields)-1]
	t.Cleanup(func() { exec.Command("ipcrm", "-m", id).Run() })
	if host, _ := exec.Command(ipcs, "-m").CombinedOutput(); !strings.Contains(string(host), " "+id+" ") {
		t.Fatalf("the segment %s is not listed on the host: %s", id, host)
	}
	f := newFixture(t)
	out, _ := run(t, f.policy(ReadOnly), ipcs+" -m")
	if !strings.Contains(out, "Shared Memory") {
		t.Fatalf("ipcs failed: %s", out)
	}
	if strings.Contains(out, " "+id+" ") {
		t.Errorf("the host's segment %s is visible in the sandbox: %s", id, out)
	}
}

// requireCgroup returns the status where commands get a cgroup with
// limits; elsewhere it skips (fails under CI=true).
func requireCgroup(t *testing.T) Status {
	t.Helper()
	st := requireSandbox(t)
	if st.Cgroup == "" {
		need(t, "no cgroup can be made for commands here (%v)", st.CgroupErr)
	}
	return st
}

// TestProcessLimit (issue 24, finding 5): a command cannot start more
// processes than Limits.Pids; a (bounded) fork bomb meets the wall.
func TestProcessLimit(t *testing.T) {
	st := requireCgroup(t)
	for _, ns := range modes(st) {
		t.Run(modeName(ns), func(t *testing.T) {
			f := newFixture(t)
			p := f.policy(ReadOnly)
			p.Limits = Limits{Pids: 40}
			// 2^7 sleeping processes at most: bounded where nothing limits it.
			out, _ := runNS(t, p, `f() { if [ $1 -gt 0 ]; then f $(($1-1)) & f $(($1-1)); wait; else sleep 2; fi; }
f 7 2>&1 | grep -m1 -o 'Resource temporarily unavailable'; echo done`, ns)
			if !strings.Contains(out, "Resource temporarily unavailable") {
				t.Errorf("128 processes were started under a limit of 40: %s", out)
			}
		})
	}
}

// TestMemoryLimit (issue 24, finding 5): a command that allocates past
// Limits.MemoryMB is killed.
func TestMemoryLimit(t *testing.T) {
	st := requireCgroup(t)
	for _, ns := range modes(st) {
		t.Run(modeName(ns), func(t *testing.T) {
			f := newFixture(t)
			p := f.policy(ReadOnly)
			p.Limits = Limits{MemoryMB: 64}
			// tail keeps the whole (newline-free) line: 512 MiB.
			out, _ := runNS(t, p, `head -c 512M /dev/zero | tail -n 1 | wc -c; echo "status=${PIPESTATUS[1]}"`, ns)
			if !strings.Contains(out, "status=137") {
				t.Errorf("a 512 MiB allocation under a 64 MiB limit was not killed: %s", out)
			}
		})
	}
}

// TestTmpLimit (issue 24, finding 5): the private /tmp fills up at
// Limits.TmpMB (`yes | sort` spilling to $TMPDIR stops there).
func TestTmpLimit(t *testing.T) {
	requireNamespaces(t)
	f := newFixture(t)
	p := f.policy(ReadOnly)
	p.Limits = Limits{TmpMB: 8}
	out, _ := run(t, p, `yes | head -c 64M | sort -S 1M -T "$TMPDIR" > /dev/null; echo "sort=$?"; head -c 32M /dev/zero > /tmp/big; echo "write=$?"; du -sm /tmp | cut -f1`)
	if !strings.Contains(out, "No space left on device") || strings.Contains(out, "sort=0") || strings.Contains(out, "write=0") {
		t.Errorf("/tmp did not stop at 8 MiB: %s", out)
	}
}

// TestFileSizeLimit (issue 24, finding 5): no file grows past
// Limits.FileMB.
func TestFileSizeLimit(t *testing.T) {
	st := requireSandbox(t)
	for _, ns := range modes(st) {
		t.Run(modeName(ns), func(t *testing.T) {
			f := newFixture(t)
			p := f.policy(WorkspaceWrite)
			p.Limits = Limits{FileMB: 1}
			runNS(t, p, `head -c 4M /dev/zero > src/big; echo "status=$?"`, ns)
			if fi, err := os.Stat(filepath.Join(f.ws, "src", "big")); err != nil || fi.Size() > 1<<20 {
				t.Errorf("a file grew past 1 MiB (or was not written at all): %v", err)
			}
		})
	}
}

// TestLeftoversKilledWithinLimits: what a command leaves is gone and its
// cgroup removed when the run returns.
func TestCgroupRemovedAfterRun(t *testing.T) {
	requireCgroup(t)
	f := newFixture(t)
	out, _ := run(t, f.policy(ReadOnly), `cat /proc/self/cgroup`)
	var dirs []string
	for _, line := range strings.Split(out, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) == 3 && strings.Contains(parts[2], "cairn-cmd-") {
			ctl := parts[1]
			if ctl == "" {
				ctl = "unified"
			}
			dirs = append(dirs, filepath.Join(cgroupRoot, ctl, parts[2]))
		}
	}
	if len(dirs) == 0 {
		t.Fatalf("the command ran in no cgroup of its own: %s", out)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("the command's cgroup %s is left", d)
		}
	}
}

// clearReadOnly calls mount_setattr(2) to clear MOUNT_ATTR_RDONLY on
// sub/.git (x86-64 and arm64 syscall number 442).
const clearReadOnly = `perl -e 'my $a = pack("QQQQ", 0, 1, 0, 0); my $p = "sub/.git"; syscall(442, -100, $p, 0, $a, 32) == 0 or die "mount_setattr: $!\n"'`

// TestCommandsHaveNoCapabilities: a command has no capability, even as
// root (in its user namespace, or a server running as root without one).
func TestCommandsHaveNoCapabilities(t *testing.T) {
	st := requireSandbox(t)
	for _, ns := range modes(st) {
		t.Run(modeName(ns), func(t *testing.T) {
			f := newFixture(t)
			out, code := runNS(t, f.policy(WorkspaceWrite), "grep -E '^Cap(Prm|Eff|Bnd|Amb|Inh)' /proc/self/status", ns)
			if code != 0 {
				t.Fatalf("reading the capabilities failed: %s", out)
			}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if f := strings.Fields(line); len(f) != 2 || strings.Trim(f[1], "0") != "" {
					t.Errorf("the command holds capabilities: %s", line)
				}
			}
		})
	}
}

// TestProtectedPathsReadOnly (issue 24, finding 2): in workspace-write,
// the protected paths a walk found (a nested .git, an embedded bare
// repository, .cairn, .vscode, .github/workflows, .envrc) cannot be
// changed, and protected names cannot be created at the root, with
// namespaces (read-only binds) and with Landlock alone (piecewise grant).
func TestProtectedPathsReadOnly(t *testing.T) {
	st := requireSandbox(t)
	for _, ns := range modes(st) {
		t.Run(modeName(ns), func(t *testing.T) {
			f := newFixture(t)
			files := map[string]string{
				"sub/.git/config":           "[core]\n",
				"vendor/dep/config":         "[core]\n\tbare = true\n",
				"vendor/dep/HEAD":           "ref: refs/heads/main\n",
				".cairn/policy.json":        "{}\n",
				"web/.vscode/settings.json": "{}\n",
				".github/workflows/x.yml":   "on: push\n",
				".envrc":                    "export A=1\n",
				"src/ok.go":                 "package src\n",
			}
			for p, c := range files {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(f.ws, p)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(f.ws, p), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := f.policy(WorkspaceWrite)
			p.Protected = []string{filepath.Join(f.ws, ".git"), filepath.Join(f.ws, "sub", ".git"), filepath.Join(f.ws, "vendor", "dep"),
				filepath.Join(f.ws, ".cairn"), filepath.Join(f.ws, "web", ".vscode"), filepath.Join(f.ws, ".github", "workflows"), filepath.Join(f.ws, ".envrc")}
			for _, script := range []string{
				"echo x >> sub/.git/config",
				"echo x >> vendor/dep/config",
				"rm -rf vendor/dep",
				"mv vendor/dep vendor/x",
				"echo '{}' > .cairn/policy.json",
				"echo x > web/.vscode/settings.json",
				"rm -rf web/.vscode",
				"echo x >> .github/workflows/x.yml",
				"echo y > .github/workflows/y.yml",
				"echo x >> .envrc",
				"rm .envrc",
				// Clear the bind's read-only flag (mount_setattr, which
				// Landlock does not check), then write; also from a user
				// namespace of the command's own.
				clearReadOnly + " && echo x >> sub/.git/config",
				"unshare -Urm sh -c '" + strings.ReplaceAll(clearReadOnly, "'", `'"'"'`) + " && echo x >> sub/.git/config'",
			} {
				if out, code := runNS(t, p, script, ns); code == 0 {
					t.Errorf("%q succeeded: %s", script, out)
				}
			}
			for rel, want := range files {
				if b, err := os.ReadFile(filepath.Join(f.ws, rel)); err != nil || string(b) != want {
					t.Errorf("%s changed: %q %v", rel, b, err)
				}
			}
			// New protected names at the root: see TestWorkspaceWrite
			// (without namespaces they cannot be made; with them the
			// caller removes them, shell.TestSandboxCanaries).
			for _, rel := range []string{".github/workflows/y.yml", "vendor/x"} {
				if _, err := os.Lstat(filepath.Join(f.ws, rel)); err == nil {
					t.Errorf("%s was created", rel)
				}
			}
			if out, code := runNS(t, p, "echo x >> src/ok.go && mkdir -p src/new && echo y > src/new/f", ns); code != 0 {
				t.Errorf("ordinary writes failed (%d): %s", code, out)
			}
		})
	}
}

// TestFallbackWithoutNamespaces (issue 24, finding 10): where user
// namespaces are blocked (Docker's defaults, Ubuntu 24.04's AppArmor
// rule), the Landlock-only fallback is available, the status does not
// keep the namespace attempt's error as its own, and says which layer is
// missing.
func TestFallbackWithoutNamespaces(t *testing.T) {
	requireSandbox(t)
	blocked := errors.New("clone: operation not permitted (user namespaces blocked)")
	st := probeWith(true, func(namespaces, cgroups bool) error {
		if namespaces {
			return blocked
		}
		truePath, _ := exec.LookPath("true")
		return probeOne(truePath, false, cgroups)
	})
	if !st.Available() || st.Err != nil {
		t.Fatalf("the Landlock-only fallback is not available: %v", st.Err)
	}
	if st.Isolated() || st.NetNS || !errors.Is(st.NamespacesErr, blocked) {
		t.Errorf("the status does not say namespaces are missing: %+v", st)
	}
	if d := st.Describe(); !strings.Contains(d, "NO namespaces") || !strings.Contains(d, "operation not permitted") || strings.Contains(d, "not sandboxed") {
		t.Errorf("Describe: %s", d)
	}
	// The real fallback works: commands run confined without namespaces.
	f := newFixture(t)
	if out, code := runNS(t, f.policy(ReadOnly), "cat main.go && ! echo x > new.txt", false); code != 0 || !strings.Contains(out, "package main") {
		t.Errorf("a command in the Landlock-only sandbox failed (%d): %s", code, out)
	}
}

// TestCommandHasNoTerminal: the command leads a session of its own, so
// it has no controlling terminal through which to type into the user's
// shell (TIOCSTI on /dev/tty).
func TestCommandHasNoTerminal(t *testing.T) {
	st := requireSandbox(t)
	for _, ns := range modes(st) {
		t.Run(modeName(ns), func(t *testing.T) {
			f := newFixture(t)
			out, code := runNS(t, f.policy(ReadOnly), `[ "$(cut -d' ' -f6 /proc/$$/stat)" = "$$" ] && echo session-leader; : < /dev/tty || echo no-tty`, ns)
			if code != 0 || !strings.Contains(out, "session-leader") || !strings.Contains(out, "no-tty") {
				t.Errorf("the command shares a session (and maybe a terminal) with the server (%d): %s", code, out)
			}
		})
	}
}

// TestLargePolicy: a policy too large for an environment string (many
// protected paths granted piecewise) still launches.
func TestLargePolicy(t *testing.T) {
	st := requireSandbox(t)
	for _, ns := range modes(st) {
		t.Run(modeName(ns), func(t *testing.T) {
			f := newFixture(t)
			p := f.policy(WorkspaceWrite)
			p.Protected = []string{filepath.Join(f.ws, ".git")}
			long := strings.Repeat("d", 100)
			for i := 0; i < 900; i++ {
				dir := filepath.Join(f.ws, "mods", fmt.Sprintf("%s%04d", long, i))
				if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, "x.go"), nil, 0o644)
				p.Protected = append(p.Protected, filepath.Join(dir, ".git"))
			}
			spec, err := p.Spec([]string{"/bin/true"}, ns)
			if err != nil {
				t.Fatal(err)
			}
			if raw, _ := json.Marshal(spec); len(raw) <= 128<<10 && !ns {
				t.Fatalf("the policy is only %d bytes: the test needs a larger one", len(raw))
			}
			if out, code := runNS(t, p, "echo x >> mods/"+long+"0007/x.go && ! echo y > mods/"+long+"0007/.git/config", ns); code != 0 {
				t.Errorf("the command failed (%d): %s", code, out)
			}
			if left, _ := filepath.Glob(filepath.Join(f.tmp, ".cairn-spec-*")); len(left) > 0 {
				t.Errorf("the policy file was left: %q", left)
			}
		})
	}
}

// TestBindsFollowLinks: a read path that is a symlink (as
// /etc/resolv.conf into /run with systemd-resolved) is recreated as a link
// and its target bound, and a path below a linked directory is bound at
// its real path with the link recreated.
func TestBindsFollowLinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "run", "stub-resolv.conf")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte("nameserver 127.0.0.53\n"), 0o644)
	link := filepath.Join(dir, "etc-resolv.conf")
	os.Symlink(real, link)
	os.MkdirAll(filepath.Join(dir, "var", "home", "u", "ws"), 0o755)
	os.Symlink(filepath.Join(dir, "var", "home"), filepath.Join(dir, "home"))
	ws := filepath.Join(dir, "home", "u", "ws")
	got := map[string]bool{}
	for _, b := range binds([]string{link}, []string{ws}) {
		got[b.Path] = b.Write
	}
	want := map[string]bool{link: false, real: false, filepath.Join(dir, "home"): false, filepath.Join(dir, "var", "home", "u", "ws"): true}
	for p, w := range want {
		if gw, ok := got[p]; !ok || gw != w {
			t.Errorf("bind %s (write %v) missing or wrong: %v", p, w, got)
		}
	}
}

// TestRlimitsStandInWithoutCgroup: where no cgroup can be made, the
// launcher caps each process's address space and the processes of its
// user by rlimits instead.
func TestRlimitsStandInWithoutCgroup(t *testing.T) {
	st := requireSandbox(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range modes(st) {
		t.Run(modeName(ns), func(t *testing.T) {
			f := newFixture(t)
			p := f.policy(ReadOnly)
			p.Limits = Limits{MemoryMB: 1500, Pids: 77}
			cmd, err := command(p, []string{bash, "-c", "echo as=$(ulimit -v) nproc=$(ulimit -u)"}, append(os.Environ(), "TMPDIR="+p.TempDir), ns, false)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Cmd.Dir = p.Workspace
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if want := "as=3072000 nproc=77"; !strings.Contains(string(out), want) {
				t.Errorf("got %q, want %q", out, want)
			}
		})
	}
}
