// Command cairn is an agent runtime for editors: `cairn serve` is a language
// server that answers questions about the selected code and proposes edits
// the user reviews in the editor's diff view. The other subcommands run the
// same engines from a terminal.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"

	"github.com/cairn-dev/cairn/internal/gcroom"
	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/server"
)

// version is overridden at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(c command) { commands[c.name] = c }

func init() {
	register(command{"serve", "run the language server on stdin/stdout (--stdio is accepted)", runServe})
	register(command{"demo", "run a scripted session on a bundled sample workspace and print the transcript", runDemo})
	register(command{"ask", "one non-interactive run: print the answer and the proposed edits as a diff (--apply writes them; protected paths only with --apply-protected PATH,...)", runAsk})
	register(command{"context", "show the context report for a question", runContext})
	register(command{"help", "list the subcommands", nil})
}

// startCPUProfile writes a CPU profile of this process to path until the
// returned function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// errUsage marks an error whose message is a usage problem (exit code 2).
var errUsage = errors.New("usage")

// usageError is a usage problem: a bad flag, a missing argument. It is
// reported in one line (the synopsis, for a missing argument) and exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string        { return e.msg }
func (e usageError) Is(target error) bool { return target == errUsage }

func usagef(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// usageLine is the usage error that shows a command's synopsis.
func usageLine(synopsis string) error { return usageError{"usage: " + synopsis} }

func main() {
	// The process owns its runtime settings: the collector's target
	// follows the live heap for its whole life (a large tree's index is
	// large for as long as the server runs).
	gcroom.Follow()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	level := logLevel(args, os.Getenv("CAIRN_LOG"))
	// Logs go to stderr only: stdout carries protocol frames in serve mode.
	// Every log line passes the redactor: no secret reaches a log.
	slog.SetDefault(slog.New(redact.NewHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}), nil))) // nil: redact.Default(), compiled when first needed
	server.Version = version
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Fprintf(stdout, "cairn %s\n", version)
		return 0
	case "help", "--help", "-h":
		if len(args) > 1 && args[0] == "help" && commands[args[1]].run != nil {
			return run([]string{args[1], "-h"}, stdout, stderr) // cairn help ask
		}
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok || c.run == nil {
		fmt.Fprintf(stderr, "cairn: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if p := os.Getenv("CAIRN_CPUPROFILE"); p != "" {
		// For diagnosis: where a command's CPU goes (go tool pprof).
		stopProfile, err := startCPUProfile(p)
		if err != nil {
			fmt.Fprintf(stderr, "cairn: CAIRN_CPUPROFILE: %v\n", err)
			return 1
		}
		defer stopProfile()
	}
	if err := c.run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // the command printed its usage on stdout
		}
		var ue usageError
		if errors.As(err, &ue) && strings.HasPrefix(ue.msg, "usage: ") {
			fmt.Fprintln(stderr, ue.msg)
			return 2
		}
		fmt.Fprintf(stderr, "cairn %s: %v\n", args[0], err)
		var ee exitError
		if errors.As(err, &ee) {
			return int(ee)
		}
		if errors.Is(err, errUsage) {
			return 2
		}
		return 1
	}
	return 0
}

// logLevel is the level of the log lines on stderr: CAIRN_LOG
// (debug, info, warn, error) when set; otherwise info for the servers
// (serve, acp: their stderr is the editor's log panel; acp then moves its
// log to a file, see quietACPLog) and warn for the
// commands a person runs in a terminal, whose own output would otherwise
// be interleaved with the in-process server's routine info lines.
func logLevel(args []string, env string) slog.Level {
	var l slog.Level
	if env != "" && l.UnmarshalText([]byte(env)) == nil {
		return l
	}
	if len(args) > 0 && (args[0] == "serve" || args[0] == "acp") {
		return slog.LevelInfo
	}
	return slog.LevelWarn
}

