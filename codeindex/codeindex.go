// Package codeindex is Cairn's code index: one API (Index) over the
// workspace's two engines — the repo map (repomap: tree-sitter tags,
// ranking, rendering) and the search index (search: bleve) — kept fresh
// from one change stream (the workspace's watcher plus editor
// notifications, one debounce) and one reconcile that feeds both. The map
// parses each file once; the search index takes its declarations from that
// parse instead of parsing again.
package codeindex

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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
	// NoWatch watches nothing on disk (one-shot command-line use): the
	// index follows only DocumentChanged/DocumentSaved and Reconcile.
	NoWatch bool
	// NoSearch opens no search index (the repo map alone).
	NoSearch bool
	// NoMap neither loads nor builds the repo map (`cairn search`: the
	// search index alone; declarations of changed files are parsed as
	// they are indexed).
	NoMap bool
	// Watch tunes the change stream (tests shorten the debounce).
	Watch workspace.WatchOptions
	// ExcludePath, when set, keeps files out of both indexes by their
	// path (search.Options.Exclude, repomap.Options.Exclude): the server
	// passes its secret detector, so a path holding a secret is not stored.
	ExcludePath func(rel string) bool
	// Redact masks secrets in the text the search index stores, keeping
	// every line (search.Options.Redact).
	Redact func(text []byte) []byte
}

// Local is the embedded index of one workspace: the repo map and the bleve
// search index, in this process. It implements Index.
type Local struct {
	ws     *workspace.Workspace
	m      *repomap.Map
	s      *search.Index // nil: no search in this session
	opts   Options
	watch  *workspace.Watcher
	ready  chan struct{} // closed when the first full build of both ended
	mapped chan struct{} // closed when the first full build of the map ended
	lock   *os.File      // flock on StateDir/search.lock while s is open
	saving sync.Mutex    // one tags-cache write at a time

	remote atomic.Pointer[remote] // nil: searches are local (SetRemote)
	// applied, when set, hears the end of each batch of the change stream
	// (the latency benchmarks wait on it instead of polling the index,
	// whose searches would compete with the batch for the CPU).
	applied atomic.Pointer[func()]

	mu        sync.Mutex
	unsaved   map[string]string // editor text waiting for the next batch, by rel
	started   bool
	building  bool
	cancel    context.CancelFunc  // stops Start's goroutine
	saveTimer *time.Timer         // a pending tags-cache write
	saveFirst time.Time           // when saveTimer was first set
	latest    map[string]Progress // the latest progress of each kind still building
	mapDone   bool                // mapped is closed
	rescanned []func()            // ScopeChanged callbacks, for the next rescan's end
	listing   workspace.Lister    // the first rescan's, started by Open; nil once taken
	closed    bool
	running   sync.WaitGroup
}

var _ Index = (*Local)(nil)

// Open creates the indexes and starts reading, in the background, what
// the first rescan (Start or Reconcile) needs: the tags cache and the
// listing of the tree. A file changed after Open and before that rescan
// ends may be missed by it, as one changed during any rescan is; the
// watcher, the editor's didSave or the next rescan bring it in. A
// search index that cannot be opened leaves the session without search
// (ErrNoSearch) and returns the reason along with a working map.
func Open(ws *workspace.Workspace, opts Options) (*Local, error) {
	if opts.StateDir == "" {
		return nil, errors.New("codeindex: StateDir is required")
	}
	watchOpts := opts.Watch
	watchOpts.NoFS = watchOpts.NoFS || opts.NoWatch
	ix := &Local{ws: ws, opts: opts, ready: make(chan struct{}), mapped: make(chan struct{}), latest: map[string]Progress{}, unsaved: map[string]string{}, watch: ws.NewWatcher(watchOpts)}
	ix.m = repomap.New(ws, repomap.Options{
		CacheDir:       filepath.Join(opts.StateDir, "repomap"),
		Exclude:        opts.ExcludePath,
		DeferCacheSave: true, // rescan saves it (saveAfterBuild)
		Progress:       func(done, total int) { ix.progress(Progress{Kind: "repo map", Done: done, Total: total}) },
	})
	if !opts.NoMap {
		// The map's cache is decoded while the search index opens (its
		// manifest read): the first rescan would otherwise wait for both
		// one after the other.
		ix.m.ReadCache()
	}
	if !opts.NoMap || !opts.NoSearch {
		// So is the first rescan's listing of the tree (a stat per file,
		// most of it waiting on the kernel): by the time Start asks for
		// it, it is done or nearly. Asked with the options both engines
		// use; a caller asking otherwise gets a walk of its own.
		list := onceListing(ws)
		ix.listing = list
		ix.running.Add(1)
		go func() {
			defer ix.running.Done()
			list(workspace.WalkOptions{MaxFileSize: repomap.DefaultMaxFileSize})
		}()
	}
	if opts.NoSearch {
		return ix, nil
	}
	// One server at a time owns the search index of a workspace (two editor
	// windows on one folder start two servers): the other runs without it
	// rather than wait on the index's file lock.
	lock, err := lockFile(filepath.Join(opts.StateDir, "search.lock"))
	if err != nil {
		return ix, fmt.Errorf("the search index is in use by another Cairn server for this workspace; search is off in this one: %w", err)
	}
	ix.lock = lock
	s, err := search.Open(ws, search.Options{
		StateDir:  opts.StateDir,
		DeclsFunc: ix.decls,
		Exclude:   opts.ExcludePath,
		Redact:    opts.Redact,
		Progress: func(p search.Progress) {
			ix.progress(Progress{Kind: "search index", Done: p.Done, Total: p.Total, Finished: p.Phase == "done", Message: p.Message})
		},
	})
	if err != nil {
		ix.lock.Close()
		ix.lock = nil
		return ix, fmt.Errorf("opening the search index: %w", err)
	}
	ix.s = s
	return ix, nil
}

