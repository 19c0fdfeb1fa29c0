package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/codeindex"
)

const searchCodeDescription = `Search the workspace's code. The query takes plain words and identifiers (camelCase and snake_case are split, so "parse request" finds parseHTTPRequest), "quoted phrases", and filters: path:dir/or*glob, lang:go, sym:Name. Each hit is path:line: the best matching line, with the enclosing declaration and its line range; read_file shows more.`

// SearchCode is the search_code tool.
func SearchCode() *Tool {
	return &Tool{
		Name:        "search_code",
		Description: searchCodeDescription,
		Schema: json.RawMessage(`{"type":"object","properties":{
			"query":{"type":"string","minLength":1},
			"limit":{"type":"integer","minimum":1,"maximum":100}},
			"required":["query"],"additionalProperties":false}`),
		Risk:           RiskRead,
		Idempotent:     true,
		MaxOutputBytes: 24 << 10,
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
			var in struct {
				Query string `json:"query"`
				Limit int    `json:"limit"`
			}
			if err := json.Unmarshal(input, &in); err != nil {
				return errorResult("invalid input: %v", err), nil
			}
			if env.Index == nil {
				return errorResult("%v", codeindex.ErrNoSearch), nil
			}
			if in.Limit == 0 {
				in.Limit = 20
			}
			out, err := codeindex.SearchText(ctx, env.Index, in.Query, in.Limit)
			if errors.Is(err, codeindex.ErrNoSearch) {
				return errorResult("%v", err), nil
			}
			if err != nil {
				if ctx.Err() != nil {
					return Result{}, ctx.Err()
				}
				return errorResult("search failed: %v", err), nil
			}
			n := strings.Count(out, "\n")
			if strings.Contains(out, "no matches") {
				n = 0
			}
			return Result{Content: out, Summary: fmt.Sprintf("%d hits for %q", n, in.Query)}, nil
		},
	}
}
