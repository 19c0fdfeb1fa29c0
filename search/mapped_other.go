//go:build !linux

package search

// dropPages does nothing where MADV_DONTNEED's meaning for file mappings
// is not the same.
func dropPages([]byte) {}
