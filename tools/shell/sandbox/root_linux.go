//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// devices are bound from the host into the command's /dev (a tmpfs):
// nothing else of the host's /dev exists there.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// buildRoot makes the command's filesystem and makes it the root: a tmpfs
// on s.Root holding only the binds of s.Binds (read-only unless
// writable), a private size-limited /tmp, a minimal /dev, a fresh /proc
// of the PID namespace and /sys read-only; the secret files masked and
// the protected paths read-only. The host's root is then detached: no
// path to a host socket, /run or another process's /tmp remains.
func buildRoot(s Spec) error {
	root := s.Root
	if root == "" {
		return fmt.Errorf("no directory for the new root")
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mount namespace private: %w", err)
	}
	if err := unix.Mount("tmpfs", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size=1m,mode=0755"); err != nil {
		return fmt.Errorf("mounting the new root: %w", err)
	}
	binds := append([]Bind(nil), s.Binds...)
	sort.SliceStable(binds, func(i, j int) bool { return binds[i].Path < binds[j].Path })
	// Parents sort before their children, and /tmp before what a test or
	// a user keeps below it, so each mount point is made in the right
	// file system.
	type step struct {
		path string
		do   func() error
	}
	var steps []step
	for _, b := range binds {
		b := b
		steps = append(steps, step{b.Path, func() error { return bindHost(root, b.Path, b.Write) }})
	}
	tmpOpts := "size=" + strconv.Itoa(s.Limits.WithDefaults().TmpMB) + "m,mode=1777"
	steps = append(steps,
		step{"/tmp", func() error {
			return mountFresh(root, "/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, tmpOpts)
		}},
		step{"/dev", func() error { return buildDev(root) }},
		step{"/proc", func() error {
			return mountFresh(root, "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
		}},
		step{"/sys", func() error { return bindHost(root, "/sys", false) }},
	)
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].path < steps[j].path })
	for _, st := range steps {
		if err := st.do(); err != nil {
			return err
		}
	}
	if err := readOnlyBelow(root, binds); err != nil {
		return err
	}
	empty := filepath.Join(root, ".empty")
	if err := os.WriteFile(empty, nil, 0o444); err != nil {
		return fmt.Errorf("creating the mask file: %w", err)
	}
	emptyDir := filepath.Join(root, ".emptydir")
	if err := os.Mkdir(emptyDir, 0o555); err != nil {
		return fmt.Errorf("creating the mask directory: %w", err)
	}
	for _, m := range s.Masks {
		dst := filepath.Join(root, m)
		fi, err := os.Lstat(dst)
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue
		}
		src := empty
		if fi.IsDir() {
			src = emptyDir
		}
		if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("masking %s: %w", m, err)
		}
		if err := remountRO(dst); err != nil {
			return fmt.Errorf("masking %s: %w", m, err)
		}
	}
	for _, p := range s.Protect {
		dst := filepath.Join(root, p)
		fi, err := os.Lstat(dst)
		if err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue
		}
		if err := unix.Mount(dst, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("protecting %s: bind mount: %w", p, err)
		}
		if err := remountRO(dst); err != nil {
			return fmt.Errorf("protecting %s: %w", p, err)
		}
	}
	if err := os.Chdir(root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	// The old root is stacked on the new one: detach it.
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the host's root: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	// Nothing can be created outside the binds and the tmpfs mounts.
	if err := unix.Mount("", "/", "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("making the new root read-only: %w", err)
	}
	return nil
}

// bindHost binds host path p at the same path below root (a symlink is
// recreated instead, so that it resolves inside the new root). Missing
// paths are skipped.
func bindHost(root, p string, write bool) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return nil
	}
	dst := filepath.Join(root, p)
	if fi.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(p)
		if err != nil {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("making the way to %s: %w", p, err)
		}
		if _, err := os.Lstat(dst); err == nil {
			return nil
		}
		if err := os.Symlink(target, dst); err != nil {
			return fmt.Errorf("recreating the link %s: %w", p, err)
		}
		return nil
	}
	if err := mountPoint(dst, fi.IsDir()); err != nil {
		return fmt.Errorf("making the mount point for %s: %w", p, err)
	}
	// Recursive: a user namespace may not bind a tree without the
	// mounts locked below it. Those are made read-only by readOnlyBelow.
	if err := unix.Mount(p, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("binding %s: %w", p, err)
	}
	if !write {
		if err := remountRO(dst); err != nil {
			return fmt.Errorf("binding %s read-only: %w", p, err)
		}
	}
	return nil
}

// mountPoint makes dst (a directory, or an empty file) where it is
// missing, with the directories on the way.
func mountPoint(dst string, dir bool) error {
	if _, err := os.Lstat(dst); err == nil {
		return nil
	}
	if dir {
		return os.MkdirAll(dst, 0o755)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// mountFresh mounts a new file system of type fstype at p below root.
func mountFresh(root, p, fstype string, flags uintptr, opts string) error {
	dst := filepath.Join(root, p)
	if err := mountPoint(dst, true); err != nil {
		return fmt.Errorf("making the mount point for %s: %w", p, err)
	}
	if err := unix.Mount(fstype, dst, fstype, flags, opts); err != nil {
		return fmt.Errorf("mounting %s on %s: %w", fstype, p, err)
	}
	return nil
}

// buildDev makes /dev: a small tmpfs with the device files bound from the
// host, the usual links into /proc, an empty /dev/pts and a private
// /dev/shm.
func buildDev(root string) error {
	if err := mountFresh(root, "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
		return err
	}
	for _, d := range devices {
		if err := bindHost(root, d, true); err != nil {
			return err
		}
	}
	for name, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, filepath.Join(root, "dev", name)); err != nil {
			return fmt.Errorf("linking /dev/%s: %w", name, err)
		}
	}
	return mountFresh(root, "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64m,mode=1777")
}

// remountRO makes the bind mount at p read-only, keeping the flags the
// user namespace locked on it (a remount that drops them fails).
func remountRO(p string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(p, &st); err != nil {
		return err
	}
	keep := uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME | unix.MS_RELATIME)
	if err := unix.Mount("", p, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|keep, ""); err != nil {
		return fmt.Errorf("read-only remount: %w", err)
	}
	return nil
}

// readOnlyBelow makes read-only every mount that a recursive bind brought
// in below a read-only bind (and below /sys), unless a writable bind or
// one of the launcher's own mounts is nearer.
func readOnlyBelow(root string, binds []Bind) error {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("reading the mount table: %w", err)
	}
	writable := map[string]bool{"/sys": false, "/tmp": true, "/dev": true, "/proc": true}
	for _, b := range binds {
		writable[b.Path] = b.Write
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 {
			continue
		}
		mp := unescapeMount(f[4])
		rel, ok := strings.CutPrefix(mp, root+"/")
		if !ok {
			continue
		}
		p := "/" + rel
		if _, own := writable[p]; own {
			continue // a bind of its own, already as it should be
		}
		w, found := true, false
		for q := p; q != "/" && !found; q = filepath.Dir(q) {
			w, found = writable[q]
		}
		if !found || w || strings.Contains(","+f[5]+",", ",ro,") {
			continue
		}
		if err := remountRO(mp); err != nil {
			return fmt.Errorf("making %s read-only: %w", p, err)
		}
	}
	return nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				out.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return out.String()
}
