//go:build !unix

package benchlat

import "time"

// processCPU is unknown here; Report then leaves out cpu-ms/op.
func processCPU() time.Duration { return 0 }
