package shell

import (
	"testing"
	"time"
)

func FuzzZZHang(f *testing.F) {
	for _, s := range []string{"ls", "rm -rf /", "sh -c 'sh -c \"rm x\"'", "a=$(b) c | d > e", "find . -exec {} \\;", "xargs -I", "git -c", "env -S"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		done := make(chan struct{})
		go func() { Classify(s, testOpts()); close(done) }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			t.Fatalf("hang on %q", s)
		}
	})
}
