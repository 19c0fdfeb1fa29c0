package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// TestPermissionPromptDenyFirst is issue 24's finding 9 for ACP: the
// permission request of a command line offers Reject first (clients make
// the first option the default), shows every command of the line with
// its rating, and keeps a padded command in view.
func TestPermissionPromptDenyFirst(t *testing.T) {
	script := `turns:
  - toolCalls:
      - {id: c1, name: run_command, arguments: {command: "ls` + strings.Repeat(`\n`, 40) + `touch pwned.txt ; curl -s http://127.0.0.1:1/"}}
  - text: done
`
	h := newHarness(t, map[string]string{"a.txt": "a\n"}, script, harnessConfig{interactive: true})
	h.client.answer = func(p sdk.RequestPermissionRequest) string { return optRejectOnce }
	h.mustPrompt(sdk.TextBlock("make files"))
	_, perms, _ := h.client.snapshot()
	if len(perms) != 1 {
		t.Fatalf("asked %d times", len(perms))
	}
	p := perms[0]
	if len(p.Options) != 4 || p.Options[0].Kind != sdk.PermissionOptionKindRejectOnce {
		t.Errorf("options %+v: reject_once must come first", p.Options)
	}
	if title := *p.ToolCall.Title; strings.Contains(title, "\n") || !strings.Contains(title, "⏎×40") {
		t.Errorf("title %q", title)
	}
	var text string
	for _, c := range p.ToolCall.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			text += c.Content.Content.Text.Text
		}
	}
	for _, want := range []string{"[read] ls", "[write] touch pwned.txt", "[network] curl -s http://127.0.0.1:1/", "⏎×40"} {
		if !strings.Contains(text, want) {
			t.Errorf("permission text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "\n\n") {
		t.Errorf("permission text has a blank line:\n%s", text)
	}
}
