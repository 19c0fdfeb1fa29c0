package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
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

// Journal is a run's durable, append-only log, synced after each append.
// Each record is one line framed as "<length> <crc32c> <json>\n" (see
// frame), so a damaged record is detected and skipped without losing the
// records after it, and a torn last line (a crash mid-write) is cut when the
// journal is reopened.
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
	b, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading the journal: %w", err)
	}
	c := ParseJournal(b)
	// Cut a torn tail so the next append starts on a clean line. A damaged
	// but complete line stays: it tells later readers a record was lost.
	if c.clean < int64(len(b)) {
		if err := f.Truncate(c.clean); err != nil {
			f.Close()
			return nil, fmt.Errorf("truncating a torn journal tail: %w", err)
		}
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return nil, fmt.Errorf("opening the journal: %w", err)
	}
	j := &Journal{f: f, Path: path}
	for _, r := range c.Records {
		j.seq = max(j.seq, r.Seq)
	}
	if d := len(c.Damaged); d > 0 && c.Damaged[d-1].Before == len(c.Records) {
		j.seq++ // the damaged last record had a number too: keep them unique
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
	if _, err := j.f.Write(frame(b)); err != nil {
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
	_, err = j.f.Write(frame(b))
	return err
}

// Close closes the journal file.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.f.Close()
}

// ReadJournal returns the readable records of the journal at path; torn is
// true when a partial last record was found (and ignored). Damaged records
// are skipped; LoadJournal says where they were.
func ReadJournal(path string) (recs []Record, torn bool, err error) {
	c, err := LoadJournal(path)
	return c.Records, c.Torn, err
}

// LoadJournal reads and parses the journal at path.
func LoadJournal(path string) (Contents, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Contents{}, err
	}
	return ParseJournal(b), nil
}

// Contents is what a journal holds: its readable records in order, where
// unreadable ones were skipped, and whether it ends with a torn write.
type Contents struct {
	Records []Record
	// Damaged lists the stretches of the journal that could not be read,
	// in order. Each is a record (or a few) lost to corruption.
	Damaged []Damage
	// Torn is true when the journal ends with a partial record: the write
	// that was under way when the process stopped.
	Torn bool
	// clean is the length of the journal up to and including its last
	// complete line: where the next append goes.
	clean int64
}

// Damage is one unreadable stretch of a journal.
type Damage struct {
	Offset int64 // byte offset in the file
	Bytes  int
	// Before is the index in Records of the first record after the damage.
	Before int
}

// RecUnreadable marks, in WithDamage's output, where a damaged record was.
const RecUnreadable = "unreadable"

// WithDamage returns the records with a RecUnreadable record in place of
// each damaged stretch. Its Step is that of the record before it (the step
// the lost record most likely belonged to) and its Seq is 0.
func (c Contents) WithDamage() []Record {
	if len(c.Damaged) == 0 {
		return c.Records
	}
	out := make([]Record, 0, len(c.Records)+len(c.Damaged))
	d := 0
	for i := 0; i <= len(c.Records); i++ {
		for ; d < len(c.Damaged) && c.Damaged[d].Before == i; d++ {
			mark := Record{Type: RecUnreadable}
			if i > 0 {
				mark.Step, mark.Time, mark.EventSeq = c.Records[i-1].Step, c.Records[i-1].Time, c.Records[i-1].EventSeq
			}
			mark.Data, _ = json.Marshal(map[string]any{"offset": c.Damaged[d].Offset, "bytes": c.Damaged[d].Bytes})
			out = append(out, mark)
		}
		if i < len(c.Records) {
			out = append(out, c.Records[i])
		}
	}
	return out
}

// crcTable is CRC-32C (Castagnoli), the checksum of each framed record.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// frame returns one journal line: "<length> <crc32c as 8 hex digits> <json>\n".
// The length lets a reader step over a record even when its newline was
// damaged; the checksum catches any changed byte. JSON encoding never
// produces a raw newline, so lines also resynchronize a reader after a
// damaged length.
func frame(payload []byte) []byte {
	out := make([]byte, 0, len(payload)+20)
	out = strconv.AppendInt(out, int64(len(payload)), 10)
	out = append(out, ' ')
	out = append(out, fmt.Sprintf("%08x", crc32.Checksum(payload, crcTable))...)
	out = append(out, ' ')
	out = append(out, payload...)
	return append(out, '\n')
}

// unframe reads the framed record at the start of b. It returns the record,
// the bytes it spans (its newline included when present) and whether it is
// intact. Lines in the older unframed format (a bare JSON object) are
// accepted when they parse.
func unframe(b []byte) (Record, int, bool) {
	var r Record
	if len(b) > 0 && b[0] == '{' { // the format before framing
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 || json.Unmarshal(b[:nl], &r) != nil || r.Type == "" {
			return r, 0, false
		}
		return r, nl + 1, true
	}
	sp := bytes.IndexByte(b, ' ')
	if sp <= 0 || sp > 10 {
		return r, 0, false
	}
	n, err := strconv.Atoi(string(b[:sp]))
	if err != nil || n < 0 {
		return r, 0, false
	}
	hdr := sp + 1 + 8 + 1
	if len(b) < hdr+n || b[hdr-1] != ' ' {
		return r, 0, false
	}
	want, err := strconv.ParseUint(string(b[sp+1:hdr-1]), 16, 32)
	payload := b[hdr : hdr+n]
	if err != nil || uint32(want) != crc32.Checksum(payload, crcTable) {
		return r, 0, false
	}
	if json.Unmarshal(payload, &r) != nil {
		return r, 0, false
	}
	end := hdr + n
	if end < len(b) && b[end] == '\n' {
		end++
	}
	return r, end, true
}

// ParseJournal parses journal bytes: every intact record, in order; each
// damaged stretch (up to the next line that reads) is skipped and listed;
// a partial last line is a torn write.
func ParseJournal(b []byte) Contents {
	var c Contents
	var off int64
	damageStart := int64(-1)
	unterminated := false // the last record's newline was damaged
	for len(b) > 0 {
		r, n, ok := unframe(b)
		if !ok && unterminated && len(b) > 1 {
			// The newline was overwritten by another byte: step over it.
			if r, n, ok = unframe(b[1:]); ok {
				n++
			}
		}
		if ok {
			unterminated = b[n-1] != '\n'
			if damageStart >= 0 {
				c.Damaged = append(c.Damaged, Damage{Offset: damageStart, Bytes: int(off - damageStart), Before: len(c.Records)})
				damageStart = -1
			}
			c.Records = append(c.Records, r)
			off += int64(n)
			b = b[n:]
			c.clean = off
			continue
		}
		unterminated = false
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			// No newline: the write under way when the process stopped.
			c.Torn = true
			break
		}
		if damageStart < 0 {
			damageStart = off
		}
		off += int64(nl + 1)
		b = b[nl+1:]
		c.clean = off
	}
	if damageStart >= 0 {
		c.Damaged = append(c.Damaged, Damage{Offset: damageStart, Bytes: int(c.clean - damageStart), Before: len(c.Records)})
	}
	return c
}
