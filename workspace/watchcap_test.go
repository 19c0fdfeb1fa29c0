package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// inotifyFDs counts this process's inotify instances.
func inotifyFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("listing /proc/self/fd: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.Contains(l, "inotify") {
			n++
		}
	}
	return n
}

// TestWatcherCapsWatches: a watcher watches at most MaxWatches directories
// and follows the rest of the tree by reconciling.
func TestWatcherCapsWatches(t *testing.T) {
	root := t.TempDir()
	for i := range 6 {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	wt := ws.NewWatcher(WatchOptions{Debounce: 10 * time.Millisecond, MaxWatches: 3, Reconcile: 50 * time.Millisecond})
	out := startWatcher(t, wt, wt.Run)
	wt.Touch("ping")
	waitChange(t, out, "ping", func(ch Change) bool { return slices.Contains(ch.Paths, "ping") })
	if got := wt.Watches(); got != 3 {
		t.Fatalf("the watcher watches %d directories, want its cap 3", got)
	}
	// A new directory past the cap is not watched either.
	if err := os.MkdirAll(filepath.Join(root, "d0", "new"), 0o755); err != nil {
		t.Fatal(err)
	}
	waitChange(t, out, "a rescan", func(ch Change) bool { return ch.Rescan })
	if got := wt.Watches(); got > 3 {
		t.Fatalf("the watcher watches %d directories past its cap 3", got)
	}
}

// TestFSWatchersCapped: however many workspaces a process watches, it
// holds at most MaxFSWatchers inotify instances; the watchers past the cap
// still deliver editor notifications.
func TestFSWatchersCapped(t *testing.T) {
	before := inotifyFDs(t)
	var outs []<-chan Change
	var wts []*Watcher
	for range MaxFSWatchers + 4 {
		ws, err := Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		wt := ws.NewWatcher(WatchOptions{Debounce: 10 * time.Millisecond})
		wts = append(wts, wt)
		outs = append(outs, startWatcher(t, wt, wt.Run))
	}
	for i, wt := range wts {
		wt.Touch("ping")
		waitChange(t, outs[i], "ping", func(ch Change) bool { return slices.Contains(ch.Paths, "ping") })
	}
	if got := inotifyFDs(t) - before; got > MaxFSWatchers {
		t.Fatalf("%d watchers hold %d inotify instances, want at most %d", len(wts), got, MaxFSWatchers)
	}
	if got := FSWatchers(); got != MaxFSWatchers {
		t.Errorf("FSWatchers() = %d, want %d", got, MaxFSWatchers)
	}
}
