package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

const getDiagnosticsDescription = `Get the diagnostics (errors, warnings) the editor's language servers currently report, for one file or for the whole workspace. Lines are 1-based.`

// GetDiagnostics is the get_diagnostics tool.
func GetDiagnostics() *Tool {
	return &Tool{
		Name:        "get_diagnostics",
		Description: getDiagnosticsDescription,
		Schema: json.RawMessage(`{"type":"object","properties":{
			"path":{"type":"string","description":"workspace-relative file; omit for all files"}},
			"additionalProperties":false}`),
		Risk:       RiskRead,
		Idempotent: true,
		Run:        runGetDiagnostics,
	}
}

func runGetDiagnostics(ctx context.Context, env *Env, input json.RawMessage) (Result, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return errorResult("invalid input: %v", err), nil
	}
	abs := ""
	if in.Path != "" {
		var err error
		if abs, err = env.WS.Resolve(in.Path); err != nil {
			return errorResult("cannot get diagnostics for %q: %v", in.Path, err), nil
		}
	}
	if env.Diagnostics == nil {
		return Result{Content: "the editor has not sent any diagnostics", Summary: "no diagnostics"}, nil
	}
	diags := env.Diagnostics.Diagnostics(abs)
	if len(diags) == 0 {
		where := "the workspace"
		if in.Path != "" {
			where = in.Path
		}
		return Result{Content: "no diagnostics for " + where, Summary: "no diagnostics"}, nil
	}
	var b strings.Builder
	for _, d := range diags {
		src := ""
		if d.Source != "" {
			src = " [" + d.Source + "]"
		}
		code := ""
		if d.Code != "" {
			code = " (" + d.Code + ")"
		}
		fmt.Fprintf(&b, "%s:%d: %s%s%s: %s\n", d.Path, d.Line(), d.Severity, src, code, d.Message)
	}
	return Result{Content: b.String(), Summary: fmt.Sprintf("%d diagnostics", len(diags))}, nil
}
