// Package gcroom sets the garbage collector's target from the live heap,
// for the processes that own their runtime settings (cairn serve, acp and
// the other commands; a library never sets them).
//
// At the default target (GOGC=100) the heap may grow by its whole live
// size between collections, so a process's resident memory is about twice
// its live heap. On a large tree the live heap is large for as long as the
// process runs (at 10× the Go tree ~0.45 GB during the first index build
// and ~0.55 GB once questions have built the map's ranking graph). Here
// the heap may instead grow by Room past its live data, or by half the
// live data once that is larger: the default for a small tree (a live heap
// under Room), half the default's growth for a large one, for more cycles,
// each marking the whole live heap. Measured at 10× the Go tree
// (docs/scale.md): the cold build's peak RSS 1.41–1.44 → 0.99–1.05 GB for
// ~9–13% more CPU; a server's anonymous memory after 200 new questions
// 1.05–1.15 → 0.88 GB, their CPU and latency unchanged. A fixed GOGC=50 at 1× cost
// 20% more CPU for 15% less memory, and GOGC=25 at 10× 36% more CPU.
//
// With the target goes a soft memory limit just above the heap goal it
// gives and the runtime's other memory (limitFor): the collector still
// runs when the target says, but the runtime gives back freed pages past
// the goal, where it would keep up to a tenth of the goal resident. At 10×
// the Go tree that took 20–30 MB off the cold build's peak RSS at the same
// CPU, and it is what made 160 MB of room (rather than 256) fit the build
// in 600 MB with the other changes of 2026-12-06 (docs/scale.md). A user's
// GOMEMLIMIT is left as it is.
//
// The target and the limit are set after every collection (when the live
// heap is measured), by a cleanup the collection itself runs: an idle
// process does nothing, and a busy one adjusts once per cycle.
//
// A collection's mark takes a quarter of the cores for as long as it runs
// (~0.1 s at 10× the Go tree, every ~50 context builds): the builds it
// overlaps were a new question's slowest (docs/scale.md). Idle lets the
// process collect where nobody waits on it instead: the agent calls it
// as it starts waiting on a model's answer, which takes longer than a
// collection.
package gcroom

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Room is how far the heap may grow past its live data before the
// collector runs, while half the live data is less. (A variable for the
// tests; read under mu.)
var Room uint64 = 160 << 20

// MinPercent is the lowest GC target (as GOGC) Follow sets: growth by
// half the live data.
const MinPercent = 50

