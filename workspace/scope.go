package workspace

import (
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Scope narrows what is indexed to part of the workspace (the
// index.include and index.exclude settings: a monorepo checkout indexes
// the part its user works on). Patterns are workspace-relative,
// slash-separated globs where `**` crosses directories; a pattern also
// matches everything under the directory it names ("services/api" is
// "services/api/**" too). A file is in scope when Include is empty or one
// of its patterns matches, and no Exclude pattern does: exclude wins.
//
// The scope is applied where files enter the indexes, in one place: Walk
// and Ignored (the map's and the search index's walks and single-file
// updates) and the watcher's choice of directories. The file tools do not
// apply it: a file outside the scope is still in the workspace.
type Scope struct {
	Include []string
	Exclude []string
}

// compiledScope is a validated Scope, each pattern with its "/**" twin.
type compiledScope struct {
	src              Scope
	include, exclude []string
}

// IsZero reports whether the scope narrows nothing.
func (s Scope) IsZero() bool { return len(s.Include) == 0 && len(s.Exclude) == 0 }

// Equal reports whether two scopes have the same patterns in the same order.
func (s Scope) Equal(o Scope) bool {
	return slices.Equal(s.Include, o.Include) && slices.Equal(s.Exclude, o.Exclude)
}

func compileScope(s Scope) (*compiledScope, error) {
	c := &compiledScope{src: Scope{Include: slices.Clone(s.Include), Exclude: slices.Clone(s.Exclude)}}
	norm := func(setting string, pats []string) ([]string, error) {
		var out []string
		for _, p := range pats {
			q := strings.TrimPrefix(path.Clean(strings.TrimSpace(p)), "./")
			if q == "" || q == "." || q == "/" {
				continue // the whole workspace: narrows nothing
			}
			if strings.HasPrefix(q, "/") || q == ".." || strings.HasPrefix(q, "../") {
				return nil, fmt.Errorf("%s: %q is not a workspace-relative glob", setting, p)
			}
			if !doublestar.ValidatePattern(q) {
				return nil, fmt.Errorf("%s: %q is not a valid glob", setting, p)
			}
			out = append(out, q)
			if !strings.HasSuffix(q, "/**") && q != "**" {
				out = append(out, q+"/**")
			}
		}
		return out, nil
	}
	var err error
	if c.include, err = norm("index.include", s.Include); err != nil {
		return nil, err
	}
	if c.exclude, err = norm("index.exclude", s.Exclude); err != nil {
		return nil, err
	}
	if len(c.include) == 0 && len(c.exclude) == 0 {
		return nil, nil
	}
	return c, nil
}

// SetScope narrows what is indexed from now on (the zero Scope: the whole
// workspace). It returns whether the scope changed; the code index then
// rescans, so that files now outside it leave the indexes and files now
// inside it enter them. A pattern that is not a workspace-relative glob
// is an error, and the scope in effect stays.
func (w *Workspace) SetScope(s Scope) (bool, error) {
	c, err := compileScope(s)
	if err != nil {
		return false, err
	}
	old := w.scope.Load()
	var oldSrc Scope
	if old != nil {
		oldSrc = old.src
	}
	var newSrc Scope
	if c != nil {
		newSrc = c.src
	}
	w.scope.Store(c)
	changed := !oldSrc.Equal(newSrc) && !(oldSrc.IsZero() && newSrc.IsZero())
	for _, f := range w.Folders() {
		if f.WS.setFolderScope(newSrc.ForFolder(f.Name)) {
			changed = true
		}
	}
	return changed, nil
}

// setFolderScope sets a folder's part of the workspace's scope and reports
// whether it changed. The part of a valid scope is valid but for a brace
// alternative cut at a slash; then the folder is indexed whole, and says so.
func (w *Workspace) setFolderScope(s Scope) bool {
	changed, err := w.SetScope(s)
	if err != nil {
		slog.Warn("index scope: a pattern does not apply to a workspace folder; the folder is indexed whole", "folder", w.root, "err", err)
		changed, _ = w.SetScope(Scope{})
	}
	return changed
}

// ForFolder is the part of s that concerns the workspace folder named
// name, over that folder's own paths. The patterns are written over the
// workspace's paths, where another folder's begin with its name: a
// pattern whose first segment matches name applies with that segment
// taken off (one that is just the name covers the whole folder), one that
// begins with ** applies as it is, any other names the first folder's
// files and drops out. When s includes only other folders' files, the
// result excludes everything.
func (s Scope) ForFolder(name string) Scope {
	narrow := func(pats []string) []string {
		var out []string
		for _, p := range pats {
			q := strings.TrimPrefix(path.Clean(strings.TrimSpace(p)), "./")
			seg, rest, _ := strings.Cut(q, "/")
			switch {
			case seg == "**":
				out = append(out, q)
			case matchSegment(seg, name):
				if rest == "" {
					rest = "**"
				}
				out = append(out, rest)
			}
		}
		return out
	}
	f := Scope{Include: narrow(s.Include), Exclude: narrow(s.Exclude)}
	if len(s.Include) > 0 && len(f.Include) == 0 {
		f.Exclude = []string{"**"}
	}
	return f
}

func matchSegment(pattern, name string) bool {
	m, err := doublestar.Match(pattern, name)
	return err == nil && m
}

// Scope returns the scope in effect.
func (w *Workspace) Scope() Scope {
	if c := w.scope.Load(); c != nil {
		return c.src
	}
	return Scope{}
}

// InScope reports whether the workspace-relative file rel is in the
// index scope.
func (w *Workspace) InScope(rel string) bool { return w.scope.Load().file(rel) }

// file reports whether file rel is in the scope (a nil scope holds every file).
func (c *compiledScope) file(rel string) bool {
	if c == nil {
		return true
	}
	if matchAny(c.exclude, rel) {
		return false
	}
	return len(c.include) == 0 || matchAny(c.include, rel)
}

// dir reports whether directory rel may hold files in the scope: false
// when an exclude pattern covers all of it, or when no include pattern can
// match a path under it. A walk or a watcher need not enter it then.
func (c *compiledScope) dir(rel string) bool {
	if c == nil {
		return true
	}
	for _, p := range c.exclude {
		if base, ok := strings.CutSuffix(p, "/**"); ok && base != "" {
			if m, _ := doublestar.Match(base, rel); m {
				return false
			}
		}
	}
	if len(c.include) == 0 {
		return true
	}
	for _, p := range c.include {
		if mayMatchUnder(p, rel) {
			return true
		}
	}
	return false
}

func matchAny(pats []string, rel string) bool {
	for _, p := range pats {
		if m, _ := doublestar.Match(p, rel); m {
			return true
		}
	}
	return false
}

// mayMatchUnder reports whether pattern p can match a path under directory
// dir, comparing them segment by segment until p's first `**`, which
// matches any rest. A brace alternative may hold a slash, which defeats
// the segment split: such a pattern is assumed to match.
func mayMatchUnder(p, dir string) bool {
	if strings.ContainsRune(p, '{') {
		return true
	}
	ps := strings.Split(p, "/")
	ds := strings.Split(dir, "/")
	for i, d := range ds {
		if i >= len(ps) {
			return false
		}
		if ps[i] == "**" {
			return true
		}
		if m, _ := doublestar.Match(ps[i], d); !m {
			return false
		}
	}
	// A file under dir has at least one more segment than dir.
	return len(ps) > len(ds)
}
