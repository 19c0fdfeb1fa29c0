// Package repomap builds the repository map: definitions and references
// extracted with tree-sitter tags queries (queries/<lang>-tags.scm), a
// reference graph ranked with personalized PageRank toward the question's
// focus, and a rendering of the top definitions fitted to a token budget.
//
// A Map is built once from a workspace (parallel parse, per-file tags cached
// by content hash under a cache directory so a warm start does not
// re-parse), then kept current with Update/Remove/Refresh (editor overlays,
// watcher events) or Watch. Ranking is recomputed lazily on the next Render.
package repomap

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/workspace"
)

// SkipReason says why a file is not in the map.
type SkipReason string

const (
	SkipIgnored     SkipReason = "ignored"        // .gitignore / .cairnignore
	SkipVendored    SkipReason = "vendored"       // vendor/, third_party/, ...
	SkipOversized   SkipReason = "oversized"      // larger than Options.MaxFileSize
	SkipBinary      SkipReason = "binary"         // NUL byte in the head
	SkipUnsupported SkipReason = "unsupported"    // no grammar for the extension
	SkipGenerated   SkipReason = "generated"      // "Code generated ... DO NOT EDIT", @generated, *.min.js
	SkipInvalidUTF8 SkipReason = "invalid-utf8"   // not valid UTF-8
	SkipLongLine    SkipReason = "long-line"      // a line longer than Options.MaxLineLength (minified)
	SkipParseFailed SkipReason = "parse-failed"   // tree-sitter gave no tree (timeout)
	SkipUnreadable  SkipReason = "unreadable"     // permission or I/O error
	SkipSecretPath  SkipReason = "secret in path" // Options.Exclude: a secret in its path
	SkipDeleted     SkipReason = "deleted"        // listed by the walk, gone when read
)

// DefaultMaxFileSize is the size above which a file is left out of the
// map unless Options.MaxFileSize says otherwise.
const DefaultMaxFileSize = 1 << 20

// Options configure a Map. The zero value is usable.
type Options struct {
	// CacheDir holds the tags cache (one file, tags.bin); "" disables it.
	CacheDir string
	// MaxFileSize skips larger files; default 1 MiB.
	MaxFileSize int64
	// MaxLineLength skips files with a longer line (minified code); default 8 KiB.
	MaxLineLength int
	// Workers parse in parallel; default GOMAXPROCS.
	Workers int
	// OnParse, when set, is called with every freshly parsed file (not
	// with ones loaded from the cache), e.g. to hand Decls to the search
	// index from the same parse. It must not call back into the Map.
	OnParse func(*FileTags)
	// Progress, when set, is called during Build with the files read or
	// parsed so far and the number to do (e.g. for $/progress); at most
	// every 64 files and once at the end, from worker goroutines.
	Progress func(done, total int)
	// Exclude, when set, keeps a file out of the map and its cache by its
	// path (the server's secret detector: a token used as a file name).
	Exclude func(rel string) bool
	// DeferCacheSave leaves saving the cache after a build to the caller
	// (SaveCache): a warm start that found a few files changed should not
	// wait for the whole cache to be encoded again (seconds on a large
	// tree). Unset, a build saves the cache before it returns.
	DeferCacheSave bool
}

// BuildStats describes one Build.
type BuildStats struct {
	Files    int // files in the map
	Parsed   int // parsed in this build
	Cached   int // reused from the cache or the previous build
	Skipped  map[SkipReason]int
	Duration time.Duration
}

type entry struct {
	Rel  string
	Size int64
	Mod  int64
	Hash string     // content hash ("" when skipped before hashing)
	Skip SkipReason // non-empty: the file is known and skipped
	Tags *FileTags  // nil when skipped

	// Name ids for the graph (see symtab), filled lazily under Map.mu.
	resolved bool
	defIDs   []int32
	defSame  []int32
	refIDs   []int32
	facts    *fileFacts // ranking facts (rank.go); nil until the next graph build when ids were kept
}

