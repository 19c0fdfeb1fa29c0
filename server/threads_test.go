package server_test

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/server"
)

const calcWS = `
-- go.mod --
module example.com/calc

go 1.22
-- calc/calc.go --
package calc

// Add adds.
func Add(a, b int) int {
	return a - b
}

// Mul multiplies.
func Mul(a, b int) int {
	return a + b
}
`

// twoHunkTurns: one edit_file call whose change is two hunks (line 5 and
// line 10), then the answer.
const twoHunkTurns = `
  - toolCalls:
      - name: edit_file
        arguments:
          path: calc/calc.go
          oldText: "return a - b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a + b"
          newText: "return a + b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a * b"
  - text: "Fixed Add and Mul."
`

const calcOrig = "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a + b\n}\n"

func TestTwoHunksAcceptOneRejectOneUndo(t *testing.T) {
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns))
	e.open("calc/calc.go")
	evs := e.waitRun(e.ask("calc/calc.go", 4, 11, "fix the operators"))
	editID := ofKind(evs, protocol.EventEditProposed)[0].EditID

	view, err := e.ed.GetEdit(e.ctx, editID)
	if err != nil {
		t.Fatal(err)
	}
	if len(view.Hunks) != 2 || view.State != "pending" {
		t.Fatalf("want 2 pending hunks, got state %s hunks %+v", view.State, view.Hunks)
	}
	h0, h1 := view.Hunks[0], view.Hunks[1]
	if h0.StartLine != 4 || h0.EndLine != 5 || h1.StartLine != 9 || h1.EndLine != 10 || h0.Path != "calc/calc.go" {
		t.Errorf("hunk lines: %+v / %+v", h0, h1)
	}
	if !strings.Contains(h0.Diff, "+\treturn a + b") || !strings.Contains(h1.Diff, "+\treturn a * b") || strings.Contains(h0.Diff, "a * b") {
		t.Errorf("hunk diffs:\n%s\n%s", h0.Diff, h1.Diff)
	}

	res, err := e.ed.AcceptHunks(e.ctx, editID, []int{0})
	if err != nil || !res.Applied {
		t.Fatalf("accept hunk 0: %+v %v", res, err)
	}
	wantOne := strings.Replace(calcOrig, "return a - b", "return a + b", 1)
	if got := e.read("calc/calc.go"); got != wantOne {
		t.Fatalf("after accepting hunk 0:\n%q\nwant\n%q", got, wantOne)
	}
	view, _ = e.ed.GetEdit(e.ctx, editID)
	if view.State != "pending" || view.Hunks[0].State != "accepted" || view.Hunks[1].State != "pending" || view.Hunks[0].CheckpointID != res.CheckpointID {
		t.Fatalf("after accepting hunk 0: state %s hunks %+v", view.State, view.Hunks)
	}
	if _, err := e.ed.AcceptHunks(e.ctx, editID, []int{0}); err == nil {
		t.Error("accepting hunk 0 twice succeeded")
	}
	if _, err := e.ed.AcceptHunks(e.ctx, editID, []int{7}); err == nil || !strings.Contains(err.Error(), "no hunk 7") {
		t.Errorf("accepting a hunk that does not exist: %v", err)
	}

	if err := e.ed.RejectHunks(e.ctx, editID, []int{1}); err != nil {
		t.Fatal(err)
	}
	if got := e.read("calc/calc.go"); got != wantOne {
		t.Fatalf("rejecting hunk 1 changed the file:\n%q", got)
	}
	view, _ = e.ed.GetEdit(e.ctx, editID)
	if view.State != "accepted" || view.Hunks[1].State != "rejected" {
		t.Fatalf("after rejecting hunk 1: state %s hunks %+v", view.State, view.Hunks)
	}
	if _, err := e.ed.Accept(e.ctx, editID); err == nil {
		t.Error("accepting a decided edit succeeded")
	}

	u, err := e.ed.Undo(e.ctx, res.CheckpointID)
	if err != nil || !u.Applied {
		t.Fatalf("undo: %+v %v", u, err)
	}
	if got := e.read("calc/calc.go"); got != calcOrig {
		t.Fatalf("undo is not byte-exact:\n%q\nwant\n%q", got, calcOrig)
	}
	if got, _ := e.ed.Text("calc/calc.go"); got != calcOrig {
		t.Fatalf("the buffer after undo:\n%q", got)
	}
}

