package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/tools"
)

// TestMain lets the test binary act as the cairn binary for child processes
// (cairn demo starts `cairn serve` from os.Executable()).
func TestMain(m *testing.M) {
	if os.Getenv("CAIRN_TEST_AS_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Setenv("CAIRN_TEST_AS_MAIN", "1")
	code := m.Run()
	if cairnBin != "" { // built by buildCairn for the quality tests
		os.RemoveAll(filepath.Dir(cairnBin))
	}
	os.Exit(code)
}

// syncBuffer is a bytes.Buffer safe for the logger's goroutines and the
// command writing at once (os.Stderr is, a bytes.Buffer is not).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb syncBuffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestVersionAndHelp(t *testing.T) {
	out, _, code := runCLI(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "cairn ") || strings.Count(out, "\n") != 1 {
		t.Errorf("--version: %q (exit %d)", out, code)
	}
	out, _, code = runCLI(t, "help")
	for _, c := range []string{"serve", "demo", "ask", "context"} {
		if !strings.Contains(out, c) {
			t.Errorf("help does not list %s", c)
		}
	}
	if code != 0 {
		t.Errorf("help exit %d", code)
	}
	if _, errOut, code := runCLI(t, "frobnicate"); code != 2 || !strings.Contains(errOut, "unknown command") {
		t.Errorf("unknown command: exit %d, %q", code, errOut)
	}
}

func TestDemoRunsEndToEnd(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	out, errOut, code := runCLI(t, "demo")
	if code != 0 {
		t.Fatalf("demo failed (exit %d): %s\n%s", code, errOut, out)
	}
	for _, want := range []string{"tool call read_file", "edit proposed", "+\t\tname = \"world\"", "applied=true", "identical to the original: true"} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
}

func TestAskApplyWithScriptedModel(t *testing.T) {
	dir := t.TempDir()
	if err := copyEmbedded(sampleFS, "_sample/ws", dir); err != nil {
		t.Fatal(err)
	}
	script, _ := sampleFS.ReadFile("_sample/script.yaml")
	sp := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(sp, script, 0o644)
	t.Setenv("CAIRN_PROVIDER", "scripted")
	t.Setenv("CAIRN_SCRIPT", sp)
	t.Setenv("CAIRN_STATE_DIR", t.TempDir())
	out, errOut, code := runCLI(t, "ask", "--root", dir, "--file", "greet/greet.go", "--range", "6-9", "--apply", "Handle an empty name")
	if code != 0 {
		t.Fatalf("ask failed: %s\n%s", errOut, out)
	}
	if !strings.Contains(out, "Greet now trims") || !strings.Contains(out, "+\tif name == \"\" {") {
		t.Errorf("ask output:\n%s", out)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "greet/greet.go"))
	if !strings.Contains(string(b), `name = "world"`) {
		t.Errorf("--apply did not write the edit:\n%s", b)
	}
	if _, errOut, code := runCLI(t, "ask", "--range", "x-y", "--file", "a", "q"); code != 2 || !strings.Contains(errOut, "--range") {
		t.Errorf("bad range: exit %d %q", code, errOut)
	}
}

func TestAuditVerify(t *testing.T) {
	state := t.TempDir()
	t.Setenv("CAIRN_STATE_DIR", state)
	audit, err := tools.OpenAuditLog(filepath.Join(state, "audit.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		audit.Append(tools.AuditRecord{Tool: "run_command", Risk: tools.RiskWrite, Decision: tools.DecisionAllowOnce, Input: fmt.Sprint(i)})
	}
	out, errOut, code := runCLI(t, "audit", "verify", "--root", t.TempDir())
	if code != 0 || !strings.Contains(out, "3 records, chain intact") {
		t.Fatalf("verify: %d %q %q", code, out, errOut)
	}
	b, _ := os.ReadFile(filepath.Join(state, "audit.jsonl"))
	os.WriteFile(filepath.Join(state, "audit.jsonl"), []byte(strings.Replace(string(b), `"input":"1"`, `"input":"9"`, 1)), 0o600)
	if _, errOut, code := runCLI(t, "audit", "verify"); code != 1 || !strings.Contains(errOut, "line 3") {
		t.Fatalf("tampered log: exit %d %q", code, errOut)
	}
}

func TestMapAndSearchCommands(t *testing.T) {
	t.Setenv("CAIRN_STATE_DIR", t.TempDir())
	dir := t.TempDir()
	if err := copyEmbedded(sampleFS, "_sample/ws", dir); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "map", "--root", dir, "--tokens", "200")
	if code != 0 || !strings.Contains(out, "greet/greet.go:") || !strings.Contains(out, "func Greet(name string) string") {
		t.Fatalf("map: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "search", "--root", dir, "--limit", "3", "shout greeting capitals")
	if code != 0 || !strings.HasPrefix(out, "greet/greet.go:") {
		t.Fatalf("search: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "search", "--root", dir, "--files", "--limit", "5", "greet")
	files := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f, _, _ := strings.Cut(l, ":")
		if files[f] {
			t.Errorf("search --files: %s twice in\n%s", f, out)
		}
		files[f] = true
	}
	if code != 0 || len(files) < 2 {
		t.Fatalf("search --files: exit %d, %d files\n%s\n%s", code, len(files), out, errOut)
	}
	if _, errOut, code := runCLI(t, "search", "--root", dir, "lang:cobol2 x", "bogus:filter"); code == 0 {
		t.Errorf("an unknown filter should fail: %s", errOut)
	}
	if _, _, code := runCLI(t, "map", "--tokens", "0"); code != 2 {
		t.Errorf("--tokens 0: exit %d", code)
	}
}