var (
	mu       sync.Mutex
	holders  int   // Follow calls not yet stopped
	ceiling  int   // the target before the first of them: never raised past
	limit    int64 // the memory limit before the first of them: never raised past
	ownLimit bool  // the limit is Follow's to set (GOMEMLIMIT is not)
	gen      int   // counts the follows started; a cleanup of an older one does nothing
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

// Follow sets the GC target to Percent of the live heap after every
// collection (never above the target it found) until the returned func is
// called. Calls may overlap (a benchmark inside a process that follows
// already): the target is restored when the last stops. The returned func
// may be called more than once; only the first call counts. Nothing
// changes when the GOGC environment variable is set (the user's choice
// stands) or the target is below MinPercent or off already.
func Follow() (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	mu.Lock()
	defer mu.Unlock()
	if holders == 0 {
		// (Reading the target by setting -1 would wait for a running
		// collection to finish its mark.)
		ceiling = debug.SetGCPercent(100)
		debug.SetGCPercent(ceiling)
		if ceiling < MinPercent { // lower already, or off (negative)
			return func() {}
		}
		limit = debug.SetMemoryLimit(-1)
		ownLimit = os.Getenv("GOMEMLIMIT") == ""
		gen++
		setLocked()
		arm(gen)
	}
	holders++
	return sync.OnceFunc(func() {
		mu.Lock()
		defer mu.Unlock()
		holders--
		if holders == 0 {
			gen++ // the armed cleanup finds itself stale
			debug.SetGCPercent(ceiling)
			debug.SetMemoryLimit(limit)
		}
	})
}

// sentinel is an object only a cleanup refers to: the first collection
// after it is allocated finds it unreachable and runs the cleanup. (It
// holds a pointer so it is never a tiny allocation, whose cleanups may
// never run.)
type sentinel struct{ _ *int }

// arm runs adjust for follow g after the next collection.
func arm(g int) {
	runtime.AddCleanup(new(sentinel), adjust, g)
}

// adjust sets the target from the live heap the last collection measured
// and arms itself for the next one, unless follow g has stopped.
func adjust(g int) {
	mu.Lock()
	defer mu.Unlock()
	if g != gen {
		return
	}
	setLocked()
	arm(g)
}

// setLocked sets the target for the live heap now, at most ceiling, and
// the memory limit that goes with it.
func setLocked() {
	m, ok := readMetrics(
		"/gc/heap/live:bytes",
		"/gc/scan/stack:bytes", "/gc/scan/globals:bytes",
		"/memory/classes/total:bytes", "/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/free:bytes", "/memory/classes/heap/released:bytes")
	live := m[0]
	p := min(ceiling, Percent(live))
	debug.SetGCPercent(p)
	if ownLimit && ok && live > 0 {
		// The runtime's memory besides the heap's objects and free pages:
		// metadata, stacks, fragmentation.
		other := m[3] - min(m[3], m[4]+m[5]+m[6])
		debug.SetMemoryLimit(min(limit, limitFor(live, m[1]+m[2], other, p)))
	}
}

// limitSlack is what the memory limit leaves past the heap goal and the
// runtime's other memory as the last collection found it.
const limitSlack = 8 << 20

// limitFor is the memory limit for a live heap with roots bytes of
// stacks and globals under GC target p, where the runtime holds other
// bytes besides the heap's objects and free pages: the heap goal the
// target gives (computed here: the runtime's own figure is capped by the
// limit in force), other, and limitSlack. Below the limit the collector
// runs as the target says; the runtime keeps no more free pages than fit
// under it, where it would otherwise keep up to a tenth of the goal.
func limitFor(live, roots, other uint64, p int) int64 {
	goal := live + (live+roots)*uint64(p)/100
	return int64(min(goal+other+limitSlack, math.MaxInt64))
}

// readMetrics reads the named uint64 metrics of runtime/metrics; ok is
// false, and a value 0, where the runtime does not have one.
func readMetrics(names ...string) (vals []uint64, ok bool) {
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	vals, ok = make([]uint64, len(s)), true
	for i, v := range s {
		if v.Value.Kind() != metrics.KindUint64 {
			ok = false
			continue
		}
		vals[i] = v.Value.Uint64()
	}
	return vals, ok
}

// idleRunning says an Idle collection is under way.
var idleRunning atomic.Bool

// closed is what Idle returns when it starts nothing.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Idle is a hint that the process is about to wait (on a model's answer):
// when the heap has used more than half its room since the last
// collection (a collection is near anyway), it starts one now, in the
// background, so that it does not land in the next piece of work that
// someone waits on. The returned channel is closed when that collection
// ends, or at once when none was started: while a Follow is not active
// (the process does not own its runtime), while one Idle started is still
// running, or when the heap is under half its room.
func Idle() <-chan struct{} {
	mu.Lock()
	active := holders > 0
	mu.Unlock()
	if !active || !nearCollection() || !idleRunning.CompareAndSwap(false, true) {
		return closed
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer idleRunning.Store(false)
		runtime.GC()
	}()
	return done
}

// nearCollection reports whether the heap has grown past its live data by
// more than half the way to the collector's goal.
func nearCollection() bool {
	m, ok := readMetrics("/gc/heap/live:bytes", "/gc/heap/goal:bytes",
		"/memory/classes/heap/objects:bytes") // live and not yet swept
	live, goal, now := m[0], m[1], m[2]
	return ok && goal > live && now > live && now-live > (goal-live)/2
}