func TestSecondHunkAcceptedAfterFirst(t *testing.T) {
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns))
	evs := e.waitRun(e.ask("calc/calc.go", 0, 0, "fix the operators"))
	editID := ofKind(evs, protocol.EventEditProposed)[0].EditID
	// Hunk 1 first, then hunk 0: each builds on the other's result.
	r1, err := e.ed.AcceptHunks(e.ctx, editID, []int{1})
	if err != nil || !r1.Applied {
		t.Fatalf("accept hunk 1: %+v %v", r1, err)
	}
	r0, err := e.ed.AcceptHunks(e.ctx, editID, []int{0})
	if err != nil || !r0.Applied {
		t.Fatalf("accept hunk 0: %+v %v", r0, err)
	}
	both := strings.Replace(strings.Replace(calcOrig, "return a + b", "return a * b", 1), "return a - b", "return a + b", 1)
	if got := e.read("calc/calc.go"); got != both {
		t.Fatalf("both hunks:\n%q\nwant\n%q", got, both)
	}
	// Undo the first accept (hunk 1) only: hunk 0 stays.
	if u, err := e.ed.Undo(e.ctx, r1.CheckpointID); err == nil {
		t.Fatalf("undoing an older accept over a newer one should refuse (the file changed since): %+v", u)
	}
	if u, err := e.ed.Undo(e.ctx, r0.CheckpointID); err != nil || !u.Applied {
		t.Fatalf("undo hunk 0: %+v %v", u, err)
	}
	if u, err := e.ed.Undo(e.ctx, r1.CheckpointID); err != nil || !u.Applied {
		t.Fatalf("undo hunk 1: %+v %v", u, err)
	}
	if got := e.read("calc/calc.go"); got != calcOrig {
		t.Fatalf("after both undos:\n%q", got)
	}
}

func TestUndoAfterEditorUndoIsAlreadyUndone(t *testing.T) {
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns))
	e.open("calc/calc.go")
	evs := e.waitRun(e.ask("calc/calc.go", 0, 0, "fix the operators"))
	res, err := e.ed.Accept(e.ctx, ofKind(evs, protocol.EventEditProposed)[0].EditID)
	if err != nil || !res.Applied {
		t.Fatalf("accept: %+v %v", res, err)
	}
	// The user's Ctrl+Z in the editor: the buffer is back at the old text
	// (unsaved), and then saved.
	if err := e.ed.Type(e.ctx, "calc/calc.go", calcOrig); err != nil {
		t.Fatal(err)
	}
	u, err := e.ed.Undo(e.ctx, res.CheckpointID)
	if err != nil {
		t.Fatalf("undo after the editor's undo refused: %v", err)
	}
	if u.Applied || len(u.AlreadyUndone) != 1 || u.AlreadyUndone[0] != "calc/calc.go" || !strings.Contains(u.Reason, "already undone") {
		t.Fatalf("undo result: %+v", u)
	}
	if got, _ := e.ed.Text("calc/calc.go"); got != calcOrig {
		t.Fatalf("buffer changed: %q", got)
	}
	// The checkpoint is settled: a second undo says it was undone.
	if _, err := e.ed.Undo(e.ctx, res.CheckpointID); err == nil || !strings.Contains(err.Error(), "already undone") {
		t.Fatalf("second undo: %v", err)
	}
}

