package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/protocol"
)

// The three kinds of rollback are kept apart:
//   - files: Undo restores the files of one checkpoint (edits.go);
//   - conversation: Rewind forgets a run's steps after a given step, so the
//     run can continue differently (with cairn.resume), optionally undoing
//     the run's accepted edits from those steps;
//   - external side effects (commands, network, installs, MCP calls) cannot
//     be taken back: Rewind lists them so the user can compensate.

type rewoundRecord struct {
	Step int `json:"step"`
}

// effectiveRecords applies rewinds: records of steps after a rewind's step,
// and an end of run before it, no longer count.
func effectiveRecords(recs []checkpoint.Record) []checkpoint.Record {
	last := -1
	for i, r := range recs {
		if r.Type == checkpoint.RecRewound {
			last = i
		}
	}
	if last < 0 {
		return recs
	}
	var rw rewoundRecord
	_ = json.Unmarshal(recs[last].Data, &rw)
	var out []checkpoint.Record
	for _, r := range recs[:last] {
		if r.Type == checkpoint.RecFinished || r.Type == checkpoint.RecRewound {
			continue
		}
		if r.Step > rw.Step && r.Type != checkpoint.RecEditState {
			continue
		}
		out = append(out, r)
	}
	return append(out, recs[last+1:]...)
}

// Rewind forgets the run's steps after step. With restoreFiles, the run's
// accepted edits from later steps are undone through the editor (each
// refused, naming the file, when the user changed it since). Pending
// proposals from later steps are withdrawn. The result lists the external
// side effects of later steps, which cannot be undone. cairn.resume then
// continues the run from step.
func (m *Manager) Rewind(ctx context.Context, runID string, step int, restoreFiles bool, ap Applier) (protocol.RewindResult, error) {
	res := protocol.RewindResult{RunID: runID}
	path, recs, err := m.rewindable(runID, step)
	if err != nil {
		return res, err
	}
	later := laterEffects(recs, step, &res)
	m.restoreCommandFiles(later.cmdChanges, restoreFiles, &res)
	if err := m.undoLaterEdits(ctx, runID, later.edits, restoreFiles, ap, &res); err != nil {
		return res, err
	}
	m.withdraw(runID, later.edits)
	return res, journalRewind(path, step, later.edits)
}

// rewindable checks that the run can be rewound to step (it is not
// running and has later steps) and returns its journal's path and
// effective records.
func (m *Manager) rewindable(runID string, step int) (string, []checkpoint.Record, error) {
	if err := protocol.ValidateID("runId", runID); err != nil {
		return "", nil, err
	}
	if step < 0 {
		return "", nil, fmt.Errorf("step must be 0 or more")
	}
	if r, ok := m.live(runID); ok {
		if r.State() == StateRunning {
			return "", nil, fmt.Errorf("run %s is still running; cancel it first", runID)
		}
	}
	m.mu.Lock()
	stateDir := m.cfg.StateDir
	m.mu.Unlock()
	path := journalPath(stateDir, runID)
	all, _, err := checkpoint.ReadJournal(path)
	if err != nil {
		return "", nil, fmt.Errorf("no run %q in this workspace: %w", runID, err)
	}
	recs := effectiveRecords(all)
	lastStep := 0
	for _, r := range recs {
		lastStep = max(lastStep, r.Step)
	}
	if step >= lastStep {
		return "", nil, fmt.Errorf("run %s has %d steps; rewind to a step before %d", runID, lastStep, lastStep)
	}
	return path, recs, nil
}

// laterSteps is what the steps after a rewind's step did.
type laterSteps struct {
	edits      map[string]bool // edits proposed, by id
	cmdChanges []commandChangesRecord
}

