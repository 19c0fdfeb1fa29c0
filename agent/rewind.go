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
	if err := protocol.ValidateID("runId", runID); err != nil {
		return res, err
	}
	if step < 0 {
		return res, fmt.Errorf("step must be 0 or more")
	}
	if r, ok := m.live(runID); ok {
		if r.State() == StateRunning {
			return res, fmt.Errorf("run %s is still running; cancel it first", runID)
		}
	}
	m.mu.Lock()
	stateDir := m.cfg.StateDir
	m.mu.Unlock()
	path := journalPath(stateDir, runID)
	all, _, err := checkpoint.ReadJournal(path)
	if err != nil {
		return res, fmt.Errorf("no run %q in this workspace: %w", runID, err)
	}
	recs := effectiveRecords(all)
	lastStep := 0
	for _, r := range recs {
		lastStep = max(lastStep, r.Step)
	}
	if step >= lastStep {
		return res, fmt.Errorf("run %s has %d steps; rewind to a step before %d", runID, lastStep, lastStep)
	}
	// Side effects after the step, and edits proposed after it.
	laterEdits := map[string]bool{}
	var cmdChanges []commandChangesRecord
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
				laterEdits[er.EditID] = true
			}
		case checkpoint.RecCommandChanges:
			var cc commandChangesRecord
			if json.Unmarshal(r.Data, &cc) == nil {
				cmdChanges = append(cmdChanges, cc)
			}
		}
	}
	// Files changed by commands: restored newest first, or listed.
	for i := len(cmdChanges) - 1; i >= 0; i-- {
		cc := cmdChanges[i]
		if !restoreFiles {
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
	// Files: undo accepted edits of later steps, newest first.
	var undoErrs []string
	cps, _ := m.cps.List()
	for i := len(cps) - 1; i >= 0; i-- {
		cp := cps[i]
		if cp.RunID != runID || !laterEdits[cp.EditID] || cp.Status != checkpoint.StatusApplied {
			continue
		}
		if !restoreFiles {
			res.Irreversible = append(res.Irreversible, fmt.Sprintf("accepted edit %s stays applied (checkpoint %s; restoreFiles was not asked)", cp.EditID, cp.ID))
			continue
		}
		if _, err := m.Undo(ctx, cp.ID, false, ap); err != nil {
			undoErrs = append(undoErrs, err.Error())
		}
	}
	if len(undoErrs) > 0 {
		return res, fmt.Errorf("rewind stopped; some files could not be restored: %s", strings.Join(undoErrs, "; "))
	}
	// Withdraw pending proposals of later steps.
	var withdrawn []*Edit
	m.mu.Lock()
	for id := range laterEdits {
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
	delete(m.runs, runID) // resume reloads it from the journal
	m.mu.Unlock()
	for _, e := range withdrawn {
		m.recordEdit(e)
	}
	j, err := checkpoint.OpenJournal(path)
	if err != nil {
		return res, err
	}
	defer j.Close()
	for id := range laterEdits {
		if _, err := j.Append(checkpoint.RecEditState, step, 0, map[string]any{"editId": id, "state": EditRejected}); err != nil {
			return res, err
		}
	}
	if _, err := j.Append(checkpoint.RecRewound, step, 0, rewoundRecord{Step: step}); err != nil {
		return res, err
	}
	return res, nil
}
