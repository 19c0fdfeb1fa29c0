package workspace

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Change is one batch of the workspace's change stream: the
// workspace-relative paths that changed (created, written, renamed or
// removed; the reader decides which by looking), or Rescan when events were
// lost (watcher overflow, the periodic reconcile) and only a full walk can
// tell what changed.
type Change struct {
	Paths  []string
	Rescan bool
}

// WatchOptions tune a Watcher. The zero value is usable.
type WatchOptions struct {
	// Debounce is how long the stream must be quiet before a batch is
	// delivered (default Debounce): an editor's save (temporary file,
	// rename, chmod) and a "save all" arrive as one batch.
	Debounce time.Duration
	// MaxWait delivers a batch at the latest this long after its first
	// change, even if changes keep coming (default 1 s).
	MaxWait time.Duration
	// Reconcile asks for a rescan this often, to catch events the watcher
	// missed (network file systems); default 5 min.
	Reconcile time.Duration
	// NoFS watches nothing on disk: only Touch feeds the stream (one-shot
	// command-line use, tests).
	NoFS bool
	// MaxWatches caps the directories this watcher watches (default
	// DefaultMaxWatches). Past the cap, or past the kernel's limit, the
	// rest of the tree is followed by the periodic reconcile, every
	// DegradedReconcile at most.
	MaxWatches int
}

// DefaultMaxWatches is a watcher's default cap on watched directories.
const DefaultMaxWatches = 16384

// MaxFSWatchers caps the file-system watchers (inotify instances) a process
// runs at once, whatever number of workspaces it serves: the kernel's
// per-user limit (often 128) is shared with the user's editor and tools.
// Watchers past the cap follow editor notifications and the periodic
// reconcile only.
const MaxFSWatchers = 16

// DegradedReconcile is the reconcile period of a watcher that cannot watch
// its whole tree.
const DegradedReconcile = time.Minute

// fsWatchers counts the running file-system watchers of the process.
var fsWatchers = struct {
	sync.Mutex
	n      int
	warned bool
}{}

// acquireFSWatcher takes one of the process's MaxFSWatchers slots.
func acquireFSWatcher() bool {
	fsWatchers.Lock()
	defer fsWatchers.Unlock()
	if fsWatchers.n >= MaxFSWatchers {
		if !fsWatchers.warned {
			fsWatchers.warned = true
			slog.Warn("too many workspaces to watch: the next ones follow editor saves and a periodic rescan", "maxWatchers", MaxFSWatchers, "rescanEvery", DegradedReconcile)
		}
		return false
	}
	fsWatchers.n++
	return true
}

func releaseFSWatcher() {
	fsWatchers.Lock()
	fsWatchers.n--
	fsWatchers.Unlock()
}

// FSWatchers is the number of file-system watchers running in the process.
func FSWatchers() int {
	fsWatchers.Lock()
	defer fsWatchers.Unlock()
	return fsWatchers.n
}

// Debounce is the workspace's one debounce: file-system events and editor
// notifications (typing, saves) all wait for it.
const Debounce = 50 * time.Millisecond

// Watcher is the workspace's one change stream: file-system events under
// the root (fsnotify, every file kind, new directories followed) and
// editor notifications (Touch), debounced together into batches.
type Watcher struct {
	ws   *Workspace
	opts WatchOptions

	mu      sync.Mutex
	pending map[string]bool
	rescan  bool
	first   time.Time // when the oldest pending change arrived
	kick    chan struct{}
	rewatch chan struct{} // the index scope changed: watch what it now holds

	// Owned by Run's goroutine: the directories watched, and whether the
	// tree is only partly watched (the cap or the kernel's limit was hit).
	watched  map[string]bool // directories watched
	watches  int
	partial  bool
	degraded chan struct{} // closed when the watcher falls back to reconcile
	degrade  sync.Once
	watching atomic.Int64 // watches, for Watches
}

// Watches is the number of directories the watcher watches.
func (wt *Watcher) Watches() int { return int(wt.watching.Load()) }

// markDegraded switches the loop to the shorter reconcile period and says
// so once.
func (wt *Watcher) markDegraded(reason string, args ...any) {
	wt.degrade.Do(func() {
		slog.Warn(reason+"; the rest of the workspace is followed by editor saves and a rescan every "+DegradedReconcile.String(),
			append([]any{"root", wt.ws.Root()}, args...)...)
		close(wt.degraded)
	})
}

