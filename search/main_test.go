package search

import (
	"os"
	"testing"
)

// TestMain removes what tests share across the package (the ranking index,
// built once), which no single test's cleanup can.
func TestMain(m *testing.M) {
	code := m.Run()
	sharedRanking.Lock()
	if sharedRanking.ix != nil {
		sharedRanking.ix.Close()
	}
	if sharedRanking.root != "" {
		os.RemoveAll(sharedRanking.root)
	}
	sharedRanking.Unlock()
	os.Exit(code)
}
