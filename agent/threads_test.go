package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/contextengine"
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
