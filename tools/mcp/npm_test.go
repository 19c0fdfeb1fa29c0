package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/tools"
)

// The real MCP servers from npm, pinned in test/mcp/package.json and
// package-lock.json. The tests install them there with `npm ci` when they
// are missing or stale. Without node or npm the tests skip, except under
// CI=true, where they fail.

var (
	npmOnce sync.Once
	npmDir  string
	npmErr  string // why the servers are unavailable
	npmSkip bool   // unavailable because node or npm is absent
)

func npmServers(t *testing.T) (node, dir string) {
	t.Helper()
	npmOnce.Do(installNPMServers)
	if npmErr != "" {
		if npmSkip && os.Getenv("CI") != "true" {
			t.Skip(npmErr + " (skipped; with CI=true this fails)")
		}
		t.Fatal(npmErr)
	}
	node, _ = exec.LookPath("node")
	return node, npmDir
}

func installNPMServers() {
	dir, err := filepath.Abs(filepath.Join("..", "..", "test", "mcp"))
	if err != nil {
		npmErr = err.Error()
		return
	}
	npmDir = dir
	if _, err := exec.LookPath("node"); err != nil {
		npmErr, npmSkip = "node is not installed: cannot run the tests with the real MCP servers from npm", true
		return
	}
	if installedMatchesPins(dir) {
		return
	}
	if _, err := exec.LookPath("npm"); err != nil {
		npmErr, npmSkip = "npm is not installed: cannot install the MCP servers from npm for these tests", true
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		npmErr = "npm ci in " + dir + " failed: " + err.Error() + "\n" + string(out)
		return
	}
	if !installedMatchesPins(dir) {
		npmErr = "npm ci in " + dir + " did not install the pinned servers"
	}
}

// installedMatchesPins reports whether node_modules holds exactly the
// versions package.json pins.
func installedMatchesPins(dir string) bool {
	var pkg struct{ Dependencies map[string]string }
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil || json.Unmarshal(b, &pkg) != nil || len(pkg.Dependencies) == 0 {
		return false
	}
	for name, version := range pkg.Dependencies {
		var inst struct{ Version string }
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
		if err != nil || json.Unmarshal(b, &inst) != nil || inst.Version != version {
			return false
		}
	}
	return true
}

func TestFilesystemServer(t *testing.T) {
	node, dir := npmServers(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "hello.txt"), []byte("hello from cairn\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, reg, rec := newTestManager(t, 2*time.Minute)
	start := time.Now()
	m.Update(context.Background(), []ServerConfig{{
		Name: "fs", Command: node, Trust: TrustTrusted,
		Args: []string{filepath.Join(dir, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"), root},
	}})
	t.Logf("filesystem server up with %d tools in %s", len(mcpTools(reg, "fs")), time.Since(start))
	st := m.Servers()
	if len(st) != 1 || st[0].State != StateRunning {
		t.Fatalf("status = %+v\n%s", st, rec.dump())
	}
	// Trusted: annotations decide the risk.
	for name, want := range map[string]tools.Risk{
		"mcp__fs__read_text_file":           tools.RiskRead,
		"mcp__fs__list_directory":           tools.RiskRead,
		"mcp__fs__create_directory":         tools.RiskWrite,
		"mcp__fs__write_file":               tools.RiskDestructive,
		"mcp__fs__move_file":                tools.RiskDestructive,
		"mcp__fs__list_allowed_directories": tools.RiskRead,
	} {
		tool, ok := reg.Get(name)
		if !ok {
			t.Errorf("%s not registered; have %v", name, mcpTools(reg, "fs"))
			continue
		}
		if tool.Risk != want {
			t.Errorf("%s: risk %s, want %s", name, tool.Risk, want)
		}
		if string(tool.Schema) == string(permissiveSchema) {
			t.Errorf("%s: the server's schema was replaced", name)
		}
	}
	if _, ok := rec.event("fs", ""); ok {
		t.Errorf("unexpected events:\n%s", rec.dump())
	}

	res := call(t, reg, "mcp__fs__read_text_file", `{"path":`+quote(filepath.Join(root, "hello.txt"))+`}`)
	if res.IsError || strings.TrimSpace(res.Content) != "hello from cairn" {
		t.Errorf("read_text_file = %+v", res)
	}
	res = call(t, reg, "mcp__fs__list_directory", `{"path":`+quote(root)+`}`)
	if res.IsError || !strings.Contains(res.Content, "hello.txt") {
		t.Errorf("list_directory = %+v", res)
	}
	// The server refuses paths outside its directory: an error result, not a Go error.
	res = call(t, reg, "mcp__fs__read_text_file", `{"path":"/etc/passwd"}`)
	if !res.IsError {
		t.Errorf("reading outside the allowed directory = %+v", res)
	}
	// The registry enforces the server's schema.
	tool, _ := reg.Get("mcp__fs__read_text_file")
	if _, err := tool.Validate(`{"file":"x"}`); err == nil {
		t.Errorf("read_text_file accepted input without path")
	}
}

func TestEverythingServer(t *testing.T) {
	node, dir := npmServers(t)
	m, reg, rec := newTestManager(t, 2*time.Minute)
	start := time.Now()
	m.Update(context.Background(), []ServerConfig{{
		Name: "everything", Command: node, // untrusted
		Args: []string{filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"), "stdio"},
	}})
	t.Logf("everything server up with %d tools in %s", len(mcpTools(reg, "everything")), time.Since(start))
	if st := m.Servers(); len(st) != 1 || st[0].State != StateRunning {
		t.Fatalf("status = %+v\n%s", st, rec.dump())
	}
	names := mcpTools(reg, "everything")
	if len(names) < 5 {
		t.Fatalf("tools = %v", names)
	}
	for _, n := range names {
		tool, _ := reg.Get(n)
		if tool.Risk != tools.RiskNetwork || !tool.SideEffects {
			t.Errorf("%s from an untrusted server: risk %s side effects %v", n, tool.Risk, tool.SideEffects)
		}
	}

	res := call(t, reg, "mcp__everything__echo", `{"message":"hi there"}`)
	if res.IsError || !strings.Contains(res.Content, "hi there") {
		t.Errorf("echo = %+v", res)
	}
	res = call(t, reg, "mcp__everything__get-sum", `{"a":2,"b":40}`)
	if res.IsError || !strings.Contains(res.Content, "42") {
		t.Errorf("get-sum = %+v", res)
	}
	res = call(t, reg, "mcp__everything__get-tiny-image", `{}`)
	if res.IsError || !strings.Contains(res.Content, "[image image/png") {
		t.Errorf("get-tiny-image = %+v", res)
	}
	echo, _ := reg.Get("mcp__everything__echo")
	if _, err := echo.Validate(`{}`); err == nil {
		t.Errorf("echo accepted input without message")
	}

	// The everything server registers get-roots-list once it knows the
	// client supports roots, and announces it with
	// notifications/tools/list_changed.
	waitUntil(t, time.Minute, "get-roots-list after list_changed", func() bool {
		_, ok := reg.Get("mcp__everything__get-roots-list")
		return ok && rec.log("everything", "tool list changed")
	})
	if _, ok := rec.event("everything", ""); ok {
		t.Errorf("unexpected events:\n%s", rec.dump())
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
