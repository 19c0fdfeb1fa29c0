package tools

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// AuditRecord is one line of the audit log. Prev is the hash of the previous
// line, so removing or editing a record breaks the chain (Verify finds it).
type AuditRecord struct {
	Time     time.Time `json:"time"`
	RunID    string    `json:"runId"`
	Step     int       `json:"step"`
	CallID   string    `json:"callId"`
	Tool     string    `json:"tool"`
	Risk     Risk      `json:"risk"`
	Input    string    `json:"input"`
	Decision Decision  `json:"decision"`
	By       string    `json:"by"`
	Prev     string    `json:"prev"`
}

// AuditLog is an append-only JSONL file under the state dir.
type AuditLog struct {
	mu     sync.Mutex
	path   string
	last   string
	redact func(string) string
}

// OpenAuditLog opens (creating) the log at path; redact masks secrets in
// every text of a record (input summary, tool, who decided, ids) before it
// is written.
func OpenAuditLog(path string, redact func(string) string) (*AuditLog, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the audit log directory: %w", err)
	}
	a := &AuditLog{path: path, redact: redact}
	f, err := os.Open(path)
	if err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if len(sc.Bytes()) > 0 {
				a.last = lineHash(sc.Bytes())
			}
		}
		f.Close()
	}
	return a, nil
}

func lineHash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// Append writes one record, chained to the previous one, and syncs.
func (a *AuditLog) Append(r AuditRecord) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.redact != nil { // every text of the record, not only the input
		r.Input, r.Tool, r.By, r.CallID, r.RunID = a.redact(r.Input), a.redact(r.Tool), a.redact(r.By), a.redact(r.CallID), a.redact(r.RunID)
	}
	r.Prev = a.last
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(a.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(append(b, '\n')); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	a.last = lineHash(b)
	return nil
}

// ReadAudit reads every record of the log at path.
func ReadAudit(path string) ([]AuditRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return out, fmt.Errorf("audit record %d is not valid JSON: %w", len(out)+1, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
}

// VerifyAudit checks the hash chain; it returns the 1-based line of the first
// break, or 0 when the chain is intact.
func VerifyAudit(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	prev, n := "", 0
	for sc.Scan() {
		n++
		var r AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Prev != prev {
			return n, nil
		}
		prev = lineHash(sc.Bytes())
	}
	return 0, sc.Err()
}