// NewWatcher returns a watcher of w; Run starts it.
func (w *Workspace) NewWatcher(opts WatchOptions) *Watcher {
	if opts.Debounce <= 0 {
		opts.Debounce = Debounce
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = time.Second
	}
	if opts.Reconcile <= 0 {
		opts.Reconcile = 5 * time.Minute
	}
	if opts.MaxWatches <= 0 {
		opts.MaxWatches = DefaultMaxWatches
	}
	return &Watcher{ws: w, opts: opts, pending: map[string]bool{}, kick: make(chan struct{}, 1), rewatch: make(chan struct{}, 1), degraded: make(chan struct{}), watched: map[string]bool{}}
}

// Touch adds workspace-relative paths to the next batch (an editor's
// didChange or didSave). It never blocks.
func (wt *Watcher) Touch(rels ...string) {
	wt.mu.Lock()
	for _, rel := range rels {
		wt.addLocked(rel)
	}
	wt.mu.Unlock()
	wt.poke()
}

// Rescan asks for a full rescan in the next batch.
func (wt *Watcher) Rescan() {
	wt.mu.Lock()
	wt.rescan = true
	if wt.first.IsZero() {
		wt.first = time.Now()
	}
	wt.mu.Unlock()
	wt.poke()
}

// ScopeChanged follows a change of the workspace's index scope
// (Workspace.SetScope): directories it now holds are watched, and the next
// batch is a rescan, which takes files now outside it out of the indexes
// and brings files now inside it in. Directories that left the scope stay
// watched; their events are dropped by Ignored.
func (wt *Watcher) ScopeChanged() {
	select {
	case wt.rewatch <- struct{}{}:
	default:
	}
	wt.Rescan()
}

func (wt *Watcher) addLocked(rel string) {
	if rel == "" || rel == "." || len(rel) >= 2 && rel[:2] == ".." {
		return
	}
	if len(wt.pending) == 0 && wt.first.IsZero() {
		wt.first = time.Now()
	}
	wt.pending[rel] = true
}

func (wt *Watcher) poke() {
	select {
	case wt.kick <- struct{}{}:
	default:
	}
}

// take empties the pending batch.
func (wt *Watcher) take() Change {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	ch := Change{Rescan: wt.rescan}
	if !wt.rescan {
		ch.Paths = make([]string, 0, len(wt.pending))
		for rel := range wt.pending {
			ch.Paths = append(ch.Paths, rel)
		}
		sort.Strings(ch.Paths)
	}
	wt.pending = map[string]bool{}
	wt.rescan = false
	wt.first = time.Time{}
	return ch
}

func (wt *Watcher) empty() bool {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	return len(wt.pending) == 0 && !wt.rescan
}

func (wt *Watcher) age() time.Duration {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.first.IsZero() {
		return 0
	}
	return time.Since(wt.first)
}

// skipWatchDirs are never watched (the walk skips them too).
var skipWatchDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, "node_modules": true, ".cairn-state": true,
	"vendor": true, "third_party": true, "bower_components": true}

// Run delivers batches to fn, one at a time on Run's goroutine, until ctx
// ends (and returns ctx's error); changes that arrive while fn runs form
// the next batch.
func (wt *Watcher) Run(ctx context.Context, fn func(Change)) error {
	if wt.opts.NoFS {
		return wt.loop(ctx, fn, nil, nil, nil)
	}
	if !acquireFSWatcher() {
		wt.markDegraded("the file watcher is off (too many workspaces in this process)", "maxWatchers", MaxFSWatchers)
		return wt.loop(ctx, fn, nil, nil, nil)
	}
	defer releaseFSWatcher()
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		// Out of inotify instances, say: editor notifications and the
		// periodic rescan still keep the indexes current.
		wt.markDegraded("the file watcher is off", "err", err)
		return wt.loop(ctx, fn, nil, nil, nil)
	}
	defer fw.Close()
	wt.addTree(fw, wt.ws.Root())
	return wt.loop(ctx, fn, fw, fw.Events, fw.Errors)
}

