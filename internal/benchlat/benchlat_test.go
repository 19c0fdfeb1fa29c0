package benchlat

import (
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
