// Package contextengine decides what the model sees. Sources produce
// candidate items with exact token counts; items are allocated to one budget
// by priority and score; what does not fit is dropped or shortened in a
// documented order, and a report says what happened to every candidate.
//
// Budget = contextWindow − maxOutputTokens − tool schema tokens − margin.
// The margin (5% of the window, at least 256 tokens) absorbs the difference
// between our tokenizer (o200k_base) and the provider's.
package contextengine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/tokencount"
)

// Source names where a candidate came from.
type Source string

const (
	SourceInstructions Source = "instructions"
	SourceQuestion     Source = "question"
	SourceSelection    Source = "selection"
	SourceWindow       Source = "surrounding code"
	SourceEnclosing    Source = "enclosing symbol"
	SourceDefinitions  Source = "definitions"
	SourceCallees      Source = "callee bodies"
	SourceDiagnostics  Source = "diagnostics"
	SourceRecentEdits  Source = "recent edits"
	SourceRepoMap      Source = "repo map"
	SourceSearch       Source = "search"
	SourceOpenDocs     Source = "open documents"
	SourceProject      Source = "project instructions"
	SourceHistory      Source = "history"
	SourceToolResult   Source = "tool result"
)

// Item is one candidate piece of context.
type Item struct {
	Source   Source
	Location string // file:lines, or a description
	Text     string
	Tokens   int
	// Priority orders sources (lower first); Score orders items within a source.
	Priority int
	Score    float64
	// Required items are never dropped (the question, the selection).
	Required bool

	Included bool
	Reason   string // why included or dropped

	// render, when set, produces the item's text for a token allowance
	// (the repo map and the surrounding code shrink to fit).
	render func(tokens int) string
	// late items are not allocated with the others: a pass after the
	// allocation adds them with what is left (the callee bodies).
	late bool
	// exact: a callee resolved by its receiver's type, its package or
	// this package (not a guess among same-named methods).
	exact bool
}

// Budget is the token arithmetic of one build.
type Budget struct {
	ContextWindow int
	MaxOutput     int
	ToolSchemas   int
	Margin        int
	Available     int // for messages
	Used          int
}

// NewBudget computes the budget for a window.
func NewBudget(window, maxOutput, toolSchemaTokens int) Budget {
	margin := window / 20
	if margin < 256 {
		margin = 256
	}
	b := Budget{ContextWindow: window, MaxOutput: maxOutput, ToolSchemas: toolSchemaTokens, Margin: margin}
	b.Available = window - maxOutput - toolSchemaTokens - margin
	if b.Available < 0 {
		b.Available = 0
	}
	return b
}

// Report explains a build.
type Report struct {
	Question string
	Budget   Budget
	Items    []*Item
	Notes    []string
	// Degraded is true when anything was dropped or shortened to fit.
	Degraded bool
	// Redactions counts the secrets masked, by kind.
	Redactions map[string]int
	// NotReady names the index sources ("repo map", "search") whose first
	// build had not ended when the context was built: the question went
	// ahead without waiting longer for them.
	NotReady []string
}