// addTree watches dir and the directories under it, up to the watcher's
// cap; past the cap or the kernel's limit, it stops and the watcher falls
// back to the reconcile for the rest.
func (wt *Watcher) addTree(fw *fsnotify.Watcher, dir string) {
	if wt.partial {
		return
	}
	root := wt.ws.Root()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if p != root && (skipWatchDirs[d.Name()] || wt.ws.IgnoredDir(wt.ws.Rel(p))) {
			return filepath.SkipDir
		}
		if wt.ws.stateDir != "" && within(wt.ws.stateDir, p) {
			return filepath.SkipDir // Cairn's own writes (the index) are no change
		}
		if wt.watched[p] {
			return nil
		}
		if wt.watches >= wt.opts.MaxWatches {
			wt.partial = true
			wt.markDegraded("the file watcher watches only part of the workspace (its cap on directories)", "maxWatches", wt.opts.MaxWatches)
			return filepath.SkipAll
		}
		if err := fw.Add(p); err != nil {
			if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENOMEM) {
				wt.partial = true
				wt.markDegraded("the file watcher watches only part of the workspace (the kernel's inotify limit: fs.inotify.max_user_watches)", "watches", wt.watches, "err", err)
				return filepath.SkipAll
			}
			return nil // a race with deletion: the reconcile sees it
		}
		wt.watched[p] = true
		wt.watches++
		wt.watching.Store(int64(wt.watches))
		return nil
	})
}

// unwatched forgets a watched directory that was removed (the kernel
// dropped its watch; a renamed one keeps it).
func (wt *Watcher) unwatched(p string) {
	if wt.watched[p] {
		delete(wt.watched, p)
		wt.watches--
		wt.watching.Store(int64(wt.watches))
	}
}

// loop debounces events (from fw, which may be nil) and Touch calls into
// batches for fn, which runs on its own goroutine so that changes keep
// collecting while a batch is applied.
func (wt *Watcher) loop(ctx context.Context, fn func(Change), fw *fsnotify.Watcher, events <-chan fsnotify.Event, errs <-chan error) error {
	work := make(chan Change)
	idle := make(chan struct{})
	defer close(work)
	go func() {
		for ch := range work {
			fn(ch)
			idle <- struct{}{}
		}
	}()
	busy := false
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	armed := false
	arm := func() {
		d := wt.opts.Debounce
		if left := wt.opts.MaxWait - wt.age(); left < d {
			d = max(left, 0)
		}
		if armed && !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(d)
		armed = true
	}
	reconcile := time.NewTicker(wt.opts.Reconcile)
	defer reconcile.Stop()
	degraded := wt.degraded
	for {
		select {
		case <-degraded:
			degraded = nil
			if wt.opts.Reconcile > DegradedReconcile {
				reconcile.Reset(DegradedReconcile)
			}
		case <-ctx.Done():
			if busy {
				<-idle // fn sees ctx ended; wait for it before returning
			}
			return ctx.Err()
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			rel := wt.ws.Rel(ev.Name)
			if ev.Has(fsnotify.Remove) {
				wt.unwatched(ev.Name)
			}
			if ev.Has(fsnotify.Create) {
				if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() {
					if skipWatchDirs[filepath.Base(ev.Name)] || wt.ws.IgnoredDir(rel) {
						continue
					}
					wt.addTree(fw, ev.Name)
					// Files created with the directory may predate the watch.
					var rels []string
					filepath.WalkDir(ev.Name, func(p string, d fs.DirEntry, err error) error {
						if err == nil && d.Type().IsRegular() {
							rels = append(rels, wt.ws.Rel(p))
						}
						return nil
					})
					wt.Touch(rels...)
					continue
				}
			}
			wt.Touch(rel)
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				wt.Rescan()
			}
		case <-reconcile.C:
			wt.Rescan()
		case <-wt.rewatch:
			if fw != nil {
				wt.addTree(fw, wt.ws.Root())
			}
		case <-wt.kick:
			arm()
		case <-timer.C:
			armed = false
			if busy || wt.empty() {
				continue // a busy worker re-arms when it is done
			}
			busy = true
			work <- wt.take()
		case <-idle:
			busy = false
			if !wt.empty() {
				arm()
			}
		}
	}
}
