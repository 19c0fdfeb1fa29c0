package server

import (
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	lsp "go.lsp.dev/protocol"

	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/workspace"
)

// applyScope sets the workspace's index scope (index.include,
// index.exclude) and reports whether it changed; a pattern that is not a
// workspace-relative glob leaves the scope in effect and is a warning.
func (s *Server) applyScope(st Settings) (bool, []string) {
	changed, err := s.ws.SetScope(workspace.Scope{Include: st.Index.Include, Exclude: st.Index.Exclude})
	if err != nil {
		return false, []string{fmt.Sprintf("%v; the index scope in effect stays", err)}
	}
	return changed, nil
}

// applyIndexSettings follows index.include/index.exclude (a changed scope
// re-indexes: files now outside it leave the map and the search index,
// files now inside it enter them) and search.zoekt (code search goes to
// the Zoekt webserver; the map stays local).
func (s *Server) applyIndexSettings(st Settings) []string {
	s.mu.Lock()
	ix := s.index
	s.mu.Unlock()
	changed, warnings := s.applyScope(st)
	if ix == nil {
		if strings.TrimSpace(st.Search.Zoekt) != "" {
			warnings = append(warnings, "search.zoekt is set but the code index did not open; code search is off")
		}
		return warnings
	}
	if changed {
		sc := s.ws.Scope()
		s.logToClient(slog.LevelInfo, fmt.Sprintf("Cairn: index scope changed (include %q, exclude %q): re-indexing", sc.Include, sc.Exclude))
		// Every folder rescans under its part of the scope (the patterns
		// are over workspace paths, another folder's beginning with its
		// name); the user hears once, when the last one is done.
		locals := ix.Locals()
		var mu sync.Mutex
		left := len(locals)
		for _, l := range locals {
			l.ScopeChanged(func() {
				mu.Lock()
				left--
				last := left == 0
				mu.Unlock()
				if last {
					stats := ix.Stats()
					s.logToClient(slog.LevelInfo, fmt.Sprintf("Cairn: index scope applied: %d files in the repo map, %d in the search index", stats.MapFiles, stats.SearchFiles))
				}
			})
		}
	}
	// Zoekt serves the first folder's searches (its paths are relative to
	// that root); other folders are searched locally and merged.
	return append(warnings, s.applyZoekt(ix.Primary(), strings.TrimSpace(st.Search.Zoekt))...)
}

// zoektName is how status lines name a Zoekt backend.
func zoektName(u string) string { return "Zoekt at " + u }

// applyZoekt points the index's searches at the Zoekt webserver u ("":
// the local search index). A Zoekt that does not answer is reported when
// a search finds out, and searches fall back to the local index meanwhile.
func (s *Server) applyZoekt(ix *codeindex.Local, u string) []string {
	current, _ := ix.SearchBackend()
	if u == "" {
		if current != "local" {
			ix.SetRemote(nil)
			s.logToClient(slog.LevelInfo, "Cairn: code search is served by the local index")
		}
		return nil
	}
	if current == zoektName(u) {
		return nil
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return []string{fmt.Sprintf("search.zoekt %q is not an http(s) URL of a zoekt-webserver; code search stays with %s", u, current)}
	}
	name := zoektName(u)
	ix.SetRemote(&codeindex.RemoteSearch{Searcher: codeindex.Zoekt{URL: u}, Name: name, OnState: func(err error) {
		if err != nil {
			msg := fmt.Sprintf("Cairn: code search: %s does not answer (%v); searching this checkout's local index until it does", name, err)
			s.logToClient(slog.LevelWarn, msg)
			s.showMessage(lsp.MessageTypeWarning, msg)
			return
		}
		s.logToClient(slog.LevelInfo, fmt.Sprintf("Cairn: code search: %s answers again", name))
	}})
	s.logToClient(slog.LevelInfo, fmt.Sprintf("Cairn: code search is served by %s; the repo map, open files and recent edits stay local", name))
	return nil
}
