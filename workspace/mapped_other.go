//go:build !linux

package workspace

import "os"

// ReadMapped reads the file at path; the release function does nothing
// (see the Linux version, which maps it).
func ReadMapped(path string) (data []byte, release func(), err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return b, func() {}, nil
}