func (ix *Local) progress(p Progress) {
	ix.mu.Lock()
	if p.Finished {
		delete(ix.latest, p.Kind)
	} else {
		ix.latest[p.Kind] = p
	}
	ix.mu.Unlock()
	if ix.opts.Progress != nil {
		ix.opts.Progress(p)
	}
}

// decls gives the search index the declarations of a file from the repo
// map's parse when the map has this content. Files the map skips
// (generated, minified, binary) are chunked by line windows without a
// parse; others are parsed here.
func (ix *Local) decls(rel, lang string, content []byte) []search.Decl {
	var tags *repomap.FileTags
	if ft, ok := ix.m.TagsOf(rel, content); ok {
		tags = ft
	} else {
		if repomap.LanguageOf(rel) == "" || ix.m.Skips(rel, content) != "" {
			return nil
		}
		ft, err := repomap.ParseFile(rel, content)
		if err != nil {
			return nil // the search index chunks by line windows
		}
		tags = ft
	}
	decls := tags.Decls()
	out := make([]search.Decl, 0, len(decls))
	for _, d := range decls {
		out = append(out, search.Decl{Symbol: d.Symbol, Kind: d.Kind, StartLine: d.StartLine, EndLine: d.EndLine})
	}
	return out
}

// Start builds both indexes in the background (the map first, from its
// cache where it can, then the search index reusing the map's parses),
// then follows the change stream until ctx ends. It returns at once;
// queries are served meanwhile from what is indexed so far.
func (ix *Local) Start(ctx context.Context) {
	ix.mu.Lock()
	if ix.started {
		ix.mu.Unlock()
		return
	}
	ix.started = true
	ctx, ix.cancel = context.WithCancel(ctx)
	ix.running.Add(1)
	ix.mu.Unlock()
	go func() {
		defer ix.running.Done()
		ix.rescan(ctx)
		ix.markMapped()
		close(ix.ready)
		if ctx.Err() != nil {
			return
		}
		_ = ix.watch.Run(ctx, func(ch workspace.Change) { ix.apply(ctx, ch) })
	}()
}

// Reconcile brings both indexes in line with the disk in the caller's
// goroutine (command-line use): the map, then the search index.
func (ix *Local) Reconcile(ctx context.Context) error {
	err := ix.rescan(ctx)
	ix.markMapped()
	ix.mu.Lock()
	if !ix.started {
		ix.started = true
		close(ix.ready)
	}
	ix.mu.Unlock()
	return err
}

