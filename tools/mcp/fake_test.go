package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary doubles as the misbehaving MCP servers: started with
// CAIRN_MCP_FAKE=<mode> it becomes that server instead of running tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("CAIRN_MCP_FAKE"); mode != "" {
		runFake(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeServer returns the config of a fake server in mode.
func fakeServer(name, mode string, extraEnv ...string) ServerConfig {
	env := map[string]string{"CAIRN_MCP_FAKE": mode}
	for i := 0; i+1 < len(extraEnv); i += 2 {
		env[extraEnv[i]] = extraEnv[i+1]
	}
	return ServerConfig{Name: name, Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: env}
}

func runFake(mode string) {
	switch mode {
	case "garbage":
		// Banner text on stdout, as a misconfigured server prints it.
		fmt.Println("Welcome to my server! Listening on stdio...")
		_, _ = io.Copy(io.Discard, os.Stdin)
	case "garbage-later":
		// A well-behaved handshake, then noise on stdout.
		s := dynamicServer()
		go func() {
			// A deliberate pause (a peer that misbehaves later), not a wait for an event.
			time.Sleep(envDuration("CAIRN_MCP_FAKE_DELAY", time.Second))
			fmt.Println("oops {not json")
		}()
		_ = s.Run(context.Background(), &sdk.StdioTransport{})
	case "die":
		// Fails at once, as `npx -y` does for a package that does not exist.
		fmt.Fprintln(os.Stderr, "npm error 404 Not Found - GET https://registry.npmjs.org/@nope%2fserver")
		os.Exit(1)
	case "hang":
		// Reads everything, answers nothing, ignores SIGTERM.
		signal.Ignore(syscall.SIGTERM)
		go func() { _, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin)) }()
		time.Sleep(time.Hour) // a peer that never answers, by design
	case "exit":
		// Serves, then exits with status 3 after a delay.
		s := dynamicServer()
		go func() {
			// A deliberate pause (a server that dies while in use), not a wait for an event.
			time.Sleep(envDuration("CAIRN_MCP_FAKE_DELAY", time.Second))
			fmt.Fprintln(os.Stderr, "fake: giving up")
			os.Exit(3)
		}()
		_ = s.Run(context.Background(), &sdk.StdioTransport{})
	case "hang-list":
		// Completes the handshake, then never answers tools/list.
		s := dynamicServer()
		s.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
			return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
				if method == "tools/list" {
					time.Sleep(time.Hour) // a peer that never answers, by design
				}
				return next(ctx, method, req)
			}
		})
		_ = s.Run(context.Background(), &sdk.StdioTransport{})
	case "dynamic":
		_ = dynamicServer().Run(context.Background(), &sdk.StdioTransport{})
	default:
		fmt.Fprintln(os.Stderr, "unknown fake mode", mode)
		os.Exit(2)
	}
}

func envDuration(name string, def time.Duration) time.Duration {
	if ms, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return time.Duration(ms) * time.Millisecond
	}
	return def
}

func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// dynamicServer is a real MCP server (the Go SDK's) with tools that
// exercise the bridge: results of every content type, a tool list that
// changes, a tool that never returns, one that crashes the server, a
// schema that does not compile, and annotations.
func dynamicServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1.0.0"}, nil)
	obj := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)
	empty := json.RawMessage(`{"type":"object"}`)
	echo := func(prefix string) sdk.ToolHandler {
		return func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return textResult(prefix + in.Text), nil
		}
	}
	s.AddTool(&sdk.Tool{Name: "echo", Description: "Echoes text.", InputSchema: obj}, echo("echo: "))
	s.AddTool(&sdk.Tool{Name: "swap", Description: "Replaces echo by echo2.", InputSchema: empty},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			s.RemoveTools("echo")
			s.AddTool(&sdk.Tool{Name: "echo2", Description: "Echoes text, again.", InputSchema: obj}, echo("echo2: "))
			return textResult("swapped"), nil
		})
	s.AddTool(&sdk.Tool{Name: "media", Description: "Returns every kind of content.", InputSchema: empty},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "here you go"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG....")},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "embedded text"}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///blob.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
				&sdk.ResourceLink{URI: "file:///linked.md", Name: "linked.md"},
			}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "fail", Description: "Always fails.", InputSchema: empty},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "no such thing"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "sleep", Description: "Never returns.", InputSchema: empty},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	s.AddTool(&sdk.Tool{Name: "crash", Description: "Kills the server.", InputSchema: empty},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "fake: crashing on purpose")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "badschema", Description: "Its schema has a dangling $ref.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"#/$defs/missing"}}}`)},
		echo("bad: "))
	s.AddTool(&sdk.Tool{Name: "reader", Description: "Claims to be read-only.", InputSchema: empty,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, echo("read"))
	yes := true
	s.AddTool(&sdk.Tool{Name: "wiper", Description: "Claims to be destructive.", InputSchema: empty,
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes}}, echo("wiped"))
	s.AddTool(&sdk.Tool{Name: "weird.name/with spaces", Description: "", Title: "Weird", InputSchema: empty}, echo("weird"))
	return s
}
