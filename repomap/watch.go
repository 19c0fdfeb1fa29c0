package repomap

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchOptions tune Watch. The zero value is usable.
type WatchOptions struct {
	// Debounce waits this long after the last event before re-parsing
	// (default 150 ms), so a save that writes several events parses once.
	Debounce time.Duration
	// Reconcile runs a full Build this often (default 5 min) to catch
	// events the watcher missed (overflow, network file systems).
	Reconcile time.Duration
	// OnChange, when set, is called with the paths refreshed by each batch.
	OnChange func(rels []string)
}

// skipWatchDirs are never watched (the walk skips them too).
var skipWatchDirs = map[string]bool{".git": true, ".hg": true, ".svn": true, "node_modules": true, "vendor": true, "third_party": true, ".cairn-state": true}

// Watch keeps the map current until ctx ends: file events under the
// workspace (fsnotify, debounced) re-parse only the files that changed,
// new directories are watched as they appear, and a periodic Build
// reconciles whatever events were missed. The cache is saved after each
// batch. It returns ctx's error, or the error that stopped the watcher.
func (m *Map) Watch(ctx context.Context, opts WatchOptions) error {
	if opts.Debounce <= 0 {
		opts.Debounce = 150 * time.Millisecond
	}
	if opts.Reconcile <= 0 {
		opts.Reconcile = 5 * time.Minute
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	root := m.ws.Root()
	addTree := func(dir string) {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if p != root && (skipWatchDirs[d.Name()] || m.ws.Ignored(m.ws.Rel(p))) {
				return filepath.SkipDir
			}
			w.Add(p) // errors (limits, races with deletion) leave it to the reconcile
			return nil
		})
	}
	addTree(root)

	pending := map[string]bool{}
	var timer *time.Timer
	var fire <-chan time.Time
	reconcile := time.NewTicker(opts.Reconcile)
	defer reconcile.Stop()
	for {
		select {
		case <-ctx.Done():
			m.SaveCache()
			return ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			rel := m.ws.Rel(ev.Name)
			if ev.Has(fsnotify.Create) {
				if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() {
					addTree(ev.Name)
					// Files created with the directory may predate the watch.
					filepath.WalkDir(ev.Name, func(p string, d fs.DirEntry, err error) error {
						if err == nil && d.Type().IsRegular() {
							pending[m.ws.Rel(p)] = true
						}
						return nil
					})
				}
			}
			if LanguageOf(rel) != "" {
				pending[rel] = true
			}
			if timer == nil {
				timer = time.NewTimer(opts.Debounce)
			} else {
				if !timer.Stop() {
					select {
					case <-timer.C:
					default:
					}
				}
				timer.Reset(opts.Debounce)
			}
			fire = timer.C
		case <-fire:
			fire = nil
			rels := make([]string, 0, len(pending))
			for rel := range pending {
				rels = append(rels, rel)
			}
			sort.Strings(rels)
			pending = map[string]bool{}
			m.Refresh(rels...)
			m.SaveCache()
			if opts.OnChange != nil && len(rels) > 0 {
				opts.OnChange(rels)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if err == fsnotify.ErrEventOverflow {
				if _, err := m.Build(ctx); err != nil && ctx.Err() != nil {
					return ctx.Err()
				}
				continue
			}
		case <-reconcile.C:
			if _, err := m.Build(ctx); err != nil && ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
}