// rescan walks the workspace and reconciles both engines with it, one
// after the other so their peaks do not add up.
func (ix *Local) rescan(ctx context.Context) error {
	ix.setBuilding(true)
	defer ix.setBuilding(false)
	var err error
	ix.mu.Lock()
	list := ix.listing // Open's, for the first rescan
	ix.listing = nil
	ix.mu.Unlock()
	if list == nil {
		list = onceListing(ix.ws)
	}
	if !ix.opts.NoMap {
		var stats repomap.BuildStats
		stats, err = ix.m.BuildListed(ctx, list)
		if err != nil && ctx.Err() == nil {
			slog.Warn("building the repo map", "err", err)
		}
		ix.saveAfterBuild(stats)
		ix.progress(Progress{Kind: "repo map", Done: stats.Files, Total: stats.Files, Finished: true,
			Message: fmt.Sprintf("%d files (%d parsed, %d from cache)", stats.Files, stats.Parsed, stats.Files-stats.Parsed)})
	}
	if ctx.Err() == nil {
		ix.markMapped()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if ix.s != nil {
		if _, serr := ix.s.ReconcileListed(ctx, list); serr != nil {
			if ctx.Err() == nil {
				slog.Warn("reconciling the search index", "err", serr)
			}
			if err == nil {
				err = serr
			}
		}
	}
	return err
}

// onceListing lists ws for a rescan: the map and the search index ask with
// the same walk options (the same size limit), so the tree is walked and
// stat'ed once for both. The first caller gets a copy; the second takes the
// listing itself, which is then forgotten (at 10× the Go tree it is ~12 MB
// that would otherwise stay live through the search build). A caller asking
// after that, or with other options, gets a walk of its own.
func onceListing(ws *workspace.Workspace) workspace.Lister {
	var (
		mu    sync.Mutex
		held  bool // files and st are a walk with opts that one caller has copied
		opts  workspace.WalkOptions
		files []workspace.File
		st    workspace.WalkStats
	)
	return func(o workspace.WalkOptions) ([]workspace.File, workspace.WalkStats) {
		mu.Lock()
		defer mu.Unlock()
		if held && o == opts {
			f, s := files, st
			held, files, st = false, nil, workspace.WalkStats{}
			return f, s
		}
		opts = o
		files, st = ws.Walk(o)
		held = true
		return slices.Clone(files), workspace.WalkStats{Files: st.Files, Skipped: maps.Clone(st.Skipped)}
	}
}

// markMapped records that the map's first full build ended.
func (ix *Local) markMapped() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !ix.mapDone {
		ix.mapDone = true
		close(ix.mapped)
	}
}

// NotReady names the engines whose first full build has not ended, in the
// words the context report uses: "repo map", "search".
func (ix *Local) NotReady() []string {
	var out []string
	select {
	case <-ix.mapped:
	default:
		if !ix.opts.NoMap {
			out = append(out, SourceMap)
		}
	}
	select {
	case <-ix.ready:
	default:
		if ix.s != nil && ix.remote.Load() == nil { // a remote backend's readiness is its own
			out = append(out, SourceSearch)
		}
	}
	return out
}

// Building returns the latest progress of each engine still building, the
// repo map first.
func (ix *Local) Building() []Progress {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var out []Progress
	for _, k := range []string{"repo map", "search index"} {
		if p, ok := ix.latest[k]; ok {
			out = append(out, p)
		}
	}
	return out
}

// Prioritize brings the given workspace-relative files into both engines
// now, in the caller's goroutine, ahead of a build that is still running:
// a question waits for the files it is about, not for the whole workspace.
// Files already indexed with the same content cost a hash; a build that
// reaches them later keeps the result (the search index's generations
// drop the build's stale copy, the map's build replaces the entry with one
// of the same content).
func (ix *Local) Prioritize(ctx context.Context, rels []string) {
	if ctx.Err() != nil {
		return
	}
	if !ix.opts.NoMap {
		ix.m.Refresh(rels...)
	}
	if ctx.Err() != nil || ix.s == nil {
		return
	}
	if err := ix.s.UpdateFiles(rels); err != nil {
		slog.Debug("search index: the question's files", "err", err)
	}
}

func (ix *Local) setBuilding(b bool) {
	ix.mu.Lock()
	ix.building = b
	ix.mu.Unlock()
}

