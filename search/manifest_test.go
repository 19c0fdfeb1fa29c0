package search

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/workspace"
)

func sampleManifest() *manifest {
	return &manifest{
		Version: FormatVersion,
		Docs:    1234,
		Files: map[string]fileState{
			"a/b/c.go":   {Size: 10, Mod: 1700000000123456789, Hash: "ab12"},
			"a/b/d.go":   {Size: 0, Mod: -5, Hash: ""},
			"a/bin.dat":  {Size: 1 << 40, Mod: 7, Binary: true},
			"z/é/ü.py":   {Size: 3, Mod: 9, Hash: workspace.Hash("x")},
			"a/b/c.go.x": {Size: 1, Mod: 2, Hash: "h"},
		},
		Terms: []string{"wait", "", "goroutin", "gate"},
		Vocab: map[string][]byte{
			"a/b/c.go":   appendPackedVocab(nil, []uint32{0}, [][2]uint32{{0, 3}, {0, 2}}),
			"z/é/ü.py":   {0, 0},
			"only/vocab": appendPackedVocab(nil, []uint32{3}, [][2]uint32{{3, 0}}),
		},
	}
}

// TestManifestRoundTrip: what is encoded decodes to the same manifest,
// empty maps included.
func TestManifestRoundTrip(t *testing.T) {
	for _, m := range []*manifest{sampleManifest(), {Version: FormatVersion, Files: map[string]fileState{}, Terms: []string{}, Vocab: map[string][]byte{}}} {
		got, err := decodeManifest(encodeManifest(m))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, m)
		}
	}
}

// TestManifestDamaged: a manifest cut short or with any byte changed is
// an error, never a panic and never a part of the files.
func TestManifestDamaged(t *testing.T) {
	b := encodeManifest(sampleManifest())
	for n := 0; n < len(b); n++ {
		if m, err := decodeManifest(b[:n]); err == nil {
			t.Fatalf("cut to %d of %d bytes: decoded %+v, want an error", n, len(b), m)
		}
	}
	for i := range b {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			c := append([]byte(nil), b...)
			c[i] ^= x
			if m, err := decodeManifest(c); err == nil {
				t.Fatalf("byte %d ^ %#x: decoded %+v, want an error", i, x, m)
			}
		}
	}
	// A body that passes the checksum but lies about its lengths (written
	// by a bug, not by the disk) is refused too, without a panic.
	body := b[:len(b)-4]
	for i := len(manifestMagic) + 1; i < len(body); i++ {
		for _, v := range []byte{0x00, 0x7f, 0xff} {
			c := append([]byte(nil), body...)
			c[i] = v
			c = appendCRC(c)
			_, _ = decodeManifest(c) // must not panic
		}
	}
}

func appendCRC(b []byte) []byte {
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
}

