package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestResourceLinkThroughSymlinkIsNotRead: a resource_link to a file under
// an in-workspace symlink that points outside the workspace is never read
// (not from disk, not through fs/read_text_file): the outside file's text
// never reaches the model; the link is only mentioned.
func TestResourceLinkThroughSymlinkIsNotRead(t *testing.T) {
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	const secret = "outside-the-workspace-7f3a9c"
	if err := os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("the value is "+secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, fs := range []bool{false, true} {
		name := "disk"
		if fs {
			name = "fs/read_text_file"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, map[string]string{"a.go": "package a\n"}, "turns:\n  - text: ok\n  - text: ok\n", harnessConfig{noFS: !fs})
			if err := os.Symlink(outside, h.abs("docs")); err != nil {
				t.Fatal(err)
			}
			link := "file://" + filepath.ToSlash(h.abs("docs/notes.txt"))
			// First block names the file asked from; a second one is attached.
			h.mustPrompt(sdk.TextBlock("what does it say?"), sdk.ResourceLinkBlock("notes.txt", link+"#L1"))
			h.mustPrompt(sdk.TextBlock("and now?"), sdk.ResourceLinkBlock("a.go", "file://"+filepath.ToSlash(h.abs("a.go"))),
				sdk.ResourceLinkBlock("notes.txt", link))
			got := h.provider.Received()
			if len(got) != 2 {
				t.Fatalf("the model got %d requests, want 2", len(got))
			}
			b, _ := json.Marshal(got)
			if strings.Contains(string(b), secret) {
				t.Fatalf("the text of a file outside the workspace reached the model")
			}
			h.client.mu.Lock()
			reads := append([]string(nil), h.client.reads...)
			h.client.mu.Unlock()
			for _, r := range reads {
				if strings.Contains(r, "docs") || strings.HasPrefix(r, outside) {
					t.Errorf("the agent asked the client to read %s, outside the workspace through a symlink", r)
				}
			}
		})
	}
}