// Map is the repository map of one workspace. It is safe for concurrent use.
type Map struct {
	ws   *workspace.Workspace
	opts Options

	mu         sync.RWMutex
	files      map[string]*entry // rel → entry (parsed and skipped-after-read files)
	walkSkips  map[SkipReason]int
	transient  map[SkipReason]int // unreadable/deleted/parse-failed in the last build
	gen        uint64
	cacheGen   uint64 // gen last saved to the cache
	cacheRead  bool
	cacheLoad  chan struct{} // closed when ReadCache's load ended; nil without one
	graph      *graph
	rankCache  []*ranking
	tokenCache map[string]int
	defs       defIndex // definition name → its definitions
	syms       symtab
	// docExamples are the names the workspace's Markdown examples use
	// (markdownExamples), as FileTags.Examples are a file's; docs are the
	// Markdown files they were read from (the walk's, kept current by
	// Update and Refresh). docMu orders their rebuilds.
	docExamples []Ref
	docs        []workspace.File
	docMu       sync.Mutex
	stats       atomic.Pointer[statsAt] // the last Stats, while gen is its gen

	// readFile reads a file for parsing; tests replace it to inject errors.
	readFile func(abs string) ([]byte, error)
}

// New returns an empty Map for ws; call Build to fill it.
func New(ws *workspace.Workspace, opts Options) *Map {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.MaxLineLength <= 0 {
		opts.MaxLineLength = 8 << 10
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	m := &Map{
		ws:         ws,
		opts:       opts,
		files:      map[string]*entry{},
		walkSkips:  map[SkipReason]int{},
		transient:  map[SkipReason]int{},
		tokenCache: map[string]int{},
		defs:       defIndex{names: map[string][]defRef{}, num: map[string]int32{}},
	}
	m.readFile = m.readOverlay
	return m
}

// readOverlay returns the editor's copy of a file when it is open, else the disk.
func (m *Map) readOverlay(abs string) ([]byte, error) {
	if doc, ok := m.ws.Docs.Get(abs); ok {
		return []byte(doc.Text), nil
	}
	return os.ReadFile(abs)
}

// Build walks the workspace and brings the map up to date: files whose size
// and mtime match the cache (or the previous build) are reused without being
// read, files whose content hash matches are reused without being parsed,
// the rest are parsed in parallel. The cache is saved when it changed.
// Build is also the reconcile: an Update that lands while a Build runs may
// be superseded by what the Build read from disk and overlays.
func (m *Map) Build(ctx context.Context) (BuildStats, error) {
	return m.BuildListed(ctx, m.ws.Walk)
}

// BuildListed is Build with the workspace listed by list (called once, with
// the map's walk options): a caller that reconciles other indexes too lists
// the tree once for all of them.
func (m *Map) BuildListed(ctx context.Context, list workspace.Lister) (BuildStats, error) {
	start := time.Now()
	stats := BuildStats{Skipped: map[SkipReason]int{}}
	walked, walkSkips, prev := m.walkAndLoad(list)

	next := make(map[string]*entry, len(walked))
	var todo, docs []workspace.File
	for _, f := range walked {
		if LanguageOf(f.Rel) == "" {
			if IsMarkdown(f.Rel) {
				docs = append(docs, f)
			}
			walkSkips[SkipUnsupported]++
			continue
		}
		if m.opts.Exclude != nil && m.opts.Exclude(f.Rel) {
			walkSkips[SkipSecretPath]++
			continue
		}
		if e := prev[f.Rel]; e != nil && e.Size == f.Size && e.Mod == f.Mod && !m.hasOverlay(f.Abs) {
			next[f.Rel] = e
			stats.Cached++
			continue
		}
		todo = append(todo, f)
	}

	results := m.loadAll(ctx, todo, prev)
	if err := ctx.Err(); err != nil {
		return stats, err
	}
	transient := map[SkipReason]int{}
	for _, r := range results {
		switch {
		case r.e != nil:
			next[r.e.Rel] = r.e
			if r.fresh {
				stats.Parsed++
				if m.opts.OnParse != nil && r.e.Tags != nil {
					m.opts.OnParse(r.e.Tags)
				}
			} else {
				stats.Cached++
			}
		case r.reason != "":
			transient[r.reason]++
		}
	}
	m.install(next, walkSkips, transient, stats.Parsed == 0 && len(next) == len(prev))
	m.docMu.Lock()
	if !m.docsCurrent(docs) {
		m.setDocs(docs, m.readFile)
	}
	m.docMu.Unlock()

	st := m.Stats()
	stats.Files = st.Files
	stats.Skipped = st.Skipped
	var err error
	if !m.opts.DeferCacheSave {
		err = m.SaveCache()
	}
	stats.Duration = time.Since(start)
	return stats, err
}

// walkAndLoad lists the workspace while the tags cache is read (by
// ReadCache, already under way, or here): the two are independent and
// overlap. It returns the walk's files and skips, and a copy of the map's
// entries to reuse (Update may write m.files meanwhile).
func (m *Map) walkAndLoad(list workspace.Lister) ([]workspace.File, map[SkipReason]int, map[string]*entry) {
	type walkResult struct {
		files []workspace.File
		stats workspace.WalkStats
	}
	walkDone := make(chan walkResult, 1)
	go func() {
		files, st := list(workspace.WalkOptions{MaxFileSize: m.opts.MaxFileSize})
		walkDone <- walkResult{files, st}
	}()
	m.mu.RLock()
	load := m.cacheLoad
	m.mu.RUnlock()
	if load != nil {
		<-load // ReadCache's
	}
	m.mu.Lock()
	if !m.cacheRead {
		m.cacheRead = true
		if cached, err := m.loadCache(); err == nil && len(m.files) == 0 {
			m.files = cached
		}
	}
	prev := maps.Clone(m.files)
	m.mu.Unlock()

	wr := <-walkDone
	walkSkips := map[SkipReason]int{}
	for r, n := range wr.stats.Skipped {
		walkSkips[SkipReason(r)] += n
	}
	return wr.files, walkSkips, prev
}

// loadResult is one file's outcome in a build.
type loadResult struct {
	e      *entry
	reason SkipReason // transient failure: no entry
	fresh  bool
}

// loadAll reads and parses todo on the map's workers (reusing prev's
// entries where the content hash matches), reporting progress; a cancelled
// ctx stops feeding them.
func (m *Map) loadAll(ctx context.Context, todo []workspace.File, prev map[string]*entry) []loadResult {
	results := make([]loadResult, len(todo))
	in := &interner{m: map[string]string{}}
	var wg sync.WaitGroup
	var done atomic.Int64
	work := make(chan int)
	for w := 0; w < m.opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				f := todo[i]
				e, reason, fresh := m.load(ctx, f, prev[f.Rel], in)
				results[i] = loadResult{e, reason, fresh}
				if n := done.Add(1); m.opts.Progress != nil && (n%64 == 0 || int(n) == len(todo)) {
					m.opts.Progress(int(n), len(todo))
				}
			}
		}()
	}
