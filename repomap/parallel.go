package repomap

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// inParallel calls fn(worker, c) once for each part c in [0, parts), on
// up to GOMAXPROCS goroutines (the caller's among them, as worker 0), one
// per parallelFiles of the files the loop covers (fewer files take longer
// to hand to another core than to do), and returns when every call has
// returned. Parts are claimed in order; which
// worker takes which part varies from run to run, so a result must not
// depend on it: a sum over parts is summed per part and then in part
// order (partSums), never per worker.
func inParallel(parts, files int, fn func(worker, c int)) {
	workers := min(parts, runtime.GOMAXPROCS(0))
	if parallelFiles > 0 {
		workers = min(workers, 1+files/parallelFiles)
	}
	if workers <= 1 {
		for c := 0; c < parts; c++ {
			fn(0, c)
		}
		return
	}
	var next atomic.Int32
	run := func(w int) {
		for {
			c := int(next.Add(1)) - 1
			if c >= parts {
				return
			}
			fn(w, c)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(w)
		}()
	}
	run(0)
	wg.Wait()
}

// fileChunk is how many files a part of a per-file loop of the ranking
// covers. It is fixed, not derived from the number of cores, so that the
// sums over parts (the walk's dangling rank and its change per step) are
// the same on every machine: a ranking does not depend on where it ran.
// (A variable for the tests, which split small graphs.)
var fileChunk = 4096

// parallelFiles is how many files of a loop of the ranking each core
// beyond the first takes: below it (the Go tree has 6.5k files in the map)
// waking a second core for each of a walk's steps costs more than the step
// (a variable for the tests, which set 0: every part may run on its own).
var parallelFiles = 16384

// gatherChunk is how many in-edges a part of the walk's gather covers, at
// least (at most 64 parts). No sum crosses a part, so any split gives the
// same result. (A variable for the tests.)
var gatherChunk = 1 << 16

// fileChunkRange returns part c's files [lo, hi) of n files cut into
// parts of fileChunk.
func fileChunkRange(n, c int) (lo, hi int) { return c * fileChunk, min((c+1)*fileChunk, n) }

// fileParts returns how many parts of fileChunk files cover n files.
func fileParts(n int) int { return max(1, (n+fileChunk-1)/fileChunk) }

// partRange returns part c's [lo, hi) of n items split into parts parts.
func partRange(n, parts, c int) (lo, hi int) {
	return n * c / parts, n * (c + 1) / parts
}
