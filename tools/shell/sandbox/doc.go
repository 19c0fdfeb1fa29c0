// Package sandbox confines the commands of the run_command tool with the
// operating system, so that what a command can touch no longer depends on
// the classifier having judged it right.
//
// # Design
//
// On Linux the wall is Landlock (github.com/landlock-lsm/go-landlock): an
// allow-list of file hierarchies a process may read, and a smaller one it
// may write, enforced by the kernel on the process and everything it
// starts. Landlock restricts the thread that asks for it and its future
// children, never its parent, and it cannot be lifted. The server must
// stay unrestricted, so confinement happens in a child: [Command] returns
// an *exec.Cmd that re-executes the current binary (/proc/self/exe) with
// the policy in the environment variable CAIRN_SANDBOX_EXEC. This
// package's init function sees the variable before main (or TestMain)
// runs, builds the ruleset, restricts its own thread (no_new_privs, then
// landlock_restrict_self) and execs the shell on that same thread. Any
// binary that links this package is therefore a launcher: cairn itself
// and every test binary that imports tools/shell.
//
// The network is closed twice where the system allows it: the launcher
// starts in a fresh user and network namespace (no interfaces but a
// loopback that is down, so neither TCP nor UDP leaves), and Landlock's
// TCP bind/connect rules (ABI 4 and later) deny TCP even when namespaces
// are not permitted. Landlock's IPC scopes (ABI 6 and later) keep the
// command from signalling processes outside its sandbox (the server) and
// from reaching abstract UNIX sockets created outside it.
//
// # What is readable and writable
//
// Readable, whatever the profile: the system and toolchain hierarchies
// (/usr, /bin, /lib*, /etc, /opt, /proc, /sys, ...), a few device files,
// the workspace, the declared caches (Go build and module cache, npm and
// pip caches), the user's git configuration files, and
// Policy.ReadableRoots. Nothing else of $HOME is readable: ~/.ssh, ~/.aws,
// ~/.config/gh, ~/.netrc and the like are simply not on the list. The
// server's /proc/<pid> files that matter (environ, mem, fd, cwd, root)
// are guarded by the kernel's ptrace access check, which Landlock extends
// so that a sandboxed process cannot inspect a process outside its
// domain.
//
// Writable: [ReadOnly] gets only a private temporary directory ($TMPDIR,
// removed after the command) and /dev/null and the terminal.
// [WorkspaceWrite] adds the workspace, the declared caches and
// Policy.WritableRoots, minus the protected paths (the workspace's
// .git/hooks and .git/config and the server's state directory). Landlock
// grants rights on whole hierarchies and cannot carve a hole in one, so a
// writable root that contains a protected path is granted piecewise: the
// root and the directories on the way to the protected path stay
// read-only, and each of their other entries is writable. The cost: no
// new entry can be created directly in such a directory (the workspace
// root, .git); the command fails and may be re-run outside the sandbox
// after the user approves it. [Full] is no sandbox at all.
//
// # What it does not stop
//
// Reading what is readable (the workspace, /etc) and printing it; CPU,
// memory and disk exhaustion; connecting to pathname UNIX sockets
// (Landlock restricts those only from ABI 9); Multipath-TCP and UDP when
// namespaces are not permitted; anything once the user approves a run
// outside the sandbox.
package sandbox
