//go:build linux

package shell

import (
	"time"

	"golang.org/x/sys/unix"
)

// bornSince reports whether p was created at or after t (statx birth
// time; false where the file system does not record it).
func bornSince(p string, t time.Time) bool {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, p, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &st); err != nil || st.Mask&unix.STATX_BTIME == 0 {
		return false
	}
	return !time.Unix(st.Btime.Sec, int64(st.Btime.Nsec)).Before(t)
}

// changedSince reports whether p exists and its inode changed (created,
// written, renamed) at or after t.
func changedSince(p string, t time.Time) bool {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return false
	}
	return !time.Unix(st.Ctim.Sec, st.Ctim.Nsec).Before(t)
}
