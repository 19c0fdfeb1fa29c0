package lspclient

import (
	"context"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/protocol"
)

// An event recorded after WaitFor looked at the events but before it began
// to wait must still wake it. It once went unnoticed: the run's last event
// arrived in that gap and WaitRun sat until its context ended (seen as
// server's TestRunCommandApprovals hanging 60 s after the final text event).
func TestWaitForSeesAnEventRecordedWhileLooking(t *testing.T) {
	e := &Editor{events: map[string][]protocol.RunEvent{}, changed: make(chan struct{})}
	record := func(ev protocol.RunEvent) {
		e.mu.Lock()
		e.events[ev.RunID] = append(e.events[ev.RunID], ev)
		e.mu.Unlock()
		e.signal()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	looked := false
	evs, err := e.WaitFor(ctx, "r", func(evs []protocol.RunEvent) bool {
		if !looked {
			// The gap: the server's last event lands now.
			looked = true
			record(protocol.RunEvent{RunID: "r", Kind: protocol.EventFinished})
			return false
		}
		return Ended(evs)
	})
	if err != nil {
		t.Fatalf("the event recorded in the gap was missed: %v", err)
	}
	if len(evs) != 1 || evs[0].Kind != protocol.EventFinished {
		t.Fatalf("events = %+v", evs)
	}
}
