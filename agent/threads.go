package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/contextengine"
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/redact"
)

// A thread is the conversation across runs: each run is one turn, and a
// follow-up run sees the earlier turns (questions, answers, edits and the
// fate of each hunk) through the context engine's history source. Threads
// are kept as one JSON file each under <state>/threads/, rewritten
// atomically on every change, so they survive restarts.
//
// Invariant: a thread holds redacted text only, in memory and on disk.
// Each turn passes its run's redactor (which knows the secret values the
// run learned) whenever it changes, and every file passes the session's
// redactor again as it is written.

// Thread is one conversation.
type Thread struct {
	ID      string       `json:"threadId"`
	Title   string       `json:"title"`
	Created time.Time    `json:"created"`
	Updated time.Time    `json:"updated"`
	Turns   []ThreadTurn `json:"turns"`
	// Usage totals the turns' usage; set on the copies get returns, never
	// stored (the turns are the record).
	Usage *protocol.Usage `json:"usage,omitempty"`
}

// ThreadTurn is one run of a thread.
type ThreadTurn struct {
	RunID string `json:"runId"`
	contextengine.Turn
	// Usage is what the run used and cost, once it ended.
	Usage *protocol.Usage `json:"usage,omitempty"`
}

// threadIDRE is what a thread id may look like: it names a file.
var threadIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,79}$`)

// ValidThreadID reports whether id can name a thread.
func ValidThreadID(id string) bool { return threadIDRE.MatchString(id) }

// ThreadExists reports whether the workspace whose state is in stateDir has
// the thread id on disk, without loading anything (a client naming a
// session checked before the workspace is opened).
func ThreadExists(stateDir, id string) bool {
	if !ValidThreadID(id) || stateDir == "" {
		return false
	}
	st, err := os.Stat(filepath.Join(stateDir, "threads", id+".json"))
	return err == nil && st.Mode().IsRegular()
}

// HasThreads reports whether the workspace whose state is in stateDir has
// any thread on disk, without loading anything.
func HasThreads(stateDir string) bool {
	if stateDir == "" {
		return false
	}
	entries, err := os.ReadDir(filepath.Join(stateDir, "threads"))
	if err != nil {
		return false
	}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok && ValidThreadID(name) {
			return true
		}
	}
	return false
}

// threadStore keeps the threads of a workspace, in memory and on disk.
type threadStore struct {
	mu     sync.Mutex
	dir    string // "" keeps threads in memory only
	loaded bool
	byID   map[string]*Thread
	ofRun  map[string]string // run id → thread id
	// redactor returns the redactor of a run ("" or one not running: the
	// session's); nil stores text as given (tests of the store alone).
	redactor func(runID string) *redact.Redactor
}

func newThreadStore(stateDir string, redactor func(runID string) *redact.Redactor) *threadStore {
	ts := &threadStore{byID: map[string]*Thread{}, ofRun: map[string]string{}, redactor: redactor}
	if stateDir != "" {
		ts.dir = filepath.Join(stateDir, "threads")
	}
	return ts
}

// load reads the threads on disk once. Unreadable files are logged and
// skipped, never deleted.
func (ts *threadStore) load() {
	if ts.loaded {
		return
	}
	ts.loaded = true
	if ts.dir == "" {
		return
	}
	entries, err := os.ReadDir(ts.dir)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			slog.Warn("listing threads", "dir", ts.dir, "err", err)
		}
		return
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !ValidThreadID(name) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(ts.dir, e.Name()))
		if err != nil {
			slog.Warn("reading a thread", "thread", name, "err", err)
			continue
		}
		var t Thread
		if err := json.Unmarshal(b, &t); err != nil || t.ID != name {
			slog.Warn("skipping an unreadable thread file", "file", e.Name(), "err", err)
			continue
		}
		if ts.redactor != nil {
			// A file written before threads were redacted is masked and
			// written again.
			if masked := ts.redactor("").JSON(b); string(masked) != string(b) {
				var clean Thread
				if err := json.Unmarshal(masked, &clean); err == nil && clean.ID == t.ID {
					t = clean
					if err := ts.save(&t); err != nil {
						slog.Warn("rewriting a thread without its secrets", "thread", t.ID, "err", err)
					}
				}
			}
		}
		ts.byID[t.ID] = &t
		for _, turn := range t.Turns {
			ts.ofRun[turn.RunID] = t.ID
		}
	}
}

// save writes a thread atomically (temp file + rename). Called with mu held.
func (ts *threadStore) save(t *Thread) error {
	if ts.dir == "" {
		return nil
	}
	if err := os.MkdirAll(ts.dir, 0o700); err != nil {
		return fmt.Errorf("creating the threads directory: %w", err)
	}
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding thread %s: %w", t.ID, err)
	}
	if ts.redactor != nil {
		b = ts.redactor("").JSON(b)
	}
	tmp, err := os.CreateTemp(ts.dir, t.ID+".*.tmp")
	if err != nil {
		return fmt.Errorf("saving thread %s: %w", t.ID, err)
	}
	_, werr := tmp.Write(b)
	if err := errors.Join(werr, tmp.Sync(), tmp.Close()); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("saving thread %s: %w", t.ID, err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(ts.dir, t.ID+".json")); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("saving thread %s: %w", t.ID, err)
	}
	return nil
}

// begin adds a turn for runID: to thread id, or to a new thread when id is
// empty. It returns the thread id and the earlier turns.
func (ts *threadStore) begin(id, newID string, runID string, turn contextengine.Turn) (string, []contextengine.Turn, error) {
	ts.redactTurn(runID, &turn)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.load()
	now := time.Now().UTC()
	var t *Thread
	if id == "" {
		t = &Thread{ID: newID, Title: threadTitle(turn.Question), Created: now}
	} else {
		if !ValidThreadID(id) {
			return "", nil, fmt.Errorf("invalid thread id %q", id)
		}
		var ok bool
		if t, ok = ts.byID[id]; !ok {
			return "", nil, fmt.Errorf("no thread %q in this workspace", id)
		}
	}
	var history []contextengine.Turn
	for _, tt := range t.Turns {
		history = append(history, tt.Turn)
	}
	if t.Title == "" {
		t.Title = threadTitle(turn.Question)
	}
	turn.Outcome = "running"
	t.Turns = append(t.Turns, ThreadTurn{RunID: runID, Turn: turn})
	t.Updated = now
	if err := ts.save(t); err != nil {
		t.Turns = t.Turns[:len(t.Turns)-1]
		return "", nil, err
	}
	ts.byID[t.ID] = t
	ts.ofRun[runID] = t.ID
	return t.ID, history, nil
}

// historyOf returns the thread of a run and the turns before it (a resumed run).
func (ts *threadStore) historyOf(runID string) (string, []contextengine.Turn) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.load()
	t, ok := ts.byID[ts.ofRun[runID]]
	if !ok {
		return "", nil
	}
	var history []contextengine.Turn
	for _, tt := range t.Turns {
		if tt.RunID == runID {
			break
		}
		history = append(history, tt.Turn)
	}
	return t.ID, history
}

// update changes the turn of runID and saves its thread. A run outside any
// thread (none recorded) is ignored.
func (ts *threadStore) update(runID string, change func(*contextengine.Turn)) {
	ts.updateTurn(runID, func(t *ThreadTurn) { change(&t.Turn) })
}

// updateTurn is update with the whole thread turn (its usage too).
func (ts *threadStore) updateTurn(runID string, change func(*ThreadTurn)) {
	var red *redact.Redactor
	if ts.redactor != nil {
		red = ts.redactor(runID) // before mu: it may take the manager's lock
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.load()
	t, ok := ts.byID[ts.ofRun[runID]]
	if !ok {
		return
	}
	for i := range t.Turns {
		if t.Turns[i].RunID == runID {
			change(&t.Turns[i])
			redactTurnWith(red, &t.Turns[i].Turn)
			t.Updated = time.Now().UTC()
			if err := ts.save(t); err != nil {
				slog.Error("saving a thread", "thread", t.ID, "err", err)
			}
			return
		}
	}
}

// list returns every thread, most recently updated first.
func (ts *threadStore) list() []protocol.ThreadSummary {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.load()
	all := make([]*Thread, 0, len(ts.byID))
	for _, t := range ts.byID {
		all = append(all, t)
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].Updated.Equal(all[j].Updated) {
			return all[i].Updated.After(all[j].Updated)
		}
		return all[i].ID > all[j].ID
	})
	out := make([]protocol.ThreadSummary, 0, len(all))
	for _, t := range all {
		s := protocol.ThreadSummary{ThreadID: t.ID, Title: t.Title, Runs: []string{}, Updated: t.Updated.UTC().Format(time.RFC3339Nano)}
		for _, turn := range t.Turns {
			s.Runs = append(s.Runs, turn.RunID)
		}
		s.Usage = threadUsage(t.Turns)
		out = append(out, s)
	}
	return out
}

// get returns a copy of a thread.
func (ts *threadStore) get(id string) (Thread, bool) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.load()
	t, ok := ts.byID[id]
	if !ok {
		return Thread{}, false
	}
	c := *t
	c.Turns = append([]ThreadTurn(nil), t.Turns...)
	for i := range c.Turns {
		// update replaces edits, never changes a hunk list in place: a copy
		// of each turn's edit list is enough.
		c.Turns[i].Edits = append([]contextengine.TurnEdit(nil), c.Turns[i].Edits...)
	}
	c.Usage = threadUsage(c.Turns)
	return c, true
}

// redactTurn masks secrets in every text of a turn with the run's redactor.
func (ts *threadStore) redactTurn(runID string, turn *contextengine.Turn) {
	if ts.redactor != nil {
		redactTurnWith(ts.redactor(runID), turn)
	}
}

// redactTurnWith masks secrets in every string of turn (question, answer,
// outcome, file, hunk paths and diffs); nil leaves it as it is.
func redactTurnWith(red *redact.Redactor, turn *contextengine.Turn) {
	if red == nil {
		return
	}
	raw, err := json.Marshal(turn)
	if err != nil {
		return
	}
	masked := red.JSON(raw)
	if string(masked) == string(raw) {
		return
	}
	var out contextengine.Turn
	if err := json.Unmarshal(masked, &out); err != nil {
		slog.Warn("redacting a thread turn", "err", err)
		return
	}
	*turn = out
}

func threadTitle(question string) string {
	q := strings.Join(strings.Fields(question), " ")
	if r := []rune(q); len(r) > 80 {
		q = string(r[:79]) + "…"
	}
	return q
}

// create starts an empty thread (a client that opens a conversation before
// its first question: an ACP session/new).
func (ts *threadStore) create(id, title string) error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.load()
	now := time.Now().UTC()
	if ts.redactor != nil {
		title = ts.redactor("").String(title)
	}
	t := &Thread{ID: id, Title: threadTitle(title), Created: now, Updated: now, Turns: []ThreadTurn{}}
	if err := ts.save(t); err != nil {
		return err
	}
	ts.byID[id] = t
	return nil
}

// NewThread starts an empty thread and returns its id; the first run asked
// in it (AskRequest.ThreadID) names it after its question when title is "".
func (m *Manager) NewThread(title string) (string, error) {
	m.mu.Lock()
	newID := m.cfg.NewID
	m.mu.Unlock()
	id := newID("thread")
	if err := m.threads.create(id, title); err != nil {
		return "", err
	}
	return id, nil
}

// Threads lists the workspace's threads, most recently updated first.
func (m *Manager) Threads() []protocol.ThreadSummary { return m.threads.list() }

// Thread returns one thread with its turns.
func (m *Manager) Thread(id string) (Thread, bool) { return m.threads.get(id) }

// turnHunks converts an edit's hunks for the thread record.
func turnHunks(e *Edit) contextengine.TurnEdit {
	te := contextengine.TurnEdit{EditID: e.ID}
	for _, h := range e.Hunks {
		state := string(h.State)
		if h.superseded {
			state = hunkSuperseded
		}
		te.Hunks = append(te.Hunks, contextengine.TurnHunk{Index: h.Index, Path: h.Rel, StartLine: h.StartLine + 1, EndLine: max(h.EndLine, h.StartLine+1),
			Diff: h.Diff, State: state, Undone: h.Undone, CheckpointID: h.CheckpointID})
	}
	return te
}

// recordEdit puts an edit's current hunk states into its run's turn.
func (m *Manager) recordEdit(e *Edit) {
	te := turnHunks(e)
	m.threads.update(e.RunID, func(t *contextengine.Turn) {
		for i := range t.Edits {
			if t.Edits[i].EditID == e.ID {
				t.Edits[i] = te
				return
			}
		}
		t.Edits = append(t.Edits, te)
	})
}

// runOfEdit finds the run whose turn recorded an edit.
func (ts *threadStore) runOfEdit(editID string) (string, []contextengine.TurnHunk) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.load()
	for _, t := range ts.byID {
		for _, turn := range t.Turns {
			for _, e := range turn.Edits {
				if e.EditID == editID {
					return turn.RunID, append([]contextengine.TurnHunk(nil), e.Hunks...)
				}
			}
		}
	}
	return "", nil
}

// loadEdit brings back an edit proposed before a restart: its files from
// the run's journal, its hunks' decisions from the thread, so it can still
// be reviewed (accept checks the files against its base as always).
func (m *Manager) loadEdit(id string) {
	m.mu.Lock()
	_, known := m.edits[id]
	m.mu.Unlock()
	if known || id == "" {
		return
	}
	runID, hunks := m.threads.runOfEdit(id)
	if runID == "" {
		return
	}
	_, _, edits, err := m.History(runID)
	if err != nil {
		return
	}
	for _, e := range edits {
		if e.ID != id {
			continue
		}
		e := e
		e.Hunks = splitHunks(e.Files)
		if len(hunks) == len(e.Hunks) {
			for i, h := range hunks {
				e.Hunks[i].State, e.Hunks[i].Undone, e.Hunks[i].CheckpointID = EditState(h.State), h.Undone, h.CheckpointID
				switch EditState(h.State) {
				case hunkSuperseded:
					e.Hunks[i].State, e.Hunks[i].superseded = EditRejected, true
				case EditConflict:
					// The rebase is not journaled: the hunk is the model's
					// again, and the accept's base check decides.
					e.Hunks[i].State = EditPending
				}
			}
		}
		e.settle()
		m.mu.Lock()
		if _, known := m.edits[id]; !known {
			m.edits[id] = &e
			m.order = append(m.order, id)
		}
		m.mu.Unlock()
		return
	}
}
