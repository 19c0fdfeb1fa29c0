package tools

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/tools/shell"
)

// Action is what the policy says about a call.
type Action string

const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

// Decision is the outcome for one call, as recorded in events and the audit log.
type Decision string

const (
	DecisionPolicyAllow  Decision = "policy_allow"
	DecisionPolicyDeny   Decision = "policy_deny"
	DecisionAllowOnce    Decision = "allow_once"
	DecisionAllowSession Decision = "allow_session"
	DecisionSessionAllow Decision = "session_allow" // allowed by an earlier "Allow for session"
	DecisionDeny         Decision = "deny"
)

// Allowed reports whether the call may run.
func (d Decision) Allowed() bool {
	return d == DecisionPolicyAllow || d == DecisionAllowOnce || d == DecisionAllowSession || d == DecisionSessionAllow
}

// Policy maps risks (and, more specifically, tool names or command
// prefixes) to actions. Defaults: read allow; write ask, except edit_file,
// whose edits are only proposals the user reviews in the diff view; network
// and install ask; destructive deny.
//
// A command line is decided command by command: each simple command of it
// (see shell.Part) gets the action of the longest command rule that covers
// it, else of the tool rule, else of the risk rule for its own risk, and the
// line gets the strictest of these. So a rule covers a line only when it
// covers every command in it.
type Policy struct {
	Risk map[Risk]Action `json:"risk"`
	// Tools overrides by tool name (e.g. "mcp__fs__write_file": "ask").
	Tools map[string]Action `json:"tools"`
	// Commands overrides by command prefix for run_command ("go test": "allow").
	Commands map[string]Action `json:"commands"`
	// Workspace holds the rules of the workspace's .cairn/policy.json,
	// which comes with the repository. It is a layer of its own that can
	// only make a decision stricter: for each command, the action is the
	// stricter of the user's (the rules above) and the workspace rule that
	// matches it, if any.
	Workspace *Policy `json:"-"`
}

// DefaultPolicy is the policy when nothing is configured.
func DefaultPolicy() Policy {
	return Policy{
		Risk: map[Risk]Action{
			RiskRead: Allow, RiskWrite: Ask, RiskNetwork: Ask, RiskInstall: Ask, RiskDestructive: Deny,
		},
		Tools: map[string]Action{"edit_file": Allow},
	}
}

// Action decides for one call whose command (for run_command) is a single
// command. Destructive stays denied unless a rule names the tool or command
// explicitly, and the rule then says it lifted the deny.
func (p Policy) Action(tool string, risk Risk, command string) (Action, string) {
	return p.ActionFor(ApprovalRequest{Tool: tool, Risk: risk, Command: command})
}

// ActionFor decides for one call: each command of req.Commands (or the
// call as a whole when there are none) by its own rules in both layers,
// and the call by the strictest. The second result names the rule that
// decided, and the command it decided for when the line has several.
func (p Policy) ActionFor(req ApprovalRequest) (Action, string) {
	parts := req.Commands
	if len(parts) == 0 && req.Command != "" {
		// A caller that did not split the line: split it here. Without the
		// workspace, paths count as unknown, which only makes commands
		// riskier.
		parts = CommandParts(shell.Classify(req.Command, shell.Options{}))
	}
	highest := -1
	for _, c := range parts {
		highest = max(highest, c.Risk.Rank())
	}
	if highest < req.Risk.Rank() {
		// The call as a whole is riskier than any command of it (a line
		// that does not parse, a tool without commands): no command rule
		// can cover that.
		parts = append(append([]CommandPart(nil), parts...), CommandPart{Text: req.Command, Risk: req.Risk, Whole: len(parts) > 0})
	}
	best, rule := Allow, ""
	bestRank, bestRisk := -1, -1
	var lifted []string
	for _, c := range parts {
		a, why := p.partAction(req.Tool, c)
		if p.Workspace != nil {
			if wa, wwhy, ok := p.Workspace.match(req.Tool, c); ok && actionRank[wa] > actionRank[a] {
				a, why = wa, "workspace (.cairn/policy.json) "+wwhy
			}
		}
		if len(parts) > 1 && c.Text != "" {
			why += " for " + strconv.Quote(OneLine(c.Text, 80))
		}
		if strings.Contains(why, liftsNote) {
			lifted = append(lifted, why)
		}
		// On a tie the riskier command names the rule.
		if r := actionRank[a]; r > bestRank || r == bestRank && c.Risk.Rank() > bestRisk {
			best, rule, bestRank, bestRisk = a, why, r, c.Risk.Rank()
		}
	}
	if best != Deny {
		for _, l := range lifted {
			if l != rule {
				rule += "; also " + l
			}
		}
	}
	return best, rule
}