func TestThreadFollowUpSeesHistoryAndSurvivesRestart(t *testing.T) {
	state := t.TempDir()
	script := "turns:" + twoHunkTurns + `
  - text: "Mul now multiplies; I left Add alone as you asked."
`
	e := newEnv(t, calcWS, withScript(script), withState(state))
	e.open("calc/calc.go")
	first, err := e.ed.AskThread(e.ctx, "", "calc/calc.go", 4, 6, "fix the operators")
	if err != nil || first.ThreadID == "" || first.RunID == "" {
		t.Fatalf("ask: %+v %v", first, err)
	}
	evs := e.waitRun(first.RunID)
	started := evs[0]
	if started.ThreadID != first.ThreadID || started.Question != "fix the operators" || started.URI != e.ed.URI("calc/calc.go") ||
		started.Range == nil || started.Range.Start.Line != 3 {
		t.Errorf("started event: %+v", started)
	}
	editID := ofKind(evs, protocol.EventEditProposed)[0].EditID
	if _, err := e.ed.AcceptHunks(e.ctx, editID, []int{1}); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.RejectHunks(e.ctx, editID, []int{0}); err != nil {
		t.Fatal(err)
	}

	second, err := e.ed.AskThread(e.ctx, first.ThreadID, "calc/calc.go", 0, 0, "what did you change?")
	if err != nil || second.ThreadID != first.ThreadID {
		t.Fatalf("follow-up: %+v %v", second, err)
	}
	e.waitRun(second.RunID)
	reqs := e.provider.Received()
	prompt := userText(reqs[len(reqs)-1])
	for _, want := range []string{"fix the operators", "Fixed Add and Mul.", "REJECTED", "-\treturn a - b", "+\treturn a + b", "accepted by the user", "what did you change?"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the follow-up's prompt lacks %q:\n%s", want, prompt)
		}
	}
	// The first run of a thread has no history.
	if p := userText(reqs[0]); strings.Contains(p, "Earlier in this conversation") {
		t.Errorf("a new thread's first prompt has history:\n%s", p)
	}
	report, err := e.ed.ContextReport(e.ctx, second.RunID)
	if err != nil || !strings.Contains(report, "| history | 1 earlier turns: 1 whole |") {
		t.Errorf("the context report does not show the history item: %v\n%s", err, report)
	}

	// A bad thread id is refused before it touches a path.
	if _, err := e.ed.AskThread(e.ctx, "../../etc", "calc/calc.go", 0, 0, "x"); err == nil || !strings.Contains(err.Error(), "invalid thread id") {
		t.Errorf("bad thread id: %v", err)
	}
	if _, err := e.ed.AskThread(e.ctx, "thread-nope", "calc/calc.go", 0, 0, "x"); err == nil || !strings.Contains(err.Error(), "no thread") {
		t.Errorf("unknown thread id: %v", err)
	}
	third, err := e.ed.AskThread(e.ctx, "", "calc/calc.go", 0, 0, "another topic")
	if err != nil {
		t.Fatal(err)
	}
	e.waitRun(third.RunID)

	// After a restart (a new server on the same state), the threads are
	// listed, newest first.
	e2 := newEnv(t, calcWS, withScript(`turns: [{text: "again"}]`), withState(state), withRoot(e.root))
	threads, err := e2.ed.ListThreads(e2.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(threads) != 2 || threads[0].ThreadID != third.ThreadID || threads[1].ThreadID != first.ThreadID {
		t.Fatalf("threads after restart: %+v", threads)
	}
	if th := threads[1]; th.Title != "fix the operators" || len(th.Runs) != 2 || th.Runs[0] != first.RunID || th.Runs[1] != second.RunID || th.Updated == "" {
		t.Errorf("thread: %+v", th)
	}
	var th struct {
		ThreadID string `json:"threadId"`
		Turns    []struct {
			RunID    string `json:"runId"`
			Question string `json:"question"`
			Answer   string `json:"answer"`
			Outcome  string `json:"outcome"`
			Edits    []struct {
				Hunks []struct {
					State string `json:"state"`
				} `json:"hunks"`
			} `json:"edits"`
		} `json:"turns"`
	}
	if err := e2.ed.GetThread(e2.ctx, first.ThreadID, &th); err != nil {
		t.Fatal(err)
	}
	if len(th.Turns) != 2 || th.Turns[0].Answer != "Fixed Add and Mul." || th.Turns[0].Outcome != "finished" || len(th.Turns[0].Edits) != 1 ||
		len(th.Turns[0].Edits[0].Hunks) != 2 || th.Turns[0].Edits[0].Hunks[0].State != "rejected" || th.Turns[0].Edits[0].Hunks[1].State != "accepted" ||
		th.Turns[1].Question != "what did you change?" {
		t.Errorf("cairn.getThread after restart: %+v", th)
	}
	if err := e2.ed.GetThread(e2.ctx, "thread-none", &th); err == nil || !strings.Contains(err.Error(), "no thread") {
		t.Errorf("getThread of an unknown thread: %v", err)
	}
	// And a follow-up there still sees the first exchange.
	r, err := e2.ed.AskThread(e2.ctx, first.ThreadID, "calc/calc.go", 0, 0, "and now?")
	if err != nil {
		t.Fatal(err)
	}
	e2.waitRun(r.RunID)
	if p := userText(e2.provider.Received()[0]); !strings.Contains(p, "Fixed Add and Mul.") || !strings.Contains(p, "Mul now multiplies") {
		t.Errorf("after restart the follow-up lacks the history:\n%s", p)
	}
}

