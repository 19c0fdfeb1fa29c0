package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/contextengine"
	"github.com/cairn-dev/cairn/model"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tools"
	"github.com/cairn-dev/cairn/trace"
	"github.com/cairn-dev/cairn/workspace"
)

// InterruptedRun is a run whose journal has no end: the server stopped
// (crash, kill, power loss) while it ran.
type InterruptedRun struct {
	ID       string
	Question string
	Started  time.Time
	LastSeq  int // the last event seq journaled
	Steps    int
	// LastActive is the time of the journal's last record.
	LastActive time.Time
}

// FindInterrupted lists the interrupted runs of this workspace, newest first.
func (m *Manager) FindInterrupted() ([]InterruptedRun, error) {
	if m.cfg.StateDir == "" {
		return nil, nil
	}
	dir := filepath.Join(m.cfg.StateDir, "runs")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	var out []InterruptedRun
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, running := m.live(e.Name()); running {
			continue
		}
		if checkpoint.JournalBusy(journalPath(m.cfg.StateDir, e.Name())) {
			continue // live in another Cairn process
		}
		recs, _, err := checkpoint.ReadJournal(journalPath(m.cfg.StateDir, e.Name()))
		if err != nil || len(recs) == 0 {
			continue
		}
		recs = effectiveRecords(recs)
		ir := InterruptedRun{ID: e.Name(), Started: recs[0].Time}
		finished := false
		for _, r := range recs {
			switch r.Type {
			case checkpoint.RecFinished:
				finished = true
			case checkpoint.RecRunStarted:
				var rs runStartedRecord
				_ = json.Unmarshal(r.Data, &rs)
				ir.Question = rs.Question
			case checkpoint.RecStepStarted:
				ir.Steps = r.Step
			}
			ir.LastSeq = max(ir.LastSeq, r.EventSeq)
			ir.LastActive = r.Time
		}
		if !finished {
			out = append(out, ir)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Started.After(out[j].Started) })
	return out, nil
}

// MarkInterrupted journals that an interrupted run was announced, and
// returns the event to send (its seq follows the journaled ones).
func (m *Manager) MarkInterrupted(ir InterruptedRun) protocol.RunEvent {
	return protocol.RunEvent{RunID: ir.ID, Seq: ir.LastSeq + streamProgressEvery + 1, Kind: protocol.EventInterrupted,
		Error: fmt.Sprintf("the server stopped during this run (after step %d); cairn.resume continues it", ir.Steps)}
}

// Resume continues an interrupted run from its journal, following the
// conservative path: the last complete step is restored; a tool call with
// side effects whose result was never recorded is not replayed (the model
// is told it may or may not have happened); denied calls stay denied;
// one-time approvals are not reused (calls that never ran are asked again);
// the workspace is checked against the recorded file hashes; a resume note
// goes into the prompt; then the loop goes on.
func (m *Manager) Resume(parent context.Context, runID string, emit func(protocol.RunEvent)) (*Run, error) {
	return m.ResumeWithModel(parent, runID, "", emit)
}

