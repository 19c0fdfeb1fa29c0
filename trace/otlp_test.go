//go:build !cairn_nootel

package trace

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is a minimal OTLP/HTTP collector: POST /v1/traces, protobuf.
type receiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	res   []*commonpb.KeyValue
	paths []string
	types []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	rc.paths = append(rc.paths, r.Method+" "+r.URL.Path)
	rc.types = append(rc.types, r.Header.Get("Content-Type"))
	rc.mu.Unlock()
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
		http.NotFound(w, r)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(data, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.ResourceSpans {
		rc.res = rs.GetResource().GetAttributes()
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func attrMap(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestOTLPExportToLocalReceiver(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()

	secret := testToken
	for _, viaEnv := range []bool{false, true} {
		name := "setting"
		if viaEnv {
			name = "env"
		}
		t.Run(name, func(t *testing.T) {
			rc.mu.Lock()
			rc.spans = nil
			rc.mu.Unlock()
			opts := Options{StateDir: t.TempDir(), ServiceVersion: "1.2.3"}
			if viaEnv {
				opts.Getenv = func(k string) string {
					if k == "OTEL_EXPORTER_OTLP_ENDPOINT" {
						return srv.URL
					}
					return ""
				}
			} else {
				opts.OTLPEndpoint = srv.URL
			}
			rec, err := NewRecorder(opts)
			if err != nil {
				t.Fatal(err)
			}
			if !rec.Exporting() {
				t.Fatal("not exporting")
			}
			run := scriptedRun(t, rec, "run-otlp")
			run2 := rec.StartRun(RunInfo{ID: "run-otlp2", Question: "q"})
			run2.SetAttr("note", "key "+secret)
			run2.End(RunResult{Status: "failed", Error: "boom", Class: "auth"})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := rec.Close(ctx); err != nil {
				t.Fatal(err)
			}
			rc.mu.Lock()
			defer rc.mu.Unlock()
			if len(rc.spans) != 9+1 {
				t.Fatalf("received %d spans (requests %v, types %v)", len(rc.spans), rc.paths, rc.types)
			}
			if rc.types[len(rc.types)-1] != "application/x-protobuf" {
				t.Errorf("content type %q", rc.types[len(rc.types)-1])
			}
			if res := attrMap(rc.res); res["service.name"].GetStringValue() != "cairn" || res["service.version"].GetStringValue() != "1.2.3" {
				t.Errorf("resource %v", rc.res)
			}
			byName := map[string][]*tracepb.Span{}
			ids := map[string]bool{}
			for _, sp := range rc.spans {
				byName[sp.Name] = append(byName[sp.Name], sp)
				ids[hex.EncodeToString(sp.SpanId)] = true
			}
			for name, n := range map[string]int{"invoke_agent cairn": 2, "step 1": 1, "step 2": 1, "step 3": 1,
				"chat gpt-4o-mini": 3, "execute_tool read_file": 1, "execute_tool edit_file": 1} {
				if len(byName[name]) != n {
					t.Errorf("%d spans named %q, want %d", len(byName[name]), name, n)
				}
			}
			var root *tracepb.Span
			for _, sp := range byName["invoke_agent cairn"] {
				if hex.EncodeToString(sp.TraceId) == run.TraceID() {
					root = sp
				}
			}
			if root == nil {
				t.Fatalf("no run span with trace id %s", run.TraceID())
			}
			ra := attrMap(root.Attributes)
			if ra["gen_ai.operation.name"].GetStringValue() != "invoke_agent" || ra["gen_ai.usage.input_tokens"].GetIntValue() != 3900 ||
				ra["gen_ai.usage.output_tokens"].GetIntValue() != 110 || ra["gen_ai.conversation.id"].GetStringValue() != "run-otlp" ||
				ra["cairn.cost.usd"].GetDoubleValue() <= 0 || root.Status.GetCode() != tracepb.Status_STATUS_CODE_OK {
				t.Errorf("run span attributes %v status %v", root.Attributes, root.Status)
			}
			if _, ok := ra["cairn.run.question"]; ok {
				t.Error("the question was exported without ExportContent")
			}
			for _, sp := range rc.spans {
				if hex.EncodeToString(sp.TraceId) == run.TraceID() && sp != root && !ids[hex.EncodeToString(sp.ParentSpanId)] {
					t.Errorf("%s has an unknown parent", sp.Name)
				}
			}
			m := byName["chat gpt-4o-mini"][0]
			ma := attrMap(m.Attributes)
			if m.Kind != tracepb.Span_SPAN_KIND_CLIENT || ma["gen_ai.provider.name"].GetStringValue() != "openai" || ma["gen_ai.request.model"].GetStringValue() != "gpt-4o-mini" ||
				ma["gen_ai.response.id"].GetStringValue() == "" || ma["gen_ai.usage.input_tokens"].GetIntValue() == 0 ||
				len(ma["gen_ai.response.finish_reasons"].GetArrayValue().GetValues()) != 1 || ma["gen_ai.operation.name"].GetStringValue() != "chat" {
				t.Errorf("model span %v", m.Attributes)
			}
			for _, ev := range m.Events {
				if ev.Name == EventModelResponse {
					t.Error("model response content exported without ExportContent")
				}
			}
			ta := attrMap(byName["execute_tool edit_file"][0].Attributes)
			if ta["gen_ai.tool.name"].GetStringValue() != "edit_file" || ta["gen_ai.tool.call.id"].GetStringValue() != "call_2" ||
				ta["cairn.tool.approval"].GetStringValue() != "allow_once" || ta["cairn.tool.risk"].GetStringValue() != "write" || ta["gen_ai.operation.name"].GetStringValue() != "execute_tool" {
				t.Errorf("tool span %v", ta)
			}
			for _, sp := range byName["invoke_agent cairn"] {
				if sp == root {
					continue
				}
				a := attrMap(sp.Attributes)
				if sp.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || a["error.type"].GetStringValue() != "auth" {
					t.Errorf("failed run: %v %v", sp.Status, sp.Attributes)
				}
				if v := a["note"].GetStringValue(); strings.Contains(v, secret) || !strings.Contains(v, "[REDACTED:") {
					t.Errorf("exported unredacted: %q", v)
				}
			}
		})
	}
}

func TestOTLPExportContent(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	rec, err := NewRecorder(Options{OTLPEndpoint: srv.URL + "/v1/traces", ExportContent: true, Redact: noRedact})
	if err != nil {
		t.Fatal(err)
	}
	scriptedRun(t, rec, "run-content")
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	found := 0
	for _, sp := range rc.spans {
		for _, ev := range sp.Events {
			if ev.Name == EventModelResponse {
				found++
			}
		}
	}
	if found != 3 || rc.paths[0] != "POST /v1/traces" {
		t.Errorf("%d response events exported, paths %v", found, rc.paths)
	}
}

// A collector that keeps failing does not hold Close beyond its context.
func TestOTLPCollectorDown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	rec, err := NewRecorder(Options{StateDir: t.TempDir(), OTLPEndpoint: srv.URL, Redact: noRedact})
	if err != nil {
		t.Fatal(err)
	}
	scriptedRun(t, rec, "run-down")
	// The collector asks for a retry in an hour: Close returning at all
	// means it gave up when its context ended. No bound on how long that
	// took: the machine running this may be loaded.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	closed := make(chan struct{})
	go func() { defer close(closed); _ = rec.Close(ctx) }()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close did not return after its context ended")
	}
	// The local trace is complete regardless.
	if tr, err := rec.Store().Load("run-down"); err != nil || len(tr.Spans) != 9 {
		t.Errorf("local trace: %v", err)
	}
}

// A run's own redactor (RunInfo.Redact) masks its spans in the local store
// and in the export, where the recorder's redactor knows nothing of them.
func TestRunRedactorMasksStoreAndExport(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	dir := t.TempDir()
	rec, err := NewRecorder(Options{StateDir: dir, OTLPEndpoint: srv.URL + "/v1/traces", ExportContent: true, Redact: noRedact})
	if err != nil {
		t.Fatal(err)
	}
	const learned = "q7Hx9LmP2vR8sT4wK1zB"
	runRedact := func(s string) string { return strings.ReplaceAll(s, learned, "[REDACTED:learned]") }
	run := rec.StartRun(RunInfo{ID: "run-learned", Question: "why " + learned + "?", Redact: runRedact})
	st := run.StartStep(1)
	tc := st.StartToolCall(ToolRequest{CallID: "c1", Name: "search_code", Arguments: `{"query":"` + learned + `"}`})
	tc.End(ToolResult{OK: true, Summary: "3 hits for " + learned}, nil)
	st.End(nil)
	run.End(RunResult{Status: "finished"})
	// A run recorded without its own redactor keeps the recorder's.
	other := rec.StartRun(RunInfo{ID: "run-plain", Question: "why " + learned + "?"})
	other.End(RunResult{Status: "finished"})
	if err := rec.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	stored, err := rec.store.Load("run-learned")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(stored)
	if strings.Contains(string(raw), learned) || !strings.Contains(string(raw), "[REDACTED:learned]") {
		t.Errorf("stored trace not masked by the run's redactor:\n%s", raw)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	exported, plain := 0, 0
	for _, sp := range rc.spans {
		b, _ := proto.Marshal(sp)
		if hex.EncodeToString(sp.TraceId) == stored.Root().TraceID {
			exported++
			if strings.Contains(string(b), learned) {
				t.Errorf("exported span %q carries the learned value", sp.Name)
			}
		} else if strings.Contains(string(b), learned) {
			plain++
		}
	}
	if exported < 3 || plain == 0 {
		t.Fatalf("exported %d spans of the masked run, %d of the plain run with the value", exported, plain)
	}
}
