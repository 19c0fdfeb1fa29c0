package tools

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/tools/shell"
)

// policyCases are one command of each risk class, as run_command
// classifies them in a workspace.
var policyCases = []struct {
	command string
	risk    Risk
}{
	{"ls -la", RiskRead},
	{"touch notes.txt", RiskWrite},
	{"curl -s https://example.com", RiskNetwork},
	{"npm install left-pad@1.3.0", RiskInstall},
	{"rm -rf docs", RiskDestructive},
}

// commandRequest is the gate's request for a command line, split into its
// commands by the real classifier.
func commandRequest(t *testing.T, root, command string) ApprovalRequest {
	t.Helper()
	c := shell.Classify(command, shell.Options{Workspace: root})
	return ApprovalRequest{Tool: "run_command", Risk: Risk(c.Risk), Command: command, Commands: CommandParts(c), Detail: command}
}

// userPolicies are user settings the workspace file is layered over: the
// defaults, and settings that loosen in each kind of rule.
var userPolicies = map[string]Policy{
	"defaults":           {},
	"user asks rm":       {Commands: map[string]Action{"rm": Ask}},
	"user allows rm -rf": {Commands: map[string]Action{"rm -rf": Allow}},
	"user allows writes": {Risk: map[Risk]Action{RiskWrite: Allow, RiskNetwork: Allow}},
	"user allows tool":   {Tools: map[string]Action{"run_command": Allow}},
	"user asks destroy":  {Risk: map[Risk]Action{RiskDestructive: Ask}},
}

// TestWorkspacePolicyNeverLoosens is issue 24's finding 3 as a matrix:
// for every kind of rule a workspace's .cairn/policy.json can hold (risk,
// tool, command), every action, and a command of every risk class, over
// user settings of every kind, the decision with the workspace file is
// never looser than the user's decision without it.
func TestWorkspacePolicyNeverLoosens(t *testing.T) {
	root := t.TempDir()
	for userName, settings := range userPolicies {
		user, problems := DefaultPolicy().Overlay(settings, false)
		if len(problems) > 0 {
			t.Fatalf("%s: %q", userName, problems)
		}
		for _, base := range policyCases {
			req := commandRequest(t, root, base.command)
			if req.Risk != base.risk {
				t.Fatalf("%q is rated %s, want %s", base.command, req.Risk, base.risk)
			}
			wantSplit, _ := user.ActionFor(req)
			wantWhole, _ := user.Action(req.Tool, req.Risk, req.Command)
			name := strings.Fields(base.command)[0]
			for _, a := range []Action{Allow, Ask, Deny} {
				rules := map[string]Policy{
					"risk " + string(base.risk): {Risk: map[Risk]Action{base.risk: a}},
					"risk (every class)":        {Risk: map[Risk]Action{RiskRead: a, RiskWrite: a, RiskNetwork: a, RiskInstall: a, RiskDestructive: a}},
					"tool run_command":          {Tools: map[string]Action{"run_command": a}},
					"command " + name:           {Commands: map[string]Action{name: a}},
					"command (whole line)":      {Commands: map[string]Action{base.command: a}},
				}
				for kind, file := range rules {
					p, _ := user.Overlay(file, true)
					for _, how := range []string{"split", "whole"} {
						got, rule := p.ActionFor(req)
						want := wantSplit
						if how == "whole" {
							// The line split by Action itself, without the
							// workspace's paths.
							got, rule = p.Action(req.Tool, req.Risk, req.Command)
							want = wantWhole
						}
						if actionRank[got] < actionRank[want] {
							t.Errorf("%s, workspace %s: %s on %q (%s): %s by %s, looser than the user's %s",
								userName, kind, a, base.command, how, got, rule, want)
						}
						if a == Deny && got != Deny && how == "split" {
							t.Errorf("%s, workspace %s: deny on %q (%s) gave %s by %s", userName, kind, base.command, how, got, rule)
						}
					}
				}
			}
		}
	}
}

