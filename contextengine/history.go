package contextengine

import (
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/tokencount"
)

// The history source: the earlier turns of the conversation (thread) a
// question continues, as one candidate that renders itself to the room it
// gets. Each turn is written whole (question, answer, every edit with the
// fate of each hunk and its diff), summarized (the answer's head, one line
// per hunk, the diffs of rejected hunks), minimal (the question and the
// fates) or dropped. When the whole thread does not fit in the history's
// share of the budget, the older turns degrade first, oldest first (all
// summarized, then cut to the minimum, then dropped), and only then the
// newest turn. What the user rejected stays longest: the model must not
// propose it again blindly. The item's location in the context report says
// which turns were kept whole, summarized, cut or dropped.
// Turn is one earlier exchange of a thread.
type Turn struct {
	Question  string     `json:"question"`
	File      string     `json:"file,omitempty"`
	StartLine int        `json:"startLine,omitempty"` // 1-based selection, 0 for none
	EndLine   int        `json:"endLine,omitempty"`
	Answer    string     `json:"answer,omitempty"`
	Outcome   string     `json:"outcome,omitempty"` // finished, failed: …, cancelled, running
	Edits     []TurnEdit `json:"edits,omitempty"`
}

// TurnEdit is an edit proposed in an earlier turn and what became of it.
type TurnEdit struct {
	EditID string     `json:"editId"`
	Hunks  []TurnHunk `json:"hunks"`
}

// TurnHunk is one hunk of such an edit with the user's decision.
type TurnHunk struct {
	Index     int    `json:"index"`
	Path      string `json:"path"`
	StartLine int    `json:"startLine"` // 1-based, in the text before the edit
	EndLine   int    `json:"endLine"`
	Diff      string `json:"diff"`
	State     string `json:"state"` // pending, accepted, rejected
	Undone    bool   `json:"undone,omitempty"`
	// CheckpointID is the accept that applied the hunk (not shown to the
	// model; it lets an edit be reviewed on after a restart).
	CheckpointID string `json:"checkpointId,omitempty"`
}

// historyCap is the share of the budget earlier turns may take.
const historyCap = 0.30

// prioHistory allocates the conversation right after what the user pointed
// at: a follow-up ("and the other one?") means nothing without it.
const prioHistory = prioProject

func init() { sourceCaps[SourceHistory] = historyCap }

// historySources adds the thread's earlier turns as one item. A build that
// had to shorten them is marked degraded.
func historySources(req Request, report *Report, add func(*Item)) {
	n := len(req.History)
	if n == 0 {
		return
	}
	// The order turns degrade in: every older turn, oldest first, down one
	// level at a time; the newest turn last.
	type step struct{ turn, level int }
	var steps []step
	for _, level := range []int{historySummary, historyMinimal, historyDropped} {
		for i := 0; i < n-1; i++ {
			steps = append(steps, step{i, level})
		}
	}
	for _, level := range []int{historySummary, historyMinimal} {
		steps = append(steps, step{n - 1, level})
	}
	it := &Item{Source: SourceHistory, Location: fmt.Sprintf("%d earlier turns", n), Priority: prioHistory, Score: 1}
	it.render = func(tokens int) string {
		levels := make([]int, n) // all whole
		for k := -1; k < len(steps); k++ {
			if k >= 0 {
				levels[steps[k].turn] = steps[k].level
			}
			text := renderTurns(req.History, levels)
			if tokencount.Count(text) <= tokens {
				it.Location = describeLevels(levels)
				if k >= 0 {
					report.Degraded = true
				}
				return text
			}
		}
		return ""
	}
	add(it)
}

// renderTurns writes the turns at their levels, oldest first.
func renderTurns(turns []Turn, levels []int) string {
	var b strings.Builder
	for i, t := range turns {
		if levels[i] != historyDropped {
			b.WriteString(renderTurn(i+1, t, levels[i]))
		}
	}
	return b.String()
}

// describeLevels says what happened to each turn, for the context report:
// "turns 1-2 dropped, 3-5 summarized, 6 whole".
func describeLevels(levels []int) string {
	names := map[int]string{historyWhole: "whole", historySummary: "summarized", historyMinimal: "cut to the question and edit fates", historyDropped: "dropped"}
	var parts []string
	for i := 0; i < len(levels); {
		j := i
		for j+1 < len(levels) && levels[j+1] == levels[i] {
			j++
		}
		span := fmt.Sprint(i + 1)
		if j > i {
			span = fmt.Sprintf("%d-%d", i+1, j+1)
		}
		parts = append(parts, span+" "+names[levels[i]])
		i = j + 1
	}
	return fmt.Sprintf("%d earlier turns: %s", len(levels), strings.Join(parts, ", "))
}

const (
	historyWhole = iota
	historySummary
	historyMinimal
	historyDropped
)

// renderTurn writes a turn at a level of detail.
func renderTurn(num int, t Turn, level int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Turn %d\n", num)
	where := ""
	if t.File != "" {
		where = " (asked in " + t.File
		if t.StartLine > 0 {
			where += fmt.Sprintf(" lines %d-%d", t.StartLine, t.EndLine)
		}
		where += ")"
	}
	q := t.Question
	if level == historyMinimal {
		q = oneLine(q, 200)
	}
	fmt.Fprintf(&b, "User%s: %s\n", where, strings.TrimSpace(q))
	switch {
	case t.Answer == "" && t.Outcome == "running":
		b.WriteString("Assistant: (no answer: the run did not finish)\n")
	case t.Answer == "" && t.Outcome != "" && t.Outcome != "finished":
		fmt.Fprintf(&b, "Assistant: (no answer: %s)\n", t.Outcome)
	case level == historyWhole:
		fmt.Fprintf(&b, "Assistant: %s\n", strings.TrimSpace(t.Answer))
	case level == historySummary:
		head, cut := tokencount.Truncate(strings.TrimSpace(t.Answer), 120)
		if cut {
			head += " […]"
		}
		fmt.Fprintf(&b, "Assistant (summarized): %s\n", head)
	}
	for _, e := range t.Edits {
		for _, h := range e.Hunks {
			fmt.Fprintf(&b, "- Edit %s hunk %d (%s lines %d-%d): %s\n", e.EditID, h.Index, h.Path, h.StartLine, h.EndLine, hunkFate(h))
			if h.Diff == "" {
				continue
			}
			// The diff of a rejected hunk stays longest: it is what not to
			// propose again.
			if level == historyWhole || (level == historySummary && h.State == "rejected") {
				fmt.Fprintf(&b, "```diff\n%s```\n", ensureNL(h.Diff))
			}
		}
	}
	return b.String()
}

func hunkFate(h TurnHunk) string {
	switch {
	case h.State == "accepted" && h.Undone:
		return "accepted, then undone by the user"
	case h.State == "accepted":
		return "accepted by the user (applied)"
	case h.State == "rejected":
		return "REJECTED by the user: do not propose this change again unless the user asks for it"
	case h.State == "conflict":
		return "overlapped by the user's own edits to those lines (not applied)"
	case h.State == "superseded":
		return "overlapped by the user's own edits, then asked again against the user's text (not applied)"
	default:
		return "not decided by the user yet (not applied)"
	}
}

func ensureNL(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
