package testenv

import (
	"fmt"
	"os"
	"strings"
)

// ProcStatus returns the figures in kB of this process's
// /proc/self/status (VmRSS, VmHWM, RssAnon, RssFile, …), or nil where
// there is no such file (not Linux). The benchmarks report memory from it.
func ProcStatus() map[string]uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil
	}
	st := map[string]uint64{}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, _ := strings.Cut(line, ":")
		var kb uint64
		if _, err := fmt.Sscanf(strings.TrimSpace(value), "%d kB", &kb); err == nil {
			st[name] = kb
		}
	}
	return st
}