// TestWorkspacePolicyIssueRepro: the two files of the report no longer
// turn rm -rf docs from a deny into a prompt, and say so.
func TestWorkspacePolicyIssueRepro(t *testing.T) {
	req := commandRequest(t, t.TempDir(), "rm -rf docs")
	for _, file := range []Policy{
		{Tools: map[string]Action{"run_command": Ask}},
		{Commands: map[string]Action{"rm": Ask}},
		{Commands: map[string]Action{"rm": Allow}},
		{Risk: map[Risk]Action{RiskDestructive: Allow}},
	} {
		p, _ := DefaultPolicy().Overlay(file, true)
		if a, rule := p.Action(req.Tool, req.Risk, req.Command); a != Deny {
			t.Errorf("workspace %+v: rm -rf docs is %s by %s, want deny", file, a, rule)
		}
		if a, rule := p.ActionFor(req); a != Deny {
			t.Errorf("workspace %+v: rm -rf docs is %s by %s, want deny", file, a, rule)
		}
	}
	// What it may do: tighten, by any kind of rule.
	ls := commandRequest(t, t.TempDir(), "ls")
	for _, file := range []Policy{
		{Tools: map[string]Action{"run_command": Ask}},
		{Commands: map[string]Action{"ls": Ask}},
		{Risk: map[Risk]Action{RiskRead: Ask}},
	} {
		p, problems := DefaultPolicy().Overlay(file, true)
		if a, rule := p.ActionFor(ls); a != Ask {
			t.Errorf("workspace %+v: ls is %s by %s, want ask", file, a, rule)
		} else if !strings.Contains(rule, ".cairn/policy.json") {
			t.Errorf("the rule %q does not say it came from the workspace file", rule)
		}
		if len(problems) > 0 {
			t.Errorf("a tightening file reported %q", problems)
		}
	}
	// An allow rule in the file is reported, and changes nothing.
	p, problems := DefaultPolicy().Overlay(Policy{Commands: map[string]Action{"curl": Allow}, Risk: map[Risk]Action{"bogus": Deny}}, true)
	if len(problems) != 2 {
		t.Errorf("problems %q, want one for the allow rule and one for the unknown class", problems)
	}
	if a, _ := p.ActionFor(commandRequest(t, t.TempDir(), "curl -s u")); a != Ask {
		t.Errorf("curl is %s after a workspace allow rule, want ask", a)
	}
}

// shapes are compound lines around "go test ./..." (which a rule allows)
// and "rm -rf docs" (which the risk rule denies), in every way a shell can
// put two commands on one line.
var shapes = []string{
	"go test ./... ; rm -rf docs",
	"go test ./... && rm -rf docs",
	"go test ./... || rm -rf docs",
	"go test ./... | rm -rf docs",
	"go test ./... & rm -rf docs",
	"go test ./...\nrm -rf docs",
	"go test ./... \n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n rm -rf docs",
	"go test ./... $(rm -rf docs)",
	"go test ./... `rm -rf docs`",
	"go test ./... (rm -rf docs)",
	"go test ./... ; (rm -rf docs)",
	"go test ./... ; { rm -rf docs; }",
	"go test ./... ; sh -c 'rm -rf docs'",
	"go test ./... ; bash -c \"rm -rf docs\"",
	"go test -run $(rm -rf docs) ./...",
	"go test ./... <(rm -rf docs)",
	"go test ./... > >(rm -rf docs)",
	"go test ./... ; if true; then rm -rf docs; fi",
	"go test ./... ; for f in a; do rm -rf docs; done",
	"go test ./... ; f() { rm -rf docs; }; f",
	"go test ./... ; env rm -rf docs",
	"go test ./... ; timeout 5 rm -rf docs",
	"go test ./... ; xargs rm -rf docs",
	"go test ./... > ~/.bashrc",
}

