package corpora

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
)

// TestPythonCopyInCache: the python corpus is copied into the user's cache
// directory (never a fixed path under /tmp), and copies made at once by
// several test binaries each end complete in the same place.
func TestPythonCopyInCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	const n = 4
	dirs := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = python()
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			testenv.Need(t, "%v", errs[i])
		}
		if dirs[i] != dirs[0] || !strings.HasPrefix(dirs[i], cache+string(filepath.Separator)) {
			t.Fatalf("copies at %v, want one place under %s", dirs, cache)
		}
	}
	if _, err := os.Stat(filepath.Join(dirs[0], "asyncio", "tasks.py")); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(cache, "cairn-corpora", ".python-*"))
	if len(left) != 0 {
		t.Errorf("temporary copies left behind: %v", left)
	}
}

// TestAptCorpora: each corpus from Debian's packages is found (or extracted
// once into the cache) and holds the files its sets are about.
func TestAptCorpora(t *testing.T) {
	for name, probe := range map[string]string{
		"java":  "java.base/java/util/HashMap.java",
		"rust":  "collections/hash/map.rs",
		"linux": "kernel/sched/core.c",
		"ruby":  "net/http.rb",
	} {
		dir, err := find(name)
		if err != nil {
			testenv.Need(t, "corpus %s: %v", name, err)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, probe)); err != nil {
			t.Errorf("corpus %s at %s: %v", name, dir, err)
		}
	}
}
