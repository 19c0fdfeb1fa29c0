package workspace

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-dev/cairn/internal/testenv"
)

// BenchmarkWalk lists a real tree as a warm start does (every file
// stat'ed): $CAIRN_BENCH_CORPUS, or the Go tree's source.
func BenchmarkWalk(b *testing.B) {
	root := os.Getenv("CAIRN_BENCH_CORPUS")
	if root == "" {
		root = filepath.Join(testenv.GOROOT(b), "src")
	}
	w, err := Open(root)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		files, _ := w.Walk(WalkOptions{MaxFileSize: 1 << 20})
		b.ReportMetric(float64(len(files)), "files")
	}
}