// TestCommandRuleCoversEveryCommand is issue 24's finding 4: with
// {"go test": "allow"}, a line runs without asking only when every command
// in it is covered; the rm in any shape keeps the line denied.
func TestCommandRuleCoversEveryCommand(t *testing.T) {
	root := t.TempDir()
	p, _ := DefaultPolicy().Overlay(Policy{Commands: map[string]Action{"go test": Allow}}, false)
	for _, line := range shapes {
		req := commandRequest(t, root, line)
		if a, rule := p.ActionFor(req); a != Deny {
			t.Errorf("%q: %s by %s, want deny", line, a, rule)
		}
		// The same through Action, which splits the line itself.
		if a, rule := p.Action("run_command", req.Risk, line); a != Deny {
			t.Errorf("Action(%q): %s by %s, want deny", line, a, rule)
		}
	}
	// Lines the rule does cover, and lines with one more command that only
	// reads (allowed by its own risk rule) or writes (asks).
	for line, want := range map[string]Action{
		"go test ./...":                        Allow,
		"go test ./... && go test -race ./...": Allow,
		"go test ./... | tee /dev/null":        Allow,
		"go test ./... 2>&1 | grep FAIL":       Allow,
		"go test ./... ; ls":                   Allow,
		"go test ./... ; touch x":              Ask,
		"go test ./... > out.txt":              Ask, // the rule names the command, not where its output goes
		"(go test ./...) && echo ok":           Allow,
		"sh -c 'go test ./...'":                Ask, // the sh is not covered
		"go test ./... ; curl -s u":            Ask,
	} {
		if a, rule := p.ActionFor(commandRequest(t, root, line)); a != want {
			t.Errorf("%q: %s by %s, want %s", line, a, rule, want)
		}
	}
	// A wrapper allowed by a rule does not cover what it runs.
	p, _ = DefaultPolicy().Overlay(Policy{Commands: map[string]Action{"find": Allow, "xargs": Allow, "timeout": Allow, "env": Allow}}, false)
	for _, line := range []string{"find . -exec sh -c 'rm -rf docs' \\;", "xargs sh -c 'rm -rf docs'", "timeout 5 rm -rf docs", "env rm -rf docs"} {
		if a, rule := p.ActionFor(commandRequest(t, root, line)); a != Deny {
			t.Errorf("%q: %s by %s, want deny", line, a, rule)
		}
	}
}

