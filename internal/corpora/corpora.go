// Package corpora finds the real codebases, written by nobody here, that
// the quality sets of search/, repomap/ and contextengine/ are measured on:
//
//   - "go": the Go tree, $(go env GOROOT)/src, used in place;
//   - "python": CPython 3.11's email and asyncio packages (Debian's python3.11
//     at /usr/lib/python3.11, or pyenv's), copied to the user's cache
//     directory so the workspace holds only them;
//   - "rxjs", "zod": the npm packages pinned in test/corpora/package.json
//     (rxjs 7.8.1: TypeScript src/ beside its build output dist/; zod
//     3.23.8: compiled lib/), installed by `npm ci` there (scripts/test.sh);
//   - "ajv": ajv 8.20.0 from the same install (its TypeScript lib/), for the
//     context engine's set;
//   - "java", "rust", "linux", "ruby": from Debian's packages (apt.go).
//
// The quality tests run when CAIRN_QUALITY=1. A missing corpus skips the
// test, except under CI=true, where the setup should have fetched it and
// its absence fails.
package corpora

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Names lists every corpus.
var Names = []string{"go", "python", "rxjs", "zod", "java", "rust", "linux", "ruby"}

// Enabled skips t unless CAIRN_QUALITY is set.
func Enabled(t testing.TB) {
	t.Helper()
	if os.Getenv("CAIRN_QUALITY") == "" {
		t.Skip("set CAIRN_QUALITY=1 to run the quality sets on real code (scripts/test.sh does)")
	}
}

// Root returns the workspace root of the named corpus, or skips t (fails
// it under CI=true) when the corpus is not on this machine.
func Root(t testing.TB, name string) string {
	t.Helper()
	dir, err := find(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("corpus %s: %v", name, err)
		}
		t.Skipf("corpus %s: %v", name, err)
	}
	return dir
}

var (
	mu    sync.Mutex
	found = map[string]string{}
)

func find(name string) (string, error) {
	mu.Lock()
	defer mu.Unlock()
	if d, ok := found[name]; ok {
		return d, nil
	}
	var d string
	var err error
	switch name {
	case "go":
		d, err = goSrc()
	case "python":
		d, err = python()
	case "rxjs", "zod", "ajv":
		d, err = npmPackage(name)
	case "java":
		d, err = jdk()
	case "rust":
		d, err = inPlace(rustStd, "collections/hash/map.rs", "rust-src")
	case "linux":
		d, err = linux()
	case "ruby":
		d, err = inPlace(rubyStdlib, "net/http.rb", "ruby3.1")
	default:
		err = fmt.Errorf("unknown corpus (the corpora are %s)", strings.Join(Names, ", "))
	}
	if err == nil {
		found[name] = d
	}
	return d, err
}

func goSrc() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	d := filepath.Join(strings.TrimSpace(string(out)), "src")
	if _, err := os.Stat(filepath.Join(d, "net", "http", "server.go")); err != nil {
		return "", fmt.Errorf("no Go source tree at %s", d)
	}
	return d, nil
}

// pythonLibs are where a CPython 3.11 standard library may be, the one the
// context set's line numbers were written for (3.11.7) first.
var pythonLibs = []string{"/root/.pyenv/versions/3.11.7/lib/python3.11", "/usr/lib/python3.11"}

func python() (string, error) {
	var lib string
	for _, d := range pythonLibs {
		if _, err := os.Stat(filepath.Join(d, "asyncio", "tasks.py")); err == nil {
			lib = d
			break
		}
	}
	if lib == "" {
		return "", fmt.Errorf("no CPython 3.11 standard library in %s (apt-get install libpython3.11-stdlib)", strings.Join(pythonLibs, ", "))
	}
	// The copy is kept in the user's cache directory, not at a fixed path
	// under /tmp that another user or run could own.
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the cache directory for the python corpus: %w", err)
	}
	parent := filepath.Join(cache, "cairn-corpora")
	dst := filepath.Join(parent, "python-"+strings.ReplaceAll(strings.Trim(lib, "/"), "/", "_"))
	if _, err := os.Stat(filepath.Join(dst, ".complete")); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", parent, err)
	}
	// Test binaries of several packages run at once: each copies into a
	// directory of its own and renames it into place, so dst is only ever
	// seen complete.
	tmp, err := os.MkdirTemp(parent, ".python-*")
	if err != nil {
		return "", fmt.Errorf("copying the python corpus: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, pkg := range []string{"email", "asyncio"} {
		if err := copyPy(filepath.Join(lib, pkg), filepath.Join(tmp, pkg)); err != nil {
			return "", fmt.Errorf("copying %s: %w", pkg, err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dst); err != nil {
		if _, statErr := os.Stat(filepath.Join(dst, ".complete")); statErr == nil {
			return dst, nil // another test binary put its copy in place first
		}
		return "", fmt.Errorf("putting the python corpus in place: %w", err)
	}
	return dst, nil
}

func copyPy(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !strings.HasSuffix(p, ".py") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}

// npmPackage finds test/corpora/node_modules/<name> above the working
// directory (the tests run in their package's directory).
func npmPackage(name string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, "test", "corpora", "node_modules", name)
			if _, err := os.Stat(filepath.Join(p, "package.json")); err != nil {
				return "", fmt.Errorf("%s is not installed (cd test/corpora && npm ci)", p)
			}
			return p, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}
