//go:build unix

package contextengine

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used (user + system): on a
// shared machine a build's CPU cost is steadier than its wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
