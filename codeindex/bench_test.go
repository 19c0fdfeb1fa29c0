package codeindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"runtime/pprof"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/benchlat"
	"github.com/cairn-dev/cairn/internal/gcroom"
	"github.com/cairn-dev/cairn/internal/testenv"
	"github.com/cairn-dev/cairn/workspace"
)

// benchCorpus is the tree the benchmarks index: $CAIRN_BENCH_CORPUS, or
// $(go env GOROOT)/src read in place (the index lives in a temp dir).
func benchCorpus(b *testing.B) string {
	b.Helper()
	if d := os.Getenv("CAIRN_BENCH_CORPUS"); d != "" {
		return d
	}
	return filepath.Join(testenv.GOROOT(b), "src")
}

// BenchmarkColdBuild builds the map and the search index of the corpus
// from nothing, as a first `cairn serve` does (with its GC target,
// internal/gcroom; GOGC set in the environment turns that off).
func BenchmarkColdBuild(b *testing.B) {
	root := benchCorpus(b)
	defer gcroom.Follow()()
	if p := os.Getenv("CAIRN_PEAK_HEAP_PROFILE"); p != "" {
		stop := make(chan struct{})
		defer close(stop)
		go peakHeapProfile(p, stop)
	}
	rss := sampleRSS()
	defer rss.report(b)
	for i := 0; i < b.N; i++ {
		ws, err := workspace.Open(root)
		if err != nil {
			b.Fatal(err)
		}
		state := os.Getenv("CAIRN_BENCH_COLD_STATE") // kept for later benchmarks
		if state == "" {
			state = b.TempDir()
		} else if err := os.RemoveAll(state); err != nil {
			b.Fatal(err)
		}
		ix, err := Open(ws, Options{StateDir: state, NoWatch: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.Reconcile(context.Background()); err != nil {
			b.Fatal(err)
		}
		st := ix.Stats()
		segs := ix.s.Segments()
		ix.Close()
		b.ReportMetric(float64(st.SearchDocs), "chunks")
		b.ReportMetric(float64(segs), "segments")
	}
	debug.FreeOSMemory()
}

// rssPeaks follows the process's resident memory split as the kernel
// counts it (/proc/self/status, Linux): anonymous pages (the Go heap and
// the runtime, C allocations) and file-backed pages (the binary, the
// search index's mapped segments). The peak RSS alone does not say which
// part grew: the split is what the memory work of issue 30 needs.
type rssPeaks struct {
	stop       chan struct{}
	done       chan struct{}
	anon, file uint64 // kB, the highest seen
	// At the highest anonymous sample: the Go runtime's memory not
	// returned to the OS, the collector's heap goal and the free heap
	// pages the runtime keeps, in bytes (what the anonymous part holds
	// beyond the runtime's memory is C's: tree-sitter).
	goMem, goal, free uint64
}

// sampleRSS samples every 250 ms until report; where /proc/self/status
// has no RssAnon line it samples nothing and report reports nothing.
func sampleRSS() *rssPeaks {
	r := &rssPeaks{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			st, ok := readStatus()
			if !ok {
				return
			}
			if st["RssAnon"] > r.anon {
				r.anon = st["RssAnon"]
				r.goMem, r.goal, r.free = goMemory()
			}
			r.file = max(r.file, st["RssFile"])
			select {
			case <-r.stop:
				return
			case <-t.C:
			}
		}
	}()
	return r
}

// report stops the sampling and reports, in MB, the process's peak RSS
// (VmHWM: the kernel's own high-water mark, what /usr/bin/time reports)
// and the highest anonymous and file-backed parts sampled.
func (r *rssPeaks) report(b *testing.B) {
	close(r.stop)
	<-r.done
	st, ok := readStatus()
	if !ok {
		return
	}
	b.ReportMetric(float64(st["VmHWM"])/1000, "peak-rss-MB")
	b.ReportMetric(float64(r.anon)/1000, "peak-anon-MB")
	b.ReportMetric(float64(r.file)/1000, "peak-file-MB")
	b.ReportMetric(float64(r.goMem)/1e6, "peak-anon-go-MB")
	b.ReportMetric(float64(r.goal)/1e6, "peak-anon-goal-MB")
	b.ReportMetric(float64(r.free)/1e6, "peak-anon-free-MB")
}

// goMemory returns the Go runtime's memory not returned to the OS, the
// collector's heap goal and the free heap pages it keeps, in bytes.
func goMemory() (mem, goal, free uint64) {
	s := []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/gc/heap/goal:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(s)
	return s[0].Value.Uint64() - s[1].Value.Uint64(), s[2].Value.Uint64(), s[3].Value.Uint64()
}

// readStatus returns testenv.ProcStatus, and whether it has the RSS split
// (Linux 4.5 and later).
func readStatus() (map[string]uint64, bool) {
	st := testenv.ProcStatus()
	_, anon := st["RssAnon"]
	_, file := st["RssFile"]
	_, hwm := st["VmHWM"]
	return st, anon && file && hwm
}

// peakHeapProfile writes a heap profile to path whenever the heap in use
// reaches a new high (to see what makes the peak).
func peakHeapProfile(path string, stop <-chan struct{}) {
	var peak uint64
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > peak+peak/20 {
			peak = ms.HeapInuse
			if f, err := os.Create(path); err == nil {
				pprof.WriteHeapProfile(f)
				f.Close()
			}
		}
	}
}