feed:
	for i := range todo {
		select {
		case work <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	if len(todo) > 0 {
		releaseCMemory() // what the parses freed, before the caller's next phase
	}
	return results
}

// install makes next the map's files, with their definition index (built
// outside the lock) and the build's skips. unchanged says the build parsed
// nothing and found the files it had: a first build from an up-to-date
// cache, which then has nothing to save.
func (m *Map) install(next map[string]*entry, walkSkips, transient map[SkipReason]int, unchanged bool) {
	rels := make([]string, 0, len(next))
	for rel, e := range next {
		if e.Tags != nil {
			rels = append(rels, rel)
		}
	}
	sort.Strings(rels)
	m.mu.RLock()
	names := len(m.defs.names)
	m.mu.RUnlock()
	index := defIndexOf(rels, next, names)

	m.mu.Lock()
	defer m.mu.Unlock()
	// The symbol table only grows (Update interns every name it sees, e.g.
	// each prefix of an identifier being typed); a full build starts it
	// over when it has grown well past what the files use.
	if len(m.syms.names) > 2*m.syms.live+50000 {
		m.syms = symtab{}
		for _, e := range next {
			e.resolved = false
		}
	}
	m.files = next
	m.defs = index
	m.walkSkips = walkSkips
	m.transient = transient
	m.gen++
	m.graph = nil
	m.rankCache = nil
	if unchanged && m.cacheGen == 0 {
		m.cacheGen = m.gen
	}
}

// defIndex lists each definition name's definitions, in path order, then
// in file order.
type defIndex struct {
	names map[string][]defRef
	// files are the indexed files' tags by number (a defRef's file), nil
	// for a file removed since the build that numbered them; num is each
	// indexed file's number. A file's tags never change in place: a new
	// version is a new FileTags, swapped in by setLocked under its number
	// (or by a build, which makes a new index), so a ref stays valid
	// while it is in the index.
	files []*FileTags
	num   map[string]int32
}

// defRef is one definition in the definition index: its file's number and
// its place in the file's Defs. Pointing at the definition, rather than at
// the file, spares a lookup its scan through every definition of each file
// with the name (a common name's files hold tens of thousands at 10× a
// large tree). A number, not a pointer, so the index's million refs at 10×
// are data the collector does not scan (see str).
type defRef struct {
	file, i int32
}

func (x *defIndex) tags(r defRef) *FileTags { return x.files[r.file] }
func (x *defIndex) def(r defRef) *Def       { return &x.files[r.file].Defs[r.i] }

// defIndexOf is the definition index of a build: each definition name →
// its definitions in the files of rels (which are sorted), in path order,
// then in file order; rels are numbered in their order. names estimates
// how many distinct names there are (the last build's count; 0 for none).
// The lists share one backing array, each cut to its own capacity, so
// setLocked's edits of one list never reach another; counting first
// spares a growing slice per name.
func defIndexOf(rels []string, files map[string]*entry, names int) defIndex {
	type slot struct {
		name     str
		n, start int32
	}
	defs := 0
	for _, rel := range rels {
		defs += len(files[rel].Tags.Defs)
	}
	if names <= 0 {
		names = defs / 4
	}
	// Sized up front: growing a map of a large tree's names rehashes it a
	// dozen times.
	// Keyed by the names' numbers (equal names, equal numbers): no string
	// is read or hashed per definition.
	slotOf := make(map[str]int32, names)
	slots := make([]slot, 0, names)
	hits := make([]int32, 0, defs) // per definition in rels' order: its slot
	for _, rel := range rels {
		for i := range files[rel].Tags.Defs {
			name := files[rel].Tags.Defs[i].name
			id, ok := slotOf[name]
			if !ok {
				id = int32(len(slots))
				slotOf[name] = id
				slots = append(slots, slot{name: name})
			}
			slots[id].n++
			hits = append(hits, id)
		}
	}
	total := int32(0)
	for i := range slots {
		slots[i].start = total
		total += slots[i].n
		slots[i].n = 0
	}
	x := defIndex{
		names: make(map[string][]defRef, len(slots)),
		files: make([]*FileTags, len(rels)),
		num:   make(map[string]int32, len(rels)),
	}
	all := make([]defRef, total)
	h := 0
	for f, rel := range rels {
		t := files[rel].Tags
		x.files[f], x.num[rel] = t, int32(f)
		for i := range t.Defs {
			sl := &slots[hits[h]]
			all[sl.start+sl.n] = defRef{int32(f), int32(i)}
			sl.n++
			h++
		}
	}
	for _, sl := range slots {
		x.names[sl.name.String()] = all[sl.start : sl.start+sl.n : sl.start+sl.n]
	}
	return x
}

// refsOf returns the range [lo, hi) of l (one of x's lists) in file rel.
func (x *defIndex) refsOf(l []defRef, rel string) (lo, hi int) {
	lo, _ = slices.BinarySearchFunc(l, rel, func(r defRef, rel string) int { return strings.Compare(x.tags(r).Path, rel) })
	hi = lo
	for hi < len(l) && x.tags(l[hi]).Path == rel {
		hi++
	}
	return lo, hi
}

func (m *Map) hasOverlay(abs string) bool {
	_, ok := m.ws.Docs.Get(abs)
	return ok
}

// load reads and parses one file. It returns an entry (parsed or skipped
// for a lasting reason), or a transient reason with no entry.
func (m *Map) load(ctx context.Context, f workspace.File, prev *entry, in *interner) (*entry, SkipReason, bool) {
	content, err := m.readFile(f.Abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, SkipDeleted, false
		}
		return nil, SkipUnreadable, false
	}
	e := &entry{Rel: f.Rel, Size: f.Size, Mod: f.Mod}
	if r := m.classify(f.Rel, content); r != "" {
		e.Skip = r
		return e, "", false
	}
	hash := hashBytes(content)
	if prev != nil && prev.Hash == hash && prev.Tags != nil {
		e.Hash, e.Tags = hash, prev.Tags
		return e, "", false
	}
	ft, err := parseFileHashed(ctx, f.Rel, content, hash)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, "", false
		}
		return nil, SkipParseFailed, false
	}
	in.tags(ft)
	e.Hash, e.Tags = ft.Hash, ft
	return e, "", true
}

