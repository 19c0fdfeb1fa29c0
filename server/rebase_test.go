package server_test

import (
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
)

// Proposals follow the buffer: the user types into a file while a proposed
// edit of it waits; hunks the typing does not overlap move with the text
// and stay acceptable, overlapping ones become conflicting.

// proposeTwoHunks opens calc/calc.go, runs the two-hunk script and returns
// the run and edit ids.
func proposeTwoHunks(t *testing.T, e *env) (string, string) {
	t.Helper()
	e.open("calc/calc.go")
	runID := e.ask("calc/calc.go", 4, 11, "fix the operators")
	evs := e.waitRun(runID)
	return runID, ofKind(evs, protocol.EventEditProposed)[0].EditID
}

// waitUpdated waits for the n-th editUpdated event of a run.
func (e *env) waitUpdated(runID string, n int) {
	e.t.Helper()
	if _, err := e.ed.WaitFor(e.ctx, runID, func(evs []protocol.RunEvent) bool {
		return len(ofKind(evs, protocol.EventEditUpdated)) >= n
	}); err != nil {
		e.t.Fatalf("no editUpdated event #%d: %v", n, err)
	}
}

func (e *env) edit(id string) protocol.GetEditResult {
	e.t.Helper()
	v, err := e.ed.GetEdit(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

func (e *env) buffer(rel string) string {
	e.t.Helper()
	s, err := e.ed.Text(rel)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func lineRange(line int) protocol.Range {
	return protocol.Range{Start: protocol.Position{Line: uint32(line)}, End: protocol.Position{Line: uint32(line)}}
}

func TestHunksFollowEditsAboveBetweenAndBelow(t *testing.T) {
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns), withEditor(lspclient.Options{NoSave: true}))
	runID, editID := proposeTwoHunks(t, e)

	// Above both hunks, between them, and below them.
	if err := e.ed.EditRange(e.ctx, "calc/calc.go", lineRange(1), "// Package calc calculates.\n"); err != nil {
		t.Fatal(err)
	}
	e.waitUpdated(runID, 1)
	if err := e.ed.EditRange(e.ctx, "calc/calc.go", lineRange(8), "// between\n"); err != nil {
		t.Fatal(err)
	}
	e.waitUpdated(runID, 2)
	end := strings.Count(e.buffer("calc/calc.go"), "\n")
	if err := e.ed.EditRange(e.ctx, "calc/calc.go", lineRange(end), "\n// Below.\n"); err != nil {
		t.Fatal(err)
	}
	e.waitUpdated(runID, 3)
	typed := e.buffer("calc/calc.go")

	v := e.edit(editID)
	if len(v.Hunks) != 2 || v.Hunks[0].State != protocol.HunkPending || v.Hunks[1].State != protocol.HunkPending {
		t.Fatalf("after typing outside the hunks, both stay pending: %+v", v.Hunks)
	}
	if h0, h1 := v.Hunks[0], v.Hunks[1]; h0.StartLine != 5 || h0.EndLine != 6 || h1.StartLine != 11 || h1.EndLine != 12 {
		t.Errorf("hunk lines did not move with the text: %+v / %+v", h0, h1)
	}
	if v.Files[0].Current != typed {
		t.Errorf("the view's current text is not the buffer:\n%q", v.Files[0].Current)
	}
	mulFixed := strings.Replace(typed, "\treturn a + b\n", "\treturn a * b\n", 1)
	wantAll := strings.Replace(mulFixed, "return a - b", "return a + b", 1)
	if v.Files[0].Proposed != wantAll {
		t.Errorf("the proposed text drops or moves the user's text:\n%q\nwant\n%q", v.Files[0].Proposed, wantAll)
	}
	if !strings.Contains(v.Diff, "+\treturn a * b") || strings.Contains(v.Diff, "-// between") || strings.Contains(v.Diff, "-// Package calc") {
		t.Errorf("the diff shows the user's text as deleted:\n%s", v.Diff)
	}

	// Accept the second hunk only: the buffer gets exactly that change.
	res, err := e.ed.AcceptHunks(e.ctx, editID, []int{1})
	if err != nil || !res.Applied {
		t.Fatalf("accepting a rebased hunk: %+v %v", res, err)
	}
	if got := e.buffer("calc/calc.go"); got != mulFixed {
		t.Fatalf("buffer after accepting hunk 1:\n%q\nwant\n%q", got, mulFixed)
	}
	if disk := e.read("calc/calc.go"); disk != calcOrig {
		t.Errorf("the server wrote the file itself: %q", disk)
	}
	// Then the first: still acceptable after the accept moved the text.
	if res, err := e.ed.AcceptHunks(e.ctx, editID, []int{0}); err != nil || !res.Applied {
		t.Fatalf("accepting hunk 0 after hunk 1: %+v %v", res, err)
	}
	if got := e.buffer("calc/calc.go"); got != wantAll {
		t.Fatalf("buffer after both:\n%q\nwant\n%q", got, wantAll)
	}
	// The undo of the first accept still puts back exactly its hunk once
	// the later one is undone.
	if v := e.edit(editID); v.State != "accepted" {
		t.Errorf("edit state %s", v.State)
	}
}

func TestOverlappingHunkConflictsAndRedoMerges(t *testing.T) {
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns), withEditor(lspclient.Options{NoSave: true}))
	runID, editID := proposeTwoHunks(t, e)

	// The user comments the line hunk 0 changes (line 5, 1-based).
	r := protocol.Range{Start: protocol.Position{Line: 4, Character: 13}, End: protocol.Position{Line: 4, Character: 13}}
	if err := e.ed.EditRange(e.ctx, "calc/calc.go", r, " // keep"); err != nil {
		t.Fatal(err)
	}
	e.waitUpdated(runID, 1)
	typed := e.buffer("calc/calc.go")
	if !strings.Contains(typed, "\treturn a - b // keep\n") {
		t.Fatalf("typing went wrong: %q", typed)
	}
	v := e.edit(editID)
	if v.Hunks[0].State != protocol.HunkConflict || v.Hunks[1].State != protocol.HunkPending || v.State != "pending" {
		t.Fatalf("want hunk 0 conflicting, hunk 1 pending: %s %+v", v.State, v.Hunks)
	}
	if !strings.Contains(v.Files[0].Proposed, "// keep") || strings.Contains(v.Diff, "-\treturn a - b // keep") {
		t.Errorf("the view would show the user's text as deleted:\n%s", v.Diff)
	}

	_, err := e.ed.AcceptHunks(e.ctx, editID, []int{0})
	if err == nil {
		t.Fatal("accepting a conflicting hunk succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "calc/calc.go line 5") || strings.Contains(msg, editID) {
		t.Errorf("the refusal must name the file and line, not the id: %s", msg)
	}

	// Accept with no hunks named takes the pending one and leaves the conflict.
	if res, err := e.ed.Accept(e.ctx, editID); err != nil || !res.Applied {
		t.Fatalf("accepting the pending hunks: %+v %v", res, err)
	}
	want := strings.Replace(typed, "\treturn a + b\n}\n", "\treturn a * b\n}\n", 1)
	if got := e.buffer("calc/calc.go"); got != want {
		t.Fatalf("buffer:\n%q\nwant\n%q", got, want)
	}
	if v := e.edit(editID); v.State != "pending" || v.Hunks[0].State != protocol.HunkConflict {
		t.Fatalf("the conflicting hunk must stay undecided: %s %+v", v.State, v.Hunks)
	}

	// Redo: the user's comment and the model's operator touch different
	// characters, so the hunk is merged and acceptable again.
	var redo protocol.RedoResult
	if err := e.ed.Execute(e.ctx, protocol.CommandRedoHunks, protocol.EditRef{EditID: editID, Hunks: []int{0}}, &redo); err != nil {
		t.Fatal(err)
	}
	if len(redo.Recomputed) != 1 || len(redo.Conflicting) != 0 || redo.RunID != "" {
		t.Fatalf("redo: %+v", redo)
	}
	v = e.edit(editID)
	if v.Hunks[0].State != protocol.HunkPending || !strings.Contains(v.Hunks[0].Diff, "+\treturn a + b // keep") {
		t.Fatalf("after redo: %+v", v.Hunks[0])
	}
	if res, err := e.ed.AcceptHunks(e.ctx, editID, []int{0}); err != nil || !res.Applied {
		t.Fatalf("accepting the redone hunk: %+v %v", res, err)
	}
	want = strings.Replace(want, "\treturn a - b // keep\n", "\treturn a + b // keep\n", 1)
	if got := e.buffer("calc/calc.go"); got != want {
		t.Fatalf("buffer after the redone hunk:\n%q\nwant\n%q", got, want)
	}
}

