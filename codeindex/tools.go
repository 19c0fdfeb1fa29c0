package codeindex

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/repomap"
)

// SearchText serves the search_code tool: hits as `path:line: text`, with
// the enclosing symbol, and a note when the index is still being built.
func (ix *Index) SearchText(ctx context.Context, query string, limit int) (string, error) {
	if ix.Search == nil {
		return "", fmt.Errorf("the search index is not available")
	}
	res, err := ix.Search.Search(ctx, query, limit)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, w := range res.Warnings {
		fmt.Fprintf(&b, "note: %s\n", w)
	}
	if res.Partial {
		b.WriteString("note: the index is still being built; results may be incomplete\n")
	}
	if len(res.Hits) == 0 {
		b.WriteString("no matches\n")
	}
	for _, h := range res.Hits {
		sym := ""
		if h.Symbol != "" {
			sym = fmt.Sprintf("  [%s %s, lines %d-%d]", h.Kind, h.Symbol, h.StartLine, h.EndLine)
		}
		fmt.Fprintf(&b, "%s%s\n", h.String(), sym)
	}
	return b.String(), nil
}

// RenderMap serves the repo_map tool.
func (ix *Index) RenderMap(ctx context.Context, focus []string, tokens int) (string, error) {
	if tokens <= 0 {
		tokens = 2048
	}
	out, stats := ix.Map.Render(repomap.Focus{Files: focus}, tokens)
	if !ix.Ready() {
		out = "note: the repo map is still being built; this shows what is parsed so far\n" + out
	}
	if stats.Defs == 0 {
		return "the repo map is empty (no supported source files found yet)", nil
	}
	return out, nil
}