var generatedMarkers = [][]byte{[]byte("DO NOT EDIT"), []byte("@generated"), []byte("<auto-generated")}

// classify returns why content should not be parsed, or "".
func (m *Map) classify(rel string, content []byte) SkipReason {
	if workspace.IsBinary(content) {
		return SkipBinary
	}
	if !utf8.Valid(content) {
		return SkipInvalidUTF8
	}
	if isGenerated(rel, content) {
		return SkipGenerated
	}
	line := 0
	for len(content) > 0 {
		i := bytes.IndexByte(content, '\n')
		if i < 0 {
			i = len(content)
		}
		if i > line {
			line = i
		}
		if line > m.opts.MaxLineLength {
			return SkipLongLine
		}
		if i == len(content) {
			break
		}
		content = content[i+1:]
	}
	return ""
}

// isGenerated follows the Go convention ("// Code generated ... DO NOT
// EDIT." in a comment before the code) and common markers of other tools in
// the first lines, plus minified-file names.
func isGenerated(rel string, content []byte) bool {
	if bytes.HasSuffix([]byte(rel), []byte(".min.js")) || bytes.HasSuffix([]byte(rel), []byte(".min.css")) {
		return true
	}
	head := content
	if len(head) > 4096 {
		head = head[:4096]
	}
	for _, line := range bytes.SplitN(head, []byte{'\n'}, 40) {
		t := bytes.TrimSpace(line)
		if !(bytes.HasPrefix(t, []byte("//")) || bytes.HasPrefix(t, []byte("#")) || bytes.HasPrefix(t, []byte("/*")) || bytes.HasPrefix(t, []byte("*")) || bytes.HasPrefix(t, []byte("<!--"))) {
			continue
		}
		if bytes.Contains(t, []byte("Code generated")) && bytes.Contains(t, []byte("DO NOT EDIT")) {
			return true
		}
		for _, mk := range generatedMarkers[1:] {
			if bytes.Contains(t, mk) {
				return true
			}
		}
	}
	return false
}

