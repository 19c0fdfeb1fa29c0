package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairn-dev/cairn/internal/testenv"
)

// cairnCmd is the cairn binary (this test binary acting as it, TestMain)
// run with args, in a process of its own: exit codes and the two streams
// are the real ones.
func cairnCmd(t *testing.T, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), "CAIRN_TEST_AS_MAIN=1", "CAIRN_LOG=")
	return cmd
}

func runCairn(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := cairnCmd(t, ctx, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("cairn %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// Every subcommand, and every subcommand of one, answers -h and --help
// with its usage on stdout and exit 0, nothing on stderr; an unknown flag
// is one line on stderr naming it, and exit 2.
func TestHelpAndBadFlagsEverywhere(t *testing.T) {
	var subs [][]string
	for name, c := range commands {
		if c.run != nil {
			subs = append(subs, []string{name})
		}
	}
	subs = append(subs, []string{"eval", "record"}, []string{"trace", "list"}, []string{"trace", "show"},
		[]string{"trace", "delete"}, []string{"audit", "list"}, []string{"audit", "verify"})
	sort.Slice(subs, func(i, j int) bool { return strings.Join(subs[i], " ") < strings.Join(subs[j], " ") })
	for _, sub := range subs {
		name := strings.Join(sub, " ")
		for _, h := range []string{"-h", "--help"} {
			out, errOut, code := runCairn(t, append(sub, h)...)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: cairn "+sub[0]) || strings.Contains(out, "usage: usage") {
				t.Errorf("cairn %s %s: exit %d (want 0)\nstdout: %q (want the usage)\nstderr: %q (want nothing)", name, h, code, out, errOut)
			}
		}
		if name == "help" {
			continue
		}
		out, errOut, code := runCairn(t, append(sub, "--no-such-flag")...)
		named := strings.Contains(errOut, "flag provided but not defined: -no-such-flag") ||
			strings.Contains(errOut, `command "--no-such-flag"`) // where a subcommand must come first
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !named || strings.Contains(errOut, "usage: usage") {
			t.Errorf("cairn %s --no-such-flag: exit %d (want 2)\nstdout: %q\nstderr: %q (want one line naming the flag)", name, code, out, errOut)
		}
	}
	// A missing argument shows the synopsis once.
	for _, args := range [][]string{{"trace"}, {"trace", "show"}, {"audit"}, {"search"}, {"ask"}} {
		_, errOut, code := runCairn(t, args...)
		if code != 2 || !strings.HasPrefix(errOut, "usage: cairn "+args[0]) || strings.Contains(errOut, "usage: usage") {
			t.Errorf("cairn %s: exit %d (want 2), stderr %q (want the synopsis)", strings.Join(args, " "), code, errOut)
		}
	}
}

// With a network provider configured and no key, cairn ask names the
// missing variable and sends nothing: no retry of a request that could
// only be refused (or, offline, never arrive).
func TestAskNamesMissingAPIKey(t *testing.T) {
	dir := t.TempDir()
	if err := copyEmbedded(sampleFS, "_sample/ws", dir); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CAIRN_STATE_DIR", t.TempDir())
	for _, tc := range []struct{ provider, env string }{{"openai", "OPENAI_API_KEY"}, {"anthropic", "ANTHROPIC_API_KEY"}} {
		t.Run(tc.provider, func(t *testing.T) {
			t.Setenv("CAIRN_PROVIDER", tc.provider)
			t.Setenv("CAIRN_MODEL", "some-model")
			t.Setenv(tc.env, "")
			t.Setenv("OPENAI_BASE_URL", "")
			t.Setenv("ANTHROPIC_BASE_URL", "")
			_, errOut, code := runCairn(t, "ask", "--root", dir, "--file", "greet/greet.go", "what does it do")
			if code != 1 || !strings.Contains(errOut, tc.env+" is not set") || strings.Contains(errOut, "retrying") {
				t.Errorf("exit %d (want 1), stderr:\n%s\nwant it to name %s, with no retry", code, errOut, tc.env)
			}
		})
	}
}

// openPTY opens a pseudo-terminal in raw mode (bytes pass unchanged, no
// echo) and returns its two ends.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		testenv.Need(t, "no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening the pty's terminal end: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	tio, err := unix.IoctlGetTermios(int(s.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	tio.Oflag &^= unix.OPOST
	tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	tio.Cflag &^= unix.CSIZE | unix.PARENB
	tio.Cflag |= unix.CS8
	tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(int(s.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	return m, s
}

// cairn serve started by hand on a terminal says in one line that it is
// meant for editors and how to try Cairn, then serves all the same; started
// by an editor (stdin a pipe) it says nothing of the kind.
func TestServeOnTerminalSaysWhatItIsFor(t *testing.T) {
	ws := t.TempDir()
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":"file://%s","capabilities":{}}}`, ws)
	frames := "Content-Length: " + strconv.Itoa(len(init)) + "\r\n\r\n" + init
	for _, onTerminal := range []bool{true, false} {
		t.Run(fmt.Sprintf("terminal=%v", onTerminal), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := cairnCmd(t, ctx, "serve")
			cmd.Env = append(cmd.Env, "CAIRN_STATE_DIR="+t.TempDir())
			var stdin io.WriteCloser
			if onTerminal {
				m, s := openPTY(t)
				cmd.Stdin, stdin = s, m
			} else {
				w, err := cmd.StdinPipe()
				if err != nil {
					t.Fatal(err)
				}
				stdin = w
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var errb syncBuffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			if _, err := io.WriteString(stdin, frames); err != nil {
				t.Fatal(err)
			}
			// It serves: the answer to initialize comes back (after the
			// notifications the server sends first).
			r := bufio.NewReader(stdout)
			for answered := false; !answered; {
				var n int
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						t.Fatalf("no answer to initialize: %v; stderr:\n%s", err, errb.String())
					}
					if line == "\r\n" {
						break
					}
					if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
						n, _ = strconv.Atoi(strings.TrimSpace(v))
					}
				}
				body := make([]byte, n)
				if _, err := io.ReadFull(r, body); err != nil {
					t.Fatalf("reading a frame: %v", err)
				}
				answered = strings.Contains(string(body), `"id":1`) && strings.Contains(string(body), `"capabilities"`)
			}
			hints := 0
			for _, l := range strings.Split(errb.String(), "\n") {
				if strings.Contains(l, "meant to be launched by an editor") {
					hints++
					if !strings.Contains(l, "cairn demo") || !strings.Contains(l, "cairn ask") {
						t.Errorf("the hint does not say how to try Cairn: %q", l)
					}
				}
			}
			if want := map[bool]int{true: 1, false: 0}[onTerminal]; hints != want {
				t.Errorf("%d hint lines on stderr, want %d:\n%s", hints, want, errb.String())
			}
		})
	}
}
