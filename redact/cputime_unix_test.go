//go:build unix

package redact

import (
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used (user + system). A
// benchmark divides by it as well as by wall time: on a machine shared with
// other work, wall time also counts the time spent waiting for a core.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
