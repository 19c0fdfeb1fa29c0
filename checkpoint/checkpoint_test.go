package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestJournalIgnoresTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs", "r1", "journal.jsonl")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if _, err := j.Append(RecToolIntent, i, i, map[string]int{"n": i}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	// A crash mid-write leaves half a record.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":4,"type":"tool_res`)
	f.Close()
	recs, torn, err := ReadJournal(path)
	if err != nil || !torn || len(recs) != 3 || recs[2].Seq != 3 {
		t.Fatalf("recs=%d torn=%v err=%v", len(recs), torn, err)
	}
	// Reopening cuts the torn tail and continues the sequence.
	j, err = OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := j.Append(RecToolResult, 3, 3, nil)
	j.Close()
	if err != nil || r.Seq != 4 {
		t.Fatalf("append after reopen: %+v %v", r, err)
	}
	recs, torn, _ = ReadJournal(path)
	if torn || len(recs) != 4 {
		t.Fatalf("after reopen: %d records, torn=%v", len(recs), torn)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("journal mode %v, want owner-only", fi.Mode().Perm())
	}
}

func TestCheckpointPlanUndo(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s.Create("run-1", "edit-1", 2, []Change{
		{Rel: "a.go", Before: "old\n", BeforeExists: true, After: "new\n", AfterExists: true},
		{Rel: "b.go", After: "created\n", AfterExists: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cp.Files[0].Patch, "-old") || cp.Status != StatusPending {
		t.Fatalf("checkpoint: %+v", cp)
	}
	files := map[string]string{"a.go": "new\n", "b.go": "created\n"}
	read := func(rel string) (string, bool, error) { v, ok := files[rel]; return v, ok, nil }
	restores, conflicts, err := s.PlanUndo(cp, read)
	if err != nil || len(conflicts) != 0 || len(restores) != 2 {
		t.Fatalf("clean plan: %+v %+v %v", restores, conflicts, err)
	}
	if restores[0].Target != "old\n" || restores[1].TargetExists {
		t.Errorf("restores: %+v", restores)
	}
	files["a.go"] = "new\nuser typed\n"
	restores, conflicts, _ = s.PlanUndo(cp, read)
	if len(conflicts) != 1 || conflicts[0].Rel != "a.go" || len(restores) != 1 {
		t.Fatalf("conflict plan: %+v %+v", restores, conflicts)
	}
	if err := s.SetStatus(cp.ID, StatusApplied); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get(cp.ID)
	if got.Status != StatusApplied {
		t.Errorf("status %s", got.Status)
	}
	if _, err := s.Get("../x"); err == nil {
		t.Error("a path-like id must be refused")
	}
	// A corrupted blob is detected, never restored.
	blob := s.Blobs.path(cp.Files[0].BeforeHash)
	os.WriteFile(blob, []byte("tampered"), 0o600)
	files["a.go"] = "new\n"
	if _, _, err := s.PlanUndo(cp, read); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Errorf("tampered blob: %v", err)
	}
}

func TestJournalIsHeldByOneProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file description: a second open in this process
	// stands in for another process.
	if _, err := OpenJournal(path); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("second open: %v", err)
	}
	if !JournalBusy(path) {
		t.Error("JournalBusy says free while it is held")
	}
	j.Close()
	if JournalBusy(path) {
		t.Error("JournalBusy says held after close")
	}
}
