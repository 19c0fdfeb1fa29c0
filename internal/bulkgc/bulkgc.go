// Package bulkgc tunes the garbage collector while an index build runs,
// for the processes that own their runtime settings (cairn serve, acp and
// the index commands; a library never sets them).
//
// A cold build allocates fast while its live heap is large (at 10× the Go
// tree ~0.5 GB: the map's records and the search batches in flight). At
// the default target (GOGC=100) the heap may grow by its whole live size
// between collections, so the build's resident memory is about twice its
// live heap. During a build the heap may instead grow by Room past its
// live data, or by half the live data once that is larger: the same as
// the default for a small tree (a live heap under Room), and half the
// default's growth for a large one, for more cycles, each marking the
// whole live heap. Measured at 10× the Go tree (docs/scale.md): peak RSS
// 1.41–1.44 → 0.99–1.05 GB for ~9–13% more CPU; a fixed GOGC=50 at 1× cost
// 20% more CPU for 15% less memory, and GOGC=25 at 10× 36% more CPU.
// Outside builds the default stands: a question allocates little, and
// rarer collections keep its latency steady.
package bulkgc

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Room is how far the heap may grow past its live data during a build
// before the collector runs, while half the live data is less. (A
// variable for the tests.)
var Room uint64 = 256 << 20

const (
	// MinPercent is the lowest GC target (as GOGC) a build sets: growth
	// by half the live data.
	MinPercent = 50
	// every is how often the live heap is read during a build.
	every = 200 * time.Millisecond
)

var (
	mu     sync.Mutex
	depth  int           // builds running
	before int           // the target before the first of them
	stop   chan struct{} // ends the running builds' monitor
	done   chan struct{} // closed when that monitor has returned
)

// Percent is the GC target for a live heap of live bytes: growth by Room,
// or by half the live heap when that is more; 100 (the default) at most.
func Percent(live uint64) int {
	if live == 0 {
		return 100
	}
	p := uint64(100) * Room / live
	return int(max(MinPercent, min(100, p)))
}

// Enter follows the live heap with the GC target (Percent) until the
// returned func is called. Builds may overlap (one index per workspace
// folder): the target is restored when the last ends. The returned func
// may be called more than once; only the first call counts. Nothing
// changes when the GOGC environment variable is set (the user's choice
// stands) or the target is below MinPercent or off already.
func Enter() (exit func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	mu.Lock()
	defer mu.Unlock()
	if depth == 0 {
		// (Reading the target by setting -1 would wait for a running
		// collection to finish its mark.)
		p := Percent(liveHeap())
		before = debug.SetGCPercent(p)
		if before < p { // lower already, or off (negative)
			debug.SetGCPercent(before)
		}
		if before >= MinPercent {
			stop, done = make(chan struct{}), make(chan struct{})
			go follow(before, min(before, p), stop, done)
		}
	}
	depth++
	return sync.OnceFunc(func() {
		mu.Lock()
		defer mu.Unlock()
		depth--
		if depth == 0 && stop != nil {
			close(stop)
			<-done
			stop, done = nil, nil
			debug.SetGCPercent(before)
		}
	})
}

// follow sets the GC target from the live heap every so often, never
// above ceiling (the target before the build), until stop is closed; set
// is the target now.
func follow(ceiling, set int, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if p := min(ceiling, Percent(liveHeap())); p != set {
			debug.SetGCPercent(p)
			set = p
		}
	}
}

// liveHeap returns the bytes the last collection found live (0 before the
// first, or if the runtime does not have the metric).
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
