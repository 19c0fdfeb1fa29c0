package acp

import (
	"fmt"
	"log/slog"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/cairn-dev/cairn/protocol"
)

// callIDs makes the ACP toolCallIds of a session unique. Models and
// servers reuse their ids (many local servers number each response's calls
// from call_0), and clients key their tool-call cards on the id, so a
// reused id would overwrite an earlier card. A call keeps the model's id
// the first time the session sees it; a later call with the same id gets
// the run's id appended (and a counter when a run repeats one).
//
// The assignment is keyed by (run, model id, occurrence within the run), so
// replaying a session (session/load, again or after a restart) assigns the
// same ids as the live turns did, as long as runs are seen in order: live
// turns and replays are, and a resumed session is seeded from its history
// first (seedCallIDs).
type callIDs struct {
	mu       sync.Mutex
	assigned map[string]sdk.ToolCallId // run \x00 model id \x00 occurrence → ACP id
	used     map[sdk.ToolCallId]bool
	current  map[string]sdk.ToolCallId // run \x00 model id → the ACP id of its latest call
	seen     map[string]int            // run \x00 model id → occurrences so far
}

func newCallIDs() *callIDs {
	return &callIDs{assigned: map[string]sdk.ToolCallId{}, used: map[sdk.ToolCallId]bool{},
		current: map[string]sdk.ToolCallId{}, seen: map[string]int{}}
}

// start assigns the ACP id of a new tool call of run.
func (c *callIDs) start(runID, callID string) sdk.ToolCallId {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := runID + "\x00" + callID
	n := c.seen[k]
	c.seen[k] = n + 1
	key := fmt.Sprintf("%s\x00%d", k, n)
	id, ok := c.assigned[key]
	if !ok {
		id = sdk.ToolCallId(callID)
		if c.used[id] {
			id = sdk.ToolCallId(callID + "@" + runID)
		}
		for i := 2; c.used[id]; i++ {
			id = sdk.ToolCallId(fmt.Sprintf("%s@%s#%d", callID, runID, i))
		}
		c.assigned[key] = id
		c.used[id] = true
	}
	c.current[k] = id
	return id
}

// of is the ACP id of run's latest call with the model's id callID (the
// model's id itself when none was started, as for an approval asked
// before its tool_call was announced).
func (c *callIDs) of(runID, callID string) sdk.ToolCallId {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id, ok := c.current[runID+"\x00"+callID]; ok {
		return id
	}
	return sdk.ToolCallId(callID)
}

// resetRun forgets the per-run occurrence counts of run, so that a replay of
// it counts from the start again (and finds the ids it had).
func (c *callIDs) resetRun(runID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.seen {
		if len(k) > len(runID) && k[:len(runID)+1] == runID+"\x00" {
			delete(c.seen, k)
		}
	}
}

// seedCallIDs assigns the ids of the session's earlier runs without
// sending anything: a session reattached without a replay (session/resume)
// must not hand out an id the client already shows.
func (a *adapter) seedCallIDs(s *session) {
	for _, runID := range s.runs() {
		_, events, _, err := s.w.mgr.History(runID)
		if err != nil {
			slog.Debug("reading a run's tool calls", "session", s.id, "run", runID, "err", err)
			continue
		}
		s.calls.resetRun(runID)
		for _, ev := range events {
			if ev.Kind == protocol.EventToolCall {
				s.calls.start(runID, ev.CallID)
			}
		}
	}
}