// benchIndex opens the corpus's index in $CAIRN_BENCH_STATE (kept between
// runs, so only the first run builds) and starts it, watching the disk
// unless noWatch. The corpus must be a copy: the benchmarks write into it.
// The GC target follows the live heap as in cairn serve (internal/gcroom).
func benchIndex(b *testing.B, noWatch bool) (*workspace.Workspace, *Local) {
	b.Helper()
	b.Cleanup(gcroom.Follow())
	root := os.Getenv("CAIRN_BENCH_CORPUS")
	if root == "" {
		b.Skip("set CAIRN_BENCH_CORPUS to a copy of a tree (the benchmark writes files into it)")
	}
	state := os.Getenv("CAIRN_BENCH_STATE")
	if state == "" {
		state = b.TempDir()
	}
	ws, err := workspace.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	ix, err := Open(ws, Options{StateDir: state, NoWatch: noWatch})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(func() { cancel(); ix.Close() })
	ix.Start(ctx)
	if err := ix.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	// With a state dir from an earlier run this is a warm start: the tags
	// cache read and the tree stat'ed against the search manifest. (Logged:
	// the caller's ResetTimer drops reported metrics.)
	b.Logf("ready after %v", time.Since(start).Round(time.Millisecond))
	return ws, ix
}

// visible waits until a file's new symbol is found by search and by the
// map, and returns how long after since that was: the end of the first
// batch after which both find it. It waits on the batches (Local.applied)
// and checks once after each, rather than polling: at 10× the tree a
// search takes milliseconds of CPU, and back-to-back polls competed with
// the batch they waited for on a 2-core machine. Call watchBatches first.
func visible(b *testing.B, ix *Local, batches <-chan time.Time, sym, rel string, since time.Time) time.Duration {
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	for {
		var at time.Time
		select {
		case at = <-batches:
		case <-deadline.C:
			b.Fatalf("%s never became visible (map %v)", sym, len(ix.Definitions([]string{sym})) > 0)
		}
		if at.Before(since) || len(ix.Definitions([]string{sym})) == 0 {
			continue
		}
		res, err := ix.Search(context.Background(), mustParse(b, "sym:"+sym), 1)
		if err == nil && len(res.Hits) > 0 && res.Hits[0].Path == rel {
			return at.Sub(since)
		}
	}
}

// watchBatches has ix report the end time of each batch of its change
// stream on the returned channel (the oldest reports are dropped when the
// reader lags: visible needs only the latest).
func watchBatches(b *testing.B, ix *Local) <-chan time.Time {
	ch := make(chan time.Time, 64)
	f := func() {
		now := time.Now()
		for {
			select {
			case ch <- now:
				return
			default:
			}
			select {
			case <-ch:
			default:
			}
		}
	}
	ix.applied.Store(&f)
	b.Cleanup(func() { ix.applied.Store(nil) })
	return ch
}

func writeChange(b *testing.B, ws *workspace.Workspace, rel string, i int) string {
	sym := fmt.Sprintf("BenchChanged%dX%d", time.Now().UnixNano()%1e9, i)
	src := fmt.Sprintf("package bench\n\n// %s is written by the benchmark.\nfunc %s() int { return %d }\n", sym, sym, i)
	if err := os.MkdirAll(filepath.Dir(ws.Abs(rel)), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(ws.Abs(rel), []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	return sym
}

// BenchmarkDiskChangeVisible measures how long after the debounce a file
// written on disk is found by search and by the map (the watcher path).
func BenchmarkDiskChangeVisible(b *testing.B) {
	ws, ix := benchIndex(b, false)
	rel := "cairnbench/changed.go"
	defer os.RemoveAll(ws.Abs("cairnbench"))
	writeChange(b, ws, rel, -1) // the new directory gets watched
	time.Sleep(time.Second)
	batches := watchBatches(b, ix)
	b.ResetTimer()
	lat := benchlat.Start(b.N)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		sym := writeChange(b, ws, rel, i)
		lat.Add(visible(b, ix, batches, sym, rel, start) - workspace.Debounce)
	}
	b.StopTimer()
	lat.Report(b)
}

// BenchmarkDidSaveVisible measures how long after the debounce an editor's
// didSave is reflected by search and by the map (no file watcher).
func BenchmarkDidSaveVisible(b *testing.B) {
	ws, ix := benchIndex(b, true)
	rel := "cairnbench/saved.go"
	defer os.RemoveAll(ws.Abs("cairnbench"))
	batches := watchBatches(b, ix)
	b.ResetTimer()
	lat := benchlat.Start(b.N)
	for i := 0; i < b.N; i++ {
		sym := writeChange(b, ws, rel, i)
		start := time.Now()
		ix.DocumentSaved(ws.Abs(rel))
		lat.Add(visible(b, ix, batches, sym, rel, start) - workspace.Debounce)
	}
	b.StopTimer()
	lat.Report(b)
}

// BenchmarkQuery measures in-process identifier queries on a warm index.
func BenchmarkQuery(b *testing.B) {
	_, ix := benchIndex(b, true)
	var parsed []Query
	for _, q := range []string{"parseHTTPRequest", "NewReader", "ServeHTTP", "utf8 decode rune", "sym:Marshal"} {
		parsed = append(parsed, mustParse(b, q))
	}
	b.ResetTimer()
	lat := benchlat.Start(b.N)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := ix.Search(context.Background(), parsed[i%len(parsed)], 20); err != nil {
			b.Fatal(err)
		}
		lat.Add(time.Since(start))
	}
	b.StopTimer()
	lat.Report(b)
}
