package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestSweepCmdTemps: the directories of a server that no longer runs go;
// this server's, a running server's and names of another form stay.
func TestSweepCmdTemps(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err != nil {
		t.Skip("no /proc: nothing is swept")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	// A long-lived process of this machine: pid 1.
	dir := t.TempDir()
	names := map[string]bool{ // name → kept
		cmdTempPrefix + strconv.Itoa(dead.Process.Pid) + "-123": false,
		cmdTempPrefix + strconv.Itoa(os.Getpid()) + "-456":      true,
		cmdTempPrefix + "1-789":                                 true,
		cmdTempPrefix + "2345678":                               true, // the old form, without a pid
		"cairn-other-" + strconv.Itoa(dead.Process.Pid) + "-1":  true,
	}
	for n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweepCmdTemps(dir)
	for n, kept := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		if kept && err != nil {
			t.Errorf("%s was removed", n)
		}
		if !kept && err == nil {
			t.Errorf("%s (its server is gone) was left", n)
		}
	}
}

func TestCmdTempPID(t *testing.T) {
	for name, want := range map[string]int{
		"cairn-cmd-42-991": 42, "cairn-cmd-42-": 42, "cairn-cmd-x-1": 0, "cairn-cmd-991": 0, "cairn-cmd--1": 0, "other-42-1": 0,
	} {
		got, ok := cmdTempPID(name)
		if got != want || ok != (want > 0) {
			t.Errorf("cmdTempPID(%q) = %d, %v; want %d", name, got, ok, want)
		}
	}
}

// TestNewCmdTempCarriesPID: a command's temporary directory carries
// this server's pid, so a later server can tell whether it is orphaned.
func TestNewCmdTempCarriesPID(t *testing.T) {
	d, err := newCmdTemp(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if pid, ok := cmdTempPID(filepath.Base(d)); !ok || pid != os.Getpid() {
		t.Fatalf("%s does not carry pid %d", d, os.Getpid())
	}
}
