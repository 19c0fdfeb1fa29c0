// Package codeindex keeps a workspace's two code indexes — the repo map
// (repomap) and the search index (search) — fresh from one parse per file:
// the map parses with tree-sitter, and the search index takes its
// declarations from the map instead of parsing again. It builds both in the
// background at start (queries are served meanwhile, from what is indexed
// so far), follows file-watcher events and editor saves, and serves the
// search_code and repo_map tools and the context engine.
package codeindex

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/repomap"
	"github.com/cairn-dev/cairn/search"
	"github.com/cairn-dev/cairn/workspace"
)

// Progress reports indexing: Kind is "repo map" or "search index".
type Progress struct {
	Kind        string
	Done, Total int
	Finished    bool
	Message     string
}

// Options configure the indexes.
type Options struct {
	// StateDir holds the tags cache (StateDir/repomap) and the search index
	// (StateDir/search).
	StateDir string
	// Progress, when set, is called as indexing advances ($/progress).
	Progress func(Progress)
	// NoWatch disables the file watcher (one-shot command-line use).
	NoWatch bool
}

// Index is the pair of indexes of one workspace.
type Index struct {
	ws     *workspace.Workspace
	Map    *repomap.Map
	Search *search.Index
	opts   Options

	mapBuilt chan struct{} // closed when the initial map build ended
	lock     *os.File      // flock on StateDir/search.lock while Search is open

	mu      sync.Mutex
	pending map[string]string // unsaved editor text waiting for a pause in typing
	typing  *time.Timer
	saved   map[string]bool // saved files waiting to be re-indexed
	saving  *time.Timer
}

// Open creates the indexes (nothing is parsed until Start). A search index
// that cannot be opened leaves Search nil; the map alone still works.
func Open(ws *workspace.Workspace, opts Options) (*Index, error) {
	if opts.StateDir == "" {
		return nil, errors.New("codeindex: StateDir is required")
	}
	ix := &Index{ws: ws, opts: opts, mapBuilt: make(chan struct{})}
	// One server at a time owns the search index of a workspace (two editor
	// windows on one folder start two servers): the other runs without it
	// rather than wait on the index's file lock.
	lock, err := lockFile(filepath.Join(opts.StateDir, "search.lock"))
	ix.Map = repomap.New(ws, repomap.Options{
		CacheDir: filepath.Join(opts.StateDir, "repomap"),
		Progress: func(done, total int) { ix.progress(Progress{Kind: "repo map", Done: done, Total: total}) },
	})
	if err != nil {
		return ix, fmt.Errorf("the search index is in use by another Cairn server for this workspace; search is off in this one: %w", err)
	}
	ix.lock = lock
	s, err := search.Open(ws, search.Options{
		StateDir:  opts.StateDir,
		DeclsFunc: ix.decls,
		Progress: func(p search.Progress) {
			ix.progress(Progress{Kind: "search index", Done: p.Done, Total: p.Total, Finished: p.Phase == "done", Message: p.Message})
		},
	})
	if err != nil {
		return ix, fmt.Errorf("opening the search index: %w", err)
	}
	ix.Search = s
	return ix, nil
}

func (ix *Index) progress(p Progress) {
	if ix.opts.Progress != nil {
		ix.opts.Progress(p)
	}
}

// decls gives the search index the declarations of a file from the repo
// map's parse when the map has this content, parsing only otherwise.
func (ix *Index) decls(rel, lang string, content []byte) []search.Decl {
	var tags *repomap.FileTags
	if ft, ok := ix.Map.Tags(rel); ok && ft.Hash == workspace.Hash(string(content)) {
		tags = ft
	} else {
		ft, err := repomap.ParseFile(rel, content)
		if err != nil {
			return nil // no grammar: the search index chunks by line windows
		}
		tags = ft
	}
	out := make([]search.Decl, 0, len(tags.Decls))
	for _, d := range tags.Decls {
		out = append(out, search.Decl{Symbol: d.Symbol, Kind: d.Kind, StartLine: d.StartLine, EndLine: d.EndLine})
	}
	return out
}

