// Package search is Cairn's full-text code search: a bleve (scorch) index of
// code chunks (one per top-level declaration, or overlapping line windows for
// files without a grammar), analyzed so identifiers match whole and by their
// camelCase/snake_case parts, persisted under the state directory and kept
// fresh by a background reconcile plus single-file updates.
//
// The package imports no parser: callers hand declarations in through
// IndexFile or the Options.DeclsFunc hook, so the repo map's one tree-sitter
// parse serves both.
package search

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/index/scorch/mergeplan"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/registry"
	"github.com/blevesearch/bleve/v2/search/searcher"
	index "github.com/blevesearch/bleve_index_api"
	segment "github.com/blevesearch/scorch_segment_api/v2"
	bberrors "go.etcd.io/bbolt/errors"

	"github.com/cairn-dev/cairn/workspace"
)

// FormatVersion names the on-disk layout and analysis. An index written with
// another version is moved aside and rebuilt.
const FormatVersion = 8

// Field names.
const (
	fBody  = "body"
	fMeta  = "meta" // symbol, path words, doc comment and declaration line
	fSymKW = "symkw"
	fPath  = "path"
	fLang  = "lang"
	fKind  = "kind"
)

const versionKey = "cairn_format_version"

// ErrIndexBusy is returned by Open when another process holds the index
// (the state directory is shared by a server and a CLI run, say).
var ErrIndexBusy = errors.New("search index is in use by another process")

func init() {
	// A question's disjunction has 13-16 clauses (its words, their stems
	// and expansions): past bleve's default of 10 it switched to the
	// heap, whose comparisons of document ids cost more than the slice's
	// scan at that size. bleve
	// documents the setting as the application's; only this package uses
	// bleve. Hits and scores are the same (the fresh set's 50 hits of
	// every question compared); at 10x the Go tree a new question's
	// context build took 5-12% less CPU (docs/scale.md).
	searcher.DisjunctionHeapTakeover = 64
	registry.RegisterAnalyzer(analyzerIndex, func(map[string]interface{}, *registry.Cache) (analysis.Analyzer, error) {
		return codeAnalyzer{}, nil
	})
	registry.RegisterAnalyzer(analyzerQuery, func(map[string]interface{}, *registry.Cache) (analysis.Analyzer, error) {
		return codeAnalyzer{query: true}, nil
	})
}

// Options configure an Index. StateDir is required.
type Options struct {
	// StateDir is Cairn's per-workspace state directory; the index lives in
	// StateDir/search.
	StateDir string
	// DeclsFunc finds the top-level declarations of a file during bulk
	// (re)indexing and Update: the package parses nothing itself (codeindex
	// plugs in the repo map's tree-sitter tags). Nil chunks every file in
	// line windows.
	DeclsFunc DeclsFunc
	// Progress, when set, is called as the background reconcile advances
	// (for $/progress). It must not block for long.
	Progress func(Progress)
	// Logger receives recovery and reconcile lines; nil means slog.Default().
	Logger *slog.Logger
	// MaxFileSize skips larger files (default 1 MiB, as workspace.Walk).
	MaxFileSize int64
	// Workers read, hash and chunk files in parallel (default GOMAXPROCS).
	Workers int
	// BatchDocs is the number of chunks per index batch (default 500).
	// Larger batches index a little faster and use much more memory (the
	// trade is measured in search/README.md).
	BatchDocs int
	// Exclude, when set, keeps a file out of the index by its path: the
	// caller passes its secret detector, so a file named after a secret (a
	// token used as a file name) is neither indexed nor named in the
	// manifest. Such files are counted under SkipSecretPath.
	Exclude func(rel string) bool
	// Redact, when set, masks secrets in a file's text before it is
	// chunked and stored; it must keep every line where it is (a secret
	// spanning lines leaves as many newlines), since chunks and
	// declarations are found by line. The file's hash is of its real text.
	Redact func(text []byte) []byte
}

// SkipSecretPath is the skip reason of files Options.Exclude keeps out.
const SkipSecretPath = "secret in path"

// redacted returns what of a file's text the index may store.
func (ix *Index) redacted(b []byte) []byte {
	if ix.opts.Redact == nil {
		return b
	}
	return ix.opts.Redact(b)
}

// excluded reports whether Options.Exclude keeps rel out of the index.
func (ix *Index) excluded(rel string) bool {
	return ix.opts.Exclude != nil && ix.opts.Exclude(rel)
}

// Progress reports the reconcile's advance.
type Progress struct {
	Phase   string // "scanning", "indexing", "done"
	Done    int    // files processed so far
	Total   int    // files to (re)index
	Message string
}

// ReconcileStats says what one reconcile did.
type ReconcileStats struct {
	Files     int // indexable files found by the walk
	Added     int
	Changed   int
	Removed   int
	Unchanged int
	Touched   int // mtime changed, content (hash) did not
	Skipped   map[string]int
	Chunks    int // documents written
	Duration  time.Duration
}

// fileState is what the manifest remembers of an indexed file.
type fileState struct {
	Size   int64
	Mod    int64
	Hash   string
	Binary bool // skipped as binary: not re-read until it changes
}

// manifest is persisted next to the bleve index.
type manifest struct {
	Version int
	Docs    uint64 // documents in the index when saved: a cross-check at open
	Files   map[string]fileState
	// Terms and Vocab are the doc-word vocabulary (vocab.go): the terms,
	// and per file its contribution, a packed entry of term ids.
	Terms []string
	Vocab map[string][]byte
}

// Index is a workspace's code search index. It is safe for concurrent use:
// queries are served while a reconcile or updates run.
type Index struct {
	ws    *workspace.Workspace
	opts  Options
	log   *slog.Logger
	dir   string // StateDir/search
	idx   bleve.Index
	body  analysis.Analyzer
	fresh bool // the index was created empty at Open

	// writeMu: single-file updates hold it exclusively for their whole
	// read-and-index; bulk commits hold it shared.
	writeMu sync.RWMutex

	mu       sync.Mutex
	files    map[string]fileState
	gen      map[string]uint64 // bumped by single-file writes
	dirty    bool
	saveT    *time.Timer
	closed   bool
	skipped  map[string]int
	recovery string // why the index was rebuilt at Open, if it was

	persist    persistLog // batches and whether the persister has written them
	manifestMu sync.Mutex // one manifest save at a time, in order
	recMu      sync.Mutex
	lines      lineCache
	vocab      *vocab

	indexing atomic.Bool
	running  sync.WaitGroup
	cancel   context.CancelFunc
	done     chan struct{}
	lastErr  atomic.Pointer[error]
}