// ResumeWithModel is Resume asking the model named (a session's current
// choice); with "" the run keeps the model it was started with, or the
// workspace's when it was started without a choice.
func (m *Manager) ResumeWithModel(parent context.Context, runID, modelName string, emit func(protocol.RunEvent)) (*Run, error) {
	if err := protocol.ValidateID("runId", runID); err != nil {
		return nil, err
	}
	if r, ok := m.live(runID); ok {
		return nil, fmt.Errorf("run %s is %s in this session, not interrupted", runID, r.State())
	}
	m.mu.Lock()
	cfg := m.cfg
	m.mu.Unlock()
	if err := cfg.noProvider(); err != nil {
		return nil, err
	}
	path := journalPath(cfg.StateDir, runID)
	contents, err := checkpoint.LoadJournal(path)
	recs, torn := contents.WithDamage(), contents.Torn
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no run %q in this workspace", runID)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the journal of %s: %w", runID, err)
	}
	rewound := false
	for _, rec := range recs {
		rewound = rec.Type == checkpoint.RecRewound || (rewound && rec.Type == checkpoint.RecEditState)
	}
	recs = effectiveRecords(recs)
	for _, rec := range recs {
		if rec.Type == checkpoint.RecFinished {
			return nil, fmt.Errorf("run %s already ended; nothing to resume", runID)
		}
	}
	if modelName == "" {
		modelName = startedModel(recs)
	}
	if modelName != "" {
		cfg.ModelName = modelName
	}
	ctx, cancel := context.WithCancelCause(parent)
	r := &Run{ID: runID, m: m, cfg: cfg, ctx: ctx, cancel: cancel, drafts: workspace.NewDrafts(m.ws), line: newEventLine(0, emit),
		state: StateRunning, done: make(chan struct{}), Started: time.Now()}
	r.ThreadID, r.history = m.threads.historyOf(runID)
	st, notes, err := r.restore(recs)
	if err != nil {
		cancel(err)
		return nil, err
	}
	if torn {
		notes = append(notes, "The last journal record was incomplete (written during the crash) and was ignored.")
	}
	j, err := checkpoint.OpenJournal(path)
	if err != nil {
		cancel(err)
		return nil, err
	}
	r.journal = j
	r.tr = m.tracer.StartRun(trace.RunInfo{ID: r.ID, Question: r.Question, Provider: providerName(cfg.Provider), Model: cfg.ModelName, Redact: r.red().String})
	m.mu.Lock()
	m.runs[r.ID] = r
	m.mu.Unlock()
	note := fmt.Sprintf("[Cairn] This run was interrupted (the server stopped) after step %d and has now been resumed.", st.step)
	if rewound {
		note = fmt.Sprintf("[Cairn] The user rewound this run to step %d: what came after it is forgotten (files the user chose to restore are back as they were).", st.step)
	}
	if len(notes) > 0 {
		note += "\n- " + strings.Join(notes, "\n- ")
	}
	note += "\nContinue the task from where it stopped."
	go func() {
		defer m.retire(r)
		defer close(r.done)
		defer cancel(nil)
		r.send(r.startedEvent())
		r.jrnl(checkpoint.RecResumed, st.step, map[string]any{"note": note})
		for _, u := range r.unknown {
			ok := false
			r.send(protocol.RunEvent{Kind: protocol.EventToolResult, CallID: u.Call.ID, Tool: u.Call.Name, OK: &ok,
				Summary: "outcome unknown: " + u.Reason + "; not run again"})
		}
		env := &tools.Env{WS: m.ws, Drafts: r.drafts, Diagnostics: m.diags, Index: m.index, RunID: r.ID}
		for _, rc := range st.rerun {
			content, _ := r.execTool(st.step, env, rc.call)
			r.mu.Lock()
			r.messages[rc.index].Content = content
			r.mu.Unlock()
		}
		st.rerun = nil
		r.mu.Lock()
		r.messages = append(r.messages, model.Message{Role: model.RoleUser, Content: note})
		r.mu.Unlock()
		r.steps(st)
	}()
	return r, nil
}

// restore rebuilds the run from its journal records: the conversation,
// drafts, edits, usage and loop state (restoreJournal), then checks the
// workspace against them. It returns notes for the model about what is
// uncertain.
func (r *Run) restore(recs []checkpoint.Record) (*loopState, []string, error) {
	m := r.m
	jr, err := restoreJournal(r.ID, recs, m.cps.Blobs.Get)
	if err != nil {
		return nil, nil, err
	}
	r.restoreRequest(jr)
	if !jr.HasContext {
		// The crash came before the context was built (or its record is
		// unreadable): build it now.
		b, err := r.buildContext(0)
		if err != nil {
			return nil, nil, err
		}
		jr.System, jr.User = b.System, b.User
	}
	msgs := append([]model.Message{{Role: model.RoleSystem, Content: jr.System}, {Role: model.RoleUser, Content: jr.User}}, jr.Messages...)
	rerun := make([]rerunCall, len(jr.Rerun))
	for i, rc := range jr.Rerun {
		rerun[i] = rerunCall{call: rc.call, index: rc.index + 2}
	}
	m.restoreEdits(jr.Edits)
	for _, d := range jr.Drafts {
		r.drafts.Restore(d)
	}
	r.mu.Lock()
	r.messages = msgs
	r.usage = jr.Usage
	r.mu.Unlock()
	// The next event follows every seq that may have been used: the
	// journaled ones, the deltas streamed since the last journal record
	// (bounded by streamProgressEvery), and the interrupted announcement.
	r.line.mu.Lock()
	r.line.seq = jr.LastSeq + streamProgressEvery + 1
	r.line.mu.Unlock()
	r.unknown = jr.Unknown
	if jr.Damaged > 0 {
		r.warnings = append(r.warnings, fmt.Sprintf("%d damaged record(s) of run %s's journal were skipped.", jr.Damaged, r.ID))
	}
	for _, u := range jr.Unknown {
		r.warnings = append(r.warnings, fmt.Sprintf("The outcome of %s call %s is unknown (%s); it was not run again.", u.Call.Name, u.Call.ID, u.Reason))
	}
	notes := append(jr.Notes, r.changedDrafts()...)
	notes = append(notes, m.changedAcceptedEdits(r.ID)...)
	if jr.Step == 0 && len(jr.Messages) == 0 {
		slog.Info("resuming a run that had not reached the model", "run", r.ID)
	}
	return &loopState{step: jr.Step, seenCalls: jr.SeenCalls, rerun: rerun}, notes, nil
}