// Start builds the map (from the cache where it can), then reconciles the
// search index (reusing the map's parses), then watches for changes until
// ctx ends. It returns at once.
func (ix *Index) Start(ctx context.Context) {
	go func() {
		stats, err := ix.Map.Build(ctx)
		if err != nil && ctx.Err() == nil {
			slog.Warn("building the repo map", "err", err)
		}
		close(ix.mapBuilt)
		ix.progress(Progress{Kind: "repo map", Done: stats.Files, Total: stats.Files, Finished: true,
			Message: fmt.Sprintf("%d files (%d parsed, %d from cache)", stats.Files, stats.Parsed, stats.Files-stats.Parsed)})
		if err := ix.Map.SaveCache(); err != nil {
			slog.Warn("saving the repo map cache", "err", err)
		}
		if ix.Search != nil {
			ix.Search.Start(ctx)
		}
		if ix.opts.NoWatch || ctx.Err() != nil {
			return
		}
		err = ix.Map.Watch(ctx, repomap.WatchOptions{OnChange: func(rels []string) {
			if ix.Search == nil {
				return
			}
			for _, rel := range rels {
				if err := ix.Search.Update(rel); err != nil {
					slog.Debug("search index update", "file", rel, "err", err)
				}
			}
		}})
		if err != nil && ctx.Err() == nil {
			slog.Warn("the file watcher stopped; indexes are refreshed on save only", "err", err)
		}
	}()
}

// Wait blocks until the initial map build and search reconcile are done.
func (ix *Index) Wait(ctx context.Context) error {
	select {
	case <-ix.mapBuilt:
	case <-ctx.Done():
		return ctx.Err()
	}
	if ix.Search != nil {
		return ix.Search.Wait(ctx)
	}
	return nil
}

// Ready reports whether the initial map build is done.
func (ix *Index) Ready() bool {
	select {
	case <-ix.mapBuilt:
		return true
	default:
		return false
	}
}

// typingQuiet is how long the editor must be quiet before unsaved text is
// re-parsed: didChange arrives per keystroke, and parsing on each would
// hold up the notifications behind it.
const typingQuiet = 300 * time.Millisecond

// DocumentChanged updates the map from the editor's unsaved text, once the
// typing pauses (debounced per file, off the caller's goroutine).
func (ix *Index) DocumentChanged(abs, text string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.pending == nil {
		ix.pending = map[string]string{}
	}
	ix.pending[abs] = text
	if ix.typing == nil {
		ix.typing = time.AfterFunc(typingQuiet, ix.flushTyping)
	} else {
		ix.typing.Reset(typingQuiet)
	}
}

func (ix *Index) flushTyping() {
	ix.mu.Lock()
	pending := ix.pending
	ix.pending = nil
	ix.mu.Unlock()
	for abs, text := range pending {
		rel := ix.ws.Rel(abs)
		if strings.HasPrefix(rel, "..") || ix.ws.Ignored(rel) {
			continue
		}
		_ = ix.Map.Update(rel, []byte(text))
	}
}

// DocumentSaved updates both indexes from the saved file, shortly after
// and off the caller's goroutine (the LSP read loop), one file at a time.
func (ix *Index) DocumentSaved(abs string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.saved == nil {
		ix.saved = map[string]bool{}
	}
	ix.saved[abs] = true
	if ix.saving == nil {
		ix.saving = time.AfterFunc(saveQuiet, ix.flushSaves)
	} else {
		ix.saving.Reset(saveQuiet)
	}
}

// saveQuiet batches saves that come together (save all).
const saveQuiet = 50 * time.Millisecond

func (ix *Index) flushSaves() {
	ix.mu.Lock()
	saved := ix.saved
	ix.saved = nil
	ix.mu.Unlock()
	for abs := range saved {
		rel := ix.ws.Rel(abs)
		if strings.HasPrefix(rel, "..") || ix.ws.Ignored(rel) {
			continue
		}
		if b, err := os.ReadFile(abs); err == nil {
			_ = ix.Map.Update(rel, b)
		}
		if ix.Search != nil {
			_ = ix.Search.Update(rel)
		}
	}
}

// Close stops the search index (the watcher stops with Start's ctx).
func (ix *Index) Close() error {
	ix.mu.Lock()
	if ix.typing != nil {
		ix.typing.Stop()
	}
	if ix.saving != nil {
		ix.saving.Stop()
	}
	ix.mu.Unlock()
	var err error
	if ix.Search != nil {
		err = ix.Search.Close()
	}
	if ix.lock != nil {
		ix.lock.Close() // releases the flock
	}
	return err
}