// Open opens (or creates) the index of ws under opts.StateDir. A corrupt or
// version-mismatched index is moved aside and recreated empty, with a log
// line. Open does not walk the workspace: call Start (background) or
// Reconcile (foreground) to bring the index up to date.
func Open(ws *workspace.Workspace, opts Options) (*Index, error) {
	if opts.StateDir == "" {
		return nil, errors.New("search: Options.StateDir is required")
	}
	if opts.DeclsFunc == nil {
		opts.DeclsFunc = func(string, string, []byte) []Decl { return nil }
	}
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = 1 << 20
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.BatchDocs <= 0 {
		opts.BatchDocs = 500
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	ix := &Index{
		ws:      ws,
		opts:    opts,
		log:     log,
		dir:     filepath.Join(opts.StateDir, "search"),
		files:   map[string]fileState{},
		vocab:   newVocab(),
		gen:     map[string]uint64{},
		skipped: map[string]int{},
		done:    make(chan struct{}),
	}
	close(ix.done) // nothing running yet
	if err := os.MkdirAll(ix.dir, 0o755); err != nil {
		return nil, fmt.Errorf("search: creating %s: %w", ix.dir, err)
	}
	if err := ix.openOrRecover(); err != nil {
		return nil, err
	}
	ix.body = codeAnalyzer{}
	return ix, nil
}

func (ix *Index) bleveDir() string     { return filepath.Join(ix.dir, "index") }
func (ix *Index) manifestPath() string { return filepath.Join(ix.dir, "manifest.bin") }

// oldManifestPath is the manifest's gob file, read when manifest.bin is
// missing (an index written before it).
func (ix *Index) oldManifestPath() string { return filepath.Join(ix.dir, "manifest.gob") }

// openOrRecover opens the existing index, checking its version and that it
// answers a query; anything wrong moves it aside and creates a new one.
func (ix *Index) openOrRecover() error {
	dir := ix.bleveDir()
	if _, err := os.Stat(dir); err == nil {
		idx, why, busy := ix.tryOpen(dir)
		if busy {
			return fmt.Errorf("%w: %s (%s)", ErrIndexBusy, dir, why)
		}
		if idx != nil {
			ix.idx = idx
			docs, ok := ix.loadManifest()
			n, _ := idx.DocCount()
			if !ok || n == docs {
				return nil
			}
			// Scorch skips snapshots it cannot load and carries on with
			// an older one (or none): the count gives it away.
			why = fmt.Sprintf("index holds %d documents but %d were recorded (a segment or snapshot failed to load)", n, docs)
			idx.Close()
			ix.idx = nil
			ix.files = map[string]fileState{}
		}
		ix.recovery = why
		aside := fmt.Sprintf("%s.broken-%d", dir, time.Now().UnixNano())
		ix.removeOldBroken()
		if err := os.Rename(dir, aside); err != nil {
			if err2 := os.RemoveAll(dir); err2 != nil {
				return fmt.Errorf("search: index at %s is unusable (%s) and cannot be moved aside: %w", dir, why, err)
			}
			aside = "(deleted)"
		}
		_ = os.Remove(ix.manifestPath())
		_ = os.Remove(ix.oldManifestPath())
		ix.log.Warn("search index unusable; moved aside and rebuilding", "reason", why, "dir", dir, "movedTo", aside)
	}
	idx, err := bleve.NewUsing(dir, newMapping(), scorch.Name, scorch.Name, scorchConfig(ix.opts.BatchDocs))
	if err != nil {
		return fmt.Errorf("search: creating index at %s: %w", dir, err)
	}
	ix.idx = idx
	b := idx.NewBatch()
	b.SetInternal([]byte(versionKey), []byte(strconv.Itoa(FormatVersion)))
	if err := ix.batch(b); err != nil {
		idx.Close()
		return fmt.Errorf("search: writing index version: %w", err)
	}
	ix.fresh = true
	return nil
}

// removeOldBroken keeps at most one moved-aside index.
func (ix *Index) removeOldBroken() {
	ents, _ := os.ReadDir(ix.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "index.broken-") {
			_ = os.RemoveAll(filepath.Join(ix.dir, e.Name()))
		}
	}
}

// The merge policy: tiers of a fixed fan-in over a bounded segment size.
// Every batch adds a segment of about Options.BatchDocs chunks; the
// background merger merges mergeFanIn segments of one tier into one of the
// next (batches into segments of ~8k chunks, those into ~128k) and never
// merges a segment of half maxMergeDocs or more again. So each chunk is
// merged about twice whatever the size of the tree, no merge reads more
// than maxMergeDocs chunks, and the segments live at any time stay a few
// dozen (each batch checks every live segment for the ids it replaces, and
// the persister writes the list of them after every batch: both grow with
// the segment count).
const (
	mergeFanIn   = 16
	maxMergeDocs = 256 << 10
)

// mergePlanConfig is the background merger's plan in the form scorch's
// config takes (JSON fields of mergeplan.MergePlanOptions); floor is the
// size of a batch, the first tier.
func mergePlanConfig(floor int) map[string]interface{} {
	return map[string]interface{}{
		"MaxSegmentsPerTier":   mergeFanIn,
		"MaxSegmentSize":       maxMergeDocs,
		"MaxSegmentFileSize":   int64(1 << 40),
		"TierGrowth":           float64(mergeFanIn),
		"SegmentsPerMergeTask": mergeFanIn,
		"FloorSegmentSize":     floor,
		"ReclaimDeletesWeight": 2.0,
	}
}

func scorchConfig(batchDocs int) map[string]interface{} {
	return map[string]interface{}{
		// Batches return once in memory; the persister writes them behind.
		// A crash loses at most the unpersisted tail, which the next
		// reconcile redoes (the manifest is saved after the index).
		"unsafe_batch": true,
		// The root file is locked while open: a second process (a CLI run
		// next to the server) gets ErrIndexBusy instead of waiting forever.
		"bolt_timeout": "1s",
		// Bounded tiers as the batches come (see mergePlanConfig).
		"scorchMergePlanOptions": mergePlanConfig(batchDocs),
	}
}

// tryOpen opens dir and probes it; on failure it returns nil and the reason.
func (ix *Index) tryOpen(dir string) (idx bleve.Index, why string, busy bool) {
	defer func() {
		if r := recover(); r != nil {
			if idx != nil {
				func() { defer func() { _ = recover() }(); idx.Close() }()
			}
			idx, why = nil, fmt.Sprintf("panic while opening: %v", r)
		}
	}()
	idx, err := bleve.OpenUsing(dir, scorchConfig(ix.opts.BatchDocs))
	if err != nil {
		if errors.Is(err, bberrors.ErrTimeout) || strings.Contains(err.Error(), "timeout") {
			return nil, err.Error(), true // another process has it open: not corrupt
		}
		return nil, "open failed: " + err.Error(), false
	}
	v, err := idx.GetInternal([]byte(versionKey))
	if err != nil || string(v) != strconv.Itoa(FormatVersion) {
		idx.Close()
		return nil, fmt.Sprintf("format version %q, want %d", v, FormatVersion), false
	}
	if _, err := idx.DocCount(); err != nil {
		idx.Close()
		return nil, "doc count failed: " + err.Error(), false
	}
	// Touch every segment: a query that walks a term dictionary and
	// postings, and a field dictionary.
	req := bleve.NewSearchRequestOptions(bleve.NewMatchAllQuery(), 1, 0, false)
	if _, err := idx.Search(req); err != nil {
		idx.Close()
		return nil, "probe query failed: " + err.Error(), false
	}
	q := bleve.NewTermQuery("func")
	q.SetField(fBody)
	if _, err := idx.Search(bleve.NewSearchRequestOptions(q, 1, 0, false)); err != nil {
		idx.Close()
		return nil, "probe query failed: " + err.Error(), false
	}
	return idx, "", false
}

