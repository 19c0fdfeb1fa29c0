// Package benchlat reports latency benchmarks the same way everywhere: the
// p50 and p99 of the timed operations, and the process CPU time per
// operation. The CPU figure holds on a machine shared with other work, where
// wall-clock percentiles mostly measure the wait for a core.
package benchlat

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Recorder collects the durations of one benchmark's operations.
type Recorder struct {
	ds       []time.Duration
	cpuStart time.Duration
	byKey    map[string][]time.Duration // AddFor's, by key
}

// Start begins recording (call it right after b.ResetTimer).
func Start(n int) *Recorder {
	return &Recorder{ds: make([]time.Duration, 0, n), cpuStart: ProcessCPU()}
}

// Add records one operation's latency.
func (r *Recorder) Add(d time.Duration) { r.ds = append(r.ds, d) }

// AddFor records the latency of one operation on key (a question, a
// query): Report then also gives the highest of the keys' medians. On a
// shared machine a p99 is mostly the slowest one-off waits (a collection,
// a core taken away); the slowest key's median is what the code itself
// costs at its worst.
func (r *Recorder) AddFor(key string, d time.Duration) {
	r.Add(d)
	if r.byKey == nil {
		r.byKey = map[string][]time.Duration{}
	}
	r.byKey[key] = append(r.byKey[key], d)
}

// Report adds p50-ms, p99-ms and cpu-ms/op to b's results, and
// worst-p50-ms when operations were recorded by key (AddFor).
func (r *Recorder) Report(b *testing.B) {
	cpu := ProcessCPU() - r.cpuStart
	if len(r.ds) == 0 {
		return
	}
	ds := slices.Clone(r.ds)
	slices.Sort(ds)
	b.ReportMetric(ms(ds[len(ds)/2]), "p50-ms")
	b.ReportMetric(ms(ds[min(len(ds)-1, len(ds)*99/100)]), "p99-ms")
	if len(r.byKey) > 0 {
		type keyMedian struct {
			key string
			p50 time.Duration
		}
		var ks []keyMedian
		for k, kd := range r.byKey {
			ks = append(ks, keyMedian{k, median(kd)})
		}
		slices.SortFunc(ks, func(a, b keyMedian) int { return cmp.Or(cmp.Compare(b.p50, a.p50), cmp.Compare(a.key, b.key)) })
		b.ReportMetric(ms(ks[0].p50), "worst-p50-ms")
		// The slowest keys by name, to know what to look at.
		var slow []string
		for _, k := range ks[:min(5, len(ks))] {
			slow = append(slow, fmt.Sprintf("%s %.1f ms", k.key, ms(k.p50)))
		}
		b.Logf("slowest medians: %s", strings.Join(slow, ", "))
	}
	if cpu > 0 {
		b.ReportMetric(ms(cpu)/float64(len(ds)), "cpu-ms/op")
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// median returns the median of ds (the upper one of an even count), in a
// sorted copy.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