func TestConflictClearsWhenUserUndoesTyping(t *testing.T) {
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns), withEditor(lspclient.Options{NoSave: true}))
	runID, editID := proposeTwoHunks(t, e)
	orig := e.buffer("calc/calc.go")
	if err := e.ed.Type(e.ctx, "calc/calc.go", strings.Replace(orig, "return a - b", "return b - a", 1)); err != nil {
		t.Fatal(err)
	}
	e.waitUpdated(runID, 1)
	if v := e.edit(editID); v.Hunks[0].State != protocol.HunkConflict {
		t.Fatalf("want a conflict: %+v", v.Hunks)
	}
	if err := e.ed.Type(e.ctx, "calc/calc.go", orig); err != nil {
		t.Fatal(err)
	}
	e.waitUpdated(runID, 2)
	if v := e.edit(editID); v.Hunks[0].State != protocol.HunkPending || v.Hunks[1].State != protocol.HunkPending {
		t.Fatalf("the user's undo should clear the conflict: %+v", v.Hunks)
	}
	if res, err := e.ed.Accept(e.ctx, editID); err != nil || !res.Applied {
		t.Fatalf("accept: %+v %v", res, err)
	}
	both := strings.Replace(strings.Replace(calcOrig, "return a + b", "return a * b", 1), "return a - b", "return a + b", 1)
	if got := e.buffer("calc/calc.go"); got != both {
		t.Fatalf("buffer:\n%q", got)
	}
}