// userText joins the user messages of a model request.
func userText(req model.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			b.WriteString(m.Content)
		}
	}
	return b.String()
}

func TestCodeActionRunIsAnnounced(t *testing.T) {
	e := newEnv(t, calcWS, withScript(`turns: [{text: "It adds."}]`))
	e.open("calc/calc.go")
	actions, err := e.ed.CodeActions(e.ctx, "calc/calc.go", 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	var explain *lspclient.CodeAction
	for i := range actions {
		if actions[i].Title == server.TitleExplain {
			explain = &actions[i]
		}
	}
	if explain == nil {
		t.Fatalf("no %q action: %+v", server.TitleExplain, actions)
	}
	var res protocol.AskResult
	if err := e.ed.Run(e.ctx, *explain, &res); err != nil {
		t.Fatal(err)
	}
	evs := e.waitRun(res.RunID)
	checkSeq(t, evs)
	st := evs[0]
	if st.ThreadID != res.ThreadID || st.ThreadID == "" || st.Question != server.QuestionExplain || st.URI != e.ed.URI("calc/calc.go") ||
		st.Range == nil || st.Range.Start.Line != 3 || st.Range.End.Line != 5 {
		t.Errorf("started event of a code-action run: %+v", st)
	}
	if last(evs).Answer != "It adds." {
		t.Errorf("answer: %+v", last(evs))
	}
	// A Cairn client shows the answer itself: no document, no message with it.
	for _, m := range e.ed.Messages() {
		if strings.Contains(m, "It adds.") {
			t.Errorf("a Cairn client got the answer as a message: %q", m)
		}
	}
}

func TestPlainClientSeesAnswerAndAcceptsThroughCodeAction(t *testing.T) {
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns), withEditor(lspclient.Options{Plain: true}))
	e.open("calc/calc.go")
	evs := e.waitRun(e.ask("calc/calc.go", 4, 11, "fix the operators"))
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("run: %s", kinds(evs))
	}
	if err := e.ed.WaitUntil(e.ctx, func() bool { return len(e.ed.ShownDocuments()) > 0 }); err != nil {
		t.Fatalf("no window/showDocument: %v", err)
	}
	u, err := url.Parse(e.ed.ShownDocuments()[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(u.Path, e.state) {
		t.Errorf("the answer document %s is not under the state dir %s", u.Path, e.state)
	}
	doc, err := os.ReadFile(u.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fix the operators", "Fixed Add and Mul.", protocol.TitleAcceptEdit, "+\treturn a * b"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("the answer document lacks %q:\n%s", want, doc)
		}
	}

	// No edit actions away from the edited lines.
	away, err := e.ed.CodeActions(e.ctx, "calc/calc.go", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range away {
		if a.Title == protocol.TitleAcceptEdit {
			t.Errorf("an accept action on line 0: %+v", away)
		}
	}
	actions, err := e.ed.CodeActions(e.ctx, "calc/calc.go", 9, 9)
	if err != nil {
		t.Fatal(err)
	}
	var accept *lspclient.CodeAction
	titles := []string{}
	for i := range actions {
		titles = append(titles, actions[i].Title)
		if actions[i].Title == protocol.TitleAcceptEdit {
			accept = &actions[i]
		}
	}
	if accept == nil || !strings.Contains(strings.Join(titles, "|"), protocol.TitleRejectEdit) {
		t.Fatalf("code actions on the edited line: %q", titles)
	}
	// The first action is what a bare RET picks in eglot (none is
	// preferred): it must act on the hunk under the cursor, never on
	// every hunk of the edit.
	if titles[0] != "Accept this hunk of Cairn's edit…" || !strings.Contains(string(actions[0].Command.Arguments[0]), `"hunks":[1]`) {
		t.Fatalf("the first (default) action on the edited line: %q %s", titles, actions[0].Command.Arguments[0])
	}
	// Per hunk: reject the hunk under the cursor (line 9: Mul's).
	var rejectHunk *lspclient.CodeAction
	for i := range actions {
		if actions[i].Title == "Reject this hunk of Cairn's edit…" {
			rejectHunk = &actions[i]
		}
	}
	if rejectHunk == nil || !strings.Contains(string(rejectHunk.Command.Arguments[0]), `"hunks":[1]`) {
		t.Fatalf("no per-hunk reject for hunk 1: %q", titles)
	}
	if err := e.ed.Run(e.ctx, *rejectHunk, nil); err != nil {
		t.Fatal(err)
	}
	// Accepting the edit now applies what is left pending: hunk 0.
	actions, _ = e.ed.CodeActions(e.ctx, "calc/calc.go", 4, 4)
	accept = nil
	for i := range actions {
		if actions[i].Title == protocol.TitleAcceptEdit {
			accept = &actions[i]
		}
	}
	if accept == nil {
		t.Fatalf("no accept action on hunk 0's line: %+v", actions)
	}
	var res protocol.AcceptResult
	if err := e.ed.Run(e.ctx, *accept, &res); err != nil || !res.Applied {
		t.Fatalf("accept through the code action: %+v %v", res, err)
	}
	want := strings.Replace(calcOrig, "return a - b", "return a + b", 1)
	if got := e.read("calc/calc.go"); got != want {
		t.Fatalf("after accept:\n%q", got)
	}
	// Decided: the actions are gone.
	actions, _ = e.ed.CodeActions(e.ctx, "calc/calc.go", 4, 4)
	for _, a := range actions {
		if a.Title == protocol.TitleAcceptEdit {
			t.Errorf("accept action still offered after accept")
		}
	}
}

// An editor that leaves the accepted buffer unsaved (Neovim, Emacs): the
// checkpoint describes the text, so undo and "already undone" are right
// whether or not the buffer was saved.
func TestUnsavedAcceptUndo(t *testing.T) {
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns), withEditor(lspclient.Options{NoSave: true}))
	e.open("calc/calc.go")
	evs := e.waitRun(e.ask("calc/calc.go", 0, 0, "fix the operators"))
	editID := ofKind(evs, protocol.EventEditProposed)[0].EditID
	res, err := e.ed.AcceptHunks(e.ctx, editID, []int{0})
	if err != nil || !res.Applied {
		t.Fatalf("accept: %+v %v", res, err)
	}
	wantOne := strings.Replace(calcOrig, "return a - b", "return a + b", 1)
	if got, _ := e.ed.Text("calc/calc.go"); got != wantOne {
		t.Fatalf("buffer after accept: %q", got)
	}
	if got := e.read("calc/calc.go"); got != calcOrig {
		t.Fatalf("the disk changed although the editor did not save: %q", got)
	}
	// Hunk 1 builds on the unsaved buffer.
	r1, err := e.ed.AcceptHunks(e.ctx, editID, []int{1})
	if err != nil || !r1.Applied {
		t.Fatalf("accept hunk 1 over an unsaved buffer: %+v %v", r1, err)
	}
	if u, err := e.ed.Undo(e.ctx, r1.CheckpointID); err != nil || !u.Applied {
		t.Fatalf("undo hunk 1, unsaved: %+v %v", u, err)
	}
	if got, _ := e.ed.Text("calc/calc.go"); got != wantOne {
		t.Fatalf("buffer after undoing hunk 1: %q", got)
	}
	// Saved, then undone in the editor and saved again: already undone.
	if err := e.ed.Save(e.ctx, "calc/calc.go"); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.Type(e.ctx, "calc/calc.go", calcOrig); err != nil {
		t.Fatal(err)
	}
	if err := e.ed.Save(e.ctx, "calc/calc.go"); err != nil {
		t.Fatal(err)
	}
	u, err := e.ed.Undo(e.ctx, res.CheckpointID)
	if err != nil || u.Applied || len(u.AlreadyUndone) != 1 {
		t.Fatalf("undo after the editor's undo, saved: %+v %v", u, err)
	}
}

