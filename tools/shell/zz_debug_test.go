package shell

import (
	"bufio"
	"fmt"
	"os"
	"testing"
)

func TestDebugREPL(t *testing.T) {
	f, err := os.Open(os.Getenv("DBG"))
	if err != nil {
		t.Skip()
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := Classify(sc.Text(), testOpts())
		fmt.Printf("%-11s %-50s | %s  %v\n", c.Risk, sc.Text(), c.Reason(), c.Packages)
	}
}
