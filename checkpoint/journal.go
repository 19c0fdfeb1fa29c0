package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Record is one journal entry. Type says which fields matter.
type Record struct {
	Seq  int       `json:"seq"`
	Time time.Time `json:"time"`
	Type string    `json:"type"`
	Step int       `json:"step,omitempty"`
	// EventSeq is the run's last event seq when the record was written, so a
	// resumed run continues numbering after it.
	EventSeq int             `json:"eventSeq,omitempty"`
	Data     json.RawMessage `json:"data,omitempty"`
}

// Journal record types.
const (
	RecRunStarted     = "run_started"
	RecContext        = "context_built" // the system prompt and first user message (blob hashes)
	RecStepStarted    = "step_started"  // pre-checkpoint of a step
	RecModelResult    = "model_result"
	RecModelError     = "model_error" // a failed model call (retried or final), for evals and records
	RecToolIntent     = "tool_intent" // written and synced before the tool runs
	RecToolResult     = "tool_result" // after
	RecApproval       = "approval"
	RecEdit           = "edit_proposed"
	RecEditState      = "edit_state" // accepted / rejected
	RecFinished       = "run_finished"
	RecResumed        = "run_resumed"
	RecRewound        = "run_rewound"     // later steps are forgotten (cairn.rewind)
	RecStreamProgress = "stream_progress" // the event seq reached while streaming (not synced)
	RecCommandChanges = "command_changes" // files a command changed (before/after blobs)
)

// Journal is a run's durable, append-only log: one JSON object per line,
// synced after each append. A torn last line (a crash mid-write) is ignored
// by ReadJournal; nothing before it is lost.
type Journal struct {
	mu   sync.Mutex
	f    *os.File
	seq  int
	Path string
}

// OpenJournal opens (creating) the journal at path for appending.
func OpenJournal(path string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the journal directory: %w", err)
	}
	recs, _, _ := ReadJournal(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the journal: %w", err)
	}
	// A run's journal is held by one process at a time (a live run in
	// another server, e.g. a second editor window on the same folder, is not
	// "interrupted"). The lock goes with the file descriptor.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("the journal %s is in use by another Cairn process: %w", path, ErrJournalBusy)
	}
	// Cut a torn tail so the next append starts on a clean line.
	if good := goodPrefix(path); good >= 0 {
		if err := f.Truncate(good); err != nil {
			f.Close()
			return nil, fmt.Errorf("truncating a torn journal tail: %w", err)
		}
	}
	if _, err := f.Seek(0, 2); err != nil {
		f.Close()
		return nil, err
	}
	j := &Journal{f: f, Path: path}
	if n := len(recs); n > 0 {
		j.seq = recs[n-1].Seq
	}
	return j, nil
}

// ErrJournalBusy is wrapped when another process holds a run's journal.
var ErrJournalBusy = errors.New("journal busy")

// JournalBusy reports whether another process holds the journal at path.
func JournalBusy(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// Append writes a record and syncs it to disk before returning.
func (j *Journal) Append(typ string, step, eventSeq int, data any) (Record, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var raw json.RawMessage
	if data != nil {
		b, err := json.Marshal(data)
		if err != nil {
			return Record{}, fmt.Errorf("encoding journal record %s: %w", typ, err)
		}
		raw = b
	}
	j.seq++
	r := Record{Seq: j.seq, Time: time.Now().UTC(), Type: typ, Step: step, EventSeq: eventSeq, Data: raw}
	b, err := json.Marshal(r)
	if err != nil {
		return Record{}, err
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return Record{}, fmt.Errorf("appending to the journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return Record{}, fmt.Errorf("syncing the journal: %w", err)
	}
	return r, nil
}

// AppendNoSync writes a data-less record without syncing: it survives a
// process crash (the OS has it), not a power loss.
func (j *Journal) AppendNoSync(typ string, step, eventSeq int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seq++
	b, err := json.Marshal(Record{Seq: j.seq, Time: time.Now().UTC(), Type: typ, Step: step, EventSeq: eventSeq})
	if err != nil {
		return err
	}
	_, err = j.f.Write(append(b, '\n'))
	return err
}

// Close closes the journal file.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f.Close()
}

// ReadJournal returns the complete records of the journal at path; torn is
// true when a partial last record was found (and ignored).
func ReadJournal(path string) (recs []Record, torn bool, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return recs, true, nil
		}
		recs = append(recs, r)
	}
	return recs, false, sc.Err()
}

// goodPrefix returns the byte length of the complete-record prefix, or -1.
func goodPrefix(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	var good int64
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break // no newline: torn
		}
		var r Record
		if json.Unmarshal(b[:i], &r) != nil {
			break
		}
		good += int64(i + 1)
		b = b[i+1:]
	}
	return good
}