// Markdown renders the report for cairn.contextReport and `cairn context`.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Context report\n\n**Question:** %s\n\n", oneLine(r.Question, 200))
	bd := r.Budget
	fmt.Fprintf(&b, "## Budget\n\n| | tokens |\n|---|---:|\n| context window | %d |\n| reserved for the answer | −%d |\n| tool schemas | −%d |\n| safety margin | −%d |\n| **available for messages** | **%d** |\n| used | %d |\n\n",
		bd.ContextWindow, bd.MaxOutput, bd.ToolSchemas, bd.Margin, bd.Available, bd.Used)
	b.WriteString("## Candidates\n\n| source | location | tokens | score | included | why |\n|---|---|---:|---:|---|---|\n")
	for _, it := range r.Items {
		inc := "no"
		if it.Included {
			inc = "yes"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.2f | %s | %s |\n", it.Source, mdEscape(it.Location), it.Tokens, it.Score, inc, mdEscape(it.Reason))
	}
	totals := map[Source][2]int{}
	var order []Source
	for _, it := range r.Items {
		t, seen := totals[it.Source]
		if !seen {
			order = append(order, it.Source)
		}
		if it.Included {
			t[0] += it.Tokens
		} else {
			t[1] += it.Tokens
		}
		totals[it.Source] = t
	}
	b.WriteString("\n## Totals per source\n\n| source | included tokens | dropped tokens |\n|---|---:|---:|\n")
	for _, s := range order {
		fmt.Fprintf(&b, "| %s | %d | %d |\n", s, totals[s][0], totals[s][1])
	}
	if len(r.Redactions) > 0 {
		var kinds []string
		for k := range r.Redactions {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		b.WriteString("\n## Redactions\n\n| kind | count |\n|---|---:|\n")
		for _, k := range kinds {
			fmt.Fprintf(&b, "| %s | %d |\n", k, r.Redactions[k])
		}
	}
	if len(r.NotReady) > 0 {
		fmt.Fprintf(&b, "\n## Not ready\n\nThese sources were still being built and held only what was indexed so far: %s.\n", strings.Join(r.NotReady, ", "))
	}
	if len(r.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	return b.String()
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// Allocate marks items included or dropped to fit avail tokens: required
// items first, then by priority, then by score, each source within its cap
// (a share of avail). It returns the tokens used.
func Allocate(items []*Item, avail int, report *Report) int {
	sorted := append([]*Item(nil), items...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.Required != b.Required {
			return a.Required
		}
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		return a.Score > b.Score
	})
	used := 0
	bySource := map[Source]int{}
	for _, it := range sorted {
		if it.late {
			continue
		}
		if strings.HasPrefix(it.Reason, "duplicate") {
			it.Included = false
			it.Reason = strings.TrimSuffix(it.Reason, "; ")
			continue
		}
		capTokens := avail
		if share, ok := sourceCaps[it.Source]; ok && !it.Required {
			capTokens = int(share * float64(avail))
		}
		room := min(capTokens-bySource[it.Source], avail-used)
		if it.render != nil {
			full := it.render(min(capTokens, maxRenderTokens(it.Source)))
			if tokencount.Count(full) > room {
				it.Text = it.render(room)
				if it.Text != "" {
					it.Reason += "shrunk to fit; "
					report.Degraded = true
				}
			} else {
				it.Text = full
			}
			if it.Text == "" {
				it.Included = false
				it.Reason += "budget exhausted"
				report.Degraded = true
				continue
			}
		}
		if it.Tokens == 0 {
			it.Tokens = tokencount.Count(it.Text)
		}
		switch {
		case it.Required && used+it.Tokens > avail:
			// Never drop the question or the selection: shorten instead.
			room := avail - used
			if room < 32 {
				room = 32
			}
			cut, _ := tokencount.Truncate(it.Text, room)
			it.Text = cut + "\n[... cut to fit the context budget ...]\n"
			it.Tokens = tokencount.Count(it.Text)
			it.Included = true
			it.Reason += "required; shortened to fit the budget"
			report.Degraded = true
		case it.Required || (it.Tokens <= room):
			it.Included = true
			it.Reason += "fits"
		case bySource[it.Source]+it.Tokens > capTokens:
			it.Included = false
			it.Reason += fmt.Sprintf("over the %s cap (%d tokens)", it.Source, capTokens)
			report.Degraded = true
		default:
			it.Included = false
			it.Reason += "budget exhausted"
			report.Degraded = true
		}
		if it.Included {
			used += it.Tokens
			bySource[it.Source] += it.Tokens
		}
	}
	return used
}

func maxRenderTokens(s Source) int {
	if s == SourceRepoMap {
		return maxRepoMapTokens
	}
	return 1 << 30
}

// FitHistory shortens the conversation after the first user message so the
// whole fits in avail tokens: older tool results are shortened first, then
// older assistant text. The latest turn is kept whole when possible.
func FitHistory(msgs []model.Message, avail int, report *Report) []model.Message {
	count := func(ms []model.Message) int {
		n := 0
		for _, m := range ms {
			n += tokencount.Count(m.Content) + 4
			for _, c := range m.ToolCalls {
				n += tokencount.Count(c.Arguments) + tokencount.Count(c.Name) + 4
			}
		}
		return n
	}
	total := count(msgs)
	if total <= avail {
		return msgs
	}
	out := append([]model.Message(nil), msgs...)
	// Pass 1: shorten tool results, oldest first, leaving the last one whole.
	lastTool := -1
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == model.RoleTool {
			lastTool = i
			break
		}
	}
	for pass := 0; pass < 2 && total > avail; pass++ {
		for i := range out {
			if total <= avail {
				break
			}
			m := &out[i]
			if i < 2 || (pass == 0 && (m.Role != model.RoleTool || i == lastTool)) {
				continue
			}
			if pass == 1 && m.Role != model.RoleAssistant && m.Role != model.RoleTool {
				continue
			}
			before := tokencount.Count(m.Content)
			if before <= 40 {
				continue
			}
			keep := before / 8
			if keep < 20 {
				keep = 20
			}
			cut, _ := tokencount.Truncate(m.Content, keep)
			m.Content = cut + fmt.Sprintf("\n[... shortened from %d tokens to fit the context budget ...]", before)
			total -= before - tokencount.Count(m.Content)
			report.Degraded = true
			report.Notes = append(report.Notes, fmt.Sprintf("history message %d (%s) shortened from %d tokens", i, m.Role, before))
		}
	}
	if total > avail {
		report.Notes = append(report.Notes, fmt.Sprintf("history still %d tokens over the budget after shortening", total-avail))
	}
	return out
}
