package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cairn-dev/cairn/codeindex"
	"github.com/cairn-dev/cairn/repomap"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/workspace"
)

func init() {
	register(command{"map", "the ranked repo map, fitted to --tokens", runMap})
	register(command{"search", "code search: one hit per line, path:line: text", runSearch})
}

// openIndex opens the workspace's indexes in its state directory (shared
// with the server: warm starts load the caches).
func openIndex(root string, opts codeindex.Options) (*workspace.Workspace, *codeindex.Local, error) {
	ws, err := workspace.Open(root)
	if err != nil {
		return nil, nil, err
	}
	state, err := server.StateDir(ws.Root(), os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	ws.SetStateDir(state)
	opts.StateDir, opts.NoWatch = state, true
	ix, err := codeindex.Open(ws, opts)
	if ix == nil {
		return nil, nil, err
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cairn: %v\n", err)
	}
	return ws, ix, nil
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func runMap(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, root := newFlags("map", "cairn map [--root DIR] [--tokens N] [--focus FILE]...")
	tokens := fs.Int("tokens", 1024, "token budget of the map")
	var focus multiFlag
	fs.Var(&focus, "focus", "a file to rank the map toward (repeatable)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *tokens <= 0 {
		return usagef("--tokens must be positive")
	}
	ws, ix, err := openIndex(*root, codeindex.Options{NoSearch: true})
	if err != nil {
		return err
	}
	defer ix.Close()
	if err := ix.Reconcile(ctx); err != nil {
		return fmt.Errorf("building the repo map: %w", err)
	}
	var rels []string
	for _, f := range focus {
		rel, err := focusFile(ws, ix, f)
		if err != nil {
			return fmt.Errorf("--focus %s: %w", f, err)
		}
		rels = append(rels, rel)
	}
	out, rs := ix.RenderMap(codeindex.Focus{Files: rels}, *tokens)
	fmt.Fprint(stdout, out)
	st := ix.Stats()
	fmt.Fprintf(stderr, "cairn map: %d files, %d definitions shown in %d tokens of %d\n",
		st.MapFiles, rs.Defs, rs.Tokens, rs.Budget)
	return nil
}

// focusFile resolves a --focus file, which must be in the repo map: a
// focus the map cannot use would change nothing, silently.
func focusFile(ws *workspace.Workspace, ix *codeindex.Local, f string) (string, error) {
	abs, err := ws.Resolve(f)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("no such file in %s", ws.Root())
	}
	rel := ws.Rel(abs)
	if _, ok := ix.FileSymbols(rel); !ok {
		if st.Size() > repomap.DefaultMaxFileSize {
			return "", fmt.Errorf("the file is %s, over the %s the repo map indexes", byteSize(st.Size()), byteSize(repomap.DefaultMaxFileSize))
		}
		return "", fmt.Errorf("not in the repo map (ignored, generated, binary, or in a language Cairn has no grammar for)")
	}
	return rel, nil
}

// byteSize formats n for a message: 512 B, 1.0 MiB, 48.2 MiB.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

const searchSynopsis = "cairn search [--root DIR] [--limit N] [--files] [--json] [--zoekt URL] QUERY"

func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, root := newFlags("search", searchSynopsis)
	limit := fs.Int("limit", 20, "maximum hits (at least 1); each hit is followed by the same line in files with identical content")
	asJSON := fs.Bool("json", false, "print one JSON document")
	byFile := fs.Bool("files", false, "one hit per file (its best chunk); --limit counts files")
	zoekt := fs.String("zoekt", os.Getenv("CAIRN_ZOEKT"), "search the zoekt-webserver -rpc at this URL instead of the local index (default $CAIRN_ZOEKT)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	query := strings.Join(fs.Args(), " ")
	if strings.TrimSpace(query) == "" {
		return usageLine(searchSynopsis)
	}
	if *limit < 1 {
		return usagef("--limit %d: give at least 1 (the default is 20)", *limit)
	}
	var ix codeindex.Searcher
	if *zoekt != "" {
		// A remote backend: nothing local is opened, and a Zoekt that does
		// not answer is the command's error (no fallback on the command line).
		ix = codeindex.Zoekt{URL: *zoekt}
	} else {
		// The search index alone: the repo map is neither read nor built.
		_, local, err := openIndex(*root, codeindex.Options{NoMap: true})
		if err != nil {
			return err
		}
		defer local.Close()
		// Bring the index up to date (stat only; only changed files are read).
		if err := local.Reconcile(ctx); err != nil {
			return fmt.Errorf("updating the code index: %w", err)
		}
		ix = local
	}
	n := *limit
	if *byFile {
		// At most 3 hits come from one file, so 3×limit hits hold limit
		// files when there are that many.
		n = min(3**limit, codeindex.MaxLimit)
	}
	q, err := codeindex.ParseQuery(query)
	if err != nil {
		return err
	}
	res, err := ix.Search(ctx, q, n)
	if err != nil {
		return err
	}
	if *byFile {
		res.Hits = codeindex.BestPerFile(res.Hits, *limit)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "note: %s\n", w)
	}
	for _, h := range res.Hits {
		fmt.Fprintln(stdout, h.String())
		for _, c := range h.Copies { // the same line in each identical file, as grep would list it
			copyHit := h
			copyHit.Path = c
			fmt.Fprintln(stdout, copyHit.String())
		}
	}
	return nil
}
