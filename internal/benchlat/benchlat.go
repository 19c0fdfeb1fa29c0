// Package benchlat reports latency benchmarks the same way everywhere: the
// p50 and p99 of the timed operations, and the process CPU time per
// operation. The CPU figure holds on a machine shared with other work, where
// wall-clock percentiles mostly measure the wait for a core.
package benchlat

import (
	"slices"
	"testing"
	"time"
)

// Recorder collects the durations of one benchmark's operations.
type Recorder struct {
	ds       []time.Duration
	cpuStart time.Duration
}

// Start begins recording (call it right after b.ResetTimer).
func Start(n int) *Recorder {
	return &Recorder{ds: make([]time.Duration, 0, n), cpuStart: ProcessCPU()}
}

// Add records one operation's latency.
func (r *Recorder) Add(d time.Duration) { r.ds = append(r.ds, d) }

// Report adds p50-ms, p99-ms and cpu-ms/op to b's results.
func (r *Recorder) Report(b *testing.B) {
	cpu := ProcessCPU() - r.cpuStart
	if len(r.ds) == 0 {
		return
	}
	ds := slices.Clone(r.ds)
	slices.Sort(ds)
	b.ReportMetric(ms(ds[len(ds)/2]), "p50-ms")
	b.ReportMetric(ms(ds[min(len(ds)-1, len(ds)*99/100)]), "p99-ms")
	if cpu > 0 {
		b.ReportMetric(ms(cpu)/float64(len(ds)), "cpu-ms/op")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
