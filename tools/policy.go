package tools

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
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
type Policy struct {
	Risk map[Risk]Action `json:"risk"`
	// Tools overrides by tool name (e.g. "mcp__fs__write_file": "ask").
	Tools map[string]Action `json:"tools"`
	// Commands overrides by command prefix for run_command ("go test": "allow").
	Commands map[string]Action `json:"commands"`
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

// Action decides for one call. Destructive stays denied unless a rule
// names the tool or command explicitly.
func (p Policy) Action(tool string, risk Risk, command string) (Action, string) {
	if command != "" {
		best := ""
		for prefix := range p.Commands {
			if (command == prefix || strings.HasPrefix(command, prefix+" ")) && len(prefix) > len(best) {
				best = prefix
			}
		}
		if best != "" {
			return p.Commands[best], "command rule " + fmt.Sprintf("%q", best)
		}
	}
	if a, ok := p.Tools[tool]; ok {
		return a, "tool rule " + tool
	}
	if a, ok := p.Risk[risk]; ok {
		return a, "risk rule " + string(risk)
	}
	return Ask, "no rule for risk " + string(risk)
}

// ApprovalRequest is what the user is asked.
type ApprovalRequest struct {
	RunID  string
	CallID string
	Tool   string
	Risk   Risk
	Detail string // the exact command, the packages, the file
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
	command := ""
	if req.Tool == "run_command" {
		command = req.Detail
	}
	policy, interactive := g.current()
	action, rule := policy.Action(req.Tool, req.Risk, command)
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
			d, err = g.Asker.AskApproval(ctx, req)
			if err != nil {
				if ctx.Err() != nil {
					return DecisionDeny, ctx.Err()
				}
				d = DecisionDeny
				by = "user: no answer (" + err.Error() + ")"
			} else {
				by = "user"
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

// Overlay applies o on top of p. With tightenOnly (a policy file inside the
// workspace: whoever wrote the repository wrote it), a rule may only make
// an action stricter (allow → ask → deny), never looser. Unknown actions
// are reported and ignored.
func (p Policy) Overlay(o Policy, tightenOnly bool) (Policy, []string) {
	var problems []string
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
	apply := func(kind, key string, cur Action, has bool, next Action, set func(Action)) {
		if _, ok := actionRank[next]; !ok {
			problems = append(problems, fmt.Sprintf("policy %s %q: unknown action %q (use allow, ask or deny)", kind, key, next))
			return
		}
		if tightenOnly && has && actionRank[next] < actionRank[cur] {
			problems = append(problems, fmt.Sprintf("policy %s %q: the workspace policy file may not loosen %s to %s; ignored", kind, key, cur, next))
			return
		}
		if tightenOnly && !has && next == Allow {
			problems = append(problems, fmt.Sprintf("policy %s %q: the workspace policy file may not add allow rules; ignored", kind, key))
			return
		}
		set(next)
	}
	for k, v := range o.Risk {
		if _, known := riskOrder[k]; !known {
			problems = append(problems, fmt.Sprintf("policy risk %q: unknown risk class", k))
			continue
		}
		cur, has := out.Risk[k]
		apply("risk", string(k), cur, has, v, func(a Action) { out.Risk[k] = a })
	}
	for k, v := range o.Tools {
		cur, has := out.Tools[k]
		if !has {
			cur, has = Ask, tightenOnly // a new tool rule in a workspace file may only ask or deny
		}
		apply("tool", k, cur, has, v, func(a Action) { out.Tools[k] = a })
	}
	for k, v := range o.Commands {
		cur, has := out.Commands[k]
		if !has {
			cur, has = Ask, tightenOnly
		}
		apply("command", k, cur, has, v, func(a Action) { out.Commands[k] = a })
	}
	return out, problems
}
