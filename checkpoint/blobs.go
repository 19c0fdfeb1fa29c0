// Package checkpoint keeps what is needed to take things back: a durable
// journal per run, content-addressed blobs, and file checkpoints (the base
// hash and patch of every file an accepted edit changed) from which undo
// restores files exactly.
package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/workspace"
)

// Blobs stores file contents once, by hash.
type Blobs struct{ dir string }

// NewBlobs stores under dir.
func NewBlobs(dir string) *Blobs { return &Blobs{dir: dir} }

func (b *Blobs) path(hash string) string {
	if len(hash) < 3 {
		return filepath.Join(b.dir, hash)
	}
	return filepath.Join(b.dir, hash[:2], hash)
}

// Put stores text and returns its hash. Writing is atomic (temp + rename).
func (b *Blobs) Put(text string) (string, error) {
	h := workspace.Hash(text)
	p := b.path(h)
	if _, err := os.Stat(p); err == nil {
		return h, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", fmt.Errorf("storing blob: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".blob-*")
	if err != nil {
		return "", fmt.Errorf("storing blob: %w", err)
	}
	if _, err := tmp.WriteString(text); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("storing blob: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("storing blob: %w", err)
	}
	tmp.Close()
	if err := os.Rename(tmp.Name(), p); err != nil {
		return "", fmt.Errorf("storing blob: %w", err)
	}
	return h, nil
}

// Get returns the text stored under hash, verifying it.
func (b *Blobs) Get(hash string) (string, error) {
	data, err := os.ReadFile(b.path(hash))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("blob %s is missing", hash)
	}
	if err != nil {
		return "", fmt.Errorf("reading blob %s: %w", hash, err)
	}
	if workspace.Hash(string(data)) != hash {
		return "", fmt.Errorf("blob %s is corrupt", hash)
	}
	return string(data), nil
}