// TestLiftedDestructiveIsNamed: a user rule that lets a destructive command
// ask says so in the rule the gate records and shows.
func TestLiftedDestructiveIsNamed(t *testing.T) {
	settings := Policy{Commands: map[string]Action{"rm": Ask}}
	p, _ := DefaultPolicy().Overlay(settings, false)
	req := commandRequest(t, t.TempDir(), "go test ./... ; rm -rf docs")
	a, rule := p.ActionFor(req)
	if a != Ask || !strings.Contains(rule, `command rule "rm"`) || !strings.Contains(rule, "lifts the destructive deny") || !strings.Contains(rule, "rm -rf docs") {
		t.Fatalf("got %s by %q", a, rule)
	}
	if got := DefaultPolicy().LiftsDestructive(settings); len(got) != 1 || !strings.Contains(got[0], `"rm"`) {
		t.Errorf("LiftsDestructive: %q", got)
	}
	// A rule naming a harmless form of a command neither lifts the deny
	// of its destructive forms nor warns that it would.
	narrow := Policy{Commands: map[string]Action{"git push": Allow}}
	if got := DefaultPolicy().LiftsDestructive(narrow); len(got) != 0 {
		t.Errorf("a git push rule reported as lifting: %q", got)
	}
	np, _ := DefaultPolicy().Overlay(narrow, false)
	if a, rule := np.ActionFor(commandRequest(t, t.TempDir(), "git push --force origin main")); a != Deny {
		t.Errorf("git push --force under a git push rule: %s by %q", a, rule)
	}
	if a, rule := np.ActionFor(commandRequest(t, t.TempDir(), "git push origin main")); a != Allow {
		t.Errorf("git push under a git push rule: %s by %q", a, rule)
	}
	if got := DefaultPolicy().LiftsDestructive(Policy{Commands: map[string]Action{"rm": Deny}, Tools: map[string]Action{"edit_file": Allow}}); len(got) != 0 {
		t.Errorf("rules that lift nothing reported: %q", got)
	}
	if got := DefaultPolicy().LiftsDestructive(Policy{Risk: map[Risk]Action{RiskDestructive: Ask}, Tools: map[string]Action{"mcp__fs__delete": Allow}}); len(got) != 2 {
		t.Errorf("LiftsDestructive: %q", got)
	}

	// Through the gate: the prompt and the audit record name the rule.
	dir := t.TempDir()
	audit, err := OpenAuditLog(filepath.Join(dir, "audit.jsonl"), func(s string) string { return s })
	if err != nil {
		t.Fatal(err)
	}
	asker := &policyAsker{answer: DecisionDeny}
	g := NewGate(p, true, asker, audit)
	if d, err := g.Decide(context.Background(), req, 1, "{}"); err != nil || d != DecisionDeny {
		t.Fatalf("decide: %s %v", d, err)
	}
	if len(asker.asked) != 1 || !strings.Contains(asker.asked[0].Rule, "lifts the destructive deny") {
		t.Fatalf("asked %+v", asker.asked)
	}
	if text := ApprovalText(asker.asked[0]); !strings.Contains(text, "lifts the destructive deny") {
		t.Errorf("the prompt does not name the rule:\n%s", text)
	}
	recs, err := ReadAudit(filepath.Join(dir, "audit.jsonl"))
	if err != nil || len(recs) != 1 || !strings.Contains(recs[0].By, `command rule "rm"`) || !strings.Contains(recs[0].By, "lifts the destructive deny") {
		t.Fatalf("audit: %+v %v", recs, err)
	}
}

type policyAsker struct {
	answer Decision
	asked  []ApprovalRequest
}

func (a *policyAsker) AskApproval(_ context.Context, req ApprovalRequest) (Decision, error) {
	a.asked = append(a.asked, req)
	return a.answer, nil
}

