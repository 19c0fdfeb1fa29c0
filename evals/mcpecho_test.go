package evals

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestEchoMCPServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.Command(echoMCP.Command)
	cmd.Env = append(os.Environ(), "CAIRN_EVALS_TEST_MCP=1")
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "ping"}})
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].(*sdk.TextContent).Text != "echo: ping" {
		t.Fatalf("echo: %+v %v", res, err)
	}
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "fail", Arguments: map[string]any{}}); err != nil || !res.IsError {
		t.Fatalf("fail: %+v %v", res, err)
	}
}

func TestSettingsEvalServer(t *testing.T) {
	in := map[string]any{"mcpServers": map[string]any{"e": map[string]any{"evalServer": "echo", "trust": "trusted"}}}
	out, err := deepCopySettings(in, &MCPCommand{Command: "/bin/x", Args: []string{"a"}, Env: map[string]string{"K": "V"}})
	if err != nil {
		t.Fatal(err)
	}
	e := out["mcpServers"].(map[string]any)["e"].(map[string]any)
	if e["command"] != "/bin/x" || e["trust"] != "trusted" || e["evalServer"] != nil || e["env"].(map[string]any)["K"] != "V" {
		t.Errorf("%+v", e)
	}
	if _, ok := in["mcpServers"].(map[string]any)["e"].(map[string]any)["evalServer"]; !ok {
		t.Error("the case's own settings were modified")
	}
	if _, err := deepCopySettings(in, nil); err == nil || !strings.Contains(err.Error(), "EchoMCP") {
		t.Errorf("without a command: %v", err)
	}
}
