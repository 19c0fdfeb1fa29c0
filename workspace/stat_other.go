//go:build !linux

package workspace

import "os"

// listDir lists a directory; its stat function reads each entry's Info.
func listDir(absDir string) ([]os.DirEntry, func(e os.DirEntry) (size, mod int64, err error), func(), error) {
	entries, err := os.ReadDir(absDir)
	if err != nil {
		return nil, nil, nil, err
	}
	stat := func(e os.DirEntry) (int64, int64, error) {
		info, err := e.Info()
		if err != nil {
			return 0, 0, err
		}
		return info.Size(), info.ModTime().UnixNano(), nil
	}
	return entries, stat, func() {}, nil
}
