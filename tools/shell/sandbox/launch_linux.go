//go:build linux

package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// specEnv carries the Spec (JSON) from the server to the launcher, or
// "@" and the path of a file holding it when it is longer than maxSpecEnv.
const specEnv = "CAIRN_SANDBOX_EXEC"

// maxSpecEnv keeps the variable well below the kernel's 128 KiB limit on
// one environment string.
const maxSpecEnv = 64 << 10

// LaunchFailed is the exit status of a launcher that could not confine
// itself; it never runs the command then. Its message starts with
// LaunchPrefix. (Commands may exit 125 too: see Failed.)
const LaunchFailed = 125

// LaunchPrefix starts the launcher's own error message.
const LaunchPrefix = "cairn sandbox: "

// Failed reports whether a run's exit status and output are the
// launcher's failure rather than the command's.
func Failed(exitCode int, output string) bool {
	return exitCode == LaunchFailed && strings.HasPrefix(output, LaunchPrefix)
}

func init() {
	raw, ok := os.LookupEnv(specEnv)
	if !ok {
		return
	}
	err := launch(raw)
	// launch only returns on failure.
	fmt.Fprintf(os.Stderr, "%s%v\n", LaunchPrefix, err)
	os.Exit(LaunchFailed)
}

// serverDied is the launcher's parent-death signal without namespaces.
const serverDied = syscall.SIGUSR2

// privateTmp is the command's $TMPDIR when something is bound below /tmp.
const privateTmp = "/tmp/cairn-tmp"

// Launcher file descriptors (exec.Cmd.ExtraFiles): the launcher reads one
// byte from goFD before it starts anything (the server has moved it into
// the command's cgroup by then) and writes the command's end ("exit N" or
// "signal N") to statusFD.
const (
	goFD     = 3
	statusFD = 4
)

// launch confines the command as spec says and runs it. With namespaces
// the launcher is PID 1 of the command's PID namespace: it builds the
// command's filesystem, starts the command from a Landlock-restricted
// thread, reaps every orphan and exits when the command does, which ends
// the namespace and every process left in it. Without, it execs the
// command in its place after restricting its own thread.
func launch(raw string) error {
	if path, ok := strings.CutPrefix(raw, "@"); ok {
		// A large spec comes in a file (an environment string is limited
		// to 128 KiB), which only this launcher reads.
		b, err := os.ReadFile(path)
		os.Remove(path)
		if err != nil {
			return fmt.Errorf("reading the policy: %w", err)
		}
		raw = string(b)
	}
	var s Spec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return fmt.Errorf("reading the policy: %w", err)
	}
	if len(s.Argv) == 0 {
		return errors.New("no program to run")
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name == specEnv || (s.Namespaces && name == "TMPDIR") {
			continue
		}
		env = append(env, kv)
	}
	if s.Namespaces {
		env = append(env, "TMPDIR=/tmp")
	}
	// The command must not inherit the status pipe (it could fake its
	// own end).
	unix.CloseOnExec(statusFD)
	// Wait until the server has put this process in its cgroup ('g'),
	// or said there is none to put it in ('r': per-process rlimits stand
	// in for the cgroup's memory and process caps).
	fallback := false
	if sync := os.NewFile(goFD, "go"); sync != nil {
		var b [1]byte
		n, _ := sync.Read(b[:])
		sync.Close()
		if n != 1 || b[0] != releaseCgroup && b[0] != releaseRlimits {
			return errors.New("the server did not release the launcher (its limits could not be set)")
		}
		fallback = b[0] == releaseRlimits
	}
	if s.Unconfined {
		// Approved to run outside the sandbox: no walls and no limits,
		// but nothing it starts outlives it (the launcher adopts every
		// orphan and kills what is left when the command ends or the
		// server dies).
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
		}
		return supervise(s, env)
	}
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return fmt.Errorf("this kernel has no Landlock (%v); refusing to run unconfined", err)
	}
	if err := setRlimits(s.Limits, fallback); err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("reading the working directory: %w", err)
	}
	if s.Namespaces {
		if err := buildRoot(s); err != nil {
			return fmt.Errorf("building the command's filesystem: %w", err)
		}
		if err := os.Chdir(cwd); err != nil {
			return fmt.Errorf("entering the workspace in the command's filesystem: %w", err)
		}
		var under []string
		for _, b := range s.Binds {
			if strings.HasPrefix(b.Path, "/tmp/") {
				under = append(under, b.Path)
			}
		}
		if len(under) > 0 {
			// A Landlock rule on /tmp would cover the binds below it (a
			// workspace kept in /tmp): grant /tmp around them, and give
			// the command a directory of its own there.
			if err := os.Mkdir(privateTmp, 0o1777); err != nil {
				return fmt.Errorf("creating %s: %w", privateTmp, err)
			}
			g, err := grantWrite("/tmp", under)
			if err != nil {
				return err
			}
			s.Write = append(slices.DeleteFunc(s.Write, func(p string) bool { return p == "/tmp" }), g...)
			env = append(slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "TMPDIR=") }), "TMPDIR="+privateTmp)
		}
	}
	// The rules name inodes: built after the new root is in place.
	cfg := landlock.V7.BestEffort()
	if s.Network {
		cfg.HandledAccessNet = 0
	}
	var rules []landlock.Rule
	for _, p := range s.Read {
		rules = append(rules, pathRule(p, false))
	}
	for _, p := range s.Write {
		rules = append(rules, pathRule(p, true))
	}
	for _, p := range s.List {
		rules = append(rules, landlock.PathAccess(llsys.AccessFSReadDir, p).IgnoreIfMissing())
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("building the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("no Landlock rule is enforced here; refusing to run unconfined")
	}
	// The ruleset binds this OS thread only: restrict it and start the
	// command from it. The Go runtime never clones a new thread from a
	// locked one, so the launcher's other threads stay as they were.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	unix.Close(fd)
	if err := dropCapabilities(); err != nil {
		return err
	}
	if !s.Namespaces {
		// Orphans come to the launcher, which kills them when the
		// command ends (the cgroup, where there is one, catches the rest).
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
		}
	}
	return supervise(s, env)
}

