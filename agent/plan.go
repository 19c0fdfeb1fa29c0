package agent

import (
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/redact"
	"github.com/cairn-dev/cairn/tools"
)

// planEntries converts the update_plan tool's entries into a plan event's,
// masking secrets with red: a plan is model text bound for the editor.
func planEntries(red *redact.Redactor, entries []tools.PlanEntry) []protocol.PlanEntry {
	out := make([]protocol.PlanEntry, len(entries))
	for i, e := range entries {
		out[i] = protocol.PlanEntry{Content: red.String(e.Content), Status: e.Status, Priority: e.Priority}
	}
	return out
}