// restoreRequest puts back what the run was asked.
func (r *Run) restoreRequest(jr *journalRun) {
	r.Question = jr.Question
	if r.Question == "" {
		r.Question = "(the question could not be read back from the journal)"
	}
	r.req.Question = r.Question
	if jr.File != "" {
		r.req.Abs = r.m.ws.Abs(jr.File)
	}
	if jr.Selection != nil {
		r.req.Selection = &contextengine.Selection{StartLine: jr.Selection.StartLine, EndLine: jr.Selection.EndLine}
	}
}

// restoreEdits registers a resumed run's edits with the manager.
func (m *Manager) restoreEdits(edits []*Edit) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range edits {
		if _, ok := m.edits[e.ID]; !ok {
			m.order = append(m.order, e.ID)
		}
		m.edits[e.ID] = e
	}
}

// changedDrafts lists the files that changed since the run proposed its
// drafts of them.
func (r *Run) changedDrafts() []string {
	var notes []string
	for _, d := range r.drafts.All() {
		cur, exists, err := r.m.ws.ReadFile(d.Abs)
		if err != nil {
			continue
		}
		if exists != d.BaseExists || (exists && cur != d.Base) {
			notes = append(notes, fmt.Sprintf("%s changed since your proposed edit to it was made; read it again before editing it.", d.Rel))
		}
	}
	return notes
}

// changedAcceptedEdits lists the files that no longer match an accepted
// edit of the run.
func (m *Manager) changedAcceptedEdits(runID string) []string {
	var notes []string
	for _, e := range m.editsOf(runID) {
		if e.State != EditAccepted || e.CheckpointID == "" {
			continue
		}
		cp, err := m.cps.Get(e.CheckpointID)
		if err != nil {
			continue
		}
		for _, f := range cp.Files {
			cur, exists, _ := m.ws.ReadFile(m.ws.Abs(f.Rel))
			if exists != f.AfterExists || (exists && workspace.Hash(cur) != f.AfterHash) {
				notes = append(notes, fmt.Sprintf("%s no longer matches the accepted edit %s (it changed since).", f.Rel, e.ID))
			}
		}
	}
	return notes
}

// editsOf returns copies of a run's edits in proposal order.
func (m *Manager) editsOf(runID string) []Edit {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Edit
	for _, id := range m.order {
		if e := m.edits[id]; e.RunID == runID {
			out = append(out, *e)
		}
	}
	return out
}