func newMapping() mapping.IndexMapping {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.DefaultAnalyzer = analyzerIndex
	dm := bleve.NewDocumentStaticMapping()
	text := func(analyzer string) *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = analyzer
		f.Store = false
		f.IncludeInAll = false
		f.IncludeTermVectors = false
		f.DocValues = false
		return f
	}
	// No term vectors: phrases are checked on the chunk's text (phrase.go).
	// positionsForTests builds the old layout, the reference for that.
	body := text(analyzerIndex)
	body.IncludeTermVectors = positionsForTests
	dm.AddFieldMappingsAt(fBody, body)
	dm.AddFieldMappingsAt(fMeta, text(analyzerIndex))
	for _, k := range []string{fSymKW, fPath, fLang, fKind} {
		dm.AddFieldMappingsAt(k, text(keyword.Name))
	}
	im.DefaultMapping = dm
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false
	return im
}

// Docs are identified by path, line range, kind and symbol, so a hit needs no
// stored field.
func docID(rel string, c *chunk) string {
	return rel + "\x00" + strconv.Itoa(c.Start) + "\x00" + strconv.Itoa(c.End) + "\x00" + c.Kind + "\x00" + c.Symbol
}

func parseID(id string) (rel string, start, end int, kind, sym string, ok bool) {
	parts := strings.SplitN(id, "\x00", 5)
	if len(parts) != 5 {
		return "", 0, 0, "", "", false
	}
	s, err1 := strconv.Atoi(parts[1])
	e, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil {
		return "", 0, 0, "", "", false
	}
	return parts[0], s, e, parts[3], parts[4], true
}

const optText = index.IndexField

// positionsForTests indexes the text fields with term vectors, as the
// index did before phrase.go: a test builds such an index to check that
// phrase matching on the text finds what bleve's positional phrase search
// found.
var positionsForTests = false

// fileFields are the parts of a file's chunks' documents that depend on
// the file only, made once per file.
type fileFields struct {
	rel   string
	path  *sharedKeyword
	words string           // pathWords(rel)
	langs []*sharedKeyword // language and its family
}

func newFileFields(rel, lang string) *fileFields {
	f := &fileFields{rel: rel, path: newSharedKeyword([]byte(rel)), words: pathWords(rel)}
	if lang != "" {
		f.langs = append(f.langs, newSharedKeyword([]byte(lang)))
		if fam := workspace.LanguageFamily(lang); fam != lang {
			f.langs = append(f.langs, newSharedKeyword([]byte(fam)))
		}
	}
	return f
}

// document builds the bleve document of one chunk.
func (ix *Index) document(f *fileFields, c *chunk) *document.Document {
	d := document.NewDocument(docID(f.rel, c))
	if positionsForTests {
		d.AddField(document.NewTextFieldCustom(fBody, nil, c.Text, optText|index.IncludeTermVectors, ix.body))
	} else {
		d.AddField(newCodeField(fBody, c.Text))
	}
	// meta: what the chunk is called and where it lives: symbol, path
	// words, doc comment and declaration line. One field, so a query adds
	// one set of term searchers for all of them.
	meta := make([]byte, 0, len(c.Symbol)+len(f.words)+len(c.Head)+2)
	meta = append(meta, c.Symbol...)
	meta = append(meta, '\n')
	meta = append(meta, f.words...)
	meta = append(meta, '\n')
	meta = append(meta, c.Head...)
	d.AddField(newCodeField(fMeta, meta))
	if c.Symbol != "" {
		for _, s := range symKeys(c.Symbol) {
			d.AddField(newKeywordField(fSymKW, []byte(s)))
		}
	}
	d.AddField(f.path.field(fPath))
	for _, l := range f.langs {
		d.AddField(l.field(fLang))
	}
	d.AddField(kindField(fKind, c.Kind))
	return d
}

// pathWords is the text indexed for a path: its directory names and its
// base name without extension, each once ("runtime/pprof/runtime.go" →
// "runtime pprof"), so neither the extension (every .go file) nor a
// repeated name inflates a path match.
func pathWords(rel string) string {
	base := path.Base(rel)
	if ext := path.Ext(base); ext != "" && ext != base {
		base = strings.TrimSuffix(base, ext)
	}
	parts := append(strings.Split(path.Dir(rel), "/"), base)
	seen := map[string]bool{}
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		k := strings.ToLower(p)
		if p == "." || p == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, p)
	}
	return strings.Join(out, " ")
}