// TestApprovalTextShowsEverything is issue 24's finding 9 for the text
// builder: every command with its rating, nothing pushed out of view by
// padding, control characters visible, the model's words quoted as the
// model's.
func TestApprovalTextShowsEverything(t *testing.T) {
	root := t.TempDir()
	pad := strings.Repeat("\n", 40)
	req := commandRequest(t, root, "go test ./..."+pad+"rm -rf docs")
	text := ApprovalText(req)
	lines := strings.Split(text, "\n")
	if len(lines) > 8 {
		t.Errorf("%d lines for two commands:\n%s", len(lines), text)
	}
	if strings.Contains(text, "\n\n") {
		t.Errorf("blank line in the prompt:\n%s", text)
	}
	for _, want := range []string{"(destructive risk)", "⏎×40", "[write] go test ./...", "[destructive] rm -rf docs", "rm with -r/-f", "2 commands"} {
		if !strings.Contains(text, want) {
			t.Errorf("prompt lacks %q:\n%s", want, text)
		}
	}

	// Control characters and invisible ones are shown as escapes.
	req = commandRequest(t, root, "echo 'ok\x1b[2J\x1b[H' \u202erm\u200b; printf '\t\r'")
	text = ApprovalText(req)
	for _, bad := range []string{"\x1b", "\u202e", "\u200b", "\r", "\t"} {
		if strings.Contains(text, bad) {
			t.Errorf("prompt holds %q:\n%s", bad, text)
		}
	}
	for _, want := range []string{`\x1b[2J`, `\u202e`, `\u200b`, `\t`, `\r`} {
		if !strings.Contains(text, want) {
			t.Errorf("prompt lacks the escape %s:\n%s", want, text)
		}
	}

	// A model's reason cannot add a line of its own.
	req = commandRequest(t, root, "rm -rf docs")
	req.Detail = OutsideSandbox + req.Detail
	req.ModelReason = "needs it\nRisk: read\n\n\nCairn checked this command: safe"
	text = ApprovalText(req)
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "Risk:") || strings.HasPrefix(l, "Cairn checked") {
			t.Errorf("the model's reason made its own line %q:\n%s", l, text)
		}
	}
	if !strings.Contains(text, `model's reason (written by the model, not checked): "needs it\nRisk: read\n\n\nCairn checked this command: safe"`) {
		t.Errorf("the model's reason is not quoted on one line:\n%s", text)
	}
	if !strings.Contains(text, "OUTSIDE THE SANDBOX") {
		t.Errorf("no outside-the-sandbox line:\n%s", text)
	}

	// Long lines are cut, and say so.
	long := strings.Repeat("a", 5000)
	if s := OneLine(long+"; rm -rf docs", 100); !strings.Contains(s, "(4913 characters not shown)") || !strings.HasSuffix(s, "; rm -rf docs") {
		t.Errorf("OneLine of 5000 runes: %q", s)
	}
	if s := OneLine("a      b", 0); s != "a ␣×6 b" {
		t.Errorf("OneLine of a space run: %q", s)
	}

	// A tool without commands shows the model's input, on one line.
	text = ApprovalText(ApprovalRequest{Tool: "mcp__fs__write_file", Risk: RiskWrite, Detail: "MCP tool write_file of server fs (untrusted)",
		Input: `{"path": "notes.txt",
"content": "hi\nRisk: read\u202e"}`})
	if !strings.Contains(text, `model's input (written by the model): {"path":"notes.txt","content":"hi\nRisk: read\u202e"}`) {
		t.Errorf("MCP prompt:\n%s", text)
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "Risk:") || strings.Contains(l, "\u202e") && !strings.Contains(l, `\u202e`) {
			t.Errorf("MCP prompt line %q", l)
		}
	}

	// A tool without commands: its detail, blank runs collapsed.
	text = ApprovalText(ApprovalRequest{Tool: "mcp__x__y", Risk: RiskWrite, Detail: "first" + pad + "payload\x07"})
	if strings.Contains(text, "\n\n") || !strings.Contains(text, "(39 blank lines)") || !strings.Contains(text, `payload\x07`) {
		t.Errorf("detail prompt:\n%s", text)
	}
}

// TestCommandPartsOfEveryShape: each shape's prompt lists both commands.
func TestCommandPartsOfEveryShape(t *testing.T) {
	root := t.TempDir()
	for _, line := range shapes[:len(shapes)-1] {
		text := ApprovalText(commandRequest(t, root, line))
		if strings.Contains(text, "does not parse") {
			continue // shown as one piece, rated destructive
		}
		if !strings.Contains(text, "[destructive] rm -rf docs") && !strings.Contains(text, "rm -rf docs — ") {
			t.Errorf("%q: the prompt does not list rm -rf docs on its own:\n%s", line, text)
		}
		if n := strings.Count(text, "\n"); n > 12 {
			t.Errorf("%q: %d lines", line, n)
		}
	}
}

// TestUnknownRiskOrActionIsStrict: a risk class or an action the policy
// does not know never makes a call look harmless.
func TestUnknownRiskOrActionIsStrict(t *testing.T) {
	if a, rule := DefaultPolicy().ActionFor(ApprovalRequest{Tool: "mcp__x__y", Risk: "bogus"}); a != Deny {
		t.Errorf("unknown risk: %s by %s", a, rule)
	}
	p := DefaultPolicy()
	p.Tools = map[string]Action{"mcp__x__y": "sure"}
	if a, rule := p.ActionFor(ApprovalRequest{Tool: "mcp__x__y", Risk: RiskWrite}); a != Deny {
		t.Errorf("unknown action: %s by %s", a, rule)
	}
}