// TestManifestDamagedOnDisk: a damaged manifest makes the next reconcile
// re-read every file: each stays searchable, none is lost.
func TestManifestDamagedOnDisk(t *testing.T) {
	root := t.TempDir()
	const n = 30
	for i := 0; i < n; i++ {
		writeFile(t, root, fmt.Sprintf("p%02d/f.go", i), fmt.Sprintf("package p%02d\n\nfunc Marker%02dZeta() {}\n", i, i))
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	ix := openIndex(t, ws, state, nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(state, "search", "manifest.bin")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{0, 5, len(good) / 3, len(good) / 2, len(good) - 1} {
		bad := append([]byte(nil), good[:cut]...)
		if cut == len(good)/2 {
			bad = append(bad, 0xff)
			bad = append(bad, good[cut+1:]...)
		}
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		ix := openIndex(t, ws, state, nil)
		if len(ix.files) != 0 {
			t.Fatalf("damaged at %d: %d files loaded, want none", cut, len(ix.files))
		}
		st, err := ix.Reconcile(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if re := st.Added + st.Changed + st.Touched; re != n || st.Unchanged != 0 {
			t.Errorf("damaged at %d: reconcile re-read %d files (%+v), want %d", cut, re, st, n)
		}
		for i := 0; i < n; i++ {
			q := fmt.Sprintf("Marker%02dZeta", i)
			if hits := mustSearch(t, ix, q); len(hits) == 0 || hits[0].Path != fmt.Sprintf("p%02d/f.go", i) {
				t.Errorf("damaged at %d: %s finds %v", cut, q, hits)
			}
		}
		if got := ix.Stats().Files; got != n {
			t.Errorf("damaged at %d: %d files indexed, want %d", cut, got, n)
		}
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestManifestGobUpgrade: an index whose manifest is the older gob file
// opens with its files known (nothing re-read), and the next save
// replaces the gob file.
// savedManifest indexes ws into state, closes the index and returns its
// search directory and the manifest saved there.
func savedManifest(t *testing.T, ws *workspace.Workspace, state string) (string, *manifest) {
	t.Helper()
	ix := openIndex(t, ws, state, nil)
	if _, err := ix.Reconcile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(state, "search")
	b, err := os.ReadFile(filepath.Join(dir, "manifest.bin"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// writeGobManifest writes m as the gob manifest an older Cairn wrote.
func writeGobManifest(t *testing.T, dir string, m *manifest) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "manifest.gob"))
	if err != nil {
		t.Fatal(err)
	}
	if err := gob.NewEncoder(f).Encode(m); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestManifestGobUpgrade(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 5; i++ {
		writeFile(t, root, fmt.Sprintf("p%d/f.go", i), fmt.Sprintf("package p%d\n\nfunc Up%dGrade() {}\n", i, i))
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	dir, m := savedManifest(t, ws, state)
	writeGobManifest(t, dir, m)
	if err := os.Remove(filepath.Join(dir, "manifest.bin")); err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, ws, state, nil)
	if len(ix.files) != 5 {
		t.Fatalf("from the gob manifest: %d files, want 5", len(ix.files))
	}
	writeFile(t, root, "p0/f.go", "package p0\n\nfunc Up0Changed() {}\n")
	st, err := ix.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Changed != 1 || st.Unchanged != 4 {
		t.Errorf("after the upgrade: changed %d, unchanged %d; want 1, 4", st.Changed, st.Unchanged)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.gob")); !os.IsNotExist(err) {
		t.Errorf("the gob manifest is still there after a save (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.bin")); err != nil {
		t.Errorf("no binary manifest after a save: %v", err)
	}
}

// TestManifestGobNewer: when an older Cairn (which writes only the gob
// file) ran on the index after this one, its newer gob manifest is read,
// not the stale binary one.
func TestManifestGobNewer(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a.go", "package a\n")
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	dir, m := savedManifest(t, ws, state)
	st := m.Files["a.go"]
	st.Hash = "from the gob file"
	m.Files["a.go"] = st
	writeGobManifest(t, dir, m)
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "manifest.bin"), old, old); err != nil {
		t.Fatal(err)
	}
	ix := openIndex(t, ws, state, nil)
	defer ix.Close()
	if got := ix.files["a.go"].Hash; got != "from the gob file" {
		t.Errorf("hash %q: the newer gob manifest was not the one read", got)
	}
}

// TestReconcileDefersManifestOfFewChanges: a reconcile that finds a few
// files changed (a warm start) does not rewrite the manifest before it
// returns; Close saves it, and the next reconcile has nothing to redo.
func TestReconcileDefersManifestOfFewChanges(t *testing.T) {
	root := t.TempDir()
	for i := 0; i < 30; i++ {
		writeFile(t, root, fmt.Sprintf("p%02d/f.go", i), fmt.Sprintf("package p%02d\n\nfunc Marker%02dEta() {}\n", i, i))
	}
	ws, err := workspace.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	state := t.TempDir()
	dir, _ := savedManifest(t, ws, state)
	path := filepath.Join(dir, "manifest.bin")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "p07/f.go", "package p07\n\nfunc ChangedWhileAwayEta() {}\n")
	ix := openIndex(t, ws, state, nil)
	st, err := ix.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Changed != 1 {
		t.Fatalf("reconcile: %+v, want one file changed", st)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("the reconcile of one changed file rewrote the manifest before returning; want it deferred")
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix = openIndex(t, ws, state, nil)
	st, err = ix.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Added+st.Changed+st.Removed != 0 {
		t.Errorf("after Close, the next reconcile redid %+v; want the manifest saved by Close", st)
	}
}
