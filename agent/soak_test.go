package agent

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
)

// TestSoakMemoryStaysFlat answers 1,000 scripted questions in one manager
// (each run reads a file, then answers) and checks that the live heap
// after the last run is within 10% of the heap after warm-up: a finished
// run's conversation, events and drafts must leave memory (its journal
// keeps them), however long the session.
func TestSoakMemoryStaysFlat(t *testing.T) {
	const warmup, total = 200, 1000
	m, _ := newManager(t, "turns: []", memDir(t))
	script, err := model.ParseScript([]byte(`turns:
  - toolCalls: [{name: read_file, arguments: {path: a.go}}]
  - text: "A returns 1."
`))
	if err != nil {
		t.Fatal(err)
	}
	var warm, warmRSS uint64
	var lastID string
	for i := 1; i <= total; i++ {
		cfg := m.Config()
		cfg.Provider = model.NewScripted(script) // a fresh model per question, as a new session's would be
		m.SetConfig(cfg)
		events := make(chan protocol.RunEvent, 64)
		r, err := m.Start(context.Background(), AskRequest{Question: fmt.Sprintf("what does A return? (%d)", i)},
			func(ev protocol.RunEvent) { events <- ev })
		if err != nil {
			t.Fatal(err)
		}
		waitEvent(t, events, protocol.EventFinished)
		<-r.Done()
		lastID = r.ID
		if i == warmup {
			warm, warmRSS = liveHeap(), rss()
		}
	}
	// Retirement runs just after the run's goroutine ends.
	for n := 0; n < 1000 && m.liveRuns() > 0; n++ {
		runtime.Gosched()
	}
	end, endRSS := liveHeap(), rss()
	t.Logf("live heap after %d runs %d KiB, after %d runs %d KiB (%+.1f%%); RSS %d → %d KiB",
		warmup, warm>>10, total, end>>10, 100*(float64(end)/float64(warm)-1), warmRSS>>10, endRSS>>10)
	if float64(end) > 1.10*float64(warm) {
		t.Errorf("the live heap grew from %d to %d bytes over %d runs (more than 10%%)", warm, end, total-warmup)
	}
	// An ended run is still found, from its journal.
	r, ok := m.Run(lastID)
	if !ok || r.State() != StateFinished || !strings.Contains(r.Question, "(1000)") {
		t.Errorf("the last run after it ended: %v %+v", ok, r)
	}
	if got := len(m.Runs()); got != recentRuns {
		t.Errorf("Runs lists %d runs, want the %d most recent", got, recentRuns)
	}
}

// memDir is a state directory in memory when the machine has one: the
// runs' journals sync every record, and this test is about memory, not disks.
func memDir(t *testing.T) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "cairn-soak-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

func (m *Manager) liveRuns() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.runs)
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// rss is the process's resident set (Linux; 0 elsewhere), for the log.
func rss() uint64 { return testenv.ProcStatus()["VmRSS"] << 10 }
