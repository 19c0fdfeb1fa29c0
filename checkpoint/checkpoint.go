package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/workspace"
)

// FileState is one file of a checkpoint: what it was before the accepted
// edit and what the edit left. Contents are blobs; Patch is the unified diff,
// kept for people and traces.
type FileState struct {
	Rel          string `json:"rel"`
	BeforeExists bool   `json:"beforeExists"`
	BeforeHash   string `json:"beforeHash,omitempty"`
	AfterExists  bool   `json:"afterExists"`
	AfterHash    string `json:"afterHash,omitempty"`
	Patch        string `json:"patch"`
}

// Status of a checkpoint.
type Status string

const (
	StatusPending Status = "pending" // journaled, edit not yet confirmed applied
	StatusApplied Status = "applied"
	StatusFailed  Status = "failed" // the editor refused the edit
	StatusUndone  Status = "undone"
)

// Checkpoint records one accepted edit.
type Checkpoint struct {
	ID     string      `json:"id"`
	RunID  string      `json:"runId"`
	EditID string      `json:"editId"`
	Step   int         `json:"step"`
	Time   time.Time   `json:"time"`
	Status Status      `json:"status"`
	Files  []FileState `json:"files"`
}

// Store keeps checkpoints and blobs under a state directory.
type Store struct {
	mu    sync.Mutex
	dir   string
	Blobs *Blobs
	// NewID makes checkpoint ids (NewID when nil); evals inject a
	// deterministic one.
	NewID func(prefix string) string
}

// Open returns the store under stateDir (created on demand, owner-only).
func Open(stateDir string) (*Store, error) {
	dir := filepath.Join(stateDir, "checkpoints")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the checkpoint directory: %w", err)
	}
	return &Store{dir: dir, Blobs: NewBlobs(filepath.Join(stateDir, "blobs"))}, nil
}

// NewID returns a random id with a readable prefix.
func NewID(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + "-" + hex.EncodeToString(b[:])
}

// Change is one file's before and after for Create.
type Change struct {
	Rel          string
	Before       string
	BeforeExists bool
	After        string
	AfterExists  bool
}

// Create journals a pending checkpoint: blobs first, then the record, so a
// crash at any point leaves either nothing or a complete record.
func (s *Store) Create(runID, editID string, step int, changes []Change) (*Checkpoint, error) {
	newID := s.NewID
	if newID == nil {
		newID = NewID
	}
	cp := &Checkpoint{ID: newID("cp"), RunID: runID, EditID: editID, Step: step, Time: time.Now().UTC(), Status: StatusPending}
	for _, c := range changes {
		fs := FileState{Rel: c.Rel, BeforeExists: c.BeforeExists, AfterExists: c.AfterExists}
		var err error
		if c.BeforeExists {
			if fs.BeforeHash, err = s.Blobs.Put(c.Before); err != nil {
				return nil, err
			}
		}
		if c.AfterExists {
			if fs.AfterHash, err = s.Blobs.Put(c.After); err != nil {
				return nil, err
			}
		}
		fs.Patch = workspace.UnifiedDiff(c.Rel, c.Before, c.After)
		cp.Files = append(cp.Files, fs)
	}
	if err := s.save(cp); err != nil {
		return nil, err
	}
	return cp, nil
}

// SetStatus updates a checkpoint's status durably.
func (s *Store) SetStatus(id string, st Status) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cp, err := s.load(id)
	if err != nil {
		return err
	}
	cp.Status = st
	return s.saveLocked(cp)
}

// Get loads a checkpoint.
func (s *Store) Get(id string) (*Checkpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load(id)
}

// List returns every checkpoint, oldest first.
func (s *Store) List() ([]*Checkpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []*Checkpoint
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		cp, err := s.load(strings.TrimSuffix(e.Name(), ".json"))
		if err == nil {
			out = append(out, cp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

func (s *Store) save(cp *Checkpoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saveLocked(cp)
}

func (s *Store) saveLocked(cp *Checkpoint) error {
	b, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(s.dir, cp.ID+".json"), b)
}

func (s *Store) load(id string) (*Checkpoint, error) {
	if strings.ContainsAny(id, `/\`) || id == "" {
		return nil, fmt.Errorf("invalid checkpoint id %q", id)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, id+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no checkpoint %q", id)
	}
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %w", id, err)
	}
	var cp Checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("checkpoint %s is corrupt: %w", id, err)
	}
	return &cp, nil
}

// writeFileAtomic writes via a synced temp file and rename.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Conflict is a file whose current text no longer matches what the
// checkpoint left, so undoing it would lose the user's work.
type Conflict struct {
	Rel    string
	Reason string
}

// Restore is one file to put back by undo.
type Restore struct {
	Rel           string
	Current       string
	CurrentExists bool
	Target        string
	TargetExists  bool
}

// PlanUndo compares the current text of every file (read returns the
// editor's copy or the disk) with what the checkpoint left, and returns the
// restores that are safe and the conflicts.
func (s *Store) PlanUndo(cp *Checkpoint, read func(rel string) (string, bool, error)) ([]Restore, []Conflict, error) {
	var restores []Restore
	var conflicts []Conflict
	for _, f := range cp.Files {
		cur, exists, err := read(f.Rel)
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", f.Rel, err)
		}
		switch {
		case exists != f.AfterExists:
			if exists {
				conflicts = append(conflicts, Conflict{f.Rel, "it was created again since the edit was accepted"})
			} else {
				conflicts = append(conflicts, Conflict{f.Rel, "it was deleted since the edit was accepted"})
			}
			continue
		case exists && workspace.Hash(cur) != f.AfterHash:
			conflicts = append(conflicts, Conflict{f.Rel, "it was changed since the edit was accepted"})
			continue
		}
		r := Restore{Rel: f.Rel, Current: cur, CurrentExists: exists, TargetExists: f.BeforeExists}
		if f.BeforeExists {
			t, err := s.Blobs.Get(f.BeforeHash)
			if err != nil {
				return nil, nil, err
			}
			r.Target = t
		}
		restores = append(restores, r)
	}
	return restores, conflicts, nil
}
