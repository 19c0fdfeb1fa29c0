package trace_test

import (
	"context"
	"fmt"
	"os"

	"github.com/cairn-dev/cairn/trace"
)

// The calls the agent loop makes for a run of two steps.
func Example() {
	stateDir, _ := os.MkdirTemp("", "cairn-state")
	defer os.RemoveAll(stateDir)
	rec, err := trace.NewRecorder(trace.Options{StateDir: stateDir, OTLPEndpoint: "none"})
	if err != nil {
		panic(err)
	}
	defer rec.Close(context.Background())

	run := rec.StartRun(trace.RunInfo{ID: "run-1", Question: "Why trim?", Provider: "openai", Model: "gpt-4o-mini"})
	step := run.StartStep(1)
	mc := step.StartModelCall(trace.ModelRequest{Provider: "openai", Model: "gpt-4o-mini", MaxTokens: 4096})
	mc.FirstToken() // in the streaming callback
	mc.End(trace.ModelResult{ResponseID: "chatcmpl-1", FinishReason: "tool_calls", InputTokens: 900, OutputTokens: 40,
		ToolCalls: []trace.RecordedToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}}}, nil)
	tc := step.StartToolCall(trace.ToolRequest{CallID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`})
	tc.SetApproval("read", "allow", "")
	tc.End(trace.ToolResult{OK: true, Summary: "read a.go:1-40", OutputBytes: 1200}, nil)
	step.End(nil)

	step = run.StartStep(2)
	step.StartModelCall(trace.ModelRequest{Provider: "openai", Model: "gpt-4o-mini"}).
		End(trace.ModelResult{Text: "It strips the newline.", FinishReason: "stop", InputTokens: 1300, OutputTokens: 25}, nil)
	run.End(trace.RunResult{Status: "finished"}) // also ends step 2

	u := run.Usage()
	fmt.Printf("%d in, %d out, $%.6f\n", u.InputTokens, u.OutputTokens, u.CostUSD)

	t, _ := rec.Store().Load("run-1")
	resps, _ := t.Responses()
	fmt.Println(len(resps), resps[0].ToolCalls[0].Name, resps[1].Text)
	// Output:
	// 2200 in, 65 out, $0.000369
	// 2 read_file It strips the newline.
}
