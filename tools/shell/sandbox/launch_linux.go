//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// specEnv carries the Spec (JSON) from the server to the launcher.
const specEnv = "CAIRN_SANDBOX_EXEC"

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

// launch confines the current thread as spec says and execs its program.
func launch(raw string) error {
	var s Spec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return fmt.Errorf("reading the policy: %w", err)
	}
	if len(s.Argv) == 0 {
		return errors.New("no program to run")
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if len(kv) < len(specEnv)+1 || kv[:len(specEnv)+1] != specEnv+"=" {
			env = append(env, kv)
		}
	}
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return fmt.Errorf("Landlock is not available in this kernel (%v); refusing to run unconfined", err)
	}
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
	if s.Namespaces {
		if err := protect(s.Protect); err != nil {
			return err
		}
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("building the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return errors.New("Landlock enforces nothing here; refusing to run unconfined")
	}
	// The ruleset binds this OS thread only: restrict it and exec from it.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := llsys.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	unix.Close(fd)
	return fmt.Errorf("exec %s: %w", s.Argv[0], syscall.Exec(s.Argv[0], s.Argv, env))
}

// protect bind-mounts each existing path read-only onto itself, in the
// launcher's own mount namespace. A mount point cannot be renamed or
// removed, and Landlock forbids the command to unmount it.
func protect(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mount namespace private: %w", err)
	}
	for _, p := range paths {
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("protecting %s: bind mount: %w", p, err)
		}
		var st unix.Statfs_t
		if err := unix.Statfs(p, &st); err != nil {
			return fmt.Errorf("protecting %s: %w", p, err)
		}
		// Flags locked by the user namespace must be kept on remount.
		keep := uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
		if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|keep, ""); err != nil {
			return fmt.Errorf("protecting %s: read-only remount: %w", p, err)
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
	// NetNS is set when commands get fresh user, mount and network
	// namespaces.
	NetNS bool
	// Err says why commands cannot be sandboxed (nil when they can).
	Err error
}

// Available reports whether commands can be sandboxed.
func (s Status) Available() bool { return s.Err == nil }

// BlocksTCP reports whether sandboxed commands are kept off TCP (a
// network namespace, or Landlock ABI 4 and later).
func (s Status) BlocksTCP() bool { return s.Available() && (s.NetNS || s.ABI >= 4) }

// BlocksUDP reports whether sandboxed commands are kept off UDP (only a
// network namespace does that below Landlock ABI 10).
func (s Status) BlocksUDP() bool { return s.Available() && (s.NetNS || s.ABI >= 10) }

// BlocksSignals reports whether sandboxed commands cannot signal processes
// outside the sandbox (Landlock ABI 6 scopes).
func (s Status) BlocksSignals() bool { return s.Available() && s.ABI >= 6 }

// Describe is one line for the user.
func (s Status) Describe() string {
	if s.Err != nil {
		return "commands are not sandboxed: " + s.Err.Error()
	}
	net := "network: fresh network namespace and Landlock TCP rules"
	switch {
	case !s.NetNS && s.ABI >= 4:
		net = "network: Landlock TCP rules only (no network namespaces here, so UDP is not blocked)"
	case !s.NetNS:
		net = "network: NOT blocked (Landlock ABI < 4 and no network namespaces)"
	}
	return fmt.Sprintf("commands run in a Landlock sandbox (ABI %d; %s)", s.ABI, net)
}

var (
	probeOnce sync.Once
	probed    Status
)

// Probe checks, once per process, that Landlock is enabled and whether
// fresh user and network namespaces can be made, by launching `true`.
func Probe() Status {
	probeOnce.Do(func() { probed = probe() })
	return probed
}

func probe() Status {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		if err == nil {
			err = fmt.Errorf("ABI version %d", abi)
		}
		return Status{Err: fmt.Errorf("Landlock is not enabled in this kernel (%v)", err)}
	}
	st := Status{ABI: abi}
	tmp, err := os.MkdirTemp("", "cairn-probe-*")
	if err != nil {
		st.Err = fmt.Errorf("creating a temporary directory: %w", err)
		return st
	}
	defer os.RemoveAll(tmp)
	truePath, err := exec.LookPath("true")
	if err != nil {
		truePath = "/bin/true"
	}
	for _, netns := range []bool{true, false} {
		// A protected directory inside a writable one exercises the
		// mount namespace as real commands will.
		ws := filepath.Join(tmp, "ws")
		if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o700); err != nil {
			st.Err = err
			return st
		}
		cmd, err := command(Policy{Profile: WorkspaceWrite, Workspace: ws, TempDir: tmp, Caches: []string{}}, []string{truePath}, os.Environ(), netns)
		if err != nil {
			st.Err = err
			return st
		}
		out, err := cmd.CombinedOutput()
		if err == nil {
			st.NetNS = netns
			return st
		}
		st.Err = fmt.Errorf("the sandbox launcher failed: %v %s", err, out)
	}
	return st
}

// Command returns a command that runs argv (argv[0] absolute) confined by
// p, with environment env. The caller sets Dir, Stdin, Stdout, Stderr and
// may add to SysProcAttr (it is set, with Setpgid). Under the Full
// profile the command is not confined.
func Command(p Policy, argv []string, env []string) (*exec.Cmd, error) {
	if p.Profile == Full {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd, nil
	}
	st := Probe()
	if !st.Available() {
		return nil, st.Err
	}
	return command(p, argv, env, st.NetNS)
}

func command(p Policy, argv []string, env []string, namespaces bool) (*exec.Cmd, error) {
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
	cmd.Env = append(append([]string(nil), env...), specEnv+"="+string(raw))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if namespaces {
		uid, gid := os.Getuid(), os.Getgid()
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS
		if !p.Network {
			cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNET
		}
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		cmd.SysProcAttr.GidMappingsEnableSetgroups = false
	}
	return cmd, nil
}
