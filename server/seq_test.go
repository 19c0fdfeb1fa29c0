package server_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/protocol"
)

// Editors drop a run event whose seq they have seen: the checkpoint events
// of accepts made after the run ended (hunk by hunk, file by file) must
// each take a seq above every earlier event of the run.
func TestAcceptsAfterTheRunEndedHaveIncreasingSeq(t *testing.T) {
	ws := calcWS + "-- calc/doc.go --\n// Package calc adds.\npackage calc\n"
	script := "turns:" + strings.Replace(twoHunkTurns, `  - text: "Fixed Add and Mul."`, `  - toolCalls:
      - name: edit_file
        arguments: {path: calc/doc.go, oldText: "adds.", newText: "adds and multiplies."}
  - text: "Fixed Add and Mul."`, 1)
	e := newEnv(t, ws, withScript(script))
	e.open("calc/calc.go")
	run := e.ask("calc/calc.go", 0, 0, "fix the operators and the doc")
	evs := e.waitRun(run)
	checkSeq(t, evs)
	proposed := ofKind(evs, protocol.EventEditProposed)
	if k := last(evs).Kind; k != protocol.EventFinished || len(proposed) != 2 {
		t.Fatalf("run ended %s with %d proposed edits, want finished with 2: %s", k, len(proposed), kinds(evs))
	}
	calcEdit, docEdit := proposed[0].EditID, proposed[1].EditID

	var cps []string
	for _, a := range []struct {
		edit  string
		hunks []int
	}{{calcEdit, []int{0}}, {docEdit, nil}, {calcEdit, []int{1}}} {
		res, err := e.ed.AcceptHunks(e.ctx, a.edit, a.hunks)
		if err != nil || !res.Applied {
			t.Fatalf("accept %s %v: %+v %v", a.edit, a.hunks, res, err)
		}
		cps = append(cps, res.CheckpointID)
	}
	if got := e.read("calc/doc.go"); got != "// Package calc adds and multiplies.\npackage calc\n" {
		t.Errorf("calc/doc.go after accept: %q", got)
	}
	if got, want := e.read("calc/calc.go"), strings.Replace(strings.Replace(calcOrig, "a + b", "a * b", 1), "a - b", "a + b", 1); got != want {
		t.Errorf("calc/calc.go after both hunks:\n%q\nwant\n%q", got, want)
	}
	all, err := e.ed.WaitFor(e.ctx, run, func(evs []protocol.RunEvent) bool { return len(ofKind(evs, protocol.EventCheckpoint)) == len(cps) })
	if err != nil {
		t.Fatal(err)
	}
	prev := 0
	for i, ev := range all {
		if ev.Seq <= prev {
			t.Fatalf("event %d (%s %s) has seq %d, not above the previous event's %d: %s", i, ev.Kind, ev.CheckpointID, ev.Seq, prev, kinds(all))
		}
		prev = ev.Seq
	}
	for i, ev := range ofKind(all, protocol.EventCheckpoint) {
		if ev.CheckpointID != cps[i] {
			t.Errorf("checkpoint event %d names %s, accept %d made %s", i, ev.CheckpointID, i, cps[i])
		}
	}
}
