package benchlat

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/internal/testenv"
)

var sink int

// Work done by this process shows in ProcessCPU, whatever the machine's load.
func TestProcessCPUCountsWork(t *testing.T) {
	before := ProcessCPU()
	if before <= 0 {
		testenv.Need(t, "no process CPU time on this platform")
	}
	for i := 0; i < 50_000_000; i++ { // tens of CPU-ms; accounting ticks are a few ms
		sink += i ^ sink
	}
	if after := ProcessCPU(); after <= before {
		t.Fatalf("CPU time did not advance: %v then %v", before, after)
	}
}

func BenchmarkRecorder(b *testing.B) {
	r := Start(b.N)
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r.Add(time.Since(start))
	}
	r.Report(b)
}

// The slowest key's median is reported, not the slowest operation: one
// operation of a fast key that waited does not set it.
func TestWorstKeyMedian(t *testing.T) {
	r := Start(0)
	for _, d := range []time.Duration{3, 4, 5} {
		r.AddFor("slow", d*time.Millisecond)
	}
	for _, d := range []time.Duration{1, 1, 90} {
		r.AddFor("fast", d*time.Millisecond)
	}
	res := testing.Benchmark(func(b *testing.B) { r.Report(b) })
	if got := res.Extra["worst-p50-ms"]; got != 4 {
		t.Errorf("worst-p50-ms %v, want 4 (slow's median; fast's 90 ms is one wait)", got)
	}
	if got := res.Extra["p99-ms"]; got != 90 {
		t.Errorf("p99-ms %v, want 90", got)
	}
}

// BenchmarkFixedWork is the machine's own tail: the same work every time
// (random reads over 128 MB, split over two goroutines, ~30 ms on a 2-core
// machine, as a new question at 10× the Go tree reads the map's and the
// index's arrays), reported like the latency benchmarks. Its p99 over its
// p50 is the spread no code change removes: a benchmark's p99 is at least
// its slowest key's median times that (docs/scale.md). Run it beside the
// benchmark it calibrates: go test -run '^$' -bench FixedWork -benchtime 270x
// ./internal/benchlat.
func BenchmarkFixedWork(b *testing.B) {
	data := make([]float64, 16<<20)
	for i := range data {
		data[i] = float64(i)
	}
	idx := make([]int32, 6_000_000)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range idx {
		idx[i] = int32(r.IntN(len(data)))
	}
	read := func(part []int32) (s float64) {
		for _, i := range part {
			s += data[i]
		}
		return s
	}
	var total float64
	rec := Start(b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var wg sync.WaitGroup
		var sums [2]float64
		for p := range sums {
			wg.Go(func() { sums[p] = read(idx[p*len(idx)/2 : (p+1)*len(idx)/2]) })
		}
		wg.Wait()
		total += sums[0] + sums[1]
		rec.Add(time.Since(start))
	}
	b.StopTimer()
	rec.Report(b)
	if total == 0 {
		b.Fatal("no work was done")
	}
}
