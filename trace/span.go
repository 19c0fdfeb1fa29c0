package trace

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// SpanData is one finished (or, for a run still going, started) span as
// stored on disk and exported. Attribute values are string, bool, int64,
// float64 or []string; after a round trip through JSON, numbers are
// json.Number.
type SpanData struct {
	TraceID       string         `json:"traceId"`
	SpanID        string         `json:"spanId"`
	ParentID      string         `json:"parentId,omitempty"`
	Kind          string         `json:"kind"` // run, step, model, tool
	Name          string         `json:"name"`
	Start         time.Time      `json:"start"`
	End           time.Time      `json:"end,omitzero"`
	Status        string         `json:"status"` // ok, error, cancelled, running
	StatusMessage string         `json:"statusMessage,omitempty"`
	Attrs         map[string]any `json:"attrs,omitempty"`
	Events        []Event        `json:"events,omitempty"`
}

// Event is a timestamped note on a span.
type Event struct {
	Name  string         `json:"name"`
	Time  time.Time      `json:"time"`
	Attrs map[string]any `json:"attrs,omitempty"`
}

// Duration is End-Start, or 0 for a span without an end.
func (s *SpanData) Duration() time.Duration {
	if s.End.IsZero() {
		return 0
	}
	return s.End.Sub(s.Start)
}

// Trace is the stored trace of one run: its spans in the order they ended
// (the run span, which is written again when the run ends, comes last).
type Trace struct {
	RunID string     `json:"runId"`
	Spans []SpanData `json:"spans"`
}

// Root returns the run span (the latest one, for a resumed run), or nil.
func (t *Trace) Root() *SpanData {
	var root *SpanData
	for i := range t.Spans {
		if sp := &t.Spans[i]; sp.Kind == KindRun && (root == nil || !sp.Start.Before(root.Start)) {
			root = sp
		}
	}
	return root
}

// Roots returns the run spans by start time: one, or one per resumption.
func (t *Trace) Roots() []*SpanData {
	var out []*SpanData
	for i := range t.Spans {
		if t.Spans[i].Kind == KindRun {
			out = append(out, &t.Spans[i])
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Start.Before(out[b].Start) })
	return out
}

// Children returns the spans whose parent is id, by start time.
func (t *Trace) Children(id string) []*SpanData {
	var out []*SpanData
	for i := range t.Spans {
		if t.Spans[i].ParentID == id && id != "" {
			out = append(out, &t.Spans[i])
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Start.Before(out[b].Start) })
	return out
}

// RecordedResponse is one model response as recorded in a trace, for the
// replay provider.
type RecordedResponse struct {
	Step         int                `json:"step"`
	SpanID       string             `json:"spanId"`
	ResponseID   string             `json:"responseId,omitempty"`
	Text         string             `json:"text,omitempty"`
	ToolCalls    []RecordedToolCall `json:"toolCalls,omitempty"`
	FinishReason string             `json:"finishReason,omitempty"`
	InputTokens  int                `json:"inputTokens"`
	OutputTokens int                `json:"outputTokens"`
	Estimated    bool               `json:"estimated,omitempty"`
}

// RecordedToolCall is a tool call of a recorded response (the fields of
// model.ToolCall).
type RecordedToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Responses returns the successful model responses of the trace in the
// order the model produced them (by model span start time). Failed model
// calls have no response event and are skipped. Values were redacted
// before they were stored, so a replay sees [REDACTED:kind] where the
// model had produced a secret.
func (t *Trace) Responses() ([]RecordedResponse, error) {
	var models []*SpanData
	for i := range t.Spans {
		if t.Spans[i].Kind == KindModel {
			models = append(models, &t.Spans[i])
		}
	}
	sort.SliceStable(models, func(a, b int) bool { return models[a].Start.Before(models[b].Start) })
	var out []RecordedResponse
	for _, s := range models {
		for _, ev := range s.Events {
			if ev.Name != EventModelResponse {
				continue
			}
			r := RecordedResponse{
				Step:         AttrInt(s.Attrs, AttrStep),
				SpanID:       s.SpanID,
				ResponseID:   AttrString(ev.Attrs, AttrRespID),
				Text:         AttrString(ev.Attrs, AttrRespText),
				FinishReason: AttrString(ev.Attrs, AttrRespFinish),
				InputTokens:  AttrInt(ev.Attrs, AttrRespInput),
				OutputTokens: AttrInt(ev.Attrs, AttrRespOutput),
				Estimated:    AttrBool(ev.Attrs, AttrRespEstimated),
			}
			if tc := AttrString(ev.Attrs, AttrRespToolCalls); tc != "" {
				if err := json.Unmarshal([]byte(tc), &r.ToolCalls); err != nil {
					return nil, fmt.Errorf("trace %s: span %s: tool calls: %w", t.RunID, s.SpanID, err)
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// AttrString returns attrs[key] as a string ("" when absent).
func AttrString(attrs map[string]any, key string) string {
	switch v := attrs[key].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// AttrInt returns attrs[key] as an int (0 when absent or not a number).
func AttrInt(attrs map[string]any, key string) int {
	switch v := attrs[key].(type) {
	case int:
		return v
	case int64:
		return int(v)
	case float64:
		return int(v)
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return int(n)
		}
		f, _ := v.Float64()
		return int(f)
	}
	return 0
}

// AttrFloat returns attrs[key] as a float64 (0 when absent).
func AttrFloat(attrs map[string]any, key string) float64 {
	switch v := attrs[key].(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case float64:
		return v
	case json.Number:
		f, _ := v.Float64()
		return f
	}
	return 0
}

// AttrBool returns attrs[key] as a bool (false when absent).
func AttrBool(attrs map[string]any, key string) bool {
	b, _ := attrs[key].(bool)
	return b
}

// AttrStrings returns attrs[key] as a []string.
func AttrStrings(attrs map[string]any, key string) []string {
	switch v := attrs[key].(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, x := range v {
			out = append(out, fmt.Sprint(x))
		}
		return out
	case string:
		return []string{v}
	}
	return nil
}

// normValue converts an attribute value to one of the stored types.
func normValue(v any) any {
	switch x := v.(type) {
	case string, bool, int64, float64, []string:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint:
		return int64(x)
	case uint32:
		return int64(x)
	case uint64:
		return int64(x)
	case float32:
		return float64(x)
	case time.Duration:
		return x.Milliseconds()
	case fmt.Stringer:
		return x.String()
	case error:
		return x.Error()
	case nil:
		return nil
	default:
		return fmt.Sprint(x)
	}
}