// symKeys are the exact-match keys of a symbol: itself and each dotted part,
// lowercased ("Server.ServeHTTP" → "server.servehttp", "server", "servehttp").
func symKeys(sym string) []string {
	l := strings.ToLower(sym)
	out := []string{l}
	if strings.Contains(l, ".") {
		for _, p := range strings.Split(l, ".") {
			if p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// loadManifest reads the manifest; a missing or unreadable one leaves the
// map empty, so the next reconcile re-checks every file. A manifest of the
// older gob format is read once (and replaced at the next save), so an
// upgrade does not re-read the tree.
func (ix *Index) loadManifest() (docs uint64, ok bool) {
	var m *manifest
	b, release, err := workspace.ReadMapped(ix.manifestPath())
	if err == nil {
		defer release() // decodeManifest copies all it keeps
	}
	if err == nil && ix.gobIsNewer() {
		err = fs.ErrNotExist // an older Cairn ran on this index since
	}
	switch {
	case err == nil:
		m, err = decodeManifest(b)
	case errors.Is(err, fs.ErrNotExist):
		m, err = ix.loadGobManifest()
		if m == nil && err == nil {
			return 0, false
		}
	}
	if err != nil || m.Version != FormatVersion {
		version := 0
		if m != nil {
			version = m.Version
		}
		ix.log.Warn("search manifest invalid; every file will be re-checked", "err", err, "version", version)
		return 0, false
	}
	ix.files = m.Files
	if ix.files == nil {
		ix.files = map[string]fileState{}
	}
	ix.vocab.load(m.Terms, m.Vocab)
	return m.Docs, true
}

// gobIsNewer reports whether the gob manifest was written after the binary
// one: an older Cairn, which knows only the gob file, ran since.
func (ix *Index) gobIsNewer() bool {
	g, err := os.Stat(ix.oldManifestPath())
	if err != nil {
		return false
	}
	b, err := os.Stat(ix.manifestPath())
	return err == nil && g.ModTime().After(b.ModTime())
}

// loadGobManifest reads the manifest's older gob file: nil, nil when there
// is none.
func (ix *Index) loadGobManifest() (*manifest, error) {
	f, err := os.Open(ix.oldManifestPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var m manifest
	if err := gob.NewDecoder(f).Decode(&m); err != nil {
		return nil, err
	}
	return &m, nil
}

// saveManifest writes the manifest atomically.
func (ix *Index) saveManifest() error {
	ix.manifestMu.Lock()
	defer ix.manifestMu.Unlock()
	ix.writeMu.Lock() // no batch in flight: the doc count matches the files
	upTo := ix.persist.last()
	docs, err := ix.idx.DocCount()
	if err != nil {
		ix.writeMu.Unlock()
		return fmt.Errorf("search: saving manifest: %w", err)
	}
	ix.mu.Lock()
	m := manifest{Version: FormatVersion, Docs: docs, Files: make(map[string]fileState, len(ix.files))}
	for k, v := range ix.files {
		m.Files[k] = v
	}
	m.Terms, m.Vocab = ix.vocab.snapshot()
	ix.dirty = false
	ix.mu.Unlock()
	ix.writeMu.Unlock()
	// The manifest describes the index as of batch upTo and is written
	// once that batch is on disk, without holding up the batches after
	// it: an editor's save waited here for the disk (hundreds of
	// milliseconds when it stalled) when the wait held writeMu.
	ix.waitPersisted(upTo)
	tmp := ix.manifestPath() + ".tmp"
	if err := os.WriteFile(tmp, encodeManifest(&m), 0o644); err != nil {
		return fmt.Errorf("search: saving manifest: %w", err)
	}
	if err := os.Rename(tmp, ix.manifestPath()); err != nil {
		return fmt.Errorf("search: saving manifest: %w", err)
	}
	// The older file would be read again if this one were lost.
	if err := os.Remove(ix.oldManifestPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("search: removing the old manifest: %w", err)
	}
	return nil
}

// manifestFilesPerSecond adds a second to the wait before a manifest save
// per this many indexed files.
const manifestFilesPerSecond = 10_000

// markDirty schedules a manifest save shortly (single-file updates come in
// bursts).
func (ix *Index) markDirty() {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.dirty = true
	if ix.closed || ix.saveT != nil {
		return
	}
	// Saving copies and encodes the state of every file, so the wait grows
	// with the index: a stream of saves in a large tree would otherwise
	// spend a core rewriting it. A crash loses only what the next
	// reconcile redoes (files newer than the manifest are re-read).
	delay := time.Second + time.Duration(len(ix.files)/manifestFilesPerSecond)*time.Second
	ix.saveT = time.AfterFunc(delay, func() {
		ix.mu.Lock()
		ix.saveT = nil
		closed := ix.closed
		ix.mu.Unlock()
		if !closed {
			if err := ix.saveManifest(); err != nil {
				ix.log.Warn("search manifest save failed", "err", err)
			}
		}
	})
}

// Recovered reports why the index was rebuilt at Open ("" when it was not).
func (ix *Index) Recovered() string { return ix.recovery }

// Indexing reports whether a reconcile is running (results may be partial).
func (ix *Index) Indexing() bool { return ix.indexing.Load() }

// Stats describe the index.
type Stats struct {
	Files    int
	Docs     uint64
	Skipped  map[string]int // by reason, from the last walk
	Indexing bool
	DiskSize int64
}

// Stats returns the index's current figures.
func (ix *Index) Stats() Stats {
	n, _ := ix.idx.DocCount()
	ix.mu.Lock()
	st := Stats{Files: len(ix.files), Docs: n, Skipped: map[string]int{}, Indexing: ix.indexing.Load()}
	for k, v := range ix.skipped {
		st.Skipped[k] = v
	}
	ix.mu.Unlock()
	_ = filepath.WalkDir(ix.bleveDir(), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				st.DiskSize += info.Size()
			}
		}
		return nil
	})
	return st
}

// Start runs Reconcile in the background; queries are served meanwhile. A
// reconcile already running is left alone. Wait blocks until it ends.
func (ix *Index) Start(ctx context.Context) {
	ix.mu.Lock()
	if ix.closed || ix.indexing.Load() {
		ix.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	ix.cancel = cancel
	ix.done = make(chan struct{})
	done := ix.done
	ix.indexing.Store(true)
	ix.running.Add(1)
	ix.mu.Unlock()
	go func() {
		defer ix.running.Done()
		defer close(done)
		defer cancel()
		st, err := ix.reconcile(ctx, ix.ws.Walk)
		if err != nil && !errors.Is(err, context.Canceled) {
			ix.log.Warn("search reconcile failed", "err", err)
			ix.lastErr.Store(&err)
		} else {
			ix.log.Info("search index reconciled", "files", st.Files, "added", st.Added, "changed", st.Changed,
				"removed", st.Removed, "chunks", st.Chunks, "took", st.Duration.Round(time.Millisecond))
		}
	}()
}

// Wait blocks until the background reconcile started by Start ends, and
// returns its error.
func (ix *Index) Wait(ctx context.Context) error {
	ix.mu.Lock()
	done := ix.done
	ix.mu.Unlock()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if p := ix.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Reconcile walks the workspace and brings the index in line with it:
// new and changed files (by size and mtime, then hash) are indexed, removed
// ones deleted. It runs in the caller's goroutine.
func (ix *Index) Reconcile(ctx context.Context) (ReconcileStats, error) {
	return ix.ReconcileListed(ctx, ix.ws.Walk)
}

// ReconcileListed is Reconcile with the workspace listed by list (called
// once, with the index's walk options): a caller that builds other indexes
// too lists the tree once for all of them. The listing may be a little
// older than the reconcile: a file changed since is re-read with its
// listed size and mtime (so the next reconcile reads it again), one
// removed since is dropped as unreadable.
func (ix *Index) ReconcileListed(ctx context.Context, list workspace.Lister) (ReconcileStats, error) {
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return ReconcileStats{}, errors.New("search: index is closed")
	}
	ix.running.Add(1)
	ix.mu.Unlock()
	defer ix.running.Done()
	was := ix.indexing.Swap(true)
	defer func() {
		if !was {
			ix.indexing.Store(false)
		}
	}()
	return ix.reconcile(ctx, list)
}

func (ix *Index) progress(p Progress) {
	if ix.opts.Progress != nil {
		ix.opts.Progress(p)
	}
}

// prepared is one file read, hashed and chunked by a reconcile worker.
type prepared struct {
	rel    string
	state  fileState
	lang   string
	chunks []chunk
	vocab  fileVocab
	gen    uint64
	remove bool // the file turned out binary or unreadable
	same   bool // content unchanged: only the manifest's stat changes
}

// reconcile brings the index in line with the disk, in phases: walk,
// plan against the manifest, remove what is gone, index what is new or
// changed, then compact and save the manifest.
func (ix *Index) reconcile(ctx context.Context, list workspace.Lister) (st ReconcileStats, err error) {
	ix.recMu.Lock() // one reconcile at a time
	defer ix.recMu.Unlock()
	ix.mu.Lock()
	closed := ix.closed
	ix.mu.Unlock()
	if closed {
		return st, errors.New("search: index is closed")
	}
	start := time.Now()
	defer func() {
		st.Duration = time.Since(start)
		ix.indexing.Store(false)
	}()
	ix.progress(Progress{Phase: "scanning", Message: "scanning workspace"})
	files := ix.walkFiles(&st, list)
	d := ix.plan(files, &st)
	if !d.fresh {
		d.gone = append(d.gone, ix.orphans(d.onDisk)...)
	}
	d.onDisk = nil
	sort.Strings(d.gone)

	total := len(d.todo)
	ix.progress(Progress{Phase: "indexing", Total: total, Message: fmt.Sprintf("indexing %d files", total)})

	// Removals first, in one batch.
	if len(d.gone) > 0 {
		if err := ix.removePaths(d.gone); err != nil {
			return st, err
		}
		st.Removed = len(d.gone)
	}

	if total >= releaseFrom {
		stop := ix.releasing()
		defer stop()
	}
	commitErr := ix.commitAll(ix.prepareAll(ctx, d.todo, d.gens), d.fresh, total, &st)

	ix.mu.Lock()
	for k, v := range ix.skipped { // the walk's counts plus binary/unreadable
		st.Skipped[k] = v
	}
	ix.fresh = false
	ix.mu.Unlock()
	if commitErr != nil {
		return st, commitErr
	}
	if err := ctx.Err(); err != nil {
		_ = ix.saveManifest()
		return st, err
	}
	if err := ix.compactAndSave(ctx, st, d); err != nil {
		return st, err
	}
	ix.progress(Progress{Phase: "done", Done: total, Total: total,
		Message: fmt.Sprintf("indexed %d files (%d chunks)", total, st.Chunks)})
	return st, nil
}

// walkFiles lists the files the index should hold, counting the ones it skips
// (the walk's reasons, and Options.Exclude's) in st.
func (ix *Index) walkFiles(st *ReconcileStats, list workspace.Lister) []workspace.File {
	files, wst := list(workspace.WalkOptions{MaxFileSize: ix.opts.MaxFileSize})
	st.Skipped = map[string]int{}
	for k, v := range wst.Skipped {
		st.Skipped[string(k)] = v
	}
	if ix.opts.Exclude != nil {
		kept := make([]workspace.File, 0, len(files)) // the listing may be shared
		for _, f := range files {
			if ix.excluded(f.Rel) {
				st.Skipped[SkipSecretPath]++
				continue
			}
			kept = append(kept, f)
		}
		files = kept
	}
	st.Files = len(files)
	return files
}

// reconcilePlan is what a reconcile has to do, from the walk and the
// manifest.
type reconcilePlan struct {
	todo []workspace.File // new or changed by size or mtime
	gone []string         // in the index, no longer on disk
	// gens are the todo files' update generations when planned, where
	// not 0 (a first build has none: 0 is what a missing key reads).
	gens map[string]uint64
	// onDisk are the listed paths, until the orphans are found; listed
	// is their number. (At 10× the Go tree the set is ~6 MB of map the
	// collector would scan through the whole build.)
	onDisk map[string]bool
	listed int
	fresh  bool // the index was created empty at Open and not reconciled since
}

// plan compares the walk with the manifest, and resets the skip counts to
// the walk's.
func (ix *Index) plan(files []workspace.File, st *ReconcileStats) reconcilePlan {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.skipped = map[string]int{}
	for k, v := range st.Skipped {
		ix.skipped[k] = v
	}
	d := reconcilePlan{fresh: ix.fresh, onDisk: make(map[string]bool, len(files))}
	for _, f := range files {
		d.onDisk[f.Rel] = true
		old, ok := ix.files[f.Rel]
		switch {
		case !ok:
			d.todo = append(d.todo, f)
		case old.Size != f.Size || old.Mod != f.Mod:
			d.todo = append(d.todo, f)
		case old.Binary:
			ix.skipped[string(workspace.SkipBinary)]++
		default:
			st.Unchanged++
		}
	}
	d.listed = len(d.onDisk)
	for rel := range ix.files {
		if !d.onDisk[rel] {
			d.gone = append(d.gone, rel)
		}
	}
	d.gens = map[string]uint64{}
	for _, f := range d.todo {
		if g := ix.gen[f.Rel]; g != 0 {
			d.gens[f.Rel] = g
		}
	}
	return d
}

// orphans returns the paths in the index that neither the manifest nor
// the disk knows (a crash between a commit and the manifest save).
func (ix *Index) orphans(onDisk map[string]bool) []string {
	dict, err := ix.idx.FieldDict(fPath)
	if err != nil {
		return nil
	}
	defer dict.Close()
	known := map[string]bool{}
	ix.mu.Lock()
	for rel := range ix.files {
		known[rel] = true
	}
	ix.mu.Unlock()
	var out []string
	for {
		e, err := dict.Next()
		if err != nil || e == nil {
			break
		}
		if !onDisk[e.Term] && !known[e.Term] && ix.hasDocs(e.Term) {
			// (the dictionary keeps deleted documents' terms until a
			// merge, hence the check)
			out = append(out, e.Term)
		}
	}
	return out
}

// prepareAll reads, hashes and chunks the files in Options.Workers
// goroutines; the channel closes when all are done or ctx ends.
func (ix *Index) prepareAll(ctx context.Context, todo []workspace.File, gens map[string]uint64) <-chan prepared {
	in := make(chan workspace.File)
	out := make(chan prepared, 64)
	var wg sync.WaitGroup
	for w := 0; w < ix.opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range in {
				out <- ix.prepare(f, gens[f.Rel])
			}
		}()
	}
	go func() {
		defer close(in)
		for _, f := range todo {
			select {
			case in <- f:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(out) }()
	return out
}

// halfBatchesFrom is the number of files from which a reconcile commits
// batches of half Options.BatchDocs chunks. The two batches being analyzed
// and written hold ~80 MB at the default size, when a tree this large
// keeps the heap at its highest (its map, vocabulary and manifest):
// halved, a cold build of 10× the Go tree peaked ~30 MB lower for ~5% more
// CPU in its merges of the more, smaller segments (docs/scale.md).
// (A variable for the tests.)
var halfBatchesFrom = 50000

// batchDocs is the chunks of a batch in a reconcile of total files.
func (ix *Index) batchDocs(total int) int {
	if total >= halfBatchesFrom {
		return max(1, ix.opts.BatchDocs/2)
	}
	return ix.opts.BatchDocs
}

// commitAll groups prepared files into batches of Options.BatchDocs
// chunks (half as many from halfBatchesFrom files) and commits them,
// counting chunks and added, changed and touched files in st. It returns
// the first commit error; after one, later batches are dropped.
func (ix *Index) commitAll(out <-chan prepared, fresh bool, total int, st *ReconcileStats) error {
	groups := make(chan []prepared, 1)
	var commitErr atomic.Pointer[error]
	var cwg sync.WaitGroup
	var done, chunks atomic.Int64
	const committers = 2 // analysis and segment building of two batches overlap
	for c := 0; c < committers; c++ {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for g := range groups {
				if commitErr.Load() != nil {
					continue
				}
				n, err := ix.commit(g, fresh)
				if err != nil {
					commitErr.Store(&err)
					continue
				}
				chunks.Add(int64(n))
				d := done.Add(int64(len(g)))
				ix.progress(Progress{Phase: "indexing", Done: int(d), Total: total})
			}
		}()
	}
	batchDocs := ix.batchDocs(total)
	var cur []prepared
	docs := 0
	for p := range out {
		ix.countFile(p, st)
		cur = append(cur, p)
		docs += len(p.chunks)
		if docs >= batchDocs {
			groups <- cur
			cur, docs = nil, 0
		}
	}
	if len(cur) > 0 {
		groups <- cur
	}
	close(groups)
	cwg.Wait()
	st.Chunks = int(chunks.Load())
	if p := commitErr.Load(); p != nil {
		return *p
	}
	return nil
}

// countFile adds a prepared file to st's added, changed or touched files.
func (ix *Index) countFile(p prepared, st *ReconcileStats) {
	switch {
	case p.remove:
	case p.same:
		st.Touched++
	default:
		ix.mu.Lock()
		_, known := ix.files[p.rel]
		ix.mu.Unlock()
		if known {
			st.Changed++
		} else {
			st.Added++
		}
	}
}

// compactAndSave merges segments after a change and saves the manifest when it
// is not current on disk.
func (ix *Index) compactAndSave(ctx context.Context, st ReconcileStats, d reconcilePlan) error {
	if st.Added+st.Changed+st.Removed > 0 {
		if err := ix.compact(ctx); err != nil {
			ix.log.Warn("search: merging index segments", "err", err)
		}
	}
	ix.mu.Lock()
	dirty := ix.dirty
	ix.mu.Unlock()
	changed := len(d.todo) + len(d.gone)
	switch {
	case !dirty && !d.fresh && changed == 0:
		// The manifest on disk is current.
	case !d.fresh && changed*10 < d.listed:
		// A few files changed while no server ran: the manifest is saved
		// as after an edit (markDirty), not before the index is ready.
		// Encoding every file's state took a warm start of a large tree
		// longer than the changes did.
		ix.markDirty()
	default:
		if err := ix.saveManifest(); err != nil {
			return err
		}
	}
	return nil
}

// MaxSegments bounds the index's segments after a reconcile (up to
// MaxSegments full-size segments, see compact): every batch adds a
// segment, and a short-lived process (the command line) exits before
// scorch's background merger gets to them, leaving each later query to
// search dozens.
const MaxSegments = 16

// Segments counts the index's segments on disk.
func (ix *Index) Segments() int {
	sc, ok := ix.scorch()
	if !ok {
		return 0
	}
	n, _ := sc.StatsMap()["num_root_filesegments"].(uint64)
	return int(n)
}

// snapshot returns the index's current segments, held open until the
// caller closes it, or nil when there are none to read (not a scorch
// index, or one closed: it has no root snapshot then).
func (ix *Index) snapshot() *scorch.IndexSnapshot {
	sc, ok := ix.scorch()
	if !ok {
		return nil
	}
	r, err := sc.Reader()
	if err != nil {
		return nil
	}
	snap, _ := r.(*scorch.IndexSnapshot)
	return snap
}

func (ix *Index) scorch() (*scorch.Scorch, bool) {
	adv, err := ix.idx.Advanced()
	if err != nil {
		return nil, false
	}
	sc, ok := adv.(*scorch.Scorch)
	return sc, ok
}

// compact merges what the tiers left small, when more than MaxSegments
// segments are left, into as few segments as the bound on a merge allows
// (usually one), in the caller's goroutine. Segments of half maxMergeDocs or
// more stay as they are: merging them again would rewrite the whole index
// after every build. An index of more than MaxSegments such segments (over
// two million chunks) keeps them all.
//
// It asks scorch for one merge at a time: scorch merges every task of a
// plan before it introduces any, with all their sources mapped, and at
// 10× the Go tree one plan rewrote ~800k chunks, half a gigabyte of file
// pages resident at once at the end of the build (docs/scale.md). The
// merges, and so the segments left, are those of the one plan: each pick
// is the plan's next (the merged segment is too large to be picked again).
func (ix *Index) compact(ctx context.Context) error {
	sc, ok := ix.scorch()
	if !ok {
		return nil
	}
	ix.writeMu.Lock()
	ix.waitPersisted(ix.persist.last()) // the merger merges persisted segments only
	ix.writeMu.Unlock()
	if ix.Segments() <= MaxSegments {
		return nil
	}
	// One tier as large as a merge may be: the planner's budget is then
	// one segment per maxMergeDocs of the small segments' chunks.
	mo := mergeplan.MergePlanOptions{
		MaxSegmentsPerTier:   1,
		MaxSegmentSize:       maxMergeDocs,
		MaxSegmentFileSize:   1 << 40,
		TierGrowth:           1,
		SegmentsPerMergeTask: 1 << 20,
		FloorSegmentSize:     maxMergeDocs,
		ReclaimDeletesWeight: 2,
	}
	half := int64(maxMergeDocs / 2)
	small, total, least, ok := ix.smallSegments(half)
	if !ok {
		return sc.ForceMerge(ctx, &mo) // sizes unknown: the one plan
	}
	// What the one plan would leave of the small segments.
	target := max(mergeplan.CalcBudget(total, mo.RaiseToFloorSegmentSize(least), &mo), 1)
	for small > target && ctx.Err() == nil {
		// A budget of one segment less than there are: the plan's first
		// merge, and no other.
		budget := small - 1
		one := mo
		one.CalcBudget = func(int64, int64, *mergeplan.MergePlanOptions) int { return budget }
		if err := sc.ForceMerge(ctx, &one); err != nil {
			return err
		}
		after, _, _, ok := ix.smallSegments(half)
		if !ok || after >= small {
			return nil // nothing left that merges
		}
		small = after
	}
	return ctx.Err()
}

// smallSegments counts the persisted segments of fewer than limit live
// chunks, their live chunks and the fewest of any segment's (what the
// merge planner's budget starts from); ok is false when the index's
// segments cannot be read.
func (ix *Index) smallSegments(limit int64) (n int, total, least int64, ok bool) {
	snap := ix.snapshot()
	if snap == nil {
		return 0, 0, 0, false
	}
	defer snap.Close()
	least = math.MaxInt64
	for _, seg := range snap.Segments() {
		if _, persisted := seg.Segment().(segment.PersistedSegment); !persisted {
			continue
		}
		live := seg.LiveSize()
		least = min(least, live)
		if live < limit {
			n++
			total += live
		}
	}
	return n, total, least, true
}

// prepare reads, hashes and chunks one file for the reconcile.
func (ix *Index) prepare(f workspace.File, gen uint64) prepared {
	p := prepared{rel: f.Rel, gen: gen, state: fileState{Size: f.Size, Mod: f.Mod}}
	b, err := os.ReadFile(f.Abs)
	if err != nil || workspace.IsBinary(b) {
		p.remove = true
		ix.mu.Lock()
		if err != nil {
			ix.skipped[string(workspace.SkipUnread)]++
		} else {
			ix.skipped[string(workspace.SkipBinary)]++
			p.state.Binary = true
		}
		ix.mu.Unlock()
		return p
	}
	p.state.Hash = workspace.Hash(string(b))
	ix.mu.Lock()
	old, ok := ix.files[f.Rel]
	ix.mu.Unlock()
	if ok && old.Hash == p.state.Hash {
		p.same = true
		return p
	}
	p.lang = workspace.LanguageOf(f.Rel)
	p.chunks = chunkFile(ix.redacted(b), ix.decls(f.Rel, p.lang, b))
	p.vocab = docVocab(p.chunks)
	return p
}

// decls calls the DeclsFunc, surviving its panics.
func (ix *Index) decls(rel, lang string, b []byte) (ds []Decl) {
	defer func() {
		if r := recover(); r != nil {
			ix.log.Warn("search: declaration parser panicked; chunking in windows", "path", rel, "panic", r)
			ds = nil
		}
	}()
	return ix.opts.DeclsFunc(rel, lang, b)
}

// commit writes one group of prepared files, skipping any that a
// single-file update has rewritten since they were read.
func (ix *Index) commit(items []prepared, fresh bool) (int, error) {
	ix.writeMu.RLock()
	defer ix.writeMu.RUnlock()
	ix.mu.Lock()
	keep := items[:0:0]
	for _, p := range items {
		if ix.gen[p.rel] == p.gen {
			keep = append(keep, p)
		}
	}
	ix.mu.Unlock()
	b := ix.idx.NewBatch()
	n := 0
	var docs []*document.Document
	for i := range keep {
		p := &keep[i]
		if p.same {
			continue
		}
		if !fresh {
			if err := ix.deleteDocsOf(b, p.rel); err != nil {
				return n, err
			}
		}
		if p.remove {
			continue
		}
		ff := newFileFields(p.rel, p.lang)
		for j := range p.chunks {
			d := ix.document(ff, &p.chunks[j])
			if err := b.IndexAdvanced(d); err != nil {
				return n, fmt.Errorf("search: indexing %s: %w", p.rel, err)
			}
			docs = append(docs, d)
			n++
		}
	}
	if b.Size() > 0 {
		if err := ix.batch(b); err != nil {
			return n, fmt.Errorf("search: writing batch: %w", err)
		}
		recycleFields(docs)
	}
	ix.mu.Lock()
	for _, p := range keep {
		if ix.gen[p.rel] != p.gen {
			continue
		}
		if p.remove && !p.state.Binary {
			delete(ix.files, p.rel)
		} else {
			ix.files[p.rel] = p.state
		}
		if !p.same {
			ix.vocab.set(p.rel, p.vocab)
		}
	}
	ix.mu.Unlock()
	return n, nil
}

// batch applies b. Batches return once searchable; the persister writes
// them behind, and persist tracks them until it has. Callers hold writeMu.
func (ix *Index) batch(b *bleve.Batch) error {
	seq := ix.persist.issue()
	done := sync.OnceFunc(func() { ix.persist.done(seq) })
	b.SetPersistedCallback(func(error) { done() })
	err := ix.idx.Batch(b)
	if err != nil {
		done()
	}
	return err
}

// waitPersisted waits (up to a limit) until every batch up to upTo is on
// disk.
func (ix *Index) waitPersisted(upTo uint64) {
	if !ix.persist.wait(upTo, 30*time.Second) {
		ix.log.Warn("search: index persistence is slow; the next start may rebuild")
	}
}

// persistLog numbers the batches as they are applied and remembers which
// the persister has not written yet.
type persistLog struct {
	mu      sync.Mutex
	cond    sync.Cond
	issued  uint64
	unsaved map[uint64]bool
	waiters int // goroutines in wait (tests watch it)
}

func (p *persistLog) init() {
	if p.unsaved == nil {
		p.unsaved = map[uint64]bool{}
		p.cond.L = &p.mu
	}
}

// issue numbers a new batch.
func (p *persistLog) issue() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.init()
	p.issued++
	p.unsaved[p.issued] = true
	return p.issued
}