// supervise starts the command, forwards termination signals to it, reaps
// every child until the command exits, reports how it ended and exits.
func supervise(s Spec, env []string) error {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if !s.Namespaces {
		// Without a PID namespace to end, the server's death (the
		// parent-death signal) makes the launcher kill the command and
		// every descendant (it is their subreaper), then exit.
		dead := make(chan os.Signal, 1)
		signal.Notify(dead, serverDied)
		go func() {
			<-dead
			killChildren()
			os.Exit(128 + int(syscall.SIGKILL))
		}()
	}
	// A session of its own: no controlling terminal, so /dev/tty cannot
	// reach the user's terminal (TIOCSTI would type into their shell).
	attr := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	proc, err := os.StartProcess(s.Argv[0], s.Argv, &os.ProcAttr{Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}, Sys: attr})
	if err != nil {
		return fmt.Errorf("starting %s: %w", s.Argv[0], err)
	}
	pid := proc.Pid
	go func() {
		for sig := range sigs {
			// The command leads its own process group: all of it hears.
			_ = syscall.Kill(-pid, sig.(syscall.Signal))
		}
	}()
	status := os.NewFile(statusFD, "status")
	for {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("waiting for the command: %w", err)
		}
		if got != pid || !(ws.Exited() || ws.Signaled()) {
			continue
		}
		code := ws.ExitStatus()
		end := fmt.Sprintf("exit %d\n", code)
		if ws.Signaled() {
			code = 128 + int(ws.Signal())
			end = fmt.Sprintf("signal %d\n", int(ws.Signal()))
		}
		if !s.Namespaces {
			killChildren()
		}
		if status != nil {
			_, _ = status.WriteString(end)
			status.Close()
		}
		// As PID 1, exiting takes every process of the namespace along.
		os.Exit(code)
	}
}

