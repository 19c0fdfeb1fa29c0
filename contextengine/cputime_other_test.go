//go:build !unix

package contextengine

import "time"

// processCPU is not measured here.
func processCPU() time.Duration { return 0 }
