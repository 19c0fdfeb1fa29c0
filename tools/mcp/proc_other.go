//go:build !unix

package mcp

import "os/exec"

func setProcessGroup(cmd *exec.Cmd) {}

// signalGroup can only reach the server process itself on this platform.
func signalGroup(cmd *exec.Cmd, kill bool) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