// done records that batch seq is on disk (or failed).
func (p *persistLog) done(seq uint64) {
	p.mu.Lock()
	delete(p.unsaved, seq)
	p.mu.Unlock()
	p.cond.Broadcast()
}

// last is the number of the latest batch.
func (p *persistLog) last() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.issued
}

// wait returns true once no batch up to upTo is unsaved, false after limit.
func (p *persistLog) wait(upTo uint64, limit time.Duration) bool {
	expired := false
	t := time.AfterFunc(limit, func() {
		p.mu.Lock()
		expired = true
		p.mu.Unlock()
		p.cond.Broadcast()
	})
	defer t.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.init()
	p.waiters++
	defer func() { p.waiters-- }()
	for {
		pending := false
		for seq := range p.unsaved {
			if seq <= upTo {
				pending = true
				break
			}
		}
		if !pending {
			return true
		}
		if expired {
			return false
		}
		p.cond.Wait()
	}
}

// hasDocs reports whether live documents of rel exist.
func (ix *Index) hasDocs(rel string) bool {
	q := bleve.NewTermQuery(rel)
	q.SetField(fPath)
	req := bleve.NewSearchRequestOptions(q, 0, 0, false)
	req.Score = "none"
	res, err := ix.idx.Search(req)
	return err == nil && res.Total > 0
}

