package codeindex

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// A Local index can send its searches to a remote backend (SetRemote:
// the search.zoekt setting) while the repo map, definitions and
// readiness stay its own. When the backend does not answer
// (ErrUnavailable), the search is answered from the local search index,
// with a warning in the result saying so; a query the backend refuses is
// an error, as it would be locally. Without a local search index the
// backend's failure is the search's error.

// RemoteSearch is a remote search backend as a Local index uses it.
type RemoteSearch struct {
	Searcher Searcher
	// Name says which backend serves searches, in status lines and
	// warnings ("Zoekt at http://zoekt:6070").
	Name string
	// OnState, when set, hears each change between answering and not
	// answering: err is the failure that started an outage, nil when the
	// backend answers again. It runs on the searching goroutine.
	OnState func(err error)
}

// remote is a Local index's remote backend and its health.
type remote struct {
	RemoteSearch
	mu   sync.Mutex
	down error // the failure of the outage in progress, nil while it answers
}

// SetRemote sends this index's searches to r from now on; nil sends them
// back to the local search index.
func (ix *Local) SetRemote(r *RemoteSearch) {
	if r == nil {
		ix.remote.Store(nil)
		return
	}
	ix.remote.Store(&remote{RemoteSearch: *r})
}

// SearchBackend names the backend that serves searches ("local" or the
// remote's Name) and, while the remote does not answer, why.
func (ix *Local) SearchBackend() (string, error) {
	r := ix.remote.Load()
	if r == nil {
		return "local", nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Name, r.down
}

// searchRemote runs a search on r, falling back to the local search index
// when r does not answer.
func (ix *Local) searchRemote(ctx context.Context, r *remote, q Query, limit int) (*SearchResult, error) {
	res, err := r.Searcher.Search(ctx, q, limit)
	if err == nil || !errors.Is(err, ErrUnavailable) {
		if err == nil {
			r.setDown(nil)
		}
		return res, err
	}
	r.setDown(err)
	if ix.s == nil {
		return nil, fmt.Errorf("searching %s (no local search index to fall back on): %w", r.Name, err)
	}
	res, lerr := ix.searchLocal(ctx, q, limit)
	if lerr != nil {
		return nil, errors.Join(fmt.Errorf("searching %s: %w", r.Name, err), lerr)
	}
	res.Warnings = append([]string{fmt.Sprintf("%s did not answer (%v); these results come from the local index of this checkout", r.Name, err)}, res.Warnings...)
	return res, nil
}

// setDown records the backend's health and tells OnState of a change.
func (r *remote) setDown(err error) {
	r.mu.Lock()
	changed := (r.down == nil) != (err == nil)
	r.down = err
	r.mu.Unlock()
	if changed && r.OnState != nil {
		r.OnState(err)
	}
}
