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

// retire drops a run that has ended from memory, keeping a summary.
func (m *Manager) retire(r *Run) {
	s := r.summary()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs[r.ID] == r {
		delete(m.runs, r.ID)
	}
	m.recent = slices.DeleteFunc(m.recent, func(o endedRun) bool { return o.id == r.ID }) // a resumed run
	m.recent = append(m.recent, s)
	if len(m.recent) > recentRuns {
		m.recent = append(m.recent[:0:0], m.recent[len(m.recent)-recentRuns:]...)
	}
}

// endedRun is what stays of a run that ended: enough to list it, to
// journal and announce what happens to its edits later (accept, reject),
// and nothing of its conversation, drafts or events. Its event line is the
// run's own: an event sent after the end (an accept's checkpoint) takes the
// next seq of the run, whichever Run made from the summary sends it, and
// however many follow (a seq copied into each would repeat, and editors
// drop an event whose seq they have seen).
type endedRun struct {
	id, question string
	started      time.Time
	state        State
	line         *eventLine
	journalPath  string
}

// summary is what stays of r once it ended.
func (r *Run) summary() endedRun {
	r.mu.Lock()
	s := endedRun{id: r.ID, question: r.Question, started: r.Started, state: r.state, line: r.line}
	r.mu.Unlock()
	r.jmu.Lock()
	s.journalPath = r.journalPath
	r.jmu.Unlock()
	return s
}

// run returns a fresh Run for an ended run: cancelling it does nothing,
// its drafts are empty, records reopen its journal, events go to the
// editor as the run's did.
func (m *Manager) run(e endedRun) *Run {
	r := &Run{ID: e.id, Question: e.question, Started: e.started, state: e.state, line: e.line, m: m,
		ctx: context.Background(), cancel: func(error) {}, done: make(chan struct{}),
		drafts: workspace.NewDrafts(m.ws), journalPath: e.journalPath}
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
		if m.recent[i].id == id {
			e := m.recent[i]
			m.mu.Unlock()
			return m.run(e), true
		}
	}
	stateDir, emit := m.cfg.StateDir, m.endedEmit
	m.mu.Unlock()
	if stateDir == "" || id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return nil, false
	}
	recs, _, err := checkpoint.ReadJournal(journalPath(stateDir, id))
	if err != nil || len(recs) == 0 {
		return nil, false
	}
	e := endedRun{id: id, started: recs[0].Time, journalPath: journalPath(stateDir, id)}
	seq := 0
	for _, rec := range effectiveRecords(recs) {
		// A record holds the seq of the last event sent before it; the
		// events sent after the last record (the end, an accept's
		// checkpoint, others racing it) were not journaled: skip past
		// them, as a resumed run does.
		seq = max(seq, rec.EventSeq+streamProgressEvery+1)
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
	e.line = newEventLine(seq, emit) // the session's client, which did not start it
	return m.run(e), true
}