// RecoverCheckpoints settles checkpoints left pending by a crash during
// accept: applied when the files show the edit, failed when they show the
// base. Others stay pending and are reported.
func (m *Manager) RecoverCheckpoints() []string {
	cps, err := m.cps.List()
	if err != nil {
		return []string{fmt.Sprintf("listing checkpoints: %v", err)}
	}
	var notes []string
	for _, cp := range cps {
		if cp.Status != checkpoint.StatusPending && cp.Status != checkpoint.StatusApplied {
			continue
		}
		allAfter, allBefore := true, true
		for _, f := range cp.Files {
			cur, exists, err := m.ws.ReadFile(m.ws.Abs(f.Rel))
			if err != nil {
				allAfter, allBefore = false, false
				break
			}
			h := ""
			if exists {
				h = workspace.Hash(cur)
			}
			if exists != f.AfterExists || h != f.AfterHash {
				allAfter = false
			}
			if exists != f.BeforeExists || h != f.BeforeHash {
				allBefore = false
			}
		}
		if cp.Status == checkpoint.StatusApplied {
			// An undo that was cut short after the editor restored the files.
			if allBefore && !allAfter {
				_ = m.cps.SetStatus(cp.ID, checkpoint.StatusUndone)
				notes = append(notes, fmt.Sprintf("checkpoint %s was undone before the server stopped", cp.ID))
			}
			continue
		}
		switch {
		case allAfter:
			_ = m.cps.SetStatus(cp.ID, checkpoint.StatusApplied)
			notes = append(notes, fmt.Sprintf("checkpoint %s (edit %s) was applied before the server stopped; it can be undone", cp.ID, cp.EditID))
		case allBefore:
			_ = m.cps.SetStatus(cp.ID, checkpoint.StatusFailed)
			notes = append(notes, fmt.Sprintf("edit %s was not applied before the server stopped", cp.EditID))
		default:
			notes = append(notes, fmt.Sprintf("checkpoint %s (edit %s) was interrupted and its files match neither side; check them", cp.ID, cp.EditID))
		}
	}
	return notes
}

// RecordedResponses returns the model responses journaled for a run, in
// order: what the replay provider re-serves.
func RecordedResponses(stateDir, runID string) ([]model.Response, error) {
	if err := protocol.ValidateID("runId", runID); err != nil {
		return nil, err
	}
	recs, _, err := checkpoint.ReadJournal(journalPath(stateDir, runID))
	if err != nil {
		return nil, fmt.Errorf("reading the journal of run %s: %w", runID, err)
	}
	var out []model.Response
	for _, r := range effectiveRecords(recs) {
		if r.Type != checkpoint.RecModelResult {
			continue
		}
		var resp model.Response
		if err := json.Unmarshal(r.Data, &resp); err != nil {
			return nil, fmt.Errorf("a model result of run %s is unreadable: %w", runID, err)
		}
		out = append(out, resp)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("run %s recorded no model responses", runID)
	}
	return out, nil
}

// ContextReport returns the context report of a run: from memory for a run
// of this session, else the one stored with the run's journal.
func (m *Manager) ContextReport(runID string) (string, error) {
	if r, ok := m.live(runID); ok {
		if rep := r.Report(); rep != nil {
			return rep.Markdown(), nil
		}
		return "", fmt.Errorf("run %s has not built its context yet", runID)
	}
	if err := protocol.ValidateID("runId", runID); err != nil {
		return "", err
	}
	recs, _, err := checkpoint.ReadJournal(journalPath(m.cfg.StateDir, runID))
	if err != nil {
		return "", fmt.Errorf("no run %q in this workspace", runID)
	}
	hash := ""
	for _, r := range effectiveRecords(recs) {
		if r.Type == checkpoint.RecContext {
			var c contextRecord
			if json.Unmarshal(r.Data, &c) == nil && c.Report != "" {
				hash = c.Report
			}
		}
	}
	if hash == "" {
		return "", fmt.Errorf("run %s stored no context report", runID)
	}
	return m.cps.Blobs.Get(hash)
}

// startedModel is the model a run was started with when it was not the
// workspace's ("" otherwise).
func startedModel(recs []checkpoint.Record) string {
	for _, rec := range recs {
		if rec.Type == checkpoint.RecRunStarted {
			var rs runStartedRecord
			if json.Unmarshal(rec.Data, &rs) == nil {
				return rs.Model
			}
		}
	}
	return ""
}

// RunModel is the model the run was started with when a choice (a
// session's model) replaced the workspace's, "" otherwise or when the run
// is unknown: a session reopened after a restart asks it again.
func (m *Manager) RunModel(runID string) string {
	if protocol.ValidateID("runId", runID) != nil {
		return ""
	}
	m.mu.Lock()
	dir := m.cfg.StateDir
	m.mu.Unlock()
	if dir == "" {
		return ""
	}
	recs, _, err := checkpoint.ReadJournal(journalPath(dir, runID))
	if err != nil {
		return ""
	}
	return startedModel(recs)
}
