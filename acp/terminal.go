package acp

import (
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/protocol"
)

// cardOutputBytes bounds the command output shown on a tool call's card:
// the model gets up to run_command's own cap; the card keeps the head and
// the tail within this.
const cardOutputBytes = 8 << 10

// resultContent is the content of a finished tool call's card. A command
// shows its output (what the model was given, redacted by the run before it
// left the agent) under the summary, so the user sees what ran without
// opening a log; other tools show their summary.
func resultContent(tool string, ev protocol.RunEvent) []sdk.ToolCallContent {
	if tool != "run_command" || strings.TrimSpace(ev.Output) == "" {
		return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(ev.Summary))}
	}
	return []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(ev.Summary + "\n\n" + fenced(capOutput(ev.Output, cardOutputBytes))))}
}

// capOutput keeps the first and last max/2 bytes of s (cut at line or rune
// boundaries where it can), with a note of what was left out.
func capOutput(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := s[:max/2], s[len(s)-max/2:]
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	}
	head, tail = strings.ToValidUTF8(head, ""), strings.ToValidUTF8(tail, "")
	return fmt.Sprintf("%s[... %d bytes not shown ...]\n%s", head, len(s)-len(head)-len(tail), tail)
}

// fenced is s as a Markdown code block whose fence no run of backticks in
// s can close.
func fenced(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", max(3, longest+1))
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return fence + "\n" + s + fence
}