// exitError carries a specific exit code.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func usage(w io.Writer) {
	fmt.Fprintf(w, "cairn %s — an agent runtime for editors\n\nUsage: cairn <command> [flags]\n\nCommands:\n", version)
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nRun 'cairn <command> -h' for a command's flags.\n")
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "cairn serve [--stdio] [--zoekt URL]")
	fs.Bool("stdio", true, "speak LSP on stdin/stdout (the default; accepted for clients that pass it)")
	zoekt := fs.String("zoekt", "", "URL of a zoekt-webserver -rpc that serves code search (as $CAIRN_ZOEKT; the search.zoekt setting wins)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("takes no arguments (got %q)", fs.Args())
	}
	if stdinIsTerminal() {
		// Someone ran it by hand: the server still serves (as gopls does),
		// but says once what it is for and what to run instead.
		fmt.Fprintln(stderr, serveTerminalHint)
	}
	opts := server.Options{ForwardLogs: true}
	if *zoekt != "" {
		// The flag is the launch configuration's word, as the environment is.
		opts.Getenv = func(k string) string {
			if k == "CAIRN_ZOEKT" {
				return *zoekt
			}
			return os.Getenv(k)
		}
	}
	return server.Serve(ctx, os.Stdin, stdout, opts)
}

// serveTerminalHint is what cairn serve prints when its stdin is a terminal.
const serveTerminalHint = "cairn serve speaks LSP on stdin/stdout and is meant to be launched by an editor; to try Cairn from a terminal, run `cairn demo` or `cairn ask --file PATH QUESTION`."

// stdinIsTerminal reports whether stdin is a terminal: a person started
// the command, not an editor (tests give it a pseudo-terminal).
func stdinIsTerminal() bool { return isTerminal(os.Stdin) }

// newFlagSet returns the flag set of the subcommand name ("trace show"),
// with synopsis as its usage line. The flag package prints nothing itself:
// parseFlags prints the usage on stdout for -h, and run reports a bad flag
// in one line.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s\n", synopsis)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(fs.Output(), "\nflags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// newFlags returns a flag set with the common --root flag.
func newFlags(name, synopsis string) (*flag.FlagSet, *string) {
	fs := newFlagSet(name, synopsis)
	root := fs.String("root", ".", "workspace root")
	return fs, root
}

// parseFlags parses args with fs. For -h or --help it prints the usage on
// stdout and returns flag.ErrHelp (exit 0); a bad flag is a usage error
// that names the flag and where the flags are listed.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		fs.SetOutput(io.Discard)
		return flag.ErrHelp
	default:
		return usagef("%v (cairn %s -h lists the flags)", err, fs.Name())
	}
}

// parseRange parses "L1-L2" or "L" (1-based, inclusive).
func parseRange(s string) (int, int, error) {
	if s == "" {
		return 0, 0, nil
	}
	a, b, found := strings.Cut(s, "-")
	var from, to int
	if _, err := fmt.Sscanf(a, "%d", &from); err != nil || from < 1 {
		return 0, 0, usagef("--range %q: expected L1-L2 with 1-based lines", s)
	}
	to = from
	if found {
		if _, err := fmt.Sscanf(b, "%d", &to); err != nil || to < from {
			return 0, 0, usagef("--range %q: expected L1-L2 with L2 >= L1", s)
		}
	}
	return from, to, nil
}

// checkRange refuses a --range that starts past the end of the file's
// text: nothing would be selected. A range that only ends past it is
// clamped by the server, as LSP clamps positions.
func checkRange(file, text string, from, to int) error {
	lines := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		lines++
	}
	if from > lines {
		return usagef("--range %d-%d: %s has %d lines", from, to, file, lines)
	}
	return nil
}

// parseInterleaved parses flags that may come before or after the
// positional arguments, and returns the positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args, stdout); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// stateDirFor finds the state directory of the workspace at root as the
// server does: $CAIRN_STATE_DIR, else a per-workspace directory under the
// cache, keyed by the absolute, symlink-resolved root.
func stateDirFor(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("--root: %w", err)
	}
	return server.StateDir(real, os.Getenv)
}
