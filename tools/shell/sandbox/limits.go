package sandbox

import "fmt"

// Limits bound what one command may consume (settings
// sandbox.limits.*). A zero field takes the default of DefaultLimits;
// there is no "unlimited".
type Limits struct {
	// MemoryMB caps the memory (and memory plus swap, where the kernel
	// accounts it) of the command and everything it starts, page cache
	// and its /tmp included. Needs a memory cgroup.
	MemoryMB int `json:"memoryMB,omitempty"`
	// Pids caps how many processes and threads exist at once. Needs a
	// pids cgroup (RLIMIT_NPROC counts per user and is not enforced for
	// root).
	Pids int `json:"pids,omitempty"`
	// TmpMB is the size of the private /tmp (a tmpfs; with namespaces).
	TmpMB int `json:"tmpMB,omitempty"`
	// CPUSeconds is RLIMIT_CPU, per process.
	CPUSeconds int `json:"cpuSeconds,omitempty"`
	// FileMB is RLIMIT_FSIZE: the largest file a process may write.
	FileMB int `json:"fileMB,omitempty"`
}

// DefaultLimits suit `go test ./...` of a large module.
var DefaultLimits = Limits{MemoryMB: 4096, Pids: 1024, TmpMB: 512, CPUSeconds: 3600, FileMB: 1024}

// WithDefaults fills the zero fields from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	def := func(v, d int) int {
		if v <= 0 {
			return d
		}
		return v
	}
	return Limits{
		MemoryMB:   def(l.MemoryMB, DefaultLimits.MemoryMB),
		Pids:       def(l.Pids, DefaultLimits.Pids),
		TmpMB:      def(l.TmpMB, DefaultLimits.TmpMB),
		CPUSeconds: def(l.CPUSeconds, DefaultLimits.CPUSeconds),
		FileMB:     def(l.FileMB, DefaultLimits.FileMB),
	}
}

// String is the limits for the user.
func (l Limits) String() string {
	l = l.WithDefaults()
	return fmt.Sprintf("memory %d MiB, %d processes, /tmp %d MiB, CPU %d s per process, files up to %d MiB",
		l.MemoryMB, l.Pids, l.TmpMB, l.CPUSeconds, l.FileMB)
}
