package agent

import (
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/protocol"
)

// An accept sends its checkpoint event from the command's goroutine while the
// run's loop streams; the editor drops an event whose seq is not above the
// last it saw, so emit must see a run's events in seq order.
func TestSendEmitsInSeqOrderAcrossGoroutines(t *testing.T) {
	entered := make(chan struct{})
	second := make(chan struct{})
	var mu sync.Mutex
	var got []int
	r := &Run{ID: "run-order", line: newEventLine(0, nil)}
	r.line.emit = func(ev protocol.RunEvent) {
		if ev.Seq == 1 {
			close(entered)
			// Give the other goroutine its chance to overtake: without the
			// ordering it emits seq 2 now; with it, it waits for this emit.
			select {
			case <-second:
			case <-time.After(200 * time.Millisecond):
			}
		}
		mu.Lock()
		got = append(got, ev.Seq)
		mu.Unlock()
		if ev.Seq == 2 {
			close(second)
		}
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		r.send(protocol.RunEvent{Kind: protocol.EventText, Delta: "streamed"})
	}()
	go func() {
		defer wg.Done()
		<-entered
		r.send(protocol.RunEvent{Kind: protocol.EventCheckpoint, CheckpointID: "cp-1"})
	}()
	wg.Wait()
	if len(got) != 2 || got[0] != 1 || got[1] != 2 {
		t.Fatalf("emit saw seq %v, want [1 2]", got)
	}
}

// acp's emit reviews an edit and accepts it, which sends a checkpoint event
// from inside emit: that event follows the one being emitted.
func TestSendFromInsideEmit(t *testing.T) {
	var got []int
	r := &Run{ID: "run-reentrant", line: newEventLine(0, nil)}
	r.line.emit = func(ev protocol.RunEvent) {
		got = append(got, ev.Seq)
		if ev.Seq == 1 {
			r.send(protocol.RunEvent{Kind: protocol.EventCheckpoint, CheckpointID: "cp-1"})
			if len(got) != 1 {
				t.Errorf("seq 2 was emitted inside the emit of seq 1: %v", got)
			}
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.send(protocol.RunEvent{Kind: protocol.EventToolResult})
		r.send(protocol.RunEvent{Kind: protocol.EventText, Delta: "after"})
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("send from inside emit deadlocked")
	}
	if len(got) != 3 || got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("emit saw seq %v, want [1 2 3]", got)
	}
}
