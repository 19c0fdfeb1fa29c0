//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// setProcessGroup makes the server the leader of its own process group, so
// that stopping it also stops whatever it started (npx → node, sh → …).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the server's process group; kill selects SIGKILL
// over SIGTERM. Errors (the group is already gone) are ignored.
func signalGroup(cmd *exec.Cmd, kill bool) {
	if cmd.Process == nil {
		return
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
