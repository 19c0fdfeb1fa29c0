package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cairn-dev/cairn/codeindex"
)

const repoMapDescription = `Show the repository map: the most relevant definitions (types, functions, methods, classes) of the workspace, grouped by file with line numbers and signatures, ranked by how the code references itself. Without focus it is an overview of the public API: a class's methods are listed by name on shared lines ("120: get(…), 131: put(…)"; read_file shows a line in full). Give focus paths to rank the map toward those files and see whole signatures.`

// repoMapTokens is the map's size when the model asks for it.
const repoMapTokens = 2048

// RepoMap is the repo_map tool.
func RepoMap() *Tool {
	return &Tool{
		Name:        "repo_map",
		Description: repoMapDescription,
		Schema: json.RawMessage(`{"type":"object","properties":{
			"focus":{"type":"array","items":{"type":"string"},"maxItems":50}},
			"additionalProperties":false}`),
		Risk:           RiskRead,
		Idempotent:     true,
		MaxOutputBytes: 32 << 10,
		Run: func(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
			var in struct {
				Focus []string `json:"focus"`
			}
			if err := json.Unmarshal(input, &in); err != nil {
				return errorResult("invalid input: %v", err), nil
			}
			if env.Index == nil {
				return errorResult("the repo map is not available in this session"), nil
			}
			var focus []string
			for _, f := range in.Focus {
				abs, err := env.WS.Resolve(f)
				if err != nil {
					return errorResult("focus %q: %v", f, err), nil
				}
				focus = append(focus, env.WS.Rel(abs))
			}
			out := codeindex.MapText(env.Index, focus, repoMapTokens)
			return Result{Content: out, Summary: fmt.Sprintf("repo map (%d focus files)", len(focus))}, nil
		},
	}
}
