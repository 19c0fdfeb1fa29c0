package codeindex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/cairn-dev/cairn/workspace"
)

// Roots is the index of a multi-root workspace: one Local per workspace
// folder, each with its own state (the first folder's in StateDir as
// before, every other folder's in StateDir/roots/<hash of its path>), seen
// through one Index. Paths of the first folder are plain relative paths;
// paths of another folder begin with its name (workspace.Folder), both in
// what Roots answers and in what it is asked. Search hits of all folders
// are merged by score (each engine's BM25 score over its own corpus: close
// enough to interleave, not to compare finely); the map's token budget is
// shared among the folders that have definitions, a folder holding a focus
// file weighing double. With one folder, Roots answers exactly as its
// Local does.
type Roots struct {
	ws      *workspace.Workspace
	primary *Local
	opts    Options

	mu      sync.Mutex
	ctx     context.Context // Start's: folders added later start under it
	extra   []folderIndex
	ready   chan struct{} // closed when every folder's first build ended
	stopAll chan struct{} // closed by Close
}

type folderIndex struct {
	name string
	root string
	ix   *Local
}

var (
	_ Index   = (*Roots)(nil)
	_ Warming = (*Roots)(nil)
)

// NewRoots wraps the first folder's index; folders are added with Add.
func NewRoots(ws *workspace.Workspace, primary *Local, opts Options) *Roots {
	r := &Roots{ws: ws, primary: primary, opts: opts, stopAll: make(chan struct{})}
	r.ready = r.readyOf(r.all())
	return r
}

// Primary is the first folder's index.
func (r *Roots) Primary() *Local { return r.primary }

// Locals returns every folder's index, the first folder's first.
func (r *Roots) Locals() []*Local {
	var out []*Local
	for _, e := range r.all() {
		out = append(out, e.ix)
	}
	return out
}

// FolderStateDir is where the index of the folder at root keeps its state.
func FolderStateDir(stateDir, root string) string {
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(stateDir, "roots", hex.EncodeToString(sum[:8]))
}

// Add opens and (once Start ran) starts the index of folder f. A search
// index that cannot open leaves the folder with its map alone, as for the
// first folder; the error says so.
func (r *Roots) Add(f workspace.Folder) error {
	opts := r.opts
	opts.StateDir = FolderStateDir(r.opts.StateDir, f.Root)
	if opts.Progress != nil {
		name, progress := f.Name, opts.Progress
		// A kind of its own per folder: progress reports of one kind
		// are one task to the editor, and two folders build at once.
		opts.Progress = func(p Progress) {
			p.Kind = fmt.Sprintf("%s (%s)", p.Kind, name)
			progress(p)
		}
	}
	ix, err := Open(f.WS, opts)
	if ix == nil {
		return fmt.Errorf("indexing workspace folder %s: %w", f.Name, err)
	}
	r.mu.Lock()
	for _, e := range r.extra {
		if e.root == f.Root {
			r.mu.Unlock()
			_ = ix.Close()
			return nil
		}
	}
	r.extra = append(r.extra, folderIndex{name: f.Name, root: f.Root, ix: ix})
	r.ready = r.readyOf(r.allLocked())
	ctx := r.ctx
	r.mu.Unlock()
	if ctx != nil {
		ix.Start(ctx)
	}
	if err != nil {
		return fmt.Errorf("indexing workspace folder %s: %w", f.Name, err)
	}
	return nil
}

// Remove closes the index of the folder at root (a real path); its files
// leave every answer at once.
func (r *Roots) Remove(root string) {
	r.mu.Lock()
	var gone *Local
	for i, e := range r.extra {
		if e.root == root {
			gone = e.ix
			r.extra = append(r.extra[:i:i], r.extra[i+1:]...)
			break
		}
	}
	if gone != nil {
		r.ready = r.readyOf(r.allLocked())
	}
	r.mu.Unlock()
	if gone != nil {
		if err := gone.Close(); err != nil {
			slog.Warn("closing a removed workspace folder's index", "root", root, "err", err)
		}
	}
}

// Start starts every folder's index, and those added later.
func (r *Roots) Start(ctx context.Context) {
	r.mu.Lock()
	r.ctx = ctx
	all := r.allLocked()
	r.mu.Unlock()
	for _, e := range all {
		e.ix.Start(ctx)
	}
}

