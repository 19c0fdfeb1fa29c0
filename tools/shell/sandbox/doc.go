// Package sandbox confines the commands of the run_command tool with the
// operating system, so that what a command can touch no longer depends on
// the classifier having judged it right.
//
// # Design
//
// The server must stay unrestricted, so confinement happens in a child:
// [Command] returns a [Cmd] that re-executes the current binary
// (/proc/self/exe) with the policy in the environment variable
// CAIRN_SANDBOX_EXEC. This package's init function sees the variable
// before main (or TestMain) runs and becomes the launcher. Any binary
// that links this package is therefore a launcher: cairn itself and every
// test binary that imports tools/shell.
//
// Where user namespaces are permitted the launcher starts in fresh user,
// mount, PID, IPC and (without network) network namespaces, and is PID 1
// of the PID namespace. [Cmd.Start] puts it in a cgroup of its own
// (memory and process limits) before releasing it through a pipe. The
// launcher then builds the command's filesystem by construction: a tmpfs
// root holding only read-only binds of the read list and read-write binds
// of the writable roots, a private size-limited /tmp, a minimal /dev, a
// fresh /proc, /sys read-only, the secret system files masked and the
// protected paths bound read-only onto themselves; it pivot_roots into
// it and detaches the host's root, so no host socket, /run or /tmp is
// left to reach. On top of that it applies Landlock
// (github.com/landlock-lsm/go-landlock) with the same lists to one locked
// thread, starts the command from that thread, forwards termination
// signals, reaps orphans and exits with the command, which kills every
// process left in the namespace. The launcher has PR_SET_PDEATHSIG, so it
// dies with the server.
//
// Where namespaces are not permitted, Landlock alone confines the command
// (writable roots granted piecewise around the protected paths), the
// launcher is the command's subreaper and kills its tree when the command
// ends or the server dies, and [Status.Isolated] is false: callers should
// ask before running even read-only commands, since host UNIX sockets and
// other processes stay reachable.
//
// # What is readable and writable
//
// Readable, whatever the profile: the system and toolchain hierarchies
// (/usr, /bin, /lib*, /etc, /opt, ...), a few device files, the
// workspace, the declared caches (Go build and module cache, npm and pip
// caches), the user's git configuration files, and Policy.ReadableRoots.
// Nothing else of $HOME is readable: ~/.ssh, ~/.aws, ~/.config/gh,
// ~/.netrc and the like are simply not on the list.
//
// Writable: [ReadOnly] gets only a private temporary directory and
// /dev/null. [WorkspaceWrite] adds the workspace, the declared caches and
// Policy.WritableRoots, minus the protected paths (Policy.Protected: the
// caller's walk of the workspace, every .git, git directories by content,
// editor and CI configuration) and the server's state directory: with
// namespaces they are read-only bind mounts. A protected path that does
// not exist yet cannot be bound over; with namespaces the caller removes
// what a command created (the tools package compares the protected paths
// before and after), without them the workspace root is granted
// piecewise, so that protected names (Policy.ProtectedNames) cannot be
// created there (nor any other new entry). [Full] is no sandbox at all.
//
// # What it does not stop
//
// Reading what is readable (the workspace, /etc) and printing it;
// connecting to a pathname UNIX socket inside the workspace or the read
// list (Landlock restricts those only from ABI 9); without namespaces,
// host sockets, other processes, UDP and Multipath-TCP; anything once the
// user approves a run outside the sandbox.
package sandbox