// apply fans one batch of the change stream out to both engines: each
// path is re-read (the editor's unsaved text first, for the map) and
// updated or removed in the map and in the search index; a rescan
// reconciles both. The map's tags cache is written afterwards, in the
// background: the search index never waits for it.
func (ix *Local) apply(ctx context.Context, ch workspace.Change) {
	if ch.Rescan {
		ix.mu.Lock()
		done := ix.rescanned
		ix.rescanned = nil
		ix.mu.Unlock()
		ix.rescan(ctx)
		for _, f := range done {
			f()
		}
		return
	}
	ix.mu.Lock()
	unsaved := ix.unsaved
	ix.unsaved = map[string]string{}
	ix.mu.Unlock()
	var docs []string // Markdown: the map reads its Markdown files again once for all of them
	for _, rel := range ch.Paths {
		if text, ok := unsaved[rel]; ok && !ix.ws.Ignored(rel) {
			_ = ix.m.Update(rel, []byte(text))
		} else if repomap.IsMarkdown(rel) {
			docs = append(docs, rel)
		} else {
			ix.m.Refresh(rel)
		}
		if ix.s != nil {
			if err := ix.s.Update(rel); err != nil {
				slog.Debug("search index update", "file", rel, "err", err)
			}
		}
	}
	ix.m.Refresh(docs...)
	ix.saveCacheSoon()
	if f := ix.applied.Load(); f != nil {
		(*f)()
	}
}

// The map's tags cache is written when changes pause: cacheSaveQuiet
// after the last change, and at the latest cacheSaveMaxDelay after the
// first one not yet written. The cache is only a warm start's shortcut (a
// stale entry is re-parsed); writing it takes a core for a while, which,
// done often while the user saved file after file, was what delayed a
// save's visibility in search and map (BenchmarkDidSaveVisible's worst
// saves).
var (
	cacheSaveQuiet    = 10 * time.Second
	cacheSaveMaxDelay = 2 * time.Minute
)

// saveCacheSoon schedules the tags-cache write, or moves it back while
// changes keep coming.
func (ix *Local) saveCacheSoon() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return
	}
	if ix.saveTimer != nil {
		if time.Since(ix.saveFirst)+cacheSaveQuiet < cacheSaveMaxDelay {
			ix.saveTimer.Reset(cacheSaveQuiet)
		}
		return
	}
	ix.saveFirst = time.Now()
	ix.saveTimer = time.AfterFunc(cacheSaveQuiet, func() {
		ix.mu.Lock()
		ix.saveTimer = nil
		ix.mu.Unlock()
		ix.saving.Lock()
		defer ix.saving.Unlock()
		if err := ix.m.SaveCache(); err != nil {
			slog.Warn("saving the repo map cache", "err", err)
		}
	})
}

// saveAfterBuild saves the map's cache after a build that parsed files.
// After a warm start that found a few changed, the save waits for the
// quiet timer (saveCacheSoon) rather than delay readiness by re-encoding
// the whole cache; after a build that parsed much of the tree (a cold
// start) it starts at once, beside the search index's reconcile, so that
// a server killed soon after keeps that work.
func (ix *Local) saveAfterBuild(stats repomap.BuildStats) {
	switch {
	case stats.Parsed == 0:
		return // nothing new; Close saves whatever comes later
	case stats.Parsed*10 < stats.Files:
		ix.saveCacheSoon()
		return
	}
	ix.mu.Lock()
	closed := ix.closed
	if !closed {
		ix.running.Add(1) // Close waits for it before its own save
	}
	ix.mu.Unlock()
	if closed {
		return
	}
	go func() {
		defer ix.running.Done()
		ix.saving.Lock()
		defer ix.saving.Unlock()
		if err := ix.m.SaveCache(); err != nil {
			slog.Warn("saving the repo map cache", "err", err)
		}
	}()
}

// ScopeChanged follows a change of the workspace's index scope
// (workspace.SetScope): the change stream rescans, so files now outside
// the scope leave both engines and files now inside it enter them, and
// the watcher watches the directories the scope now holds. done, when
// set, is called when that rescan ended (on the change stream's
// goroutine: it must not block).
func (ix *Local) ScopeChanged(done func()) {
	if done != nil {
		ix.mu.Lock()
		ix.rescanned = append(ix.rescanned, done)
		ix.mu.Unlock()
	}
	ix.watch.ScopeChanged()
}

// DocumentChanged takes the editor's unsaved text of abs into the next
// batch of the change stream (the map reads it; typing is debounced with
// every other change, and parsed off the caller's goroutine).
func (ix *Local) DocumentChanged(abs, text string) {
	rel, ok := ix.rel(abs)
	if !ok {
		return
	}
	ix.mu.Lock()
	ix.unsaved[rel] = text
	ix.mu.Unlock()
	ix.watch.Touch(rel)
}

// DocumentSaved puts a saved file into the next batch of the change stream.
func (ix *Local) DocumentSaved(abs string) {
	if rel, ok := ix.rel(abs); ok {
		ix.mu.Lock()
		delete(ix.unsaved, rel) // the disk has it now
		ix.mu.Unlock()
		ix.watch.Touch(rel)
	}
}

