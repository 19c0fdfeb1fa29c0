//go:build !linux

package main

import "os"

// isTerminal reports whether f looks like a terminal: a character device
// (which /dev/null also is; the hint it gates is only a hint).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