const liftsNote = "it lifts the destructive deny of the risk rule"

// partAction is the user's action for one command: its command rule, else
// the tool rule, else the risk rule.
func (p Policy) partAction(tool string, c CommandPart) (Action, string) {
	a, why, ok := p.match(tool, c)
	if !ok {
		return Ask, "no rule for risk " + string(c.Risk)
	}
	if _, known := actionRank[a]; !known {
		return Deny, why + " (its action " + strconv.Quote(string(a)) + " is unknown)"
	}
	if c.Risk.Rank() >= RiskDestructive.Rank() && a != Deny && p.Risk[RiskDestructive] == Deny && !strings.HasPrefix(why, "risk rule") {
		why += " (" + liftsNote + ")"
	}
	return a, why
}

// match returns the rule of this layer for one command, if one matches.
func (p Policy) match(tool string, c CommandPart) (Action, string, bool) {
	if prefix := p.covering(c); prefix != "" {
		a := p.Commands[prefix]
		// A rule lifts the deny of a destructive command only when it
		// names the command as a whole ("rm") or a destructive form of
		// it ("rm -rf build"): a "go test" rule does not cover
		// `go test -exec 'rm -rf ~'`.
		if a == Deny || c.Risk.Rank() < RiskDestructive.Rank() || namesDestructive(prefix) {
			return a, "command rule " + strconv.Quote(prefix), true
		}
	}
	if a, ok := p.Tools[tool]; ok {
		return a, "tool rule " + tool, true
	}
	risk := c.Risk
	if _, known := riskOrder[risk]; !known {
		risk = RiskDestructive // an unknown class never looks harmless
	}
	if a, ok := p.Risk[risk]; ok {
		return a, "risk rule " + string(risk), true
	}
	return "", "", false
}

// covering returns the longest command prefix that covers the command, or
// "". A prefix covers a command that is the prefix or starts with it and a
// space; it never covers a redirection or the line as a whole.
func (p Policy) covering(c CommandPart) string {
	if c.Redirection || c.Whole || c.Text == "" {
		return ""
	}
	best := ""
	for prefix := range p.Commands {
		if prefix == "" {
			continue
		}
		if (c.Text == prefix || strings.HasPrefix(c.Text, prefix+" ")) && len(prefix) > len(best) {
			best = prefix
		}
	}
	return best
}

// ApprovalRequest is what the user is asked.
type ApprovalRequest struct {
	RunID  string
	CallID string
	Tool   string
	Risk   Risk
	Detail string // the exact command, the packages, the file
	// Command is run_command's command line as the model wrote it, and
	// Commands its simple commands (and redirections), each with its own
	// risk: the policy decides each, and the prompt shows each.
	Command  string
	Commands []CommandPart
	// Packages are what an install would fetch, as written.
	Packages []string
	// ModelReason is text the model wrote to justify the call (the reason
	// of withoutSandbox): the prompt shows it quoted, as the model's.
	ModelReason string
	// Input is the call's arguments as the model wrote them (JSON): the
	// prompt of a tool without a command line shows them, as the model's.
	Input string
	// Rule is the policy rule that made the gate ask (set by the gate).
	Rule string
}

// Asker asks the user (through the editor) and returns the chosen action.
type Asker interface {
	AskApproval(ctx context.Context, req ApprovalRequest) (Decision, error)
}

// Gate applies the policy, remembers "Allow for session" grants, asks when
// the policy says ask (in ask mode), and audits every decision.
type Gate struct {
	Asker Asker
	Audit *AuditLog
	// InteractiveFor, when set, gives the approval mode of the run that
	// asks (known false: the gate's own mode): an ACP session's mode is its
	// own, while the gate serves every session of the workspace.
	InteractiveFor func(runID string) (interactive, known bool)

	mu     sync.Mutex
	policy Policy
	// interactive is false in approval mode "policy": never ask; an "ask"
	// outcome becomes a deny.
	interactive bool
	session     map[string]bool // tool+risk (+command) granted for the session
}

// NewGate returns a gate with a policy and mode.
func NewGate(p Policy, interactive bool, asker Asker, audit *AuditLog) *Gate {
	return &Gate{policy: p, interactive: interactive, Asker: asker, Audit: audit}
}