func (ix *Local) rel(abs string) (string, bool) {
	if _, ok := ix.ws.FolderOf(abs); ok {
		return "", false // another workspace folder's index takes it (Roots)
	}
	rel := ix.ws.Rel(abs)
	if rel == "" || strings.HasPrefix(rel, "..") {
		return "", false
	}
	return rel, true
}

// Wait blocks until the first full build of both indexes ended.
func (ix *Local) Wait(ctx context.Context) error {
	select {
	case <-ix.ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Ready is closed once the first full build of both indexes ended.
func (ix *Local) Ready() <-chan struct{} { return ix.ready }

// Search runs a search query; ErrNoSearch when the session has no search index.
func (ix *Local) Search(ctx context.Context, q Query, limit int) (*SearchResult, error) {
	if r := ix.remote.Load(); r != nil {
		return ix.searchRemote(ctx, r, q, limit)
	}
	return ix.searchLocal(ctx, q, limit)
}

// searchLocal runs a search on the local search index.
func (ix *Local) searchLocal(ctx context.Context, q Query, limit int) (*SearchResult, error) {
	if ix.s == nil {
		return nil, ErrNoSearch
	}
	p, err := q.parsed()
	if err != nil {
		return nil, err
	}
	r, err := ix.s.SearchParsed(ctx, p, limit)
	if err != nil {
		return nil, err
	}
	return fromEngine(r), nil
}

// fromEngine is the search engine's answer as the API's.
func fromEngine(r *search.Result) *SearchResult {
	res := &SearchResult{Total: r.Total, Partial: r.Partial, Warnings: r.Warnings}
	if r.Hits != nil {
		res.Hits = make([]Hit, len(r.Hits))
	}
	for i, h := range r.Hits {
		res.Hits[i] = Hit{Path: h.Path, Line: h.Line, Text: h.Text, StartLine: h.StartLine, EndLine: h.EndLine,
			Symbol: h.Symbol, Kind: h.Kind, Score: h.Score, Copies: h.Copies}
	}
	return res
}

// RenderMap renders the repo map ranked toward focus, fitted to tokens.
func (ix *Local) RenderMap(focus Focus, tokens int) (string, RenderStats) {
	return ix.m.Render(focus, tokens)
}

// Definitions returns the definitions of names.
func (ix *Local) Definitions(names []string) []Symbol { return ix.m.DefinitionsOf(names) }

// EnclosingSymbol returns the innermost definition around a line of rel.
func (ix *Local) EnclosingSymbol(rel string, line int) (Symbol, bool) {
	return ix.m.EnclosingSymbol(rel, line)
}

// FileSymbols returns the definitions of rel in source order.
func (ix *Local) FileSymbols(rel string) ([]Symbol, bool) {
	t, ok := ix.m.Tags(rel)
	if !ok {
		return nil, false
	}
	out := make([]Symbol, len(t.Defs))
	for i := range t.Defs {
		out[i] = repomap.SymbolOf(t.Path, t.Language, &t.Defs[i])
	}
	return out, true
}

// Stats describes what is indexed now.
func (ix *Local) Stats() Stats {
	ms := ix.m.Stats()
	ix.mu.Lock()
	building := ix.building
	ix.mu.Unlock()
	st := Stats{Ready: IsReady(ix), Indexing: building, MapFiles: ms.Files, Definitions: ms.Defs}
	if ix.s != nil {
		ss := ix.s.Stats()
		st.Searchable, st.SearchFiles, st.SearchDocs = true, ss.Files, ss.Docs
		st.Indexing = st.Indexing || ss.Indexing
	}
	st.SearchBackend, _ = ix.SearchBackend()
	st.Searchable = st.Searchable || ix.remote.Load() != nil
	return st
}

// Close stops the change stream, saves the map's cache and closes the
// search index.
func (ix *Local) Close() error {
	ix.mu.Lock()
	if ix.cancel != nil {
		ix.cancel()
	}
	ix.closed = true
	if ix.saveTimer != nil {
		ix.saveTimer.Stop() // saved below
		ix.saveTimer = nil
	}
	ix.mu.Unlock()
	ix.running.Wait()
	ix.saving.Lock()
	err := ix.m.SaveCache()
	ix.saving.Unlock()
	if ix.s != nil {
		if cerr := ix.s.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if ix.lock != nil {
		ix.lock.Close() // releases the flock
	}
	return err
}
