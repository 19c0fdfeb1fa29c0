package search

import "golang.org/x/sys/unix"

// dropPages unmaps the resident pages of b, a read-only shared file
// mapping, from the process; its contents are unchanged (MADV_DONTNEED on
// a shared file mapping reads them again from the file).
func dropPages(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
	}
}
