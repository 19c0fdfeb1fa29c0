// Package shell classifies and runs the shell commands of the run_command
// tool.
//
// # Classification
//
// [Classify] parses a command line with mvdan.cc/sh/v3 (Bash dialect) and
// judges every simple command and every redirection, wherever it occurs:
// pipelines, && || ; lists, subshells, { } groups, $(...) and backticks,
// <(...) >(...) process substitutions, function bodies (whether or not the
// function is called), if/case/for/while/select bodies, coproc and time,
// here-documents, and assignment values. The class of the whole line is
// its most dangerous part ([Max]); classes are ordered
// read < write < network < install < destructive.
//
// [Classification].Parts lists every simple command of the line with its
// own class and reason, so that a policy can decide each: a statement is
// judged without its redirections, each of which is a part of its own
// (Redirection); the command a wrapper runs (env, timeout, xargs, find
// -exec, ...) is a part of its own (Via) besides the wrapper's statement;
// source that does not parse is a part marked Unparsed.
//
// Wrappers are looked through: command, builtin, exec, env (including
// NAME=value and -S), nohup, time, nice, ionice, timeout, stdbuf, setsid,
// unbuffer, strace, flock, watch, busybox, xargs and parallel (the command
// gets an argument not known statically), find -exec/-ok and fd -x. Shell
// code given as a literal string is parsed and classified recursively:
// sh/bash/zsh -c '...', trap '...', watch '...', script -c, env -S,
// alias values, variables that hold commands (GIT_SSH_COMMAND, PAGER,
// EDITOR, PS4, ...), rg --pre, go -exec/-toolexec/-vettool.
//
// Decisions worth knowing:
//
//   - Anything that does not parse is destructive (ParseError is set).
//   - Dynamic command names ($CMD, $(...), `...`, $'..', globs) are
//     destructive, and so are eval, sudo/doas/su, shells or interpreters
//     reading code from standard input (`curl ... | sh`, `cat x | python3`,
//     `bash <<< ...`, `source /dev/stdin`, `sh -c "$VAR"`), and any
//     literal string evaluated as code that does not parse.
//   - An unknown command is write, never read: it is a program that may do
//     anything the user can, but is most often a project script or build
//     tool. The same holds for scripts and inline code of other languages
//     (`python3 x.py`, `node -e ...`, `make`, `npm run`), which are not
//     analysed.
//   - go build/test/run/generate, cargo build/test, npm run/test and make
//     are write: they write build caches and outputs and run project code.
//     So is go vet, which compiles into the build cache (read commands run
//     in the read-only sandbox, where the cache is not writable: a poisoned
//     entry would run later, outside it). go list/doc/version/env stay read. go mod tidy/download/vendor/verify are network.
//   - Paths are resolved against the workspace root (the commands run
//     there), following `cd`/`pushd` with literal arguments; after a `cd`
//     whose target is not known statically (or popd, or CDPATH), relative
//     paths count as unknown. Symbolic links are resolved through
//     Options.Realpath, and links created by the same command line (ln -s)
//     are remembered, so `ln -s /etc d; echo > d/x` is destructive.
//   - Writes (redirections, tee, cp/mv/install/ln targets, touch, sed -i,
//     gofmt -w, sort -o, tar -cf, gzip in place, ...) are write inside the
//     workspace; outside it they are write for a path that does not exist
//     yet and destructive for one that does (truncation or modification
//     of existing files outside the workspace), and destructive for a path
//     not known statically, in the home directory (~), under /dev (other
//     than /dev/null, /dev/std*, /dev/fd/*, /dev/tty) or /proc and /sys.
//     Redirections to /dev/tcp and /dev/udp are network. `: > f`, `> f`
//     and `true > f` (pure truncation) of an existing file are destructive
//     even inside the workspace. Appends are judged like writes.
//   - rm/rmdir/unlink of literal paths inside the workspace are write; rm
//     with -r, -R or -f, or of any path outside the workspace, the
//     workspace root itself, or a path not known statically, is
//     destructive. find -delete, find -exec rm, xargs rm are destructive.
//   - "Read" tools that can run programs are judged by what they run: dc's
//     ! (a dc program from a file or standard input is write), awk
//     programs given with -e/--source and -l/-i libraries, less/more +cmd
//     and key files, sort --compress-program, man -P/-H, rg --pre. git in
//     a directory that is, or is inside, another repository (a nested
//     .git, a git directory shipped as plain files) or outside the
//     workspace is write: that repository's configuration runs commands.
//   - Commands whose options could make them write or run programs (find,
//     sed, sort, awk, rg, tar, tee, ...) are destructive when an argument
//     is not known statically, since it could carry such an option.
//   - Installs record their packages as written in Classification.Packages
//     ("left-pad@1.3.0", "requests==2.31", "-r requirements.txt"); an
//     install of a package name not known statically is destructive, since
//     the user could not be shown what would be installed. Removing
//     packages and updating package indexes are install too.
//   - Assignments of literal strings containing $( or ` are parsed and
//     at least write: bash evaluates array subscripts in arithmetic, so
//     y='a[$(cmd)]'; echo $((y)) runs cmd. Assignments to LD_*, BASH_ENV,
//     ENV and BASH_FUNC_* are destructive; PATH and variables that change
//     what code programs load (NODE_OPTIONS, PYTHONPATH, GIT_CONFIG_*, ...)
//     are write.
//   - Reading files outside the workspace (cat /etc/passwd) is read: the
//     class is about effects. The read-only sandbox is what keeps such a
//     read from reaching ~/.ssh or another process's environment.
//   - Options and variables that make a "read" tool write or run code are
//     judged: iconv/tree/info/xmllint -o, time/strace/ltrace -o (strace
//     -o '|cmd' runs cmd), git --output, history -w/-a, GIT_TRACE* and
//     SSLKEYLOGFILE naming a file, git --config-env (destructive for keys
//     that hold commands), git -c, --git-dir/--work-tree, HOME,
//     XDG_CONFIG_HOME, RIPGREP_CONFIG_PATH and other configuration paths
//     (write), and array subscripts with command substitution given to
//     printf -v, read, mapfile, unset, wait -p, getopts, test -v and
//     declare and its kin (bash evaluates them).
//
// Known limits: the classifier does not model the inside of scripts and
// programs it starts (Makefiles, package scripts, python -c), aliases
// defined outside the command line, shell options that change parsing at
// run time, or symlinks created by earlier commands of the session other
// than through Realpath. Network commands run remotely (ssh host 'rm -rf
// /') are network, not destructive.
//
// # Running
//
// The classifier is not the security boundary: [RunOptions].Sandbox runs
// the command in the OS sandbox (package sandbox), read-only for read
// commands, so a misclassified command can no longer write or reach the
// network. testdata/escapes.txt lists escape attempts that
// TestSandboxCanaries runs for real in both profiles.
//
// [Run] executes a command with bash -c (or /bin/sh -c) in the workspace,
// in its own process group, with standard input from /dev/null, a
// timeout, and combined output capped to MaxOutputBytes keeping the head
// and the tail with a note of how much was cut. On timeout or
// cancellation the whole group gets SIGTERM and, after a grace period,
// SIGKILL; processes left in the group when the shell exits (background
// jobs) are killed too. [StripSecrets] removes secret-looking variables
// from an environment before it is handed to Run.
package shell
