//go:build !unix

package search

// cpuSeconds is not measured here (BenchmarkSearchBuild reports 0).
func cpuSeconds() float64 { return 0 }
