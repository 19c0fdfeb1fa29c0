// Package trace records what a run did: a span per run, step, model call
// and tool call, on the OpenTelemetry Go SDK. The Recorder owns a
// TracerProvider with two span processors: Cairn's own (storeProcessor,
// sdk.go), which writes each span, redacted, to the local store under the
// state directory, and, when an endpoint is configured, the SDK's batch
// span processor exporting over OTLP/HTTP. The handles below wrap SDK
// spans; what OpenTelemetry has no field for (the span's place in Cairn's
// tree, a cancelled status) travels as the cairn.span.kind and
// cairn.span.status attributes.
//
// # Recording
//
// The agent holds one *Recorder (NewRecorder) for the server's lifetime and
// drives it from its loop:
//
//	run := rec.StartRun(trace.RunInfo{ID: runID, Question: q, Provider: p, Model: m})
//	step := run.StartStep(n)
//	mc := step.StartModelCall(trace.ModelRequest{Provider: p, Model: m, MaxTokens: max, ContextDegraded: d})
//	mc.FirstToken()                        // from the streaming callback, optional
//	mc.End(trace.ModelResult{...}, err)    // response, usage; priced here
//	tc := step.StartToolCall(trace.ToolRequest{CallID: id, Name: name, Arguments: args})
//	tc.SetApproval(risk, decision, auditID)
//	tc.End(trace.ToolResult{OK: ok, OutputBytes: n, Redactions: r}, nil)
//	step.End(nil)
//	run.End(trace.RunResult{Status: "finished"})
//	run.Usage()                            // tokens and cost so far, for budgets and the finished event
//
// Every handle is safe for concurrent use and every method is a no-op on a
// nil receiver, so a nil *Recorder disables tracing at the cost of a nil
// check per call. Run.End ends any span still open (so early returns in the
// loop need not end their step), and ending a span twice does nothing.
//
// # Attributes
//
// Span names and attribute keys follow the OpenTelemetry GenAI semantic
// conventions (v1.41, Development status) where they have a name:
// "invoke_agent cairn" (run), "chat <model>" (model call, span kind
// CLIENT), "execute_tool <tool>" (tool call), with gen_ai.operation.name,
// gen_ai.provider.name (and the older gen_ai.system), gen_ai.request.model,
// gen_ai.response.id, gen_ai.response.finish_reasons,
// gen_ai.usage.input_tokens / output_tokens, gen_ai.tool.name,
// gen_ai.tool.call.id, gen_ai.tool.type, gen_ai.conversation.id (the run
// id) and error.type. Everything else is under "cairn." (see attrs.go):
// cost, latency, time to first token, tool-call count, context
// degradation, risk, approval decision and audit id, output bytes,
// redactions, checkpoint and edit ids. Steps are "step <n>" spans, which
// the conventions do not define.
//
// # Store
//
// <stateDir>/traces/<runID>.jsonl, directory 0700, files 0600: one JSON
// SpanData per line, appended as each span ends. Run and step spans are
// also written when they start (status "running"); on load the later
// record of a span id replaces the earlier one, so a run that was
// interrupted still lists, as "running", with its spans in place. Starting
// a run whose id already has a trace (cairn.resume) keeps the trace id,
// closes the old run span as "interrupted", adds a new run span marked
// cairn.run.resumed, and carries the usage so far into Run.Usage and the
// new run span's totals. Every string (names, attribute
// and event values, status messages) passes the redaction hook before it
// is written or exported; a span whose values were masked carries
// cairn.trace.redactions. Retention (default 30 days and 200 runs, by file
// modification time; runs being recorded are never removed) is applied
// when the Recorder is created and after every run.
//
// # Responses, for replay
//
// Each successful model call's span carries one event "cairn.model.response"
// with the attributes text, tool_calls (a JSON array of {id, name,
// arguments}), finish_reason, response_id, input_tokens, output_tokens
// and estimated. Trace.Responses returns them in the order the model
// produced them, which is what a replay provider re-serves. These events,
// the question and tool arguments are not exported over OTLP unless
// Options.ExportContent is set.
//
// # Cost
//
// Prices (USD per million tokens: input, cached input, cache write,
// output) default to list prices of common OpenAI and Anthropic models
// (DefaultPrices, as of PricesAsOf); scripted and replay are free; an
// unknown model (a local one) costs 0 and is marked cost-unknown, and
// clients then show no figure. ModelRequest.Prices (the `model.prices`
// setting applied to the defaults) or Options.Prices overrides entries.
// A call costs its uncached input, its cache reads and its cache writes
// at their rates, plus its output. Each model span carries its cost and
// its cached tokens (gen_ai.usage.cache_read.input_tokens,
// gen_ai.usage.cache_creation.input_tokens), the run span the totals.
//
// # Export
//
// With Options.OTLPEndpoint (the trace.otlpEndpoint setting) or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT, ended
// spans also go through the SDK's batch span processor to otlptracehttp
// (protobuf), redacted as in the local store (exportFilter). The trace
// and span ids are the SDK's, so a trace in the backend and in
// `cairn trace show` match; a resumed run keeps its trace id (the
// idGenerator takes it from the context). Every span is sampled and no
// attribute or event limit applies, whatever the OTEL_* variables say: the
// local store is the record of a run. Building with -tags cairn_nootel
// leaves the OTLP exporter (and its protobuf and HTTP client code) out of
// the binary; the SDK itself stays.
//
// BenchmarkRecordToStore measures what the SDK costs per step (one step
// with a model and a tool call, to the local store); a step's time is
// dominated by the store's file writes, not by the span model. Its figures
// are in docs/benchmarks.md.
package trace
