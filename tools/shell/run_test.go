//go:build unix

package shell

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func testEnv() []string { return []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"} }

// alive reports whether pid is a live (non-zombie) process.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func firstPID(t *testing.T, out string) int {
	t.Helper()
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("no pid in output %q", out)
	}
	return pid
}

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		cmd  string
		code int
		out  string
	}{
		{"echo hi", 0, "hi\n"},
		{"exit 3", 3, ""},
		{"echo out; echo err >&2; exit 1", 1, "out\nerr\n"},
		{"false", 1, ""},
		{"nonexistent-command-xyz 2>/dev/null", 127, ""},
		{"pwd", 0, dir + "\n"},
	} {
		res, err := Run(context.Background(), RunOptions{Dir: dir, Command: tc.cmd, Env: testEnv()})
		if err != nil {
			t.Fatalf("%q: %v", tc.cmd, err)
		}
		if res.ExitCode != tc.code || res.Output != tc.out || res.TimedOut || res.Cancelled || res.Truncated {
			t.Errorf("%q: got %+v, want code %d output %q", tc.cmd, res, tc.code, tc.out)
		}
	}
}

func TestRunBadDir(t *testing.T) {
	if _, err := Run(context.Background(), RunOptions{Dir: "/nonexistent/dir", Command: "ls"}); err == nil {
		t.Fatal("want error")
	}
}

// runWithin runs Run and fails the test if it has not returned within a
// minute. The commands of these tests sleep an hour, so a Run that returns
// at all was ended by its timeout or cancel; no test here asserts how long
// that took, since the machine running it may be loaded.
func runWithin(t *testing.T, ctx context.Context, opts RunOptions) (RunResult, error) {
	t.Helper()
	type ran struct {
		res RunResult
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := Run(ctx, opts)
		done <- ran{res, err}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-time.After(time.Minute):
		t.Fatalf("%q still running after a minute", opts.Command)
		return RunResult{}, nil
	}
}