// laterEffects collects the edits and the files changed by commands in
// the steps after step, and lists their other side effects in res.
func laterEffects(recs []checkpoint.Record, step int, res *protocol.RewindResult) laterSteps {
	later := laterSteps{edits: map[string]bool{}}
	for _, r := range recs {
		if r.Step <= step {
			continue
		}
		switch r.Type {
		case checkpoint.RecToolIntent:
			var ti toolIntentRecord
			if json.Unmarshal(r.Data, &ti) == nil && ti.SideEffects {
				res.Irreversible = append(res.Irreversible, fmt.Sprintf("step %d: %s %s", r.Step, ti.Tool, summarizeInput(ti.Input)))
			}
		case checkpoint.RecEdit:
			var er editRecord
			if json.Unmarshal(r.Data, &er) == nil {
				later.edits[er.EditID] = true
			}
		case checkpoint.RecCommandChanges:
			var cc commandChangesRecord
			if json.Unmarshal(r.Data, &cc) == nil {
				later.cmdChanges = append(later.cmdChanges, cc)
			}
		}
	}
	return later
}

// restoreCommandFiles restores files changed by commands, newest first,
// or with restore false lists them in res.
func (m *Manager) restoreCommandFiles(cmdChanges []commandChangesRecord, restore bool, res *protocol.RewindResult) {
	for i := len(cmdChanges) - 1; i >= 0; i-- {
		cc := cmdChanges[i]
		if !restore {
			for _, c := range cc.Changes {
				res.Irreversible = append(res.Irreversible, fmt.Sprintf("%s was changed by command call %s (not restored: restoreFiles was not asked)", c.Rel, cc.CallID))
			}
			continue
		}
		restored, problems := restoreCommandChanges(m.ws, m.cps.Blobs, cc.Changes)
		res.Restored = append(res.Restored, restored...)
		res.Irreversible = append(res.Irreversible, problems...)
		if cc.NotCovered > 0 {
			res.Irreversible = append(res.Irreversible, fmt.Sprintf("command call %s: %d files were outside the snapshot caps; changes to them cannot be restored", cc.CallID, cc.NotCovered))
		}
	}
}

// undoLaterEdits undoes the run's accepted edits among edits, newest
// first, or with restore false lists them in res. It tries every one and
// fails naming those that could not be undone.
func (m *Manager) undoLaterEdits(ctx context.Context, runID string, edits map[string]bool, restore bool, ap Applier, res *protocol.RewindResult) error {
	var undoErrs []string
	cps, _ := m.cps.List()
	for i := len(cps) - 1; i >= 0; i-- {
		cp := cps[i]
		if cp.RunID != runID || !edits[cp.EditID] || cp.Status != checkpoint.StatusApplied {
			continue
		}
		if !restore {
			res.Irreversible = append(res.Irreversible, fmt.Sprintf("accepted edit %s stays applied (checkpoint %s; restoreFiles was not asked)", cp.EditID, cp.ID))
			continue
		}
		if _, err := m.Undo(ctx, cp.ID, false, ap); err != nil {
			undoErrs = append(undoErrs, err.Error())
		}
	}
	if len(undoErrs) > 0 {
		return fmt.Errorf("rewind stopped; some files could not be restored: %s", strings.Join(undoErrs, "; "))
	}
	return nil
}

// withdraw rejects the pending proposals among edits and forgets the
// loaded run (resume reloads it from the journal).
func (m *Manager) withdraw(runID string, edits map[string]bool) {
	var withdrawn []*Edit
	m.mu.Lock()
	for id := range edits {
		if e, ok := m.edits[id]; ok && e.State == EditPending {
			e.State = EditRejected
			for i := range e.Hunks {
				if e.Hunks[i].open() {
					e.Hunks[i].State = EditRejected
				}
			}
			withdrawn = append(withdrawn, e.clone())
		}
	}
	delete(m.runs, runID)
	m.mu.Unlock()
	for _, e := range withdrawn {
		m.recordEdit(e)
	}
}

// journalRewind records the rewind in the run's journal: the later edits
// rejected, then the rewind itself.
func journalRewind(path string, step int, edits map[string]bool) error {
	j, err := checkpoint.OpenJournal(path)
	if err != nil {
		return fmt.Errorf("recording the rewind: %w", err)
	}
	defer j.Close()
	for id := range edits {
		if _, err := j.Append(checkpoint.RecEditState, step, 0, map[string]any{"editId": id, "state": EditRejected}); err != nil {
			return fmt.Errorf("recording the rewind: %w", err)
		}
	}
	if _, err := j.Append(checkpoint.RecRewound, step, 0, rewoundRecord{Step: step}); err != nil {
		return fmt.Errorf("recording the rewind: %w", err)
	}
	return nil
}