// Update re-parses one file from the given content (an editor overlay or a
// watcher event) and marks the ranking stale. Unsupported and ignored paths
// are not added; content that should be skipped (binary, generated, ...)
// replaces the file's tags with a skip record. It returns an error only when
// tree-sitter fails to parse (the file is then removed from the map).
func (m *Map) Update(rel string, content []byte) error {
	if IsMarkdown(rel) {
		m.refreshDocs([]string{rel}, content)
		return nil
	}
	if LanguageOf(rel) == "" {
		return nil
	}
	if m.ws.Ignored(rel) || m.opts.Exclude != nil && m.opts.Exclude(rel) {
		m.Remove(rel)
		return nil
	}
	e := &entry{Rel: rel, Size: int64(len(content))}
	if st, err := os.Stat(m.ws.Abs(rel)); err == nil && st.Size() == int64(len(content)) {
		e.Mod = st.ModTime().UnixNano()
	}
	if r := m.classify(rel, content); r != "" {
		e.Skip = r
	} else {
		m.mu.RLock()
		old := m.files[rel]
		m.mu.RUnlock()
		hash := hashBytes(content)
		if old != nil && old.Tags != nil && old.Hash == hash {
			// Same content: keep the tags, record the new size and mtime
			// in a fresh entry (SaveCache may be encoding the old one).
			e.Hash, e.Tags = hash, old.Tags
			m.mu.Lock()
			if m.files[rel] == old {
				m.files[rel] = e
			}
			m.mu.Unlock()
			return nil
		}
		ft, err := parseFileHashed(context.Background(), rel, content, hash)
		if err != nil {
			m.Remove(rel)
			return err
		}
		e.Hash, e.Tags = ft.Hash, ft
		if m.opts.OnParse != nil {
			m.opts.OnParse(ft)
		}
	}
	m.mu.Lock()
	m.setLocked(rel, e)
	m.mu.Unlock()
	return nil
}

