package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/protocol"
)

// BenchmarkCancelLatency measures the time from cairn.cancel to the
// cancelled event while the model is stalled mid-stream.
func BenchmarkCancelLatency(b *testing.B) {
	turns := strings.Repeat("  - text: thinking\n    stall: true\n", b.N)
	e := newEnv(b, greetWS, withScript("turns:\n"+turns))
	b.ResetTimer()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		run, err := e.ed.Ask(e.ctx, "greet/greet.go", 0, 0, "q")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.ed.WaitKind(e.ctx, run, protocol.EventText); err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := e.ed.Cancel(e.ctx, run); err != nil {
			b.Fatal(err)
		}
		if _, err := e.ed.WaitKind(e.ctx, run, protocol.EventCancelled); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs/cancel")
}
