package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// cardText is the text of a call's last content update.
func cardText(updates []sdk.SessionNotification, callID string) string {
	text := ""
	for _, tu := range toolUpdates(updates, callID) {
		if len(tu.Content) == 0 {
			continue
		}
		text = ""
		for _, c := range tu.Content {
			if c.Content != nil && c.Content.Content.Text != nil {
				text += c.Content.Content.Text.Text
			}
		}
	}
	return text
}

// Without a client terminal, a command's card shows its output (redacted,
// capped) under the summary, not the summary alone.
func TestCommandOutputOnCard(t *testing.T) {
	script := `turns:
  - toolCalls:
      - {id: c1, name: run_command, arguments: {command: "printf 'first line\\n'; printf 'token ghp_%s\\n' N4mEtOkEn7Qz2Lx9Wv3Bc8Rt5Yp1Ks6Hd0Ja; echo err-line >&2"}}
      - {id: c2, name: run_command, arguments: {command: "seq 1 20000"}}
  - text: done
`
	h := newHarness(t, map[string]string{"a.txt": "a\n"}, script, harnessConfig{})
	h.mustPrompt(sdk.TextBlock("run it"))
	updates, _, _ := h.client.snapshot()
	if st := lastStatus(updates, "c1"); st != sdk.ToolCallStatusCompleted {
		t.Fatalf("c1 status %q", st)
	}
	card := cardText(updates, "c1")
	for _, want := range []string{"exit 0", "first line", "err-line", "```"} {
		if !strings.Contains(card, want) {
			t.Errorf("the card lacks %q:\n%s", want, card)
		}
	}
	if strings.Contains(card, "ghp_N4mE") {
		t.Errorf("the card shows the secret:\n%s", card)
	}
	long := cardText(updates, "c2")
	if len(long) > cardOutputBytes+1024 || !strings.Contains(long, "bytes not shown") {
		t.Errorf("the long output was not capped (%d bytes)", len(long))
	}
	if !strings.Contains(long, "\n1\n") || !strings.Contains(long, "\n20000\n") {
		t.Errorf("the capped output lost its head or tail:\n%.300s … %.300s", long, long[max(0, len(long)-300):])
	}
}

func TestFenced(t *testing.T) {
	got := fenced("a ```` b")
	if !strings.HasPrefix(got, "`````\n") || !strings.HasSuffix(got, "\n`````") {
		t.Errorf("fenced = %q", got)
	}
}
