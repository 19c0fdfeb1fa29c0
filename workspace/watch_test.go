package workspace

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// collect runs fn-less batches into a channel.
func startWatcher(t *testing.T, wt *Watcher, run func(ctx context.Context, fn func(Change)) error) <-chan Change {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan Change, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx, func(ch Change) { out <- ch })
	}()
	t.Cleanup(func() { cancel(); <-done })
	return out
}

// waitChange returns the first batch for which ok holds, failing after a
// generous deadline.
func waitChange(t *testing.T, out <-chan Change, what string, ok func(Change) bool) Change {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ch := <-out:
			if ok(ch) {
				return ch
			}
		case <-deadline:
			t.Fatalf("no batch with %s", what)
		}
	}
}

func TestWatcherBatchesEveryFileKind(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n"), 0o644)
	ws, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	wt := ws.NewWatcher(WatchOptions{Debounce: 10 * time.Millisecond})
	out := startWatcher(t, wt, wt.Run)
	// The watch is registered when a touched path comes back.
	wt.Touch("ping")
	waitChange(t, out, "ping", func(ch Change) bool { return slices.Contains(ch.Paths, "ping") })

	os.WriteFile(filepath.Join(root, "notes.md"), []byte("release notes\n"), 0o644)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644)
	ch := waitChange(t, out, "notes.md", func(ch Change) bool { return slices.Contains(ch.Paths, "notes.md") })
	if !slices.Contains(ch.Paths, "main.go") {
		// Both writes normally land in one batch; if not, the next has it.
		waitChange(t, out, "main.go", func(ch Change) bool { return slices.Contains(ch.Paths, "main.go") })
	}

	// A new directory is followed, with the files created in it at once.
	os.MkdirAll(filepath.Join(root, "docs/deep"), 0o755)
	os.WriteFile(filepath.Join(root, "docs/deep/guide.txt"), []byte("guide\n"), 0o644)
	waitChange(t, out, "docs/deep/guide.txt", func(ch Change) bool { return slices.Contains(ch.Paths, "docs/deep/guide.txt") })
	os.WriteFile(filepath.Join(root, "docs/deep/later.txt"), []byte("later\n"), 0o644)
	waitChange(t, out, "docs/deep/later.txt", func(ch Change) bool { return slices.Contains(ch.Paths, "docs/deep/later.txt") })
}

func TestWatcherOverflowAsksForRescan(t *testing.T) {
	ws, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wt := ws.NewWatcher(WatchOptions{Debounce: 10 * time.Millisecond})
	errs := make(chan error, 1)
	events := make(chan fsnotify.Event)
	out := startWatcher(t, wt, func(ctx context.Context, fn func(Change)) error {
		return wt.loop(ctx, fn, nil, events, errs)
	})
	wt.Touch("a.go")
	errs <- fsnotify.ErrEventOverflow
	ch := waitChange(t, out, "a rescan", func(ch Change) bool { return ch.Rescan })
	if len(ch.Paths) != 0 {
		t.Errorf("a rescan batch lists paths: %v", ch.Paths)
	}
}

func TestWatcherCoalescesTouches(t *testing.T) {
	ws, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wt := ws.NewWatcher(WatchOptions{NoFS: true, Debounce: 20 * time.Millisecond})
	block := make(chan struct{})
	out := startWatcher(t, wt, func(ctx context.Context, fn func(Change)) error {
		return wt.Run(ctx, func(ch Change) {
			fn(ch)
			<-block // hold the worker: later touches must wait and merge
		})
	})
	wt.Touch("a")
	waitChange(t, out, "a", func(ch Change) bool { return slices.Equal(ch.Paths, []string{"a"}) })
	for i := 0; i < 50; i++ {
		wt.Touch("b", "c", "b")
	}
	close(block)
	ch := waitChange(t, out, "b and c", func(ch Change) bool { return len(ch.Paths) > 0 })
	if !slices.Equal(ch.Paths, []string{"b", "c"}) {
		t.Errorf("touches while busy: %v, want one batch [b c]", ch.Paths)
	}
}
