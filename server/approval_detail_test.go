package server

import (
	"encoding/json"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
)

// TestApprovalParamsCarryEveryCommand: the approval request keeps the LSP
// fields a plain client shows and adds, under "cairn", the run, the call
// and every command of a compound line with its own risk.
func TestApprovalParamsCarryEveryCommand(t *testing.T) {
	req := tools.ApprovalRequest{
		RunID: "r1", CallID: "c1", Tool: "run_command", Risk: tools.RiskWrite,
		Command: "echo hi && touch a.txt | wc -c",
		Commands: []tools.CommandPart{
			{Text: "echo hi", Risk: tools.RiskRead},
			{Text: "touch a.txt", Risk: tools.RiskWrite, Reason: "creates files"},
			{Text: "wc -c", Risk: tools.RiskRead},
		},
	}
	p := &approvalParams{Type: lsp.MessageTypeWarning, Message: tools.ApprovalText(req),
		Actions: []lsp.MessageActionItem{{Title: protocol.ActionDeny}}}
	d := approvalDetailOf(req)
	p.Cairn = &d
	// Encoded as the connection encodes it (encoding/json/v2).
	b, err := jsonrpc2.JSONCodec{}.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Message string
		Actions []struct{ Title string }
		Cairn   struct {
			RunID, CallID, Tool, Risk, Command string
			Commands                           []struct{ Text, Risk, Reason string }
		}
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Message, "touch a.txt") || len(got.Actions) != 1 || got.Actions[0].Title != protocol.ActionDeny {
		t.Errorf("the LSP fields are lost: %s", b)
	}
	c := got.Cairn
	if c.RunID != "r1" || c.CallID != "c1" || c.Tool != "run_command" || c.Risk != "write" || c.Command != req.Command {
		t.Errorf("cairn detail: %s", b)
	}
	want := []string{"echo hi/read/", "touch a.txt/write/creates files", "wc -c/read/"}
	if len(c.Commands) != len(want) {
		t.Fatalf("commands %d, want %d: %s", len(c.Commands), len(want), b)
	}
	for i, w := range want {
		if g := c.Commands[i].Text + "/" + c.Commands[i].Risk + "/" + c.Commands[i].Reason; g != w {
			t.Errorf("command %d = %q, want %q", i, g, w)
		}
	}
	// A tool without a parsed line (an install, an edit outside the
	// workspace) has its command, if any, as the one command.
	one := approvalDetailOf(tools.ApprovalRequest{Tool: "run_command", Risk: tools.RiskNetwork, Command: "curl x"})
	if len(one.Commands) != 1 || one.Commands[0].Text != "curl x" || one.Commands[0].Risk != tools.RiskNetwork {
		t.Errorf("single command: %+v", one)
	}
}
