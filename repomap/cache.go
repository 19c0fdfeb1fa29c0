package repomap

import (
	"bufio"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// cacheFormat changes whenever the entry layout or the extraction changes;
// the query files are hashed in too, so editing a query invalidates the cache.
const cacheFormat = "cairn-repomap-v7"

var cacheVersion = sync.OnceValue(func() string {
	h := sha256.New()
	h.Write([]byte(cacheFormat))
	names, _ := fs.Glob(queryFS, "queries/*.scm")
	sort.Strings(names)
	for _, n := range names {
		b, _ := queryFS.ReadFile(n)
		h.Write([]byte(n))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
})

type cacheFile struct {
	Version string
	Entries []*entry
}

const cacheName = "tags.gob"

func (m *Map) cachePath() string {
	if m.opts.CacheDir == "" {
		return ""
	}
	return filepath.Join(m.opts.CacheDir, cacheName)
}

// loadCache reads the tags cache; a missing, corrupt or outdated cache is
// an empty one.
func (m *Map) loadCache() (map[string]*entry, error) {
	p := m.cachePath()
	if p == "" {
		return nil, errors.New("no cache dir")
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var cf cacheFile
	if err := gob.NewDecoder(bufio.NewReaderSize(f, 1<<16)).Decode(&cf); err != nil {
		return nil, fmt.Errorf("repomap: reading cache: %w", err)
	}
	if cf.Version != cacheVersion() {
		return nil, errors.New("repomap: cache version mismatch")
	}
	out := make(map[string]*entry, len(cf.Entries))
	for _, e := range cf.Entries {
		if e == nil || e.Rel == "" {
			continue
		}
		if e.Tags != nil {
			e.Tags.Path = e.Rel
		}
		out[e.Rel] = e
	}
	return out, nil
}

// SaveCache writes the tags cache when the map changed since the last save.
// The write is atomic (temporary file and rename).
func (m *Map) SaveCache() error {
	p := m.cachePath()
	if p == "" {
		return nil
	}
	m.mu.RLock()
	if m.cacheGen == m.gen {
		m.mu.RUnlock()
		return nil
	}
	gen := m.gen
	cf := cacheFile{Version: cacheVersion(), Entries: make([]*entry, 0, len(m.files))}
	for _, e := range m.files {
		cf.Entries = append(cf.Entries, e)
	}
	m.mu.RUnlock()
	sort.Slice(cf.Entries, func(i, j int) bool { return cf.Entries[i].Rel < cf.Entries[j].Rel })
	if err := os.MkdirAll(m.opts.CacheDir, 0o755); err != nil {
		return fmt.Errorf("repomap: cache dir: %w", err)
	}
	tmp, err := os.CreateTemp(m.opts.CacheDir, cacheName+".tmp*")
	if err != nil {
		return fmt.Errorf("repomap: writing cache: %w", err)
	}
	w := bufio.NewWriterSize(tmp, 1<<16)
	err = gob.NewEncoder(w).Encode(&cf)
	if err == nil {
		err = w.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("repomap: writing cache: %w", err)
	}
	m.mu.Lock()
	if m.cacheGen < gen {
		m.cacheGen = gen
	}
	m.mu.Unlock()
	return nil
}
