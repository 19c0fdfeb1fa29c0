package evals

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoServerName is the value of `evalServer` that names the echo MCP
// server in a case's mcpServers settings.
const EchoServerName = "echo"

// MCPCommand is how to start an MCP server process.
type MCPCommand struct {
	Command string
	Args    []string
	Env     map[string]string
}

// ServeEchoMCP serves a small MCP server on stdin/stdout for eval cases:
// the tool echo {text} answers "echo: <text>", and fail always fails.
// `cairn eval mcp-echo` runs it.
func ServeEchoMCP(ctx context.Context) error {
	s := sdk.NewServer(&sdk.Implementation{Name: "cairn-eval-echo", Version: "1.0.0"}, nil)
	text := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes the text back.", InputSchema: text},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, fmt.Errorf("bad arguments: %w", err)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "fail", Description: "Always fails.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "this tool always fails"}}}, nil
		})
	return s.Run(ctx, &sdk.StdioTransport{})
}

// deepCopySettings copies settings (JSON-like values from YAML) and
// replaces mcpServers entries `{evalServer: echo, ...}` with the command
// that starts the echo server.
func deepCopySettings(in map[string]any, echo *MCPCommand) (map[string]any, error) {
	out := map[string]any{}
	if len(in) == 0 {
		return out, nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	servers, _ := out["mcpServers"].(map[string]any)
	for name, v := range servers {
		entry, ok := v.(map[string]any)
		if !ok {
			continue
		}
		which, ok := entry["evalServer"]
		if !ok {
			continue
		}
		if which != EchoServerName {
			return nil, fmt.Errorf("mcpServers.%s: evalServer %v: the harness has only %q", name, which, EchoServerName)
		}
		if echo == nil {
			return nil, fmt.Errorf("mcpServers.%s: the echo MCP server needs Options.EchoMCP (`cairn eval` sets it)", name)
		}
		delete(entry, "evalServer")
		entry["command"] = echo.Command
		args := []any{}
		for _, a := range echo.Args {
			args = append(args, a)
		}
		entry["args"] = args
		env := map[string]any{}
		for k, v := range echo.Env {
			env[k] = v
		}
		entry["env"] = env
	}
	return out, nil
}