// A plain client that cannot open documents gets the answer as a message.
func TestPlainClientWithoutShowDocumentGetsMessage(t *testing.T) {
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns), withEditor(lspclient.Options{Plain: true, NoShowDocument: true}))
	evs := e.waitRun(e.ask("calc/calc.go", 0, 0, "fix the operators"))
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("run: %s", kinds(evs))
	}
	has := func() bool {
		for _, m := range e.ed.Messages() {
			if strings.Contains(m, "Fixed Add and Mul.") && strings.Contains(m, protocol.TitleAcceptEdit) {
				return true
			}
		}
		return false
	}
	if err := e.ed.WaitUntil(e.ctx, has); err != nil {
		t.Fatalf("no window/showMessage with the answer: %v; messages: %q", err, e.ed.Messages())
	}
	if len(e.ed.ShownDocuments()) != 0 {
		t.Errorf("showDocument sent to a client without support")
	}
}

// An edit half reviewed before a restart is reviewed on after it.
func TestHunkReviewContinuesAfterRestart(t *testing.T) {
	state := t.TempDir()
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns), withState(state))
	runID := e.ask("calc/calc.go", 0, 0, "fix the operators")
	evs := e.waitRun(runID)
	editID := ofKind(evs, protocol.EventEditProposed)[0].EditID
	r0, err := e.ed.AcceptHunks(e.ctx, editID, []int{0})
	if err != nil || !r0.Applied {
		t.Fatalf("accept hunk 0: %+v %v", r0, err)
	}

	e2 := newEnv(t, calcWS, withScript(`turns: [{text: "unused"}]`), withState(state), withRoot(e.root))
	view, err := e2.ed.GetEdit(e2.ctx, editID)
	if err != nil {
		t.Fatalf("getEdit after a restart: %v", err)
	}
	if view.State != "pending" || len(view.Hunks) != 2 || view.Hunks[0].State != "accepted" || view.Hunks[1].State != "pending" {
		t.Fatalf("after a restart: state %s hunks %+v", view.State, view.Hunks)
	}
	r1, err := e2.ed.AcceptHunks(e2.ctx, editID, []int{1})
	if err != nil || !r1.Applied {
		t.Fatalf("accept hunk 1 after a restart: %+v %v", r1, err)
	}
	// The new session's client hears of the accept, with a seq above
	// every event the first session's client saw of the run.
	seen := 0
	for _, ev := range e.ed.Events(runID) {
		seen = max(seen, ev.Seq)
	}
	after, err := e2.ed.WaitFor(e2.ctx, runID, func(evs []protocol.RunEvent) bool { return len(ofKind(evs, protocol.EventCheckpoint)) > 0 })
	if err != nil {
		t.Fatalf("no checkpoint event after accepting in the new session: %v", err)
	}
	if ev := ofKind(after, protocol.EventCheckpoint)[0]; ev.CheckpointID != r1.CheckpointID || ev.Seq <= seen {
		t.Errorf("checkpoint event %+v: want checkpoint %s with a seq above %d", ev, r1.CheckpointID, seen)
	}
	both := strings.Replace(strings.Replace(calcOrig, "return a + b", "return a * b", 1), "return a - b", "return a + b", 1)
	if got := e2.read("calc/calc.go"); got != both {
		t.Fatalf("after accepting hunk 1:\n%q", got)
	}
	if u, err := e2.ed.Undo(e2.ctx, r1.CheckpointID); err != nil || !u.Applied {
		t.Fatalf("undo: %+v %v", u, err)
	}
	if got := e2.read("calc/calc.go"); got != strings.Replace(calcOrig, "return a - b", "return a + b", 1) {
		t.Fatalf("after undoing hunk 1:\n%q", got)
	}
	// The first session's accept is undone from the second session too.
	if u, err := e2.ed.Undo(e2.ctx, r0.CheckpointID); err != nil || !u.Applied {
		t.Fatalf("undo of the first session's accept: %+v %v", u, err)
	}
	if got := e2.read("calc/calc.go"); got != calcOrig {
		t.Fatalf("after both undos:\n%q", got)
	}
	view, _ = e2.ed.GetEdit(e2.ctx, editID)
	if !view.Hunks[0].Undone || !view.Hunks[1].Undone {
		t.Errorf("hunks not marked undone: %+v", view.Hunks)
	}
}

