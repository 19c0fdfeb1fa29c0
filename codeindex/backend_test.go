package codeindex

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A Local index with a remote backend searches there, keeps its map, and
// when the backend does not answer, searches its own index with a warning
// and says so once per outage; a query the backend refuses is an error.
func TestLocalSearchesTheRemoteAndFallsBack(t *testing.T) {
	_, ix, _ := newIndex(t, true)
	var mu sync.Mutex
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		code := status
		mu.Unlock()
		switch code {
		case http.StatusOK:
			w.Write([]byte(`{"Result":{"MatchCount":1,"Files":[{"FileName":"remote/only.go","LineMatches":[{"Line":"cmVtb3Rl","LineNumber":7}]}]}}`))
		default:
			w.WriteHeader(code)
			w.Write([]byte(`{"Error":"shard unavailable"}`))
		}
	}))
	defer srv.Close()
	var states []string
	ix.SetRemote(&RemoteSearch{Searcher: Zoekt{URL: srv.URL}, Name: "Zoekt at test", OnState: func(err error) {
		if err != nil {
			states = append(states, "down: "+err.Error())
		} else {
			states = append(states, "up")
		}
	}})
	if b, _ := ix.SearchBackend(); b != "Zoekt at test" || ix.Stats().SearchBackend != "Zoekt at test" {
		t.Errorf("backend = %q, stats %q", b, ix.Stats().SearchBackend)
	}
	ctx := context.Background()
	out, err := SearchText(ctx, ix, "Gross", 5)
	if err != nil || !strings.Contains(out, "remote/only.go:7: remote") || strings.Contains(out, "pkg/tax.go") {
		t.Fatalf("remote search: %q %v", out, err)
	}
	if len(ix.Definitions([]string{"Gross"})) != 1 {
		t.Error("the map is not the local one")
	}
	// A server error: the local index answers, with a warning.
	mu.Lock()
	status = http.StatusInternalServerError
	mu.Unlock()
	for range 2 {
		out, err = SearchText(ctx, ix, "Gross", 5)
		if err != nil || !strings.Contains(out, "pkg/tax.go:") || !strings.Contains(out, "note: Zoekt at test did not answer") || !strings.Contains(out, "shard unavailable") {
			t.Fatalf("fallback: %q %v", out, err)
		}
	}
	if _, down := ix.SearchBackend(); down == nil || !errors.Is(down, ErrUnavailable) {
		t.Errorf("the outage is not in the status: %v", down)
	}
	// A refused query is the query's error, not an outage.
	mu.Lock()
	status = http.StatusBadRequest
	mu.Unlock()
	if _, err := SearchText(ctx, ix, "Gross", 5); err == nil || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("refused query: %v", err)
	}
	mu.Lock()
	status = http.StatusOK
	mu.Unlock()
	if out, err := SearchText(ctx, ix, "Gross", 5); err != nil || !strings.Contains(out, "remote/only.go") {
		t.Errorf("after recovery: %q %v", out, err)
	}
	// An unreachable address is an outage too.
	srv.Close()
	if out, err := SearchText(ctx, ix, "Gross", 5); err != nil || !strings.Contains(out, "pkg/tax.go:") || !strings.Contains(out, "did not answer") {
		t.Errorf("unreachable: %q %v", out, err)
	}
	if len(states) != 3 || !strings.HasPrefix(states[0], "down: ") || states[1] != "up" || !strings.HasPrefix(states[2], "down: ") {
		t.Errorf("state changes: %q", states)
	}
	// Back to local.
	ix.SetRemote(nil)
	if b, _ := ix.SearchBackend(); b != "local" {
		t.Errorf("backend after SetRemote(nil) = %q", b)
	}
}