// SetPolicy replaces the policy and the interaction mode (a settings
// change); session grants are kept.
func (g *Gate) SetPolicy(p Policy, interactive bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.policy = p
	g.interactive = interactive
}

func (g *Gate) current() (Policy, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.policy, g.interactive
}

func sessionKey(tool string, risk Risk, detail string) string {
	return tool + "\x00" + string(risk) + "\x00" + detail
}

// Decide returns the decision for one call and records it.
func (g *Gate) Decide(ctx context.Context, req ApprovalRequest, step int, inputSummary string) (Decision, error) {
	if req.Tool == "run_command" && req.Command == "" && len(req.Commands) == 0 {
		req.Command = req.Detail // a caller that did not split the line: the detail is the command
	}
	policy, interactive := g.current()
	if g.InteractiveFor != nil {
		if v, known := g.InteractiveFor(req.RunID); known {
			interactive = v
		}
	}
	action, rule := policy.ActionFor(req)
	if why, only := confirmationOnly(req); only && action == Allow {
		// Outside the sandbox, and for protected paths, only the user's word counts.
		action, rule = Ask, why
	}
	var d Decision
	by := "policy: " + rule
	switch action {
	case Allow:
		d = DecisionPolicyAllow
	case Deny:
		d = DecisionPolicyDeny
	default:
		g.mu.Lock()
		granted := g.session[sessionKey(req.Tool, req.Risk, req.Detail)]
		g.mu.Unlock()
		switch {
		case granted:
			d, by = DecisionSessionAllow, "user: allowed for session earlier"
		case !interactive || g.Asker == nil:
			d, by = DecisionPolicyDeny, "policy: "+rule+" asks, and approval mode is policy (non-interactive)"
		default:
			var err error
			req.Rule = rule
			d, err = g.Asker.AskApproval(ctx, req)
			if err != nil {
				if ctx.Err() != nil {
					return DecisionDeny, ctx.Err()
				}
				d = DecisionDeny
				by = "user: no answer (" + err.Error() + "); asked by policy: " + rule
			} else {
				by = "user, asked by policy: " + rule
			}
			if d == DecisionAllowSession {
				g.mu.Lock()
				if g.session == nil {
					g.session = map[string]bool{}
				}
				g.session[sessionKey(req.Tool, req.Risk, req.Detail)] = true
				g.mu.Unlock()
			}
		}
	}
	if g.Audit != nil {
		if err := g.Audit.Append(AuditRecord{
			Time: time.Now().UTC(), RunID: req.RunID, Step: step, CallID: req.CallID, Tool: req.Tool,
			Risk: req.Risk, Input: inputSummary, Decision: d, By: by,
		}); err != nil {
			return DecisionDeny, fmt.Errorf("writing the audit record: %w", err)
		}
	}
	return d, nil
}

var actionRank = map[Action]int{Allow: 0, Ask: 1, Deny: 2}

// Overlay applies o on top of p. With tightenOnly (a policy file inside
// the workspace: whoever wrote the repository wrote it) o becomes the
// workspace layer (see WithWorkspace), which can only make decisions
// stricter. Otherwise (the user's settings) o's rules replace p's and may
// loosen them. Unknown actions are reported and ignored.
func (p Policy) Overlay(o Policy, tightenOnly bool) (Policy, []string) {
	if tightenOnly {
		return p.WithWorkspace(o)
	}
	var problems []string
	out := p.clone()
	out.Workspace = p.Workspace
	valid := func(kind, key string, a Action) bool {
		if _, ok := actionRank[a]; !ok {
			problems = append(problems, fmt.Sprintf("policy %s %q: unknown action %q (use allow, ask or deny)", kind, key, a))
			return false
		}
		return true
	}
	for k, a := range o.Risk {
		if _, known := riskOrder[k]; !known {
			problems = append(problems, fmt.Sprintf("policy risk %q: unknown risk class", k))
			continue
		}
		if valid("risk", string(k), a) {
			out.Risk[k] = a
		}
	}
	for k, a := range o.Tools {
		if valid("tool", k, a) {
			out.Tools[k] = a
		}
	}
	for k, a := range o.Commands {
		if valid("command", k, a) {
			out.Commands[k] = a
		}
	}
	return out, problems
}