// setLocked replaces (e != nil) or removes the entry of rel, keeping the
// definition index current.
func (m *Map) setLocked(rel string, e *entry) {
	old := m.files[rel]
	x := &m.defs
	if old != nil && old.Tags != nil {
		for _, d := range old.Tags.Defs {
			l := x.names[d.Name()]
			if lo, hi := x.refsOf(l, rel); lo < hi {
				l = slices.Delete(l, lo, hi)
				if len(l) == 0 {
					delete(x.names, d.Name())
				} else {
					x.names[d.Name()] = l
				}
			}
		}
	}
	num, numbered := x.num[rel]
	if e == nil || e.Tags == nil {
		if numbered {
			x.files[num] = nil
			delete(x.num, rel)
		}
	} else if numbered {
		x.files[num] = e.Tags
	} else {
		num = int32(len(x.files))
		x.files = append(x.files, e.Tags)
		x.num[rel] = num
	}
	if e == nil {
		delete(m.files, rel)
	} else {
		m.files[rel] = e
		if e.Tags != nil {
			// Each name's definitions in this file go in together, in
			// file order, where the file's path sorts.
			t := e.Tags
			byName := map[string][]defRef{}
			var names []string
			for i := range t.Defs {
				name := t.Defs[i].Name()
				if _, ok := byName[name]; !ok {
					names = append(names, name)
				}
				byName[name] = append(byName[name], defRef{num, int32(i)})
			}
			for _, name := range names {
				l := x.names[name]
				lo, _ := x.refsOf(l, rel)
				x.names[name] = slices.Insert(slices.Clip(l), lo, byName[name]...)
			}
		}
	}
	// An edit that keeps every definition name and reference count (a
	// comment, a literal, moved lines) leaves the graph and the rankings
	// as they are: swap the file's tags into the graph and keep them.
	if e != nil && old != nil && m.graph != nil && m.graph.gen == m.gen && sameShape(old, e) {
		if g := m.graph.withTags(rel, e.Tags); g != nil {
			e.resolved, e.defIDs, e.defSame, e.refIDs = true, old.defIDs, old.defSame, old.refIDs
			m.gen++
			g.gen = m.gen
			m.graph = g
			return
		}
	}
	m.changedLocked()
}

// sameShape reports whether two versions of a file give the graph the same
// nodes and weights: the same definition names and kinds in order and the
// same references (name, form) with the same counts.
func sameShape(old, e *entry) bool {
	a, b := old.Tags, e.Tags
	if !old.resolved || a == nil || b == nil || len(a.Defs) != len(b.Defs) || len(a.Refs) != len(b.Refs) {
		return false
	}
	for i := range a.Defs {
		if a.Defs[i].name != b.Defs[i].name || a.Defs[i].Local != b.Defs[i].Local || a.Defs[i].kind != b.Defs[i].kind {
			return false
		}
	}
	for i := range a.Refs {
		if ra, rb := &a.Refs[i], &b.Refs[i]; ra.name != rb.name || ra.Count != rb.Count || ra.Member != rb.Member || ra.Export != rb.Export {
			return false
		}
	}
	return true
}

