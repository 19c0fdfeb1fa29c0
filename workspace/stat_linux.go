package workspace

import (
	"os"

	"golang.org/x/sys/unix"
)

// listDir lists a directory and stats its entries relative to the open
// directory (fstatat) rather than by absolute path: on a deep tree the
// kernel then resolves one name per file instead of every component of
// the path, which is most of a warm start's walk.
func listDir(absDir string) ([]os.DirEntry, func(e os.DirEntry) (size, mod int64, err error), func(), error) {
	d, err := os.Open(absDir)
	if err != nil {
		return nil, nil, nil, err
	}
	entries, err := d.ReadDir(-1)
	if err != nil {
		d.Close()
		return nil, nil, nil, err
	}
	fd := int(d.Fd())
	stat := func(e os.DirEntry) (int64, int64, error) {
		var st unix.Stat_t
		for {
			err := unix.Fstatat(fd, e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return 0, 0, &os.PathError{Op: "fstatat", Path: e.Name(), Err: err}
			}
			return st.Size, st.Mtim.Sec*1e9 + st.Mtim.Nsec, nil
		}
	}
	return entries, stat, func() { d.Close() }, nil
}
