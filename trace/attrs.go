package trace

// Attribute keys. Where the OpenTelemetry GenAI semantic conventions
// (semconv v1.41, "gen_ai.*", status Development) name a concept, Cairn uses
// that name; everything else is under "cairn.".
const (
	// GenAI semantic conventions.
	AttrOperationName     = "gen_ai.operation.name"          // "invoke_agent", "chat", "execute_tool"
	AttrProviderName      = "gen_ai.provider.name"           // "openai", "anthropic", "scripted", ...
	AttrSystem            = "gen_ai.system"                  // the pre-1.37 name of gen_ai.provider.name; emitted too for older backends
	AttrRequestModel      = "gen_ai.request.model"           // model id sent
	AttrRequestMaxTokens  = "gen_ai.request.max_tokens"      // int
	AttrResponseModel     = "gen_ai.response.model"          // model id the provider answered with
	AttrResponseID        = "gen_ai.response.id"             // provider's response id
	AttrResponseFinish    = "gen_ai.response.finish_reasons" // []string
	AttrUsageInputTokens  = "gen_ai.usage.input_tokens"      // int
	AttrUsageOutputTokens = "gen_ai.usage.output_tokens"     // int
	// The parts of gen_ai.usage.input_tokens read from and written to the
	// provider's prompt cache (int; set when non-zero).
	AttrUsageCacheReadTokens  = "gen_ai.usage.cache_read.input_tokens"
	AttrUsageCacheWriteTokens = "gen_ai.usage.cache_creation.input_tokens"
	AttrToolName              = "gen_ai.tool.name"           // tool name as the model called it
	AttrToolCallID            = "gen_ai.tool.call.id"        // the model's call id
	AttrToolType              = "gen_ai.tool.type"           // "function" (built-in) or "extension" (MCP)
	AttrToolCallArguments     = "gen_ai.tool.call.arguments" // the raw arguments (local store only unless ExportContent)
	AttrAgentName             = "gen_ai.agent.name"          // "cairn"
	AttrConversationID        = "gen_ai.conversation.id"     // the run id
	AttrErrorType             = "error.type"                 // error class of a failed span
	AttrServiceName           = "service.name"               // resource attribute
	AttrServiceVersion        = "service.version"            // resource attribute
	OperationInvokeAgent      = "invoke_agent"
	OperationChat             = "chat"
	OperationExecuteTool      = "execute_tool"
	AgentName                 = "cairn"
	ToolTypeFunction          = "function"
	ToolTypeExtension         = "extension"

	// Cairn attributes.
	AttrRunID           = "cairn.run.id"
	AttrRunStatus       = "cairn.run.status" // finished, failed, cancelled, interrupted, running
	AttrRunQuestion     = "cairn.run.question"
	AttrRunSteps        = "cairn.run.steps"
	AttrRunResumed      = "cairn.run.resumed"      // bool: this run span continues an interrupted run
	AttrRunResumedFrom  = "cairn.run.resumed_from" // span id of the previous run span
	AttrRunModelCalls   = "cairn.run.model_calls"
	AttrRunToolCalls    = "cairn.run.tool_calls"
	AttrErrorClass      = "cairn.error.class"
	AttrStep            = "cairn.step"
	AttrCostUSD         = "cairn.cost.usd"         // float64; on model spans and (total) on the run span
	AttrCostKnown       = "cairn.cost.known"       // false when the model has no price
	AttrUsageEstimated  = "cairn.usage.estimated"  // token counts estimated by Cairn, not reported by the provider
	AttrLatencyMS       = "cairn.model.latency_ms" // int: request to complete response
	AttrTTFTMS          = "cairn.model.ttft_ms"    // int: request to first text delta
	AttrModelToolCalls  = "cairn.model.tool_call_count"
	AttrModelAttempts   = "cairn.model.attempts"
	AttrContextDegraded = "cairn.context.degraded" // bool: the context engine dropped or shrank items to fit
	AttrToolRisk        = "cairn.tool.risk"        // read, write, network, install, destructive
	AttrToolApproval    = "cairn.tool.approval"    // the approval decision
	AttrApprovalID      = "cairn.approval.id"      // audit record id of the decision
	AttrToolOK          = "cairn.tool.ok"
	AttrToolInvalid     = "cairn.tool.invalid" // unknown tool, bad JSON, schema failure
	AttrToolDurationMS  = "cairn.tool.duration_ms"
	AttrToolOutputBytes = "cairn.tool.output_bytes"
	AttrToolRedactions  = "cairn.tool.redactions" // secrets masked in the tool's output
	AttrToolSummary     = "cairn.tool.summary"
	AttrCheckpointID    = "cairn.checkpoint.id"
	AttrEditID          = "cairn.edit.id"
	AttrTraceRedactions = "cairn.trace.redactions" // values this span had masked by the trace's own redaction pass

	// EventModelResponse is the event on a model span holding the complete
	// response (see the package documentation: replay reads it).
	EventModelResponse = "cairn.model.response"
	// Attributes of EventModelResponse.
	AttrRespText       = "text"
	AttrRespToolCalls  = "tool_calls" // JSON array of {id, name, arguments}
	AttrRespFinish     = "finish_reason"
	AttrRespID         = "response_id"
	AttrRespInput      = "input_tokens"
	AttrRespOutput     = "output_tokens"
	AttrRespEstimated  = "estimated"
	EventModelError    = "cairn.model.error" // a failed model call: message and class
	AttrEventMessage   = "message"
	AttrEventClass     = "class"
	EventToolArguments = "cairn.tool.arguments" // the call's input, as the model sent it
	AttrEventArguments = "arguments"
)

// Span kinds (SpanData.Kind).
const (
	KindRun   = "run"
	KindStep  = "step"
	KindModel = "model"
	KindTool  = "tool"
)

// Span statuses (SpanData.Status).
const (
	StatusOK        = "ok"
	StatusError     = "error"
	StatusCancelled = "cancelled"
	StatusRunning   = "running" // written when a run starts; a run still "running" on load was interrupted or is live
)
