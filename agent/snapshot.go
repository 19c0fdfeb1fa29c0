package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

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
	hash string // of the content, "" when over the caps
	text string // the content, in memory only until the command has ended
}

// snapshot records the workspace's files (stat and content) before a
// command that may write, so a rewind can put back what it changed.
//
// Invariant: a snapshot writes nothing while it is taken. The contents stay
// in memory; after the command, only the previous content of the files it
// changed or deleted is stored as a blob (what a rewind needs), and of the
// files it created or changed only the hash of the new content is kept. So
// a secret file the command never touched (.env, a key) is never copied
// into the state directory, and one it changed is reported (secretChanged).
type snapshot struct {
	files  map[string]fileStat
	capped int // files not covered by the caps
}

func takeSnapshot(ws *workspace.Workspace) *snapshot {
	files, _ := ws.WalkAll(workspace.WalkOptions{AllFiles: true})
	s := &snapshot{files: make(map[string]fileStat, len(files))}
	var total int64
	for i, f := range files {
		st := fileStat{size: f.Size, mod: f.Mod}
		if i < snapshotMaxFiles && total+f.Size <= snapshotMaxBytes {
			if b, err := os.ReadFile(f.Abs); err == nil {
				st.text, st.hash = string(b), workspace.Hash(string(b))
				total += int64(len(b))
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
	After        string `json:"after,omitempty"` // hash of the content (not stored)
}

type commandChangesRecord struct {
	CallID  string          `json:"callId"`
	Changes []commandChange `json:"changes"`
	// NotCovered counts files the snapshot caps left out: their changes,
	// if any, cannot be restored.
	NotCovered int `json:"notCovered,omitempty"`
	// SecretFiles are the changed files that hold secrets: their previous
	// content is stored (for rewind) although it is secret.
	SecretFiles []string `json:"secretFiles,omitempty"`
}

// diff compares the workspace now with the snapshot: changed (by size,
// mtime, then hash), created and deleted files. The previous content of
// each changed or deleted file is stored in blobs; isSecret tells which of
// them hold secrets (secretChanged lists those).
func (s *snapshot) diff(ws *workspace.Workspace, blobs *checkpoint.Blobs, isSecret func(rel, text string) bool) (out []commandChange, secretChanged []string) {
	files, _ := ws.WalkAll(workspace.WalkOptions{AllFiles: true})
	seen := map[string]bool{}
	keep := func(rel string, before fileStat) string {
		if before.hash == "" {
			return ""
		}
		h, err := blobs.Put(before.text)
		if err != nil {
			slog.Error("storing a file's content before a command", "file", rel, "err", err)
			return ""
		}
		if isSecret != nil && isSecret(rel, before.text) {
			secretChanged = append(secretChanged, rel)
		}
		return h
	}
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
		h := workspace.Hash(string(b))
		if existed && h == before.hash {
			continue
		}
		c := commandChange{Rel: f.Rel, BeforeExists: existed, AfterExists: true, After: h}
		if existed {
			c.Before = keep(f.Rel, before)
		}
		out = append(out, c)
	}
	for rel, before := range s.files {
		if !seen[rel] {
			out = append(out, commandChange{Rel: rel, BeforeExists: true, Before: keep(rel, before)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	sort.Strings(secretChanged)
	return out, secretChanged
}

// secretFileNote is what the tool result and the journal say about a
// secret file a command changed.
func secretFileNote(rels []string) string {
	if len(rels) == 0 {
		return ""
	}
	return fmt.Sprintf("\n[%s holds secrets and was changed by the command; its previous content is kept in the state directory for rewind]",
		strings.Join(rels, ", "))
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
