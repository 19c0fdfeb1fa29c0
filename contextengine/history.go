package contextengine

import (
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/tokencount"
)

// The history source: the earlier turns of the conversation (thread) a
// question continues. Each turn is one candidate that renders itself to the
// room it gets: whole (question, answer, every edit with the fate of each
// hunk), then summarized (the answer's head, one line per hunk), then the
// bare minimum (the question and the fates), else dropped. Newer turns score
// higher, so when the budget is short the oldest turns are summarized and
// then dropped first. What the user rejected is kept longest: the model must
// not propose it again blindly.

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
}

// historyCap is the share of the budget earlier turns may take.
const historyCap = 0.30

// prioHistory allocates the conversation right after what the user pointed
// at: a follow-up ("and the other one?") means nothing without it.
const prioHistory = prioProject

func init() { sourceCaps[SourceHistory] = historyCap }

// historySources adds one item per earlier turn, oldest first (the reading
// order of the prompt).
func historySources(req Request, add func(*Item)) {
	n := len(req.History)
	for i, t := range req.History {
		t, num := t, i+1
		it := &Item{Source: SourceHistory, Location: fmt.Sprintf("turn %d of %d: %s", num, n, oneLine(t.Question, 60)),
			Priority: prioHistory, Score: float64(num) / float64(n)}
		it.render = func(tokens int) string {
			for _, level := range []int{historyWhole, historySummary, historyMinimal} {
				text := renderTurn(num, t, level)
				if tokencount.Count(text) <= tokens {
					if level != historyWhole {
						it.Location = fmt.Sprintf("turn %d of %d (summarized): %s", num, n, oneLine(t.Question, 60))
					}
					return text
				}
			}
			return ""
		}
		add(it)
	}
}

const (
	historyWhole = iota
	historySummary
	historyMinimal
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
