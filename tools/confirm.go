package tools

import "strings"

// confirmationOnly reports whether a call needs the user's own word whatever
// the policy says, and why: a command outside the sandbox, or an edit of a
// protected path. A policy may still deny such a call; it can never allow it,
// and in approval mode policy (nobody to ask) it is denied.
func confirmationOnly(req ApprovalRequest) (string, bool) {
	switch {
	case req.Tool == "run_command" && strings.HasPrefix(req.Detail, OutsideSandbox):
		return "run outside the sandbox", true
	case req.Tool == "run_command" && strings.HasPrefix(req.Detail, PartialSandbox):
		return "the sandbox has no namespaces here: host sockets and processes are reachable", true
	case strings.HasPrefix(req.Detail, ProtectedEdit):
		return "an edit of a protected path needs its own confirmation", true
	}
	return "", false
}
