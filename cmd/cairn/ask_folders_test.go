package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAskWithFolders: `cairn ask --folder DIR` asks in a multi-root
// workspace: the question may be about a file of another folder (its path
// begins with the folder's name), search reaches that folder, and an
// applied edit lands there.
func TestAskWithFolders(t *testing.T) {
	dir := t.TempDir()
	if err := copyEmbedded(sampleFS, "_sample/ws", dir); err != nil {
		t.Fatal(err)
	}
	billing := filepath.Join(t.TempDir(), "billing")
	os.MkdirAll(filepath.Join(billing, "inv"), 0o755)
	os.WriteFile(filepath.Join(billing, "inv/invoice.go"), []byte("package inv\n\n// Surcharge is the late payment penalty.\nfunc Surcharge(days int) int {\n\treturn days * 3\n}\n"), 0o644)
	script := `
turns:
  - toolCalls:
      - name: search_code
        arguments: {query: "late payment penalty path:billing"}
  - toolCalls:
      - name: edit_file
        arguments: {path: billing/inv/invoice.go, oldText: "days * 3", newText: "days * 4"}
  - text: "Surcharge now charges 4 per day."
`
	sp := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(sp, []byte(script), 0o644)
	t.Setenv("CAIRN_PROVIDER", "scripted")
	t.Setenv("CAIRN_SCRIPT", sp)
	t.Setenv("CAIRN_STATE_DIR", t.TempDir())
	out, errOut, code := runCLI(t, "ask", "--root", dir, "--folder", billing, "--file", "billing/inv/invoice.go", "--range", "4-6", "--apply", "Charge 4 per day")
	if code != 0 {
		t.Fatalf("ask failed (exit %d): %s\n%s", code, errOut, out)
	}
	if !strings.Contains(out, "Surcharge now charges") {
		t.Errorf("ask output:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(billing, "inv/invoice.go")); !strings.Contains(string(b), "days * 4") {
		t.Errorf("the edit did not land in the folder:\n%s\n%s", b, out)
	}
	if _, errOut, code := runCLI(t, "ask", "--root", dir, "--folder", filepath.Join(dir, "nope"), "--file", "a.go", "q"); code == 0 || !strings.Contains(errOut, "not a directory") {
		t.Errorf("a missing folder: exit %d %q", code, errOut)
	}
}
