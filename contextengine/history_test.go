package contextengine

import (
	"fmt"
	"strings"
	"testing"
)

// historyTurns is a thread of n turns, each answer long (about 600 tokens),
// with one rejected hunk in turn 1.
func historyTurns(n int) []Turn {
	var turns []Turn
	for i := 1; i <= n; i++ {
		t := Turn{Question: fmt.Sprintf("question number %d about the parser", i), File: "p/parse.go", StartLine: 10, EndLine: 20,
			Answer:  fmt.Sprintf("answer %d: ", i) + strings.Repeat(fmt.Sprintf("the parser handles case %d by looking ahead one token. ", i), 60),
			Outcome: "finished"}
		if i == 1 {
			t.Edits = []TurnEdit{{EditID: "edit-1", Hunks: []TurnHunk{
				{Index: 0, Path: "p/parse.go", StartLine: 12, EndLine: 12, Diff: "@@ -12 +12 @@\n-\treturn nil\n+\treturn errEOF\n", State: "accepted"},
				{Index: 1, Path: "p/parse.go", StartLine: 30, EndLine: 31, Diff: "@@ -30,2 +30,2 @@\n-\tpanic(x)\n+\tos.Exit(1)\n", State: "rejected"},
			}}}
		}
		turns = append(turns, t)
	}
	return turns
}

func historyItem(t *testing.T, r *Report) *Item {
	t.Helper()
	var out []*Item
	for _, it := range r.Items {
		if it.Source == SourceHistory {
			out = append(out, it)
		}
	}
	if len(out) != 1 {
		t.Fatalf("want one history item, got %d", len(out))
	}
	return out[0]
}

func TestHistoryWholeWhenItFits(t *testing.T) {
	b, err := Build(Request{Question: "and the lexer?", History: historyTurns(2), ContextWindow: 32000, MaxOutput: 1000})
	if err != nil {
		t.Fatal(err)
	}
	it := historyItem(t, b.Report)
	if !it.Included || it.Location != "2 earlier turns: 1-2 whole" {
		t.Fatalf("history item: %+v", it)
	}
	for _, want := range []string{"## Earlier in this conversation", "question number 1", "answer 2:", "REJECTED by the user", "+\tos.Exit(1)",
		"accepted by the user", "asked in p/parse.go lines 10-20"} {
		if !strings.Contains(b.User, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	// Oldest first, and before the question.
	if i1, i2, q := strings.Index(b.User, "### Turn 1"), strings.Index(b.User, "### Turn 2"), strings.Index(b.User, "and the lexer?"); !(i1 < i2 && i2 < q) {
		t.Errorf("order: turn 1 at %d, turn 2 at %d, question at %d", i1, i2, q)
	}
}

func TestHistoryOlderTurnsSummarizedThenDropped(t *testing.T) {
	// 6 turns of ~750 tokens against a budget whose history share (30%)
	// holds about one whole turn and a few summaries.
	b, err := Build(Request{Question: "and the lexer?", History: historyTurns(6), ContextWindow: 5000, MaxOutput: 500})
	if err != nil {
		t.Fatal(err)
	}
	it := historyItem(t, b.Report)
	if !it.Included {
		t.Fatalf("history dropped: %+v", it)
	}
	if !strings.HasSuffix(it.Location, "6 whole") || !strings.Contains(it.Location, "summarized") {
		t.Errorf("the newest turn should stay whole and older ones be summarized: %s", it.Location)
	}
	if strings.Count(b.User, "the parser handles case 6 by") < 10 {
		t.Errorf("turn 6 is not whole in the prompt:\n%s", b.User)
	}
	if tokens := b.Report.Budget.Available; it.Tokens > int(historyCap*float64(tokens)) {
		t.Errorf("history takes %d tokens, over its cap of %.0f%% of %d", it.Tokens, historyCap*100, tokens)
	}
	md := b.Report.Markdown()
	if !strings.Contains(md, "| history | 6 earlier turns: ") {
		t.Errorf("the report does not show the history item:\n%s", md)
	}
	if !b.Report.Degraded {
		t.Error("a build that summarized history is not marked degraded")
	}

	// Smaller still: the oldest turns go first, the rejected hunk of turn 1
	// is the last thing of it to go.
	b, err = Build(Request{Question: "and the lexer?", History: historyTurns(6), ContextWindow: 2400, MaxOutput: 500})
	if err != nil {
		t.Fatal(err)
	}
	it = historyItem(t, b.Report)
	if !strings.Contains(it.Location, "dropped") || !strings.HasPrefix(it.Location, "6 earlier turns: 1") {
		t.Errorf("want the oldest turns dropped: %s", it.Location)
	}
}

func TestDescribeLevels(t *testing.T) {
	got := describeLevels([]int{historyDropped, historyDropped, historyMinimal, historySummary, historySummary, historyWhole})
	want := "6 earlier turns: 1-2 dropped, 3 cut to the question and edit fates, 4-5 summarized, 6 whole"
	if got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestRenderTurnKeepsRejectedDiffLongest(t *testing.T) {
	turn := historyTurns(1)[0]
	whole, summary, minimal := renderTurn(1, turn, historyWhole), renderTurn(1, turn, historySummary), renderTurn(1, turn, historyMinimal)
	if !(len(minimal) < len(summary) && len(summary) < len(whole)) {
		t.Fatalf("levels do not shrink: %d, %d, %d", len(whole), len(summary), len(minimal))
	}
	if !strings.Contains(summary, "+\tos.Exit(1)") || strings.Contains(summary, "+\treturn errEOF") {
		t.Errorf("the summary keeps the rejected hunk's diff only:\n%s", summary)
	}
	for _, s := range []string{whole, summary, minimal} {
		if !strings.Contains(s, "hunk 1 (p/parse.go lines 30-31): REJECTED") {
			t.Errorf("every level says what was rejected:\n%s", s)
		}
	}
}