func TestRunTimeoutKillsGroup(t *testing.T) {
	res, err := runWithin(t, context.Background(), RunOptions{
		Dir:     t.TempDir(),
		Command: `sh -c 'sleep 3600 & echo $!; sleep 3600'`,
		Timeout: 300 * time.Millisecond,
		Env:     testEnv(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Cancelled {
		t.Fatalf("want timed out: %+v", res)
	}
	if res.ExitCode == 0 {
		t.Fatalf("exit code 0 after kill: %+v", res)
	}
	waitGone(t, firstPID(t, res.Output))
}

func TestRunTimeoutSigkillAfterGrace(t *testing.T) {
	res, err := runWithin(t, context.Background(), RunOptions{
		Dir:       t.TempDir(),
		Command:   `trap '' TERM; echo $$; sleep 3600 & wait; sleep 3600`,
		Timeout:   200 * time.Millisecond,
		KillGrace: 300 * time.Millisecond,
		Env:       testEnv(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Signal == "" {
		t.Fatalf("want killed by signal: %+v", res)
	}
	waitGone(t, firstPID(t, res.Output))
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	// Cancelled once the background job's pid is out, however long the
	// shell took to start.
	live := cancelOnOutput{cancel: cancel}
	res, err := runWithin(t, ctx, RunOptions{Dir: t.TempDir(), Command: `sleep 3600 & echo $!; wait`, Env: testEnv(), Live: &live})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.TimedOut {
		t.Fatalf("want cancelled: %+v", res)
	}
	waitGone(t, firstPID(t, res.Output))

	res, err = Run(ctx, RunOptions{Dir: t.TempDir(), Command: "echo never"})
	if err != nil || !res.Cancelled || res.Output != "" {
		t.Fatalf("already-cancelled ctx: %+v %v", res, err)
	}
}

// cancelOnOutput cancels a run at its first output.
type cancelOnOutput struct {
	once   sync.Once
	cancel context.CancelFunc
}

func (c *cancelOnOutput) Write(p []byte) (int, error) {
	c.once.Do(c.cancel)
	return len(p), nil
}

// TestRunBackgroundLeftovers: a job left running after the shell exits is
// killed and does not hold Run up.
func TestRunBackgroundLeftovers(t *testing.T) {
	res, err := runWithin(t, context.Background(), RunOptions{Dir: t.TempDir(), Command: `sleep 3600 & echo $!`, Env: testEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.TimedOut {
		t.Fatalf("%+v", res)
	}
	waitGone(t, firstPID(t, res.Output))
}

func TestRunOutputCap(t *testing.T) {
	res, err := Run(context.Background(), RunOptions{
		Dir:            t.TempDir(),
		Command:        `echo START; i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done; echo END`,
		MaxOutputBytes: 1000,
		Env:            testEnv(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated {
		t.Fatalf("not truncated: %d bytes", len(res.Output))
	}
	if !strings.HasPrefix(res.Output, "START\n") || !strings.HasSuffix(res.Output, "END\n") {
		t.Fatalf("head/tail not kept: %q...%q", res.Output[:20], res.Output[len(res.Output)-20:])
	}
	cut := res.TotalBytes - 1000
	if !strings.Contains(res.Output, fmt.Sprintf("[... %d bytes omitted", cut)) {
		t.Fatalf("missing note for %d bytes: %q", cut, res.Output)
	}
	if len(res.Output) > 1000+200 {
		t.Fatalf("output too long: %d", len(res.Output))
	}
}

func TestCapBuffer(t *testing.T) {
	for _, max := range []int{1, 2, 7, 10, 64} {
		for _, chunk := range []int{1, 3, 5, 100} {
			b := newCapBuffer(max)
			var all []byte
			for i := 0; i < 300; i += chunk {
				p := []byte{}
				for j := i; j < i+chunk && j < 300; j++ {
					p = append(p, byte('a'+j%26))
				}
				all = append(all, p...)
				b.Write(p)
			}
			out, total, trunc := b.result()
			if total != int64(len(all)) || !trunc {
				t.Fatalf("max %d chunk %d: total %d trunc %v", max, chunk, total, trunc)
			}
			h := max / 2
			want := string(all[:h])
			if !strings.HasPrefix(out, want) || !strings.HasSuffix(out, string(all[len(all)-(max-h):])) {
				t.Fatalf("max %d chunk %d: %q", max, chunk, out)
			}
		}
	}
	b := newCapBuffer(10)
	b.Write([]byte("0123456789"))
	if out, _, trunc := b.result(); out != "0123456789" || trunc {
		t.Fatalf("exact fit: %q %v", out, trunc)
	}
}

func TestRunEnv(t *testing.T) {
	env := StripSecrets([]string{"PATH=" + os.Getenv("PATH"), "OPENAI_API_KEY=sk-x", "VISIBLE=yes", "MY_TOKEN=t"})
	res, err := Run(context.Background(), RunOptions{Dir: t.TempDir(), Command: `echo "$VISIBLE${OPENAI_API_KEY}${MY_TOKEN}"`, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "yes\n" {
		t.Fatalf("got %q", res.Output)
	}
}

func TestStripSecrets(t *testing.T) {
	in := []string{
		"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "GOPATH=/go", "GIT_AUTHOR_NAME=Me", "TERM=xterm",
		"OPENAI_API_KEY=sk", "ANTHROPIC_API_KEY=x", "GITHUB_TOKEN=ghp", "GH_TOKEN=x", "AWS_ACCESS_KEY_ID=a",
		"AWS_REGION=us-east-1", "DB_PASSWORD=p", "MYSQL_PASSWD=p", "SECRET=s", "my_secret_thing=s",
		"SSH_AUTH_SOCK=/tmp/x", "GOOGLE_APPLICATION_CREDENTIALS=/k.json", "NPM_TOKEN=n", "SESSION_ID=1",
		"COOKIE_JAR=x", "PRIVATE_DATA=x", "HTTP_AUTHORIZATION=x", "DATABASE_URL=postgres://u:p@h/db",
		"PROXY_URL=http://user:pw@proxy:8080", "PLAIN_URL=https://example.com", "SENTRY_DSN=x", "malformed",
		"=novalue", "AZURE_CLIENT_SECRET=x", "HF_TOKEN=x",
	}
	got := StripSecrets(in)
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "LANG=C.UTF-8", "GOPATH=/go", "GIT_AUTHOR_NAME=Me", "TERM=xterm", "PLAIN_URL=https://example.com"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