// deleteDocsOf adds to b the deletion of every document of rel.
func (ix *Index) deleteDocsOf(b *bleve.Batch, rel string) error {
	q := bleve.NewTermQuery(rel)
	q.SetField(fPath)
	from := 0
	for {
		req := bleve.NewSearchRequestOptions(q, 1000, from, false)
		req.Score = "none"
		res, err := ix.idx.Search(req)
		if err != nil {
			return fmt.Errorf("search: finding documents of %s: %w", rel, err)
		}
		for _, h := range res.Hits {
			b.Delete(h.ID)
		}
		if len(res.Hits) < 1000 {
			return nil
		}
		from += len(res.Hits)
	}
}

func (ix *Index) removePaths(rels []string) error {
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	b := ix.idx.NewBatch()
	for _, rel := range rels {
		if err := ix.deleteDocsOf(b, rel); err != nil {
			return err
		}
	}
	if b.Size() > 0 {
		if err := ix.batch(b); err != nil {
			return fmt.Errorf("search: removing files: %w", err)
		}
	}
	ix.mu.Lock()
	for _, rel := range rels {
		delete(ix.files, rel)
		ix.gen[rel]++
		ix.vocab.remove(rel)
	}
	ix.mu.Unlock()
	return nil
}

// Remove deletes a file's documents (watcher delete events).
func (ix *Index) Remove(rel string) error {
	if err := ix.removePaths([]string{cleanRel(rel)}); err != nil {
		return err
	}
	ix.markDirty()
	return nil
}