func TestRedoAsksTheModelWhenTheChangesClash(t *testing.T) {
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns+"  - text: \"Redone.\"\n"), withEditor(lspclient.Options{NoSave: true}))
	runID, editID := proposeTwoHunks(t, e)
	orig := e.buffer("calc/calc.go")
	if err := e.ed.Type(e.ctx, "calc/calc.go", strings.Replace(orig, "return a - b", "return a ^ b", 1)); err != nil {
		t.Fatal(err)
	}
	e.waitUpdated(runID, 1)
	var redo protocol.RedoResult
	if err := e.ed.Execute(e.ctx, protocol.CommandRedoHunks, protocol.EditRef{EditID: editID}, &redo); err != nil {
		t.Fatal(err)
	}
	if len(redo.Conflicting) != 1 || redo.Conflicting[0] != 0 || redo.RunID == "" {
		t.Fatalf("redo should ask the model: %+v", redo)
	}
	evs := e.waitRun(redo.RunID)
	if st := ofKind(evs, protocol.EventStarted); len(st) != 1 || !strings.Contains(st[0].Question, "calc/calc.go, now lines 5-5") {
		t.Fatalf("the redo question should name the file and lines: %+v", st)
	}
	v := e.edit(editID)
	if v.Hunks[0].State != protocol.HunkRejected || v.Hunks[1].State != protocol.HunkPending {
		t.Fatalf("the redone hunk is superseded, the other stays: %+v", v.Hunks)
	}
}

// TestEditViewSeqOrdersConcurrentAnswers fetches an edit concurrently while
// the user types into its file, as a client does on each editUpdated: an
// answer with a larger seq is never an older state of the edit, so a client
// that keeps the largest ends on the buffer as typed.
func TestEditViewSeqOrdersConcurrentAnswers(t *testing.T) {
	e := newEnv(t, calcWS, withScript("turns:"+twoHunkTurns), withEditor(lspclient.Options{NoSave: true}))
	runID, editID := proposeTwoHunks(t, e)

	const keys = 5
	answers := make(chan protocol.GetEditResult, 4*keys)
	var wg sync.WaitGroup
	for i := 0; i < keys; i++ {
		if err := e.ed.EditRange(e.ctx, "calc/calc.go", lineRange(0), "x"); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 3; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if v, err := e.ed.GetEdit(e.ctx, editID); err == nil {
					answers <- v
				}
			}()
		}
	}
	wg.Wait()
	e.waitUpdated(runID, keys)
	answers <- e.edit(editID)
	close(answers)

	var got []protocol.GetEditResult
	seen := map[uint64]bool{}
	for v := range answers {
		if seen[v.Seq] {
			t.Fatalf("two answers share seq %d", v.Seq)
		}
		seen[v.Seq] = true
		got = append(got, v)
	}
	sort.Slice(got, func(i, j int) bool { return got[i].Seq < got[j].Seq })
	for i := 1; i < len(got); i++ {
		// Typing only adds "x"s: a newer state never has fewer.
		if a, b := strings.Count(got[i-1].Files[0].Proposed, "x"), strings.Count(got[i].Files[0].Proposed, "x"); b < a {
			t.Fatalf("seq %d shows %d typed characters, the older seq %d shows %d", got[i].Seq, b, got[i-1].Seq, a)
		}
	}
	if last := got[len(got)-1]; !strings.HasPrefix(last.Files[0].Proposed, strings.Repeat("x", keys)) {
		t.Fatalf("the answer with the largest seq is not the buffer as typed:\n%q", last.Files[0].Proposed)
	}
}
