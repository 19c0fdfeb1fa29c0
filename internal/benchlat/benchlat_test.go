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
