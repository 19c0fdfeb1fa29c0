package contextengine

import (
	"os"
	"testing"
)

// TestMain removes the quality corpora's shared work directory (built once
// for the package), which no single test's cleanup can.
func TestMain(m *testing.M) {
	code := m.Run()
	corpusMu.Lock()
	for _, c := range corpusCache {
		if c.ix != nil {
			c.ix.Close()
		}
	}
	if c, ok := corpusCache["<workdir>"]; ok && os.Getenv("CAIRN_QUALITY_WORKDIR") == "" {
		os.RemoveAll(c.ws.Root())
	}
	corpusMu.Unlock()
	os.Exit(code)
}