// A run still going is told, before its next model call, that the user
// rejected one of its hunks.
func TestRunningRunIsToldOfRejectedHunk(t *testing.T) {
	script := `
turns:
  - toolCalls:
      - name: edit_file
        arguments:
          path: calc/calc.go
          oldText: "return a - b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a + b"
          newText: "return a + b\n}\n\n// Mul multiplies.\nfunc Mul(a, b int) int {\n\treturn a * b"
  - toolCalls:
      - name: run_command
        arguments: {command: "curl -s http://127.0.0.1:1/"}
  - text: "ok"
`
	prompted, decided := make(chan struct{}), make(chan struct{})
	var once bool
	approve := func(msg string, actions []string) string {
		if !once {
			once = true
			close(prompted)
			<-decided
		}
		return protocol.ActionDeny
	}
	e := newEnv(t, calcWS, withScript(script), withEditor(lspclient.Options{Approve: approve}))
	run := e.ask("calc/calc.go", 0, 0, "fix the operators")
	select {
	case <-prompted:
	case <-e.ctx.Done():
		t.Fatal("no approval prompt")
	}
	editID := ofKind(e.ed.Events(run), protocol.EventEditProposed)[0].EditID
	if err := e.ed.RejectHunks(e.ctx, editID, []int{1}); err != nil {
		t.Fatal(err)
	}
	close(decided)
	e.waitRun(run)
	reqs := e.provider.Received()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if p := userText(reqs[2]); !strings.Contains(p, "The user rejected 1 hunk of edit "+editID) || !strings.Contains(p, "+\treturn a * b") {
		t.Errorf("the third request lacks the rejection note:\n%s", p)
	}
	if p := userText(reqs[1]); strings.Contains(p, "rejected") {
		t.Errorf("the note came too early:\n%s", p)
	}
}
