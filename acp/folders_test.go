package acp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"
)

// TestAdditionalDirectories: a session/new with additionalDirectories
// reads, edits (written through fs/write_text_file in that directory) and
// searches the second directory by its name; a path leaving both is
// refused; relative or missing directories are refused at session/new.
func TestAdditionalDirectories(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	second := filepath.Join(base, "billing")
	if err := os.MkdirAll(filepath.Join(second, "inv"), 0o755); err != nil {
		t.Fatal(err)
	}
	invoice := "package inv\n\n// Surcharge is the late payment penalty.\nfunc Surcharge(days int) int { return days * 3 }\n"
	if err := os.WriteFile(filepath.Join(second, "inv/invoice.go"), []byte(invoice), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(base, "secret.txt"), []byte("TOPSECRET\n"), 0o644)
	const attempts = 60
	script := `
turns:
  - toolCalls:
      - name: read_file
        arguments: {path: billing/inv/invoice.go}
  - toolCalls:
      - id: call_edit
        name: edit_file
        arguments: {path: billing/inv/invoice.go, oldText: "days * 3", newText: "days * 4"}
  - toolCalls:
      - name: read_file
        arguments: {path: billing/../secret.txt}
  - text: "Done."
` + strings.Repeat(`  - toolCalls:
      - name: search_code
        arguments: {query: "late payment penalty"}
  - text: "Searched."
`, attempts)
	h := newHarness(t, map[string]string{"main.go": "package main\n\nfunc main() {}\n"}, script,
		harnessConfig{interactive: true, dirs: []string{second}})
	h.client.answer = func(sdk.RequestPermissionRequest) string { return optAllowOnce }
	h.mustPrompt(sdk.TextBlock("raise the surcharge"))
	_, _, writes := h.client.snapshot()
	if len(writes) != 1 || writes[0].Path != filepath.Join(second, "inv/invoice.go") || !strings.Contains(writes[0].Content, "days * 4") {
		t.Fatalf("writes = %+v", writes)
	}
	reqs := h.provider.Received()
	var results []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == "tool" {
			results = append(results, m.Content)
		}
	}
	if len(results) != 3 || !strings.Contains(results[0], "func Surcharge") {
		t.Fatalf("tool results: %q", results)
	}
	if strings.Contains(results[2], "TOPSECRET") || !strings.Contains(results[2], "outside") {
		t.Errorf("a path leaving both directories was read: %q", results[2])
	}
	// The directory is indexed in the background: ask until its first
	// build is searchable (each question is one search).
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		h.mustPrompt(sdk.TextBlock("where is the late payment penalty?"))
		reqs := h.provider.Received()
		msgs := reqs[len(reqs)-1].Messages
		if got := msgs[len(msgs)-1].Content; strings.Contains(got, "billing/inv/invoice.go:3:") {
			break
		} else if i == attempts-1 || time.Now().After(deadline) {
			t.Fatalf("search never reached the additional directory; last result: %q", got)
		}
		time.Sleep(200 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, dirs := range [][]string{{"relative/dir"}, {filepath.Join(base, "missing")}, {filepath.Join(second, "inv/invoice.go")}} {
		if _, err := h.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: h.root, McpServers: []sdk.McpServer{}, AdditionalDirectories: dirs}); err == nil {
			t.Errorf("session/new with additionalDirectories %q succeeded", dirs)
		}
	}
}
