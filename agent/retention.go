package agent

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/workspace"
)

// recentRuns is how many finished runs the manager keeps a summary of in
// memory (for cairn.listRuns). Everything else about a finished run lives
// in its journal only, so a long session's memory does not grow with the
// number of runs it has answered.
const recentRuns = 64

// retire keeps a run that has ended among the recent ones, after dropping
// what it held for its loop (shed). The same Run stays: an edit accepted
// after the end is announced through it, so every event it sends takes the
// next seq of the one counter the run always had, however many accepts and
// undos follow (a summary rebuilt per accept would repeat a seq, and the
// editor drops an event whose seq it has seen). Called from the run's
// goroutine once its loop has returned.
func (m *Manager) retire(r *Run) {
	r.shed()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs[r.ID] == r {
		delete(m.runs, r.ID)
	}
	m.recent = slices.DeleteFunc(m.recent, func(o *Run) bool { return o.ID == r.ID }) // a resumed run
	m.recent = append(m.recent, r)
	if len(m.recent) > recentRuns {
		m.recent = append(m.recent[:0:0], m.recent[len(m.recent)-recentRuns:]...)
	}
}

// shed drops what an ended run held for its loop: its conversation, events,
// context report, history, notes and drafts (its journal keeps them), so a
// long session's memory does not grow with the runs it has answered. What
// stays is enough to list it, and to journal and announce what happens to
// its edits later: its state, seq, journal path and emit.
func (r *Run) shed() {
	r.tr, r.curStep = nil, nil // used by the loop only, which has returned
	r.mu.Lock()
	r.retired = true
	r.events, r.messages, r.report, r.history, r.notes, r.unknown = nil, nil, nil, nil, nil, nil
	r.mu.Unlock()
	for _, d := range r.drafts.All() {
		r.drafts.Forget(d.Abs)
	}
}

// endedRun is what a run's journal tells of a run that ended in an earlier
// session: enough to list it and to journal what happens to its edits.
type endedRun struct {
	id, question string
	started      time.Time
	state        State
	seq          int
	journalPath  string
}

// run returns a Run for a run that ended in an earlier session: cancelling
// it does nothing, its drafts are empty, records reopen its journal, and
// its events go nowhere (no client of this session asked for it).
func (m *Manager) run(e endedRun) *Run {
	r := &Run{ID: e.id, Question: e.question, Started: e.started, state: e.state, seq: e.seq, m: m,
		ctx: context.Background(), cancel: func(error) {}, done: make(chan struct{}),
		drafts: workspace.NewDrafts(m.ws), journalPath: e.journalPath, retired: true}
	close(r.done)
	return r
}

// live returns a run that is running in this session.
func (m *Manager) live(id string) (*Run, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	return r, ok
}

// ended finds a run that has ended: among the recent ones, else in its
// journal (nil when the journal shows no end: the run was interrupted).
func (m *Manager) ended(id string) (*Run, bool) {
	m.mu.Lock()
	for i := len(m.recent) - 1; i >= 0; i-- {
		if r := m.recent[i]; r.ID == id {
			m.mu.Unlock()
			return r, true
		}
	}
	stateDir := m.cfg.StateDir
	m.mu.Unlock()
	if stateDir == "" || id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return nil, false
	}
	recs, _, err := checkpoint.ReadJournal(journalPath(stateDir, id))
	if err != nil || len(recs) == 0 {
		return nil, false
	}
	e := endedRun{id: id, started: recs[0].Time, journalPath: journalPath(stateDir, id)}
	for _, rec := range effectiveRecords(recs) {
		// A record holds the seq of the event sent before it; events sent
		// after the last record (the end, an accept's checkpoint, others
		// racing it) are not journaled: skip past them, as a resumed run does.
		e.seq = max(e.seq, rec.EventSeq+streamProgressEvery+1)
		switch rec.Type {
		case checkpoint.RecRunStarted:
			var rs runStartedRecord
			_ = json.Unmarshal(rec.Data, &rs)
			e.question = rs.Question
		case checkpoint.RecFinished:
			var f struct {
				State State `json:"state"`
			}
			_ = json.Unmarshal(rec.Data, &f)
			e.state = f.State
		}
	}
	if e.state == "" {
		return nil, false
	}
	return m.run(e), true
}
