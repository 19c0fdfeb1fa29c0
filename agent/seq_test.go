package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/workspace"
)

// diskApplier applies workspace edits to the files on disk, as an editor
// that saves at once would (plain changes, no resource operations).
type diskApplier struct{}

func (diskApplier) SupportsDocumentChanges() bool { return false }

func (diskApplier) ApplyEdit(_ context.Context, _ string, we protocol.WorkspaceEdit) (protocol.ApplyWorkspaceEditResult, error) {
	for uri, edits := range we.Changes {
		abs, err := workspace.URIPath(uri)
		if err != nil {
			return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}, nil
		}
		cur, err := os.ReadFile(abs)
		if err != nil {
			return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}, nil
		}
		next, err := protocol.ApplyTextEdits(string(cur), edits)
		if err != nil {
			return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}, nil
		}
		if err := os.WriteFile(abs, []byte(next), 0o644); err != nil {
			return protocol.ApplyWorkspaceEditResult{FailureReason: err.Error()}, nil
		}
	}
	return protocol.ApplyWorkspaceEditResult{Applied: true}, nil
}

// threeFileEdits proposes an edit of b.txt in two hunks, then one of c.txt
// and one of d.txt, then answers.
const threeFileEdits = `turns:
  - toolCalls: [{name: edit_file, arguments: {path: b.txt, oldText: "one\ntwo\nthree\nfour\nfive\n", newText: "ONE\ntwo\nthree\nfour\nFIVE\n"}}]
  - toolCalls: [{name: edit_file, arguments: {path: c.txt, oldText: "x\n", newText: "y\n"}}]
  - toolCalls: [{name: edit_file, arguments: {path: d.txt, oldText: "p\n", newText: "q\n"}}]
  - text: "Changed the files."
`

// After a run has ended, each accept is announced by a checkpoint event of
// that run; editors drop an event whose seq they have seen, so each must
// take a seq above every earlier one of the run — through later accepts,
// undos between them, and (in the journal) a restart of the server.
func TestAcceptsAfterTheEndTakeIncreasingSeq(t *testing.T) {
	state := t.TempDir()
	m, _ := newManager(t, threeFileEdits, state)
	root := m.ws.Root()
	for name, text := range map[string]string{"b.txt": "one\ntwo\nthree\nfour\nfive\n", "c.txt": "x\n", "d.txt": "p\n"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	events := make(chan protocol.RunEvent, 100)
	r, err := m.Start(context.Background(), AskRequest{Question: "change the files"}, func(ev protocol.RunEvent) { events <- ev })
	if err != nil {
		t.Fatal(err)
	}
	var proposed []protocol.RunEvent
	var end protocol.RunEvent
	for end.Kind == "" {
		select {
		case ev := <-events:
			switch ev.Kind {
			case protocol.EventEditProposed:
				proposed = append(proposed, ev)
			case protocol.EventFinished, protocol.EventFailed, protocol.EventCancelled:
				end = ev
			}
		case <-time.After(time.Minute):
			t.Fatal("the run did not end")
		}
	}
	if end.Kind != protocol.EventFinished || len(proposed) != 3 {
		t.Fatalf("run ended %s (%s) after %d proposed edits, want finished after 3", end.Kind, end.Error, len(proposed))
	}
	<-r.Done()
	// The run is retired just after its goroutine ends: the accepts below
	// must meet the ended run, not the running one.
	deadline := time.Now().Add(time.Minute)
	for m.liveRuns() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the ended run was not retired")
		}
		time.Sleep(time.Millisecond)
	}

	bEdit, cEdit, dEdit := proposed[0].EditID, proposed[1].EditID, proposed[2].EditID
	lastSeq := end.Seq
	checkpointEvent := func(what string) protocol.RunEvent {
		t.Helper()
		select {
		case ev := <-events:
			if ev.Kind != protocol.EventCheckpoint || ev.RunID != r.ID {
				t.Fatalf("%s: got a %s event of run %s, want a checkpoint of %s", what, ev.Kind, ev.RunID, r.ID)
			}
			if ev.Seq <= lastSeq {
				t.Fatalf("%s: checkpoint event has seq %d, not above the run's previous event's %d", what, ev.Seq, lastSeq)
			}
			lastSeq = ev.Seq
			return ev
		case <-time.After(time.Minute):
			t.Fatalf("%s: no checkpoint event", what)
		}
		return protocol.RunEvent{}
	}
	accept := func(what, editID string, hunks []int) string {
		t.Helper()
		res, err := m.AcceptHunks(context.Background(), editID, hunks, diskApplier{})
		if err != nil || !res.Applied {
			t.Fatalf("%s: %+v %v", what, res, err)
		}
		if ev := checkpointEvent(what); ev.CheckpointID != res.CheckpointID {
			t.Fatalf("%s: checkpoint event names %s, the accept made %s", what, ev.CheckpointID, res.CheckpointID)
		}
		return res.CheckpointID
	}

	accept("accepting hunk 0 of b.txt", bEdit, []int{0})
	cp := accept("accepting c.txt", cEdit, nil)
	if u, err := m.Undo(context.Background(), cp, false, diskApplier{}); err != nil || !u.Applied {
		t.Fatalf("undo of c.txt: %+v %v", u, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "c.txt")); string(b) != "x\n" {
		t.Fatalf("c.txt after undo: %q", b)
	}
	accept("accepting hunk 1 of b.txt after an undo", bEdit, []int{1})
	if b, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(b) != "ONE\ntwo\nthree\nfour\nFIVE\n" {
		t.Fatalf("b.txt after both hunks: %q", b)
	}

	// A new server on the same state: the ended run is read back from its
	// journal, and the accept journals a seq that follows every one the run
	// used (the record holds the seq of the event sent before it).
	m2, _ := newManager(t, "turns: []", state)
	m2.ws = m.ws
	res, err := m2.Accept(context.Background(), dEdit, diskApplier{})
	if err != nil || !res.Applied {
		t.Fatalf("accepting d.txt after a restart: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "d.txt")); string(b) != "q\n" {
		t.Fatalf("d.txt after accept: %q", b)
	}
	recs, _, err := checkpoint.ReadJournal(journalPath(state, r.ID))
	if err != nil {
		t.Fatalf("reading the journal: %v", err)
	}
	var last checkpoint.Record
	for _, rec := range recs {
		if rec.Type == checkpoint.RecEditState {
			last = rec
		}
	}
	if !bytes.Contains(last.Data, []byte(res.CheckpointID)) {
		t.Fatalf("the journal's last edit record is not the accept after the restart: %s", last.Data)
	}
	if last.EventSeq < lastSeq {
		t.Fatalf("after a restart the accept journaled seq %d: its event would repeat seq %d, already sent", last.EventSeq, last.EventSeq+1)
	}
}
