package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestReadMapped(t *testing.T) {
	dir := t.TempDir()
	want := bytes.Repeat([]byte("cairn state\n"), 100_000) // past one page many times
	full := filepath.Join(dir, "full")
	if err := os.WriteFile(full, want, 0o600); err != nil {
		t.Fatal(err)
	}
	got, release, err := ReadMapped(full)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("ReadMapped returned %d bytes that differ from the file's %d", len(got), len(want))
	}
	kept := string(got[:11]) // a copy: valid after release
	release()
	if kept != "cairn state" {
		t.Errorf("copy kept %q", kept)
	}

	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, release, err = ReadMapped(empty)
	if err != nil || len(got) != 0 {
		t.Errorf("empty file: %d bytes, %v", len(got), err)
	}
	release()

	if _, _, err := ReadMapped(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
	if _, _, err := ReadMapped(dir); err == nil {
		t.Error("a directory: no error")
	}
}
