package acp

import (
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/model"
)

// The client holds an unsaved buffer of calc.go that differs from the disk.
const unsavedCalc = "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\n// Sub is unsaved.\nfunc Sub(a, b int) int { return a - b }\n"

// An accepted edit is computed from the client's buffer and written back
// with the user's unsaved text kept; the run's reads see the buffer.
const fixAddScript = `turns:
  - toolCalls:
      - id: call_edit
        name: edit_file
        arguments: {path: calc.go, oldText: "return a - b\n}", newText: "return a + b\n}"}
  - text: "Fixed the sign."
`

func TestAcceptKeepsUnsavedBuffer(t *testing.T) {
	script := `turns:
  - toolCalls:
      - id: call_read
        name: read_file
        arguments: {path: calc.go}
` + strings.TrimPrefix(fixAddScript, "turns:\n")
	h := newHarness(t, map[string]string{"calc.go": calc}, script, harnessConfig{interactive: true})
	h.client.buffers[h.abs("calc.go")] = unsavedCalc
	if resp := h.mustPrompt(sdk.TextBlock("fix Add")); resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", resp.StopReason)
	}
	// read_file answered from the buffer.
	var readResult string
	for _, req := range h.provider.Received() {
		for _, m := range req.Messages {
			if m.Role == model.RoleTool && m.ToolCallID == "call_read" {
				readResult = m.Content
			}
		}
	}
	if !strings.Contains(readResult, "Sub is unsaved") {
		t.Errorf("read_file did not see the client's buffer:\n%s", readResult)
	}
	_, _, writes := h.client.snapshot()
	want := strings.Replace(unsavedCalc, "return a - b\n}", "return a + b\n}", 1)
	if len(writes) != 1 || writes[0].Content != want {
		t.Fatalf("fs/write_text_file got %+v; want the buffer with the edit:\n%s", writes, want)
	}
}

// The user types in the file while the edit waits for review: a hunk away
// from the typing is applied onto the new text; a hunk under it is not, and
// the user is told which lines.
func TestAcceptOntoTypingDuringReview(t *testing.T) {
	for _, tc := range []struct {
		name, typed, want, msg string
		status                 sdk.ToolCallStatus
	}{
		{name: "elsewhere", typed: strings.Replace(unsavedCalc, "// Add adds.", "// Add adds two ints.", 1),
			want:   strings.Replace(strings.Replace(unsavedCalc, "// Add adds.", "// Add adds two ints.", 1), "return a - b\n}", "return a + b\n}", 1),
			status: sdk.ToolCallStatusCompleted, msg: "Written"},
		{name: "same lines", typed: strings.Replace(unsavedCalc, "return a - b\n}", "return b - a\n}", 1),
			status: sdk.ToolCallStatusFailed, msg: "calc.go line 5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, map[string]string{"calc.go": calc}, fixAddScript, harnessConfig{interactive: true})
			h.client.buffers[h.abs("calc.go")] = unsavedCalc
			h.client.answer = func(sdk.RequestPermissionRequest) string {
				// Called by the client's connection while the review waits.
				h.client.mu.Lock()
				h.client.buffers[h.abs("calc.go")] = tc.typed
				h.client.mu.Unlock()
				return optAllowOnce
			}
			h.mustPrompt(sdk.TextBlock("fix Add"))
			updates, _, writes := h.client.snapshot()
			if st := lastStatus(updates, "call_edit"); st != tc.status {
				t.Errorf("edit status %q, want %q", st, tc.status)
			}
			text := toolText(updates, "call_edit")
			if !strings.Contains(text, tc.msg) || strings.Contains(text, "edit-") {
				t.Errorf("edit's message %q: want %q and no internal ids", text, tc.msg)
			}
			if tc.want == "" {
				if len(writes) != 0 {
					t.Errorf("a hunk over the user's typing was written: %+v", writes)
				}
				return
			}
			if len(writes) != 1 || writes[0].Content != tc.want {
				t.Fatalf("fs/write_text_file got %+v; want:\n%s", writes, tc.want)
			}
		})
	}
}

// A client that never answers fs/read_text_file: each turn waits for it at
// most once (bufferReadWait), reads the disk, and the user is told; an
// accept, which could erase a buffer it cannot see, writes nothing.
func TestSilentClientFallsBackToDisk(t *testing.T) {
	defer func(d time.Duration) { bufferReadWait = d }(bufferReadWait)
	bufferReadWait = 200 * time.Millisecond
	script := `turns:
  - toolCalls:
      - id: call_read
        name: read_file
        arguments: {path: calc.go}
` + strings.TrimPrefix(fixAddScript, "turns:\n") + `  - text: "Hello again."
`
	h := newHarness(t, map[string]string{"calc.go": calc}, script, harnessConfig{})
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	h.client.mu.Lock()
	h.client.buffers[h.abs("calc.go")] = unsavedCalc
	h.client.hangReads = hang
	h.client.mu.Unlock()
	if resp := h.mustPrompt(sdk.TextBlock("fix Add")); resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", resp.StopReason)
	}
	h.client.mu.Lock()
	reads := len(h.client.reads)
	h.client.mu.Unlock()
	if reads != 1 {
		t.Errorf("the silent client was asked %d times in one turn, want once", reads)
	}
	// The accept cannot know the buffer: it writes nothing, and says why.
	updates, _, writes := h.client.snapshot()
	if len(writes) != 0 {
		t.Errorf("written without knowing the client's buffer: %+v", writes)
	}
	if st := lastStatus(updates, "call_edit"); st != sdk.ToolCallStatusFailed {
		t.Errorf("edit status %q, want failed", st)
	}
	if text := toolText(updates, "call_edit"); !strings.Contains(text, "cannot keep unsaved changes to calc.go") {
		t.Errorf("edit's message %q", text)
	}
	h.mustPrompt(sdk.TextBlock("hello"))
	updates, _, _ = h.client.snapshot()
	if text := agentText(updates); !strings.Contains(text, "did not answer fs/read_text_file for calc.go") {
		t.Errorf("the user was not told that the disk was read: %q", text)
	}
}

// toolText is the text content of a tool call's updates.
func toolText(updates []sdk.SessionNotification, callID string) string {
	var text string
	for _, tu := range toolUpdates(updates, callID) {
		for _, c := range tu.Content {
			if c.Content != nil && c.Content.Content.Text != nil {
				text += c.Content.Content.Text.Text + "\n"
			}
		}
	}
	return text
}