// Remove drops a file from the map.
func (m *Map) Remove(rel string) {
	m.mu.Lock()
	if _, ok := m.files[rel]; ok {
		m.setLocked(rel, nil)
	}
	m.mu.Unlock()
}

// Refresh re-reads the given workspace-relative files (overlay first, then
// disk) and updates or removes them: what a watcher calls after events.
// Markdown files among them are read again together (refreshDocs).
func (m *Map) Refresh(rels ...string) {
	var docs []string
	defer func() { m.refreshDocs(docs, nil) }() // once for all of them
	for _, rel := range rels {
		abs := m.ws.Abs(rel)
		if IsMarkdown(rel) {
			docs = append(docs, rel)
			continue
		}
		if m.ws.Ignored(rel) || LanguageOf(rel) == "" {
			m.Remove(rel)
			continue
		}
		// Lstat: symlinks are not followed (the walk skips them too, and a
		// link may point outside the workspace).
		st, err := os.Lstat(abs)
		if err != nil && !m.hasOverlay(abs) {
			m.Remove(rel)
			continue
		}
		if err == nil && (!st.Mode().IsRegular() || st.Size() > m.opts.MaxFileSize) {
			m.Remove(rel)
			continue
		}
		content, err := m.readFile(abs)
		if err != nil {
			m.Remove(rel)
			continue
		}
		_ = m.Update(rel, content)
	}
}

// setDocs reads the Markdown examples of docs with read and installs
// them; the caller holds docMu.
func (m *Map) setDocs(docs []workspace.File, read func(abs string) ([]byte, error)) {
	docEx := m.markdownExamples(slices.Clone(docs), read)
	m.mu.Lock()
	m.docs = docs
	if !slices.Equal(docEx, m.docExamples) {
		// The ranking reads them; the tags, their cache and the
		// generation do not change (a warm start saves no cache for it).
		m.docExamples = docEx
		m.graph, m.rankCache = nil, nil
	}
	m.mu.Unlock()
}

// docsCurrent reports that the Markdown examples were read from docs as
// they are (the same files, sizes and times, none open in the editor):
// a rescan or a second build need not read them again, Update and
// Refresh having kept them current. The caller holds docMu.
func (m *Map) docsCurrent(docs []workspace.File) bool {
	m.mu.RLock()
	same := m.docs != nil && slices.Equal(docs, m.docs)
	m.mu.RUnlock()
	return same && !slices.ContainsFunc(docs, func(f workspace.File) bool { return m.hasOverlay(f.Abs) })
}

// refreshDocs reads the workspace's Markdown examples again after the
// Markdown files rels changed, were created or were removed: an edited
// README reaches the overview at once, not at the next build. content,
// when not nil, is the text of rels[0] (the editor's). At most
// maxDocFiles files are read, as in a build, once for all of rels.
func (m *Map) refreshDocs(rels []string, content []byte) {
	if len(rels) == 0 {
		return
	}
	m.docMu.Lock()
	defer m.docMu.Unlock()
	m.mu.RLock()
	docs := slices.DeleteFunc(slices.Clone(m.docs), func(f workspace.File) bool { return slices.Contains(rels, f.Rel) })
	m.mu.RUnlock()
	for i, rel := range rels {
		if m.ws.Ignored(rel) {
			continue
		}
		abs := m.ws.Abs(rel)
		if i == 0 && content != nil {
			docs = append(docs, workspace.File{Rel: rel, Abs: abs, Size: int64(len(content))})
		} else if st, err := os.Lstat(abs); err == nil && st.Mode().IsRegular() {
			docs = append(docs, workspace.File{Rel: rel, Abs: abs, Size: st.Size(), Mod: st.ModTime().UnixNano()})
		} else if m.hasOverlay(abs) {
			docs = append(docs, workspace.File{Rel: rel, Abs: abs})
		}
	}
	read := m.readFile
	if content != nil {
		abs := m.ws.Abs(rels[0])
		read = func(a string) ([]byte, error) {
			if a == abs {
				return content, nil
			}
			return m.readFile(a)
		}
	}
	m.setDocs(docs, read)
}

