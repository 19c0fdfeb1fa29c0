package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsWriteEveryFolder: under workspace-write a command may write
// every workspace folder, the other folders' protected paths stay
// read-only, and a directory outside every folder stays unwritable.
func TestCommandsWriteEveryFolder(t *testing.T) {
	needSandbox(t)
	env := testEnv(t, map[string]string{"main.go": "package main\n"})
	base, _ := filepath.EvalSymlinks(t.TempDir())
	second, outside := filepath.Join(base, "billing"), filepath.Join(base, "outside")
	for p, c := range map[string]string{
		"billing/inv/invoice.go":        "package inv\n",
		"billing/.vscode/settings.json": "{}\n",
		"outside/keep.txt":              "keep\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(base, p)), 0o755)
		os.WriteFile(filepath.Join(base, p), []byte(c), 0o644)
	}
	f, err := env.WS.AddFolder(second, "")
	if err != nil {
		t.Fatal(err)
	}
	root := env.WS.Root()
	sb := NewCommandSandbox(root)
	sb.SetFolders([]string{f.Root})
	tool := RunCommandWith(root, sb)
	run := func(cmd string) Result {
		t.Helper()
		res, err := tool.Invoke(context.Background(), env, json.RawMessage(`{"command":`+quoteJSON(cmd)+`}`))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run("echo done > " + filepath.Join(second, "inv/notes.txt")); res.IsError {
		t.Fatalf("writing the second folder failed: %s", res.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(second, "inv/notes.txt")); strings.TrimSpace(string(b)) != "done" {
		t.Errorf("the second folder's new file holds %q", b)
	}
	if res := run("echo '{\"x\":1}' > " + filepath.Join(second, ".vscode/settings.json")); !res.IsError {
		t.Errorf("writing the second folder's .vscode succeeded: %s", res.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(second, ".vscode/settings.json")); string(b) != "{}\n" {
		t.Errorf("the second folder's .vscode/settings.json changed: %q", b)
	}
	if res := run("echo x > " + filepath.Join(outside, "keep.txt")); !res.IsError {
		t.Errorf("writing outside every folder succeeded: %s", res.Content)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "keep.txt")); string(b) != "keep\n" {
		t.Errorf("a file outside every folder changed: %q", b)
	}
}
