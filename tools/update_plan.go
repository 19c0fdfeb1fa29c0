package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

const updatePlanDescription = `Show the user your plan for a task of several steps (a change across files, a fix in stages) and keep it current. Send the whole list every time, with each step's status: pending, in_progress (one step at a time) or completed. Call it first with every step pending, then again whenever a step starts or ends. Skip it for a question or a one-step change.`

// Plan step statuses and priorities, as ACP names them (the `plan` session
// update), so an ACP adapter passes them through unchanged.
const (
	PlanPending    = "pending"
	PlanInProgress = "in_progress"
	PlanCompleted  = "completed"

	PriorityHigh   = "high"
	PriorityMedium = "medium"
	PriorityLow    = "low"
)

// PlanEntry is one step of the plan the model shows the user.
type PlanEntry struct {
	Content  string `json:"content"`
	Status   string `json:"status"`
	Priority string `json:"priority"`
}

// maxPlanEntries bounds a plan, so a runaway model cannot flood the client.
const maxPlanEntries = 50

// UpdatePlan is the update_plan tool: it changes nothing, its result carries
// the plan (Result.Plan) for the run to send to the editor.
func UpdatePlan() *Tool {
	return &Tool{
		Name:        "update_plan",
		Description: updatePlanDescription,
		Schema: json.RawMessage(`{"type":"object","properties":{
			"entries":{"type":"array","minItems":1,"maxItems":50,"items":{"type":"object","properties":{
				"content":{"type":"string","minLength":1,"maxLength":500,"description":"what the step does, in a short sentence"},
				"status":{"type":"string","enum":["pending","in_progress","completed"]},
				"priority":{"type":"string","enum":["high","medium","low"]}},
				"required":["content","status"],"additionalProperties":false}}},
			"required":["entries"],"additionalProperties":false}`),
		Risk:           RiskRead,
		Idempotent:     true,
		MaxOutputBytes: 4 << 10,
		Run:            runUpdatePlan,
	}
}

func runUpdatePlan(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	entries, err := ParsePlan(input)
	if err != nil {
		return errorResult("%v", err), nil
	}
	counts := map[string]int{}
	for _, e := range entries {
		counts[e.Status]++
	}
	summary := fmt.Sprintf("plan: %d steps, %d completed, %d in progress, %d pending",
		len(entries), counts[PlanCompleted], counts[PlanInProgress], counts[PlanPending])
	content := summary + " (shown to the user)."
	if counts[PlanInProgress] > 1 {
		content += " Note: keep one step in_progress at a time."
	}
	return Result{Content: content, Summary: summary, Plan: entries}, nil
}

// ParsePlan reads an update_plan input into its entries (priority medium
// where the model gave none); it also serves a replay from the journal.
func ParsePlan(input json.RawMessage) ([]PlanEntry, error) {
	var in struct {
		Entries []PlanEntry `json:"entries"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, fmt.Errorf("invalid input: %w", err)
	}
	if len(in.Entries) == 0 || len(in.Entries) > maxPlanEntries {
		return nil, fmt.Errorf("a plan has 1 to %d entries, not %d", maxPlanEntries, len(in.Entries))
	}
	for i := range in.Entries {
		e := &in.Entries[i]
		e.Content = strings.TrimSpace(e.Content)
		if e.Content == "" {
			return nil, fmt.Errorf("entry %d has no content", i+1)
		}
		switch e.Status {
		case PlanPending, PlanInProgress, PlanCompleted:
		default:
			return nil, fmt.Errorf("entry %d: status %q is not pending, in_progress or completed", i+1, e.Status)
		}
		switch e.Priority {
		case PriorityHigh, PriorityMedium, PriorityLow:
		case "":
			// ACP requires a priority: a step the model did not rank is medium.
			e.Priority = PriorityMedium
		default:
			return nil, fmt.Errorf("entry %d: priority %q is not high, medium or low", i+1, e.Priority)
		}
	}
	return in.Entries, nil
}