func (m *Map) changedLocked() {
	m.gen++
	m.graph = nil
	m.rankCache = nil
}

// Stats describes the map's current content.
type Stats struct {
	Files   int // files with tags
	Defs    int
	Refs    int // distinct (file, name) references
	Skipped map[SkipReason]int
}

// Stats counts the files in the map and the skipped ones by reason. The
// counts are kept until the map changes: a context build asks for them
// (a pass over every file, 10 ms at 10× the Go tree), and so does every
// status line.
func (m *Map) Stats() Stats {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if c := m.stats.Load(); c != nil && c.gen == m.gen {
		st := c.st
		st.Skipped = maps.Clone(c.st.Skipped)
		return st
	}
	st := m.countLocked()
	m.stats.Store(&statsAt{gen: m.gen, st: st})
	st.Skipped = maps.Clone(st.Skipped)
	return st
}

// statsAt is Stats at a generation of the map.
type statsAt struct {
	gen uint64
	st  Stats
}

func (m *Map) countLocked() Stats {
	st := Stats{Skipped: map[SkipReason]int{}}
	for r, n := range m.walkSkips {
		st.Skipped[r] += n
	}
	for r, n := range m.transient {
		st.Skipped[r] += n
	}
	for _, e := range m.files {
		if e.Tags == nil {
			st.Skipped[e.Skip]++
			continue
		}
		st.Files++
		st.Defs += len(e.Tags.Defs)
		st.Refs += len(e.Tags.Refs)
	}
	return st
}

// Tags returns the tags of one file.
func (m *Map) Tags(rel string) (*FileTags, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e := m.files[rel]
	if e == nil || e.Tags == nil {
		return nil, false
	}
	return e.Tags, true
}

// TagsOf returns the tags of rel when the map parsed exactly content
// (same hash), without copying content.
func (m *Map) TagsOf(rel string, content []byte) (*FileTags, bool) {
	t, ok := m.Tags(rel)
	if !ok || t.Hash != hashBytes(content) {
		return nil, false
	}
	return t, true
}

// Each calls fn for every file with tags, in path order (e.g. to seed the
// search index with Decls from a warm start). fn must not call the Map.
func (m *Map) Each(fn func(*FileTags)) {
	m.mu.RLock()
	tags := make([]*FileTags, 0, len(m.files))
	for _, e := range m.files {
		if e.Tags != nil {
			tags = append(tags, e.Tags)
		}
	}
	m.mu.RUnlock()
	sort.Slice(tags, func(i, j int) bool { return tags[i].Path < tags[j].Path })
	for _, t := range tags {
		fn(t)
	}
}

// Skips returns why the map would not parse this content of rel
// (binary, generated, minified...), or "".
func (m *Map) Skips(rel string, content []byte) SkipReason {
	return m.classify(rel, content)
}

// interner shares one copy of each string of a file's tags that many
// files repeat and the records do not hold (languages, build constraints,
// the scopes' names and lines; a Def's and a Ref's strings are in the
// process's string table, str). It lives for one Build: the map keeps the
// strings, not the table.
type interner struct {
	mu sync.Mutex
	m  map[string]string
}

func (in *interner) str(s string) string {
	if t, ok := in.m[s]; ok {
		return t
	}
	in.m[s] = s
	return s
}

// tags interns the strings of one file's tags in place.
func (in *interner) tags(ft *FileTags) {
	in.mu.Lock()
	defer in.mu.Unlock()
	ft.Language = in.str(ft.Language)
	ft.Constraint = in.str(ft.Constraint)
	for i := range ft.Scopes {
		s := &ft.Scopes[i]
		s.Name, s.Signature = in.str(s.Name), in.str(s.Signature)
	}
}
