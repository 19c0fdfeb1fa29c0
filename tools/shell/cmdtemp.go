package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// A sandboxed command gets a temporary directory of its own (its TMPDIR),
// removed when it ends. A server killed while a command ran never removes
// it, so the name carries the server's pid and the first command of a later
// server removes the directories of servers that no longer run.

const cmdTempPrefix = "cairn-cmd-"

// newCmdTemp makes a command's temporary directory under dir ("" is the
// OS temp dir), after sweeping the ones left by dead servers once.
func newCmdTemp(dir string) (string, error) {
	sweepOnce.Do(func() { sweepCmdTemps(dir) })
	return os.MkdirTemp(dir, fmt.Sprintf("%s%d-*", cmdTempPrefix, os.Getpid()))
}

var sweepOnce sync.Once

// sweepCmdTemps removes dir's command directories whose server (the pid in
// the name) is gone. Directories of running servers, and names it did not
// write, are left alone.
func sweepCmdTemps(dir string) {
	if dir == "" {
		dir = os.TempDir()
	}
	found, _ := filepath.Glob(filepath.Join(dir, cmdTempPrefix+"*-*"))
	for _, d := range found {
		pid, ok := cmdTempPID(filepath.Base(d))
		if !ok || pid == os.Getpid() || processRuns(pid) {
			continue
		}
		os.RemoveAll(d)
	}
}

// cmdTempPID reads the server's pid from a command directory's name
// ("cairn-cmd-<pid>-<random>").
func cmdTempPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, cmdTempPrefix)
	if !ok {
		return 0, false
	}
	p, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	return pid, err == nil && pid > 0
}

// processRuns reports whether a process with this pid exists (on Linux,
// its /proc entry; where there is no /proc, it assumes it does, so
// nothing is removed).
func processRuns(pid int) bool {
	if _, err := os.Stat("/proc/self"); err != nil {
		return true
	}
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return err == nil
}
