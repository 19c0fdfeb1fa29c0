//go:build !unix

package benchlat

import "time"

// ProcessCPU is unknown here; Report then leaves out cpu-ms/op.
func ProcessCPU() time.Duration { return 0 }
