package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/contextengine"
	"github.com/cairn-dev/cairn/redact"
)

func TestThreadStorePersistsAndValidates(t *testing.T) {
	dir := t.TempDir()
	ts := newThreadStore(dir, nil)
	id, hist, err := ts.begin("", "thread-a", "run-1", contextengine.Turn{Question: "first   question\nspanning lines"})
	if err != nil || id != "thread-a" || len(hist) != 0 {
		t.Fatalf("begin: %q %v %v", id, hist, err)
	}
	ts.update("run-1", func(turn *contextengine.Turn) { turn.Answer, turn.Outcome = "an answer", "finished" })
	if _, hist, err = ts.begin("thread-a", "unused", "run-2", contextengine.Turn{Question: "second"}); err != nil || len(hist) != 1 || hist[0].Answer != "an answer" {
		t.Fatalf("follow-up history: %+v %v", hist, err)
	}
	if _, _, err := ts.begin("", "thread-b", "run-3", contextengine.Turn{Question: "other"}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"../x", "a/b", ".hidden", "", strings.Repeat("x", 81)} {
		if bad == "" {
			continue // empty starts a new thread
		}
		if _, _, err := ts.begin(bad, "n", "run-x", contextengine.Turn{Question: "q"}); err == nil || !strings.Contains(err.Error(), "invalid thread id") {
			t.Errorf("thread id %q: %v", bad, err)
		}
	}
	if _, _, err := ts.begin("thread-zzz", "n", "run-x", contextengine.Turn{Question: "q"}); err == nil || !strings.Contains(err.Error(), "no thread") {
		t.Errorf("unknown thread: %v", err)
	}

	// A corrupt file and a stray name next to the threads are skipped.
	if err := os.WriteFile(filepath.Join(dir, "threads", "thread-bad.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "threads", "..json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	again := newThreadStore(dir, nil)
	list := again.list()
	if len(list) != 2 || list[0].ThreadID != "thread-b" || list[1].ThreadID != "thread-a" {
		t.Fatalf("reloaded list: %+v", list)
	}
	if a := list[1]; a.Title != "first question spanning lines" || len(a.Runs) != 2 || a.Runs[0] != "run-1" {
		t.Errorf("thread a: %+v", a)
	}
	// A resumed run finds its thread and the turns before it.
	if id, hist := again.historyOf("run-2"); id != "thread-a" || len(hist) != 1 || hist[0].Question != "first   question\nspanning lines" {
		t.Errorf("historyOf: %q %+v", id, hist)
	}
	if _, err := os.Stat(filepath.Join(dir, "threads", "thread-bad.json")); err != nil {
		t.Errorf("a corrupt thread file was removed: %v", err)
	}
}

// TestThreadsHoldNoSecrets (issue 24 finding 8): a question, an answer, an
// outcome and an edit's diff with a token are stored masked, in memory and
// on disk; a file written before threads were redacted is masked as it is
// loaded.
func TestThreadsHoldNoSecrets(t *testing.T) {
	const token = "ghp_R8bXq2Lz7Kd4Vn9Wm3Tc6Yh1Jp5Fs0Ga8Ue2"
	red := func(string) *redact.Redactor { return redact.Default() }
	dir := t.TempDir()
	ts := newThreadStore(dir, red)
	if _, _, err := ts.begin("", "thread-a", "run-1", contextengine.Turn{Question: "is " + token + " valid?"}); err != nil {
		t.Fatal(err)
	}
	ts.update("run-1", func(turn *contextengine.Turn) {
		turn.Answer, turn.Outcome = "yes, "+token, "failed: "+token
		turn.Edits = []contextengine.TurnEdit{{EditID: "edit-1", Hunks: []contextengine.TurnHunk{{Path: "a.go", Diff: "+const t = \"" + token + "\""}}}}
	})
	b, err := os.ReadFile(filepath.Join(dir, "threads", "thread-a.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), token) || !strings.Contains(string(b), "[REDACTED:") {
		t.Errorf("the thread file holds the token:\n%s", b)
	}
	if th, _ := ts.get("thread-a"); strings.Contains(th.Title+th.Turns[0].Answer+th.Turns[0].Edits[0].Hunks[0].Diff, token) {
		t.Errorf("the thread in memory holds the token: %+v", th)
	}
	// A file of an older version, with the token in clear.
	old := `{"threadId":"thread-old","title":"` + token + `","turns":[{"runId":"run-9","question":"q","answer":"` + token + `"}]}`
	if err := os.WriteFile(filepath.Join(dir, "threads", "thread-old.json"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if list := newThreadStore(dir, red).list(); len(list) != 2 {
		t.Fatalf("reloaded %+v", list)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "threads", "thread-old.json")); strings.Contains(string(b), token) {
		t.Errorf("the older thread file still holds the token:\n%s", b)
	}
}