func cleanRel(rel string) string {
	rel = filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
	return strings.TrimPrefix(rel, "./")
}

// Update re-reads one workspace-relative file from disk and re-indexes it,
// or removes it when it is gone, ignored, binary or oversized (watcher events
// and editor saves).
func (ix *Index) Update(rel string) error {
	rel = cleanRel(rel)
	if rel == "." || rel == "" || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("search: %q is not a workspace-relative file path", rel)
	}
	abs := ix.ws.Abs(rel)
	info, err := os.Stat(abs)
	if err != nil || !info.Mode().IsRegular() || info.Size() > ix.opts.MaxFileSize || ix.ws.Ignored(rel) || ix.excluded(rel) {
		if err == nil && info.IsDir() {
			return nil
		}
		return ix.Remove(rel)
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return ix.Remove(rel)
	}
	if workspace.IsBinary(b) {
		return ix.Remove(rel)
	}
	lang := workspace.LanguageOf(rel)
	st := fileState{Size: info.Size(), Mod: info.ModTime().UnixNano(), Hash: workspace.Hash(string(b))}
	ix.mu.Lock()
	old, ok := ix.files[rel]
	ix.mu.Unlock()
	if ok && old.Hash == st.Hash {
		ix.mu.Lock()
		ix.files[rel] = st
		ix.mu.Unlock()
		ix.markDirty()
		return nil
	}
	return ix.indexFile(rel, b, lang, ix.decls(rel, lang, b), st)
}

