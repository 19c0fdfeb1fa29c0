//go:build !linux

package shell

import (
	"os"
	"time"
)

// bornSince reports whether p was created at or after t: unknown here.
func bornSince(p string, t time.Time) bool { return false }

// changedSince reports whether p exists and was modified at or after t.
func changedSince(p string, t time.Time) bool {
	fi, err := os.Lstat(p)
	return err == nil && !fi.ModTime().Before(t)
}