// Close closes every folder's index.
func (r *Roots) Close() error {
	r.mu.Lock()
	all := r.allLocked()
	r.extra = nil
	select {
	case <-r.stopAll:
	default:
		close(r.stopAll)
	}
	r.mu.Unlock()
	var first error
	for _, e := range all {
		if err := e.ix.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (r *Roots) all() []folderIndex {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.allLocked()
}

// allLocked lists the first folder (name "") then the others.
func (r *Roots) allLocked() []folderIndex {
	return append([]folderIndex{{ix: r.primary, root: r.ws.Root()}}, r.extra...)
}

// readyOf returns a channel closed once every index in all is ready (or
// Roots is closed).
func (r *Roots) readyOf(all []folderIndex) chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for _, e := range all {
			select {
			case <-e.ix.Ready():
			case <-r.stopAll:
				return
			}
		}
	}()
	return ch
}

// route finds the index a workspace path belongs to and its path there.
func (r *Roots) route(rel string) (folderIndex, string) {
	all := r.all()
	first, rest, ok := strings.Cut(rel, "/")
	if ok || rel != "" {
		for _, e := range all[1:] {
			if e.name == first {
				return e, rest
			}
		}
	}
	return all[0], rel
}

func prefixed(name, rel string) string {
	if name == "" {
		return rel
	}
	return name + "/" + rel
}

// prefixSymbols gives the symbols of folder name their workspace paths.
func prefixSymbols(name string, syms []Symbol) []Symbol {
	if name == "" {
		return syms
	}
	out := make([]Symbol, len(syms))
	for i, s := range syms {
		s.Path = prefixed(name, s.Path)
		out[i] = s
	}
	return out
}