// UpdateFiles is Update for several files at once: the ones that exist and
// changed are indexed in one batch (a question that has its own files
// indexed ahead of a running reconcile pays for one write, not one per
// file); files that are gone, ignored, binary or oversized go through
// Update. The first error is returned; the other files are still updated.
func (ix *Index) UpdateFiles(rels []string) error {
	type item struct {
		rel    string
		chunks []chunk
		lang   string
		st     fileState
	}
	var items []item
	var errs []error
	for _, rel := range rels {
		rel = cleanRel(rel)
		if rel == "." || rel == "" || strings.HasPrefix(rel, "../") {
			continue
		}
		info, err := os.Stat(ix.ws.Abs(rel))
		if err != nil || !info.Mode().IsRegular() || info.Size() > ix.opts.MaxFileSize || ix.ws.Ignored(rel) || ix.excluded(rel) {
			if err := ix.Update(rel); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		b, err := os.ReadFile(ix.ws.Abs(rel))
		if err != nil || workspace.IsBinary(b) {
			if err := ix.Update(rel); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		st := fileState{Size: info.Size(), Mod: info.ModTime().UnixNano(), Hash: workspace.Hash(string(b))}
		ix.mu.Lock()
		old, ok := ix.files[rel]
		if ok && old.Hash == st.Hash {
			ix.files[rel] = st
		}
		ix.mu.Unlock()
		if ok && old.Hash == st.Hash {
			ix.markDirty()
			continue
		}
		lang := workspace.LanguageOf(rel)
		items = append(items, item{rel: rel, chunks: chunkFile(ix.redacted(b), ix.decls(rel, lang, b)), lang: lang, st: st})
	}
	if len(items) == 0 {
		return errors.Join(errs...)
	}
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	b := ix.idx.NewBatch()
	for _, it := range items {
		if err := ix.deleteDocsOf(b, it.rel); err != nil {
			return errors.Join(append(errs, err)...)
		}
		ff := newFileFields(it.rel, it.lang)
		for i := range it.chunks {
			if err := b.IndexAdvanced(ix.document(ff, &it.chunks[i])); err != nil {
				return errors.Join(append(errs, fmt.Errorf("search: indexing %s: %w", it.rel, err))...)
			}
		}
	}
	if err := ix.batch(b); err != nil {
		return errors.Join(append(errs, fmt.Errorf("search: indexing %d files: %w", len(items), err))...)
	}
	ix.mu.Lock()
	for _, it := range items {
		ix.files[it.rel] = it.st
		ix.gen[it.rel]++
		ix.vocab.set(it.rel, docVocab(it.chunks))
	}
	ix.mu.Unlock()
	ix.markDirty()
	return errors.Join(errs...)
}

// IndexFile indexes content as the text of rel with the given top-level
// declarations (nil: chunk in overlapping line windows), replacing what the
// index held for rel. Callers that parsed the file already (the repo map)
// use it to share the parse.
func (ix *Index) IndexFile(rel string, content []byte, lang string, decls []Decl) error {
	rel = cleanRel(rel)
	if ix.excluded(rel) {
		return ix.Remove(rel)
	}
	st := fileState{Hash: workspace.Hash(string(content)), Size: int64(len(content))}
	if info, err := os.Stat(ix.ws.Abs(rel)); err == nil {
		st.Size, st.Mod = info.Size(), info.ModTime().UnixNano()
	}
	if lang == "" {
		lang = workspace.LanguageOf(rel)
	}
	return ix.indexFile(rel, content, lang, decls, st)
}

func (ix *Index) indexFile(rel string, content []byte, lang string, decls []Decl, st fileState) error {
	chunks := chunkFile(ix.redacted(content), decls)
	ix.writeMu.Lock()
	defer ix.writeMu.Unlock()
	b := ix.idx.NewBatch()
	if err := ix.deleteDocsOf(b, rel); err != nil {
		return err
	}
	ff := newFileFields(rel, lang)
	for i := range chunks {
		if err := b.IndexAdvanced(ix.document(ff, &chunks[i])); err != nil {
			return fmt.Errorf("search: indexing %s: %w", rel, err)
		}
	}
	if err := ix.batch(b); err != nil {
		return fmt.Errorf("search: indexing %s: %w", rel, err)
	}
	ix.mu.Lock()
	ix.files[rel] = st
	ix.gen[rel]++
	ix.vocab.set(rel, docVocab(chunks))
	ix.mu.Unlock()
	ix.markDirty()
	return nil
}

// Close stops a running reconcile, saves the manifest and closes the index.
func (ix *Index) Close() error {
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return nil
	}
	ix.closed = true
	if ix.cancel != nil {
		ix.cancel()
	}
	if ix.saveT != nil {
		ix.saveT.Stop()
		ix.saveT = nil
	}
	ix.mu.Unlock()
	ix.running.Wait()
	ix.mu.Lock()
	dirty := ix.dirty
	ix.mu.Unlock()
	var err error
	if dirty { // reconciles save their own
		err = ix.saveManifest()
	} else {
		ix.writeMu.Lock()
		ix.waitPersisted(ix.persist.last()) // unsafe batches are written behind: finish them
		ix.writeMu.Unlock()
	}
	if cerr := ix.idx.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return err
}
