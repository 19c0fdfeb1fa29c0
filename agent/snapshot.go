package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/checkpoint"
	"github.com/cairn-dev/cairn/workspace"
)

// Snapshot caps: a command's file snapshot covers at most this many files
// and bytes; what is left out is reported, never silently skipped.
const (
	snapshotMaxFiles = 5000
	snapshotMaxBytes = 64 << 20
)

type fileStat struct {
	size int64
	mod  int64
	hash string // blob of the content, "" when over the caps
}

// snapshot records the workspace's files (stat and content blobs) before a
// command that may write, so a rewind can put back what it changed.
type snapshot struct {
	files  map[string]fileStat
	capped int // files not covered by the caps
}

func takeSnapshot(ws *workspace.Workspace, blobs *checkpoint.Blobs) *snapshot {
	files, _ := ws.Walk(workspace.WalkOptions{})
	s := &snapshot{files: make(map[string]fileStat, len(files))}
	var total int64
	for i, f := range files {
		st := fileStat{size: f.Size, mod: f.Mod}
		if i < snapshotMaxFiles && total+f.Size <= snapshotMaxBytes {
			if b, err := os.ReadFile(f.Abs); err == nil {
				if h, err := blobs.Put(string(b)); err == nil {
					st.hash = h
					total += f.Size
				}
			}
		}
		if st.hash == "" {
			s.capped++
		}
		s.files[f.Rel] = st
	}
	return s
}

// commandChange is one file a command changed.
type commandChange struct {
	Rel          string `json:"rel"`
	BeforeExists bool   `json:"beforeExists"`
	Before       string `json:"before,omitempty"` // blob hash; "" when not covered
	AfterExists  bool   `json:"afterExists"`
	After        string `json:"after,omitempty"`
}

type commandChangesRecord struct {
	CallID  string          `json:"callId"`
	Changes []commandChange `json:"changes"`
	// NotCovered counts files the snapshot caps left out: their changes,
	// if any, cannot be restored.
	NotCovered int `json:"notCovered,omitempty"`
}

// diff compares the workspace now with the snapshot: changed (by size,
// mtime, then hash), created and deleted files.
func (s *snapshot) diff(ws *workspace.Workspace, blobs *checkpoint.Blobs) []commandChange {
	files, _ := ws.Walk(workspace.WalkOptions{})
	var out []commandChange
	seen := map[string]bool{}
	for _, f := range files {
		seen[f.Rel] = true
		before, existed := s.files[f.Rel]
		if existed && before.size == f.Size && before.mod == f.Mod {
			continue
		}
		b, err := os.ReadFile(f.Abs)
		if err != nil {
			continue
		}
		h, err := blobs.Put(string(b))
		if err != nil || (existed && h == before.hash) {
			continue
		}
		out = append(out, commandChange{Rel: f.Rel, BeforeExists: existed, Before: before.hash, AfterExists: true, After: h})
	}
	for rel, before := range s.files {
		if !seen[rel] {
			out = append(out, commandChange{Rel: rel, BeforeExists: true, Before: before.hash})
		}
	}
	return out
}

// restoreCommandChanges puts files back as they were before a command,
// writing them directly (the command changed them on disk, not through the
// editor). A file the command created is deleted; a file is skipped, and
// reported, when it changed again since or its old content was not covered.
func restoreCommandChanges(ws *workspace.Workspace, blobs *checkpoint.Blobs, changes []commandChange) (restored []string, problems []string) {
	for _, c := range changes {
		abs, err := ws.ResolveWritable(c.Rel)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", c.Rel, err))
			continue
		}
		cur, err := os.ReadFile(abs)
		exists := err == nil
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			problems = append(problems, fmt.Sprintf("%s: %v", c.Rel, err))
			continue
		}
		if exists != c.AfterExists || (exists && workspace.Hash(string(cur)) != c.After) {
			problems = append(problems, fmt.Sprintf("%s changed again after the command; left as it is", c.Rel))
			continue
		}
		switch {
		case !c.BeforeExists:
			if err := os.Remove(abs); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", c.Rel, err))
				continue
			}
		case c.Before == "":
			problems = append(problems, fmt.Sprintf("%s was not in the snapshot (caps); cannot restore it", c.Rel))
			continue
		default:
			text, err := blobs.Get(c.Before)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", c.Rel, err))
				continue
			}
			if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", c.Rel, err))
				continue
			}
			if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", c.Rel, err))
				continue
			}
		}
		restored = append(restored, c.Rel)
	}
	return restored, problems
}
