package shell

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn/workspace"
)

// ProtectedCreation is a protected path a sandboxed command created, and
// whether it was undone.
type ProtectedCreation struct {
	Rel     string `json:"rel"`
	Why     string `json:"why"`
	Removed bool   `json:"removed"`
}

// gitDirEntries are the entries that make a directory a git directory by
// content; removing the new ones among them undoes the conversion of an
// existing directory.
var gitDirEntries = []string{"HEAD", "config", "objects", "refs", "hooks", "commondir", "gitdir", "packed-refs", "info", "index"}

// revertProtected removes the protected paths a command created: those
// protected now that were not before it ran. The sandbox binds the
// existing ones read-only, but a path that does not exist cannot be bound
// over, and the workspace root must stay writable (a fresh workspace needs
// `go.mod` or `bin/`). Run calls it once the command's processes are gone
// (its PID namespace died with it), so nothing races the removal.
//
// A path protected by its name (.vscode, .envrc, a nested .git,
// .github/workflows) that is new was made by the command: it goes whole.
// A directory that became a git directory by content may have existed
// before: when it was born before the command, only its git entries
// changed since start are removed, so no file of the user's is touched.
func revertProtected(root string, before []string, start time.Time) []ProtectedCreation {
	after, err := workspace.FindProtected(root)
	if err != nil {
		slog.Warn("sandbox: finding the protected paths after a command", "root", root, "err", err)
	}
	var out []ProtectedCreation
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
		c := ProtectedCreation{Rel: filepath.ToSlash(rel), Why: why}
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
			slog.Warn("sandbox: a command made a protected path that could not be undone", "path", c.Rel)
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

// DescribeProtected is the note the model reads about reverted paths.
func DescribeProtected(cs []ProtectedCreation) string {
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