// WithWorkspace adds o, the rules of a policy file inside the workspace,
// as the workspace layer: a rule of it that matches a command can only make
// that command's action stricter than the user's, whatever kind of rule
// either is. Allow rules could loosen nothing and are reported; so are
// unknown actions and risk classes.
func (p Policy) WithWorkspace(o Policy) (Policy, []string) {
	var problems []string
	w := Policy{Risk: map[Risk]Action{}, Tools: map[string]Action{}, Commands: map[string]Action{}}
	if p.Workspace != nil {
		w = p.Workspace.clone()
	}
	add := func(kind, key string, a Action, cur Action, has bool, set func(Action)) {
		_, known := actionRank[a]
		switch {
		case !known:
			problems = append(problems, fmt.Sprintf(".cairn/policy.json %s %q: unknown action %q (use ask or deny); ignored", kind, key, a))
		case a == Allow:
			problems = append(problems, fmt.Sprintf(".cairn/policy.json %s %q: allow has no effect: the workspace policy file can only make decisions stricter; ignored", kind, key))
		case has && actionRank[cur] >= actionRank[a]:
		default:
			set(a)
		}
	}
	for k, a := range o.Risk {
		if _, known := riskOrder[k]; !known {
			problems = append(problems, fmt.Sprintf(".cairn/policy.json risk %q: unknown risk class; ignored", k))
			continue
		}
		cur, has := w.Risk[k]
		add("risk", string(k), a, cur, has, func(a Action) { w.Risk[k] = a })
	}
	for k, a := range o.Tools {
		cur, has := w.Tools[k]
		add("tool", k, a, cur, has, func(a Action) { w.Tools[k] = a })
	}
	for k, a := range o.Commands {
		cur, has := w.Commands[k]
		add("command", k, a, cur, has, func(a Action) { w.Commands[k] = a })
	}
	out := p.clone()
	out.Workspace = &w
	return out, problems
}

// LiftsDestructive describes each rule of o (the user's settings) that
// lets a call rated destructive run or ask where p's risk rule denies it,
// so that the user is told.
func (p Policy) LiftsDestructive(o Policy) []string {
	var out []string
	if a := o.Risk[RiskDestructive]; lifts(a) {
		out = append(out, fmt.Sprintf("policy risk \"destructive\": %s: every call rated destructive (rm -rf, force pushes, writes outside the workspace) will %s instead of being denied", a, verb(a)))
	}
	if p.Risk[RiskDestructive] != Deny {
		return out
	}
	for _, k := range sortedKeys(o.Tools) {
		if a := o.Tools[k]; lifts(a) && !neverDestructive[k] {
			out = append(out, fmt.Sprintf("policy tool %q: %s lifts the destructive deny: its calls rated destructive will %s (the prompt and the audit log name this rule)", k, a, verb(a)))
		}
	}
	for _, k := range sortedKeys(o.Commands) {
		if a := o.Commands[k]; lifts(a) && namesDestructive(k) {
			out = append(out, fmt.Sprintf("policy command %q: %s lifts the destructive deny: the commands it covers that are rated destructive will %s (the prompt and the audit log name this rule)", k, a, verb(a)))
		}
	}
	return out
}

// namesDestructive reports whether a command rule may cover the
// destructive forms of what it names: a bare command name (the user named
// every form of it), or a prefix that is destructive read as a command.
func namesDestructive(prefix string) bool {
	if !strings.ContainsAny(strings.TrimSpace(prefix), " \t") {
		return true
	}
	return Risk(shell.Classify(prefix, shell.Options{}).Risk).Rank() >= RiskDestructive.Rank()
}

// neverDestructive are the built-in tools whose calls are never rated
// destructive: a rule for them lifts nothing.
var neverDestructive = map[string]bool{"read_file": true, "list_files": true, "search_code": true, "repo_map": true, "get_diagnostics": true, "edit_file": true, "update_plan": true}

// lifts reports whether a is a valid action other than deny.
func lifts(a Action) bool {
	_, ok := actionRank[a]
	return ok && a != Deny
}

func verb(a Action) string {
	if a == Allow {
		return "run without asking"
	}
	return "ask"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (p Policy) clone() Policy {
	out := Policy{Risk: map[Risk]Action{}, Tools: map[string]Action{}, Commands: map[string]Action{}}
	for k, v := range p.Risk {
		out.Risk[k] = v
	}
	for k, v := range p.Tools {
		out.Tools[k] = v
	}
	for k, v := range p.Commands {
		out.Commands[k] = v
	}
	return out
}
