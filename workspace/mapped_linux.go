package workspace

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ReadMapped returns the contents of the file at path mapped read-only
// into memory, and the function that unmaps them. The caller must copy
// what it keeps (the bytes are invalid after release) and must not hold
// them while the file may be truncated: Cairn's state files are replaced
// by a rename, never rewritten in place.
//
// A large state file (the tags cache, the search manifest) is read once
// per start and decoded into the heap: mapping it spares a copy of every
// byte into a buffer of fresh pages, whose page faults were a tenth of a
// warm start's CPU at 10× the Go tree (docs/scale.md).
func ReadMapped(path string) (data []byte, release func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := st.Size()
	if size == 0 {
		return nil, func() {}, nil
	}
	if size != int64(int(size)) {
		return nil, nil, fmt.Errorf("mapping %s: %d bytes is too large", path, size)
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		// A file system that cannot map files: read it.
		b, rerr := os.ReadFile(path)
		if rerr != nil {
			return nil, nil, rerr
		}
		return b, func() {}, nil
	}
	return b, func() { _ = unix.Munmap(b) }, nil
}