// Search runs q in every folder and merges the hits by score.
func (r *Roots) Search(ctx context.Context, q Query, limit int) (*SearchResult, error) {
	all := r.all()
	if len(all) == 1 {
		return r.primary.Search(ctx, q, limit)
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	merged := &SearchResult{}
	var firstErr error
	searched := 0
	for _, e := range all {
		fq := q
		fq.folder = e.name
		res, err := e.ix.Search(ctx, fq, limit)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if firstErr == nil {
				firstErr = err
			}
			if e.name != "" {
				merged.Warnings = append(merged.Warnings, fmt.Sprintf("folder %s: %v", e.name, err))
			}
			continue
		}
		searched++
		for _, h := range res.Hits {
			h.Path = prefixed(e.name, h.Path)
			if len(h.Copies) > 0 {
				cs := make([]string, len(h.Copies))
				for i, c := range h.Copies {
					cs[i] = prefixed(e.name, c)
				}
				h.Copies = cs
			}
			merged.Hits = append(merged.Hits, h)
		}
		merged.Total += res.Total
		merged.Partial = merged.Partial || res.Partial
		for _, w := range res.Warnings {
			if !contains(merged.Warnings, w) {
				merged.Warnings = append(merged.Warnings, w)
			}
		}
	}
	if searched == 0 {
		return nil, firstErr
	}
	// Stable: equal scores keep the first folder's hits first.
	sort.SliceStable(merged.Hits, func(i, j int) bool { return merged.Hits[i].Score > merged.Hits[j].Score })
	if len(merged.Hits) > limit {
		merged.Hits = merged.Hits[:limit]
	}
	return merged, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// RenderMap renders each folder's map with its share of tokens and joins
// them, the first folder first; another folder's file lines carry its name.
func (r *Roots) RenderMap(focus Focus, tokens int) (string, RenderStats) {
	all := r.all()
	if len(all) == 1 {
		return r.primary.RenderMap(focus, tokens)
	}
	type part struct {
		e      folderIndex
		focus  Focus
		weight int
	}
	var parts []part
	total := 0
	for _, e := range all {
		f := Focus{Identifiers: focus.Identifiers, Mentioned: focus.Mentioned,
			Files: r.relsOf(e, focus.Files), Related: r.relsOf(e, focus.Related), Known: r.relsOf(e, focus.Known)}
		if e.ix.Stats().Definitions == 0 {
			continue
		}
		w := 1
		if len(f.Files) > 0 {
			w = 2
		}
		parts = append(parts, part{e, f, w})
		total += w
	}
	st := RenderStats{Budget: tokens}
	if total == 0 || tokens <= 0 {
		return "", st
	}
	var b strings.Builder
	left := tokens
	for i, p := range parts {
		share := tokens * p.weight / total
		if i == len(parts)-1 || share > left {
			share = left
		}
		out, ps := p.e.ix.RenderMap(p.focus, share)
		if p.e.name != "" && ps.Files > 0 {
			// The folder's name on every file line costs tokens of its
			// own: a name token or few and a separator per file. Render
			// again with that much less rather than overrun the budget.
			extra := ps.Files * (len(p.e.name)/3 + 2)
			if ps.Tokens+extra > share {
				out, ps = p.e.ix.RenderMap(p.focus, max(0, share-extra))
			}
			out = prefixMapFiles(p.e.name, out)
			ps.Tokens += ps.Files * (len(p.e.name)/3 + 2)
		}
		b.WriteString(out)
		left -= min(ps.Tokens, share)
		st.Tokens += ps.Tokens
		st.Files += ps.Files
		st.Defs += ps.Defs
		st.Candidates += ps.Candidates
		st.Rank += ps.Rank
		st.Duration += ps.Duration
	}
	return b.String(), st
}

// relsOf keeps the paths of rels in folder e, as that folder's index names them.
func (r *Roots) relsOf(e folderIndex, rels []string) []string {
	var out []string
	for _, rel := range rels {
		if f, rest := r.route(rel); f.root == e.root {
			out = append(out, rest)
		}
	}
	return out
}

// prefixMapFiles puts "name/" before each file line of a rendered map
// (the lines that are not indented; definitions are).
func prefixMapFiles(name, out string) string {
	lines := strings.SplitAfter(out, "\n")
	for i, l := range lines {
		if l != "" && l[0] != ' ' && l[0] != '\t' && l != "\n" {
			lines[i] = name + "/" + l
		}
	}
	return strings.Join(lines, "")
}

// Definitions returns the definitions of names in every folder.
func (r *Roots) Definitions(names []string) []Symbol {
	var out []Symbol
	for _, e := range r.all() {
		out = append(out, prefixSymbols(e.name, e.ix.Definitions(names))...)
	}
	return out
}

// EnclosingSymbol asks the folder of rel.
func (r *Roots) EnclosingSymbol(rel string, line int) (Symbol, bool) {
	e, rest := r.route(rel)
	s, ok := e.ix.EnclosingSymbol(rest, line)
	if ok {
		s.Path = prefixed(e.name, s.Path)
	}
	return s, ok
}

// FileSymbols asks the folder of rel.
func (r *Roots) FileSymbols(rel string) ([]Symbol, bool) {
	e, rest := r.route(rel)
	syms, ok := e.ix.FileSymbols(rest)
	return prefixSymbols(e.name, syms), ok
}

// Stats adds up the folders'.
func (r *Roots) Stats() Stats {
	var st Stats
	for i, e := range r.all() {
		s := e.ix.Stats()
		if i == 0 {
			st = s
			continue
		}
		st.Ready = st.Ready && s.Ready
		st.Indexing = st.Indexing || s.Indexing
		st.MapFiles += s.MapFiles
		st.Definitions += s.Definitions
		st.SearchFiles += s.SearchFiles
		st.SearchDocs += s.SearchDocs
	}
	return st
}

// Ready is closed once the first build of every folder's index ended.
func (r *Roots) Ready() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ready
}

// NotReady names the engines not ready in some folder.
func (r *Roots) NotReady() []string {
	var out []string
	for _, e := range r.all() {
		for _, s := range e.ix.NotReady() {
			if !contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// Prioritize sends each path to its folder's index.
func (r *Roots) Prioritize(ctx context.Context, rels []string) {
	by := map[*Local][]string{}
	var order []*Local
	for _, rel := range rels {
		e, rest := r.route(rel)
		if _, ok := by[e.ix]; !ok {
			order = append(order, e.ix)
		}
		by[e.ix] = append(by[e.ix], rest)
	}
	for _, ix := range order {
		ix.Prioritize(ctx, by[ix])
	}
}

// Building returns every folder's progress.
func (r *Roots) Building() []Progress {
	var out []Progress
	for _, e := range r.all() {
		out = append(out, e.ix.Building()...)
	}
	return out
}

// DocumentChanged passes the editor's text to the folder holding abs.
func (r *Roots) DocumentChanged(abs, text string) {
	for _, e := range r.all() {
		e.ix.DocumentChanged(abs, text) // each ignores paths outside its folder
	}
}

// DocumentSaved passes a save to the folder holding abs.
func (r *Roots) DocumentSaved(abs string) {
	for _, e := range r.all() {
		e.ix.DocumentSaved(abs)
	}
}