// killChildren kills the launcher's children until it has none: as a
// subreaper it inherits the children of each one it kills.
func killChildren() {
	for {
		kids := childPids()
		for _, k := range kids {
			_ = syscall.Kill(k, syscall.SIGKILL)
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(-1, &ws, 0, nil); err == syscall.ECHILD {
			return
		}
	}
}

// childPids reads the launcher's children from /proc.
func childPids() []int {
	tasks, _ := os.ReadDir("/proc/self/task")
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// dropCapabilities empties this thread's capability bounding and
// inheritable sets and the ambient set, so that the command has no
// capability even as root: root in the command's user namespace could
// otherwise clear the read-only flag of a protected bind with
// mount_setattr (which Landlock does not check), and a server running as
// root would hand its commands every capability.
func dropCapabilities() error {
	for c := 0; ; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err == unix.EINVAL {
			break // past the last capability
		}
		if err != nil && err != unix.EPERM {
			return fmt.Errorf("prctl(PR_CAPBSET_DROP, %d): %w", c, err)
		}
		if err == unix.EPERM {
			// Without CAP_SETPCAP there is nothing to drop: check.
			var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
			var data [2]unix.CapUserData
			if err := unix.Capget(&hdr, &data[0]); err != nil {
				return fmt.Errorf("capget: %w", err)
			}
			if data[0].Permitted != 0 || data[1].Permitted != 0 {
				return fmt.Errorf("prctl(PR_CAPBSET_DROP): %w, and the launcher holds capabilities", err)
			}
			break
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && err != unix.EINVAL {
		return fmt.Errorf("prctl(PR_CAP_AMBIENT_CLEAR_ALL): %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	if data[0].Inheritable != 0 || data[1].Inheritable != 0 {
		data[0].Inheritable, data[1].Inheritable = 0, 0
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			return fmt.Errorf("capset: %w", err)
		}
	}
	return nil
}

// The byte the server releases the launcher with (goFD).
const (
	releaseCgroup  = 'g' // the launcher is in the command's cgroup
	releaseRlimits = 'r' // there is no cgroup: rlimits stand in
)

// setRlimits applies the limits that are per process. Without a cgroup
// (fallback) the memory cap becomes RLIMIT_AS, per process and on address
// space rather than use (twice the memory limit, since runtimes reserve
// more than they touch), and the process cap RLIMIT_NPROC, which the
// kernel counts per user in the command's user namespace and does not
// enforce for root.
func setRlimits(l Limits, fallback bool) error {
	l = l.WithDefaults()
	type rlimit struct {
		res  int
		name string
		v    uint64
	}
	limits := []rlimit{
		{unix.RLIMIT_FSIZE, "RLIMIT_FSIZE", uint64(l.FileMB) << 20},
		{unix.RLIMIT_CPU, "RLIMIT_CPU", uint64(l.CPUSeconds)},
		{unix.RLIMIT_CORE, "RLIMIT_CORE", 0},
	}
	if fallback {
		limits = append(limits,
			// At least 2 GiB: the Go launcher itself reserves most
			// of a gigabyte of address space it never touches.
			rlimit{unix.RLIMIT_AS, "RLIMIT_AS", uint64(max(2*l.MemoryMB, 2048)) << 20},
			rlimit{unix.RLIMIT_NPROC, "RLIMIT_NPROC", uint64(l.Pids)})
	}
	for _, r := range limits {
		var cur unix.Rlimit
		if err := unix.Getrlimit(r.res, &cur); err != nil {
			return fmt.Errorf("getrlimit(%s): %w", r.name, err)
		}
		lim := unix.Rlimit{Cur: min(r.v, cur.Max), Max: min(r.v, cur.Max)}
		if err := unix.Setrlimit(r.res, &lim); err != nil {
			return fmt.Errorf("setrlimit(%s): %w", r.name, err)
		}
	}
	return nil
}

// pathRule grants read (or read and write) access to p: directory rights
// for a directory, file rights for anything else. Paths that do not exist
// are skipped.
func pathRule(p string, write bool) landlock.Rule {
	fi, err := os.Stat(p)
	dir := err == nil && fi.IsDir()
	switch {
	case dir && write:
		return landlock.RWDirs(p).WithRefer().IgnoreIfMissing()
	case dir:
		return landlock.RODirs(p).IgnoreIfMissing()
	case write:
		r := landlock.RWFiles(p).IgnoreIfMissing()
		if fi != nil && fi.Mode()&os.ModeCharDevice != 0 {
			r = r.WithIoctlDev() // terminals need their ioctls
		}
		return r
	default:
		return landlock.ROFiles(p).IgnoreIfMissing()
	}
}

// Status says what confinement this system gives.
type Status struct {
	// ABI is the kernel's Landlock ABI version; 0 when unavailable.
	ABI int
	// NetNS is set when commands get fresh user, mount, PID, IPC and
	// network namespaces and a filesystem built for them.
	NetNS bool
	// NamespacesErr says why they do not (nil when they do).
	NamespacesErr error
	// Cgroup names the cgroup version that limits memory and processes
	// ("cgroup v1", "cgroup v2"), "" when none could be used (CgroupErr
	// says why; rlimits still apply).
	Cgroup    string
	CgroupErr error
	// Err says why commands cannot be sandboxed (nil when they can).
	Err error
}

// Available reports whether commands can be sandboxed.
func (s Status) Available() bool { return s.Err == nil }

// Isolated reports whether commands get their own filesystem, PID and
// IPC namespaces: no host socket, /run, /tmp or process is reachable.
// Without it a read-only command can still talk to a host daemon through
// a pathname UNIX socket, so such commands should ask first.
func (s Status) Isolated() bool { return s.Available() && s.NetNS }

// Limited reports whether memory and process counts are capped.
func (s Status) Limited() bool { return s.Available() && s.Cgroup != "" }

// BlocksTCP reports whether sandboxed commands are kept off TCP (a
// network namespace, or Landlock ABI 4 and later).
func (s Status) BlocksTCP() bool { return s.Available() && (s.NetNS || s.ABI >= 4) }

// BlocksUDP reports whether sandboxed commands are kept off UDP (only a
// network namespace does that below Landlock ABI 10).
func (s Status) BlocksUDP() bool { return s.Available() && (s.NetNS || s.ABI >= 10) }

// BlocksSignals reports whether sandboxed commands cannot signal processes
// outside the sandbox (Landlock ABI 6 scopes, or a PID namespace).
func (s Status) BlocksSignals() bool { return s.Available() && (s.ABI >= 6 || s.NetNS) }

// Describe is one line for the user: every layer, and what is missing.
func (s Status) Describe() string {
	if s.Err != nil {
		return "commands are not sandboxed: " + s.Err.Error()
	}
	layers := []string{fmt.Sprintf("Landlock ABI %d", s.ABI)}
	if s.NetNS {
		layers = append(layers, "user, mount, PID, IPC and network namespaces (a filesystem built for the command, no host sockets or processes)")
	} else {
		why := "not permitted"
		if s.NamespacesErr != nil {
			why = s.NamespacesErr.Error()
		}
		net := "network: Landlock TCP rules only, UDP is not blocked"
		if s.ABI < 4 {
			net = "network: NOT blocked"
		}
		layers = append(layers, "NO namespaces ("+why+"): host UNIX sockets and other processes are reachable, so read-only commands ask first; "+net)
	}
	if s.Cgroup != "" {
		layers = append(layers, s.Cgroup+" limits on memory and processes")
	} else {
		why := "unavailable"
		if s.CgroupErr != nil {
			why = s.CgroupErr.Error()
		}
		limit := "memory capped per process by RLIMIT_AS, processes by RLIMIT_NPROC"
		if os.Getuid() == 0 {
			limit = "memory capped per process by RLIMIT_AS; process counts are NOT capped (RLIMIT_NPROC does not bind root)"
		}
		layers = append(layers, "NO cgroup limits ("+why+"): "+limit)
	}
	layers = append(layers, "rlimits on CPU time, file size and core dumps")
	return "commands run in a sandbox: " + strings.Join(layers, "; ")
}

var (
	probeOnce sync.Once
	probed    Status
)

// NoNamespacesEnv, set to 1 in the server's environment, makes the
// sandbox use Landlock alone, as where user namespaces are blocked (for
// tests of that fallback).
const NoNamespacesEnv = "CAIRN_SANDBOX_NO_NAMESPACES"

// Probe checks, once per process, that Landlock is enabled, whether the
// namespaces can be made and whether a cgroup can be made, by launching
// `true`.
func Probe() Status {
	probeOnce.Do(func() { probed = probe(os.Getenv(NoNamespacesEnv) != "1") })
	return probed
}

func probe(tryNamespaces bool) Status {
	truePath, err := exec.LookPath("true")
	if err != nil {
		truePath = "/bin/true"
	}
	return probeWith(tryNamespaces, func(namespaces, cgroups bool) error { return probeOne(truePath, namespaces, cgroups) })
}

// probeWith is probe with the launch of `true` given (tests make the
// namespace attempt fail as it does where user namespaces are blocked).
func probeWith(tryNamespaces bool, launch func(namespaces, cgroups bool) error) Status {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		if err == nil {
			err = fmt.Errorf("ABI version %d", abi)
		}
		return Status{Err: fmt.Errorf("this kernel does not enable Landlock (%v)", err)}
	}
	st := Status{ABI: abi}
	removeStale()
	if g, err := newCgroup(Limits{}); err != nil {
		st.CgroupErr = err
	} else {
		st.Cgroup = g.String()
		g.remove()
	}
	modes := []bool{true, false}
	if !tryNamespaces {
		modes = []bool{false}
		st.NamespacesErr = errors.New(NoNamespacesEnv + " is set")
	}
	for _, ns := range modes {
		err := launch(ns, st.Cgroup != "")
		if err == nil {
			st.NetNS = ns
			st.Err = nil
			return st
		}
		if ns {
			st.NamespacesErr = err
		}
		st.Err = err
	}
	return st
}

// probeOne launches `true` as a command would be.
func probeOne(truePath string, namespaces, cgroups bool) error {
	tmp, err := os.MkdirTemp("", "cairn-probe-*")
	if err != nil {
		return fmt.Errorf("creating a temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	// A protected directory inside a writable one exercises the
	// mount namespace as real commands will.
	ws := filepath.Join(tmp, "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o700); err != nil {
		return err
	}
	root := filepath.Join(tmp, "root")
	if err := os.Mkdir(root, 0o700); err != nil {
		return err
	}
	cmd, err := command(Policy{Profile: WorkspaceWrite, Workspace: ws, TempDir: root, Caches: []string{}}, []string{truePath}, os.Environ(), namespaces, cgroups)
	if err != nil {
		return err
	}
	cmd.Cmd.Dir = ws
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("the sandbox launcher failed: %v %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// Cmd is a sandboxed command. Set Cmd's Dir, Stdin, Stdout and Stderr
// (and add to its SysProcAttr), then use Start and Wait (or
// CombinedOutput), never Cmd's own Start, Run or Output: the launcher
// waits for Start to put it in its cgroup.
type Cmd struct {
	Cmd *exec.Cmd
	// cgroups: make a cgroup for the run.
	cgroups bool
	limits  Limits
	cg      *cgroup
	// launcher: Cmd runs the launcher, which waits for its release.
	launcher bool
	statusR  *os.File
	status   string
	// limitsErr says why the run has no cgroup.
	limitsErr error
}

// Start starts the launcher with the parent-death signal bound to a
// thread that stays, puts it in a cgroup with the limits (where one can
// be made) and lets it go on.
func (c *Cmd) Start() error {
	if !c.launcher {
		return c.Cmd.Start()
	}
	goR, goW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("creating the launcher's pipes: %w", err)
	}
	statusR, statusW, err := os.Pipe()
	if err != nil {
		goR.Close()
		goW.Close()
		return fmt.Errorf("creating the launcher's pipes: %w", err)
	}
	c.Cmd.ExtraFiles = []*os.File{goR, statusW}
	// Pdeathsig fires when the thread that forked the launcher exits;
	// a locked thread is only ended with its goroutine, so lock this one
	// for the fork only (the runtime keeps unlocked threads alive).
	runtime.LockOSThread()
	err = c.Cmd.Start()
	runtime.UnlockOSThread()
	goR.Close()
	statusW.Close()
	if err != nil {
		goW.Close()
		statusR.Close()
		return err
	}
	c.statusR = statusR
	if c.cgroups {
		g, err := newCgroup(c.limits)
		if err == nil {
			err = g.add(c.Cmd.Process.Pid)
			if err != nil {
				g.remove()
				g = nil
			}
		}
		c.cg, c.limitsErr = g, err
	}
	switch {
	case c.cgroups && c.cg == nil:
		// The limits were promised: do not run without them.
	case c.cgroups:
		_, _ = goW.Write([]byte{releaseCgroup})
	default:
		_, _ = goW.Write([]byte{releaseRlimits})
	}
	goW.Close()
	return nil
}

// Wait waits for the launcher, then kills whatever is left in the
// command's cgroup and removes it.
func (c *Cmd) Wait() error {
	err := c.Cmd.Wait()
	if c.statusR != nil {
		b, _ := io.ReadAll(io.LimitReader(c.statusR, 64))
		c.statusR.Close()
		c.status = strings.TrimSpace(string(b))
	}
	c.cg.remove()
	if c.limitsErr != nil && err != nil {
		return fmt.Errorf("%w (setting the command's limits: %v)", err, c.limitsErr)
	}
	return err
}

// CombinedOutput runs the command and returns its output.
func (c *Cmd) CombinedOutput() ([]byte, error) {
	var b bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &b, &b
	if err := c.Start(); err != nil {
		return b.Bytes(), err
	}
	err := c.Wait()
	return b.Bytes(), err
}

// Signal is the signal that ended the command inside the launcher, if
// one did (the launcher itself then exits 128+N).
func (c *Cmd) Signal() (syscall.Signal, bool) {
	n, ok := strings.CutPrefix(c.status, "signal ")
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(n)
	return syscall.Signal(v), err == nil
}

// Command returns a command that runs argv (argv[0] absolute) confined by
// p, with environment env. Its SysProcAttr is set, with Setpgid and
// Pdeathsig (SIGKILL). Under the Full profile the command is not confined.
func Command(p Policy, argv []string, env []string) (*Cmd, error) {
	if p.Profile == Full {
		return fullCommand(argv, env)
	}
	st := Probe()
	if !st.Available() {
		return nil, st.Err
	}
	return command(p, argv, env, st.NetNS, st.Cgroup != "")
}

// fullCommand runs argv unconfined, through the launcher only so that
// nothing the command starts outlives it (setsid daemons, double forks):
// the launcher is their subreaper and dies with the server.
func fullCommand(argv []string, env []string) (*Cmd, error) {
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return nil, fmt.Errorf("sandbox: the program must be an absolute path, got %q", argv)
	}
	raw, err := json.Marshal(Spec{Argv: argv, Unconfined: true})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"cairn-sandbox"}
	cmd.Env = append(append([]string(nil), env...), specEnv+"="+string(raw))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: serverDied}
	return &Cmd{Cmd: cmd, launcher: true}, nil
}

func command(p Policy, argv []string, env []string, namespaces, cgroups bool) (*Cmd, error) {
	spec, err := p.Spec(argv, namespaces)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"cairn-sandbox"}
	arg := string(raw)
	if len(raw) > maxSpecEnv {
		f, err := os.CreateTemp(p.TempDir, ".cairn-spec-*.json")
		if err != nil {
			return nil, fmt.Errorf("writing the sandbox policy: %w", err)
		}
		_, err = f.Write(raw)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			return nil, fmt.Errorf("writing the sandbox policy: %w", err)
		}
		arg = "@" + f.Name()
	}
	cmd.Env = append(append([]string(nil), env...), specEnv+"="+arg)
	// The launcher dies with the server: as PID 1 it takes the namespace
	// along; without namespaces it kills the command's tree first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if !namespaces {
		cmd.SysProcAttr.Pdeathsig = serverDied
	}
	if namespaces {
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
		if !p.Network {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
		}
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	return &Cmd{Cmd: cmd, cgroups: cgroups, limits: spec.Limits, launcher: true}, nil
}
