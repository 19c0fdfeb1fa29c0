// Package testenv is test support: what a test needs from the machine (a
// tool, a kernel feature, the Go source tree). A test whose need is not met
// is skipped on a developer's machine and fails under CI=true, where the
// environment is meant to have everything (gopls' testenv.NeedsTool is the
// model): a CI run that skipped the sandbox tests would pass without having
// tested the sandbox.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// CI reports whether the tests run under CI=true.
func CI() bool { return os.Getenv("CI") == "true" }

// Need marks tb as needing something this machine lacks, described by
// format: a skip, except under CI=true, where it fails.
func Need(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		tb.Fatalf("CI=true and %s", msg)
	}
	tb.Skipf("SKIP: %s (with CI=true this fails)", msg)
}

// NeedTool returns the path of the command name, or Needs it.
func NeedTool(tb testing.TB, name string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Need(tb, "%s is not installed: %v", name, err)
	}
	return p
}

var goroot struct {
	once sync.Once
	dir  string
	err  error
}

// GOROOT is the root of the Go installation that runs the tests, as
// `go env GOROOT` reports it (runtime.GOROOT is the root the test binary
// was built with, which need not exist where it runs). It Needs the go
// command and the source tree under GOROOT/src.
func GOROOT(tb testing.TB) string {
	tb.Helper()
	goroot.once.Do(func() {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			goroot.err = fmt.Errorf("go env GOROOT: %w", err)
			return
		}
		dir := strings.TrimSpace(string(out))
		if _, err := os.Stat(filepath.Join(dir, "src", "net", "http", "server.go")); err != nil {
			goroot.err = fmt.Errorf("no Go source tree under %s: %w", dir, err)
			return
		}
		goroot.dir = dir
	})
	if goroot.err != nil {
		Need(tb, "%v", goroot.err)
	}
	return goroot.dir
}
