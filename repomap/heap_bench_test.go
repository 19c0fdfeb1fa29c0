package repomap

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// liveMap holds the last map BenchmarkLiveHeap built.
var liveMap *Map

// BenchmarkLiveHeap builds the map over CAIRN_BENCH_HEAP_CORPUS in place
// (read only: no copy, the tags cache in CAIRN_BENCH_HEAP_CACHE or a
// temporary directory), renders it once (so the graph and ranking are
// built, as a server's first question does), collects garbage and reports
// what stays live: the map's resident memory. With a cache directory that
// holds a cache, the build is the warm start (build-ms). Run with
// -test.memprofile and -test.memprofilerate=65536 to see what holds it.
func BenchmarkLiveHeap(b *testing.B) {
	root := os.Getenv("CAIRN_BENCH_HEAP_CORPUS")
	if root == "" || testing.Short() {
		b.Skip("set CAIRN_BENCH_HEAP_CORPUS to a directory to measure the map's live heap")
	}
	cache := os.Getenv("CAIRN_BENCH_HEAP_CACHE")
	if cache == "" {
		cache = filepath.Join(b.TempDir(), "cache")
	}
	for i := 0; i < b.N; i++ {
		m := newMap(b, root, Options{CacheDir: cache})
		start := time.Now()
		st := build(b, m)
		b.ReportMetric(float64(time.Since(start).Milliseconds()), "build-ms")
		reportBuild(b, st)
		if out, _ := m.Render(Focus{}, 1024); out == "" {
			b.Fatal("empty map")
		}
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MB")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "inuse-MB")
		liveMap = m // kept for -test.memprofile, written after the benchmark
	}
}
