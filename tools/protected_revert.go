package tools

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/workspace"
	"golang.org/x/sys/unix"
)

// protectedCreation is a protected path a sandboxed command created, and
// what was done about it.
type protectedCreation struct {
	Rel     string
	Why     string
	Removed bool
}

// gitDirEntries are the entries that make a directory a git directory by
// content; removing the new ones among them undoes the conversion of an
// existing directory.
var gitDirEntries = []string{"HEAD", "config", "objects", "refs", "hooks", "commondir", "gitdir", "packed-refs", "info", "index"}

// revertProtected removes the protected paths a command created: those
// protected now that were not before it ran. The sandbox binds the
// existing ones read-only, but a path that does not exist cannot be bound
// over, and the workspace root must stay writable (a fresh workspace needs
// `go.mod` or `bin/`). The command's processes are gone by now (its PID
// namespace died with it), so nothing races the removal.
//
// A path protected by its name (.vscode, .envrc, a nested .git,
// .github/workflows) that is new was made by the command: it goes whole.
// A directory that became a git directory by content may have existed
// before: when it was born before the command, only its git entries
// changed since start are removed, so no file of the user's is touched.
func revertProtected(root string, before []string, start time.Time) []protectedCreation {
	after, err := workspace.FindProtected(root)
	if err != nil {
		slog.Warn("run_command: finding the protected paths after a command", "root", root, "err", err)
	}
	var out []protectedCreation
	// File times come from the kernel's coarse clock, up to a tick
	// behind the one start was read from.
	since := start.Add(-20 * time.Millisecond)
	for _, p := range after {
		if slices.Contains(before, p) || covered(before, p) {
			continue
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		why, _ := workspace.Protected(root, rel)
		c := protectedCreation{Rel: filepath.ToSlash(rel), Why: why}
		if _, named := workspace.ProtectedByName(rel); named || bornSince(p, since) {
			c.Removed = os.RemoveAll(p) == nil
		} else {
			for _, e := range gitDirEntries {
				q := filepath.Join(p, e)
				if changedSince(q, since) {
					_ = os.RemoveAll(q)
				}
			}
			_, still := workspace.Protected(root, rel)
			c.Removed = !still
		}
		if !c.Removed {
			slog.Warn("run_command: a command made a protected path that could not be undone", "path", c.Rel)
		}
		out = append(out, c)
	}
	return out
}

// covered reports whether p lies below one of the paths in list.
func covered(list []string, p string) bool {
	for _, q := range list {
		if strings.HasPrefix(p, q+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

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

// describeProtected is the note the model reads about reverted paths.
func describeProtected(cs []protectedCreation) string {
	var b strings.Builder
	for _, c := range cs {
		if c.Removed {
			fmt.Fprintf(&b, "[the command created %s, a protected path (%s); commands may not write there, so it was removed. Propose the change with edit_file: the user confirms it]\n", c.Rel, c.Why)
		} else {
			fmt.Fprintf(&b, "[the command made %s a protected path (%s) and it could not be undone; tell the user]\n", c.Rel, c.Why)
		}
	}
	return b.String()
}
