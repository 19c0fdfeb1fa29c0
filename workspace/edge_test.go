package workspace

import (
	"path/filepath"
	"testing"
)

// URIs are written and read the way VS Code does, in one place.
func TestFileURIRoundTrip(t *testing.T) {
	for _, p := range []string{"/tmp/a b/c#d.go", "/tmp/ü/x?.go", "/tmp/a:b/c%20.go", "/x/y.go"} {
		u := FileURI(p)
		back, err := URIPath(u)
		if err != nil || back != filepath.Clean(p) {
			t.Errorf("%q → %q → %q, %v", p, u, back, err)
		}
	}
	if u := FileURI("/tmp/a b/c#d.go"); u != "file:///tmp/a%20b/c%23d.go" {
		t.Errorf("FileURI = %q", u)
	}
	path, frag, err := URIPathFragment("file:///w/a%20b.go#L10-20")
	if err != nil || path != "/w/a b.go" || frag != "L10-20" {
		t.Errorf("URIPathFragment = %q %q %v", path, frag, err)
	}
	for _, bad := range []string{"", "untitled:Untitled-1", "/abs/path", "not a uri", "https://example.com/a.go"} {
		if p, err := URIPath(bad); err == nil {
			t.Errorf("URIPath(%q) = %q, want an error", bad, p)
		}
	}
}
