package trace

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// FormatCost formats a cost in US dollars: "$?" when no model call had a
// price, "+?" appended when some did not.
func FormatCost(u Usage) string {
	if !u.CostKnown && u.CostUSD == 0 {
		return "$?"
	}
	s := fmt.Sprintf("$%.4f", u.CostUSD)
	if !u.CostKnown {
		s += "+?"
	}
	return s
}

// FormatDuration rounds a duration for display.
func FormatDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// Oneline shortens s to n runes on one line.
func Oneline(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// WriteSummaries writes `cairn trace list` lines, one per run, in aligned
// columns: id, start time (in loc; nil: local), duration, status, tokens
// in/out ("~" when estimated), cost, question.
func WriteSummaries(w io.Writer, list []Summary, loc *time.Location) error {
	if loc == nil {
		loc = time.Local
	}
	idw := 0
	for _, s := range list {
		idw = max(idw, len(s.RunID))
	}
	for _, s := range list {
		tok := fmt.Sprintf("%d/%d tok", s.Usage.InputTokens, s.Usage.OutputTokens)
		if s.Usage.Estimated {
			tok = "~" + tok
		}
		if _, err := fmt.Fprintf(w, "%-*s  %s  %8s  %-11s  %16s  %9s  %q\n", idw, s.RunID, s.Start.In(loc).Format("2006-01-02 15:04:05"),
			FormatDuration(s.Duration), s.Status, tok, FormatCost(s.Usage), Oneline(s.Question, 60)); err != nil {
			return err
		}
	}
	return nil
}

// keyAttrs are shown, in this order, after a span's name in the tree.
var keyAttrs = map[string][]struct{ key, label string }{
	KindRun: {
		{AttrRunStatus, "status"}, {AttrProviderName, "provider"}, {AttrRequestModel, "model"},
		{AttrUsageInputTokens, "in"}, {AttrUsageCacheReadTokens, "cached"}, {AttrUsageCacheWriteTokens, "cacheWrite"},
		{AttrUsageOutputTokens, "out"}, {AttrCostUSD, "cost"},
		{AttrRunSteps, "steps"}, {AttrRunToolCalls, "tools"}, {AttrErrorClass, "class"}, {AttrRunQuestion, "question"},
	},
	KindStep: {{AttrCheckpointID, "checkpoint"}},
	KindModel: {
		{AttrProviderName, "provider"}, {AttrUsageInputTokens, "in"}, {AttrUsageCacheReadTokens, "cached"},
		{AttrUsageCacheWriteTokens, "cacheWrite"}, {AttrUsageOutputTokens, "out"},
		{AttrCostUSD, "cost"}, {AttrResponseFinish, "finish"}, {AttrModelToolCalls, "toolCalls"},
		{AttrContextDegraded, "degraded"}, {AttrUsageEstimated, "estimated"}, {AttrModelAttempts, "attempts"},
		{AttrTTFTMS, "ttft_ms"}, {AttrResponseID, "response"}, {AttrErrorType, "error"},
	},
	KindTool: {
		{AttrToolCallID, "call"}, {AttrToolRisk, "risk"}, {AttrToolApproval, "approval"}, {AttrToolOK, "ok"},
		{AttrToolDurationMS, "ms"}, {AttrToolOutputBytes, "bytes"}, {AttrToolRedactions, "redactions"},
		{AttrToolSummary, "summary"}, {AttrApprovalID, "approvalId"}, {AttrCheckpointID, "checkpoint"}, {AttrEditID, "edit"},
		{AttrErrorType, "error"},
	},
}

// WriteTree writes the trace as an indented span tree with each span's
// status, duration and key attributes.
func WriteTree(w io.Writer, t *Trace) error {
	ew := &errWriter{w: w}
	byID := map[string]bool{}
	for i := range t.Spans {
		byID[t.Spans[i].SpanID] = true
	}
	// Roots: spans without a (known) parent.
	var roots []*SpanData
	for i := range t.Spans {
		if sp := &t.Spans[i]; sp.ParentID == "" || !byID[sp.ParentID] {
			roots = append(roots, sp)
		}
	}
	sort.SliceStable(roots, func(a, b int) bool { return roots[a].Start.Before(roots[b].Start) })
	for _, r := range roots {
		writeSpan(ew, t, r, "", "")
	}
	return ew.err
}

func writeSpan(w *errWriter, t *Trace, sp *SpanData, first, rest string) {
	dur := FormatDuration(sp.Duration())
	if sp.End.IsZero() {
		dur = "unfinished"
	}
	line := fmt.Sprintf("%s%s  [%s] %s", first, sp.Name, sp.Status, dur)
	for _, ka := range keyAttrs[sp.Kind] {
		v, ok := sp.Attrs[ka.key]
		if !ok || (sp.Kind == KindRun && ka.key == AttrRunStatus) {
			continue
		}
		var s string
		switch ka.key {
		case AttrCostUSD:
			s = fmt.Sprintf("$%.4f", AttrFloat(sp.Attrs, ka.key))
			if _, hasKnown := sp.Attrs[AttrCostKnown]; hasKnown && !AttrBool(sp.Attrs, AttrCostKnown) {
				s = "$?"
			}
		case AttrRunQuestion, AttrToolSummary:
			s = fmt.Sprintf("%q", Oneline(AttrString(sp.Attrs, ka.key), 60))
		case AttrResponseFinish:
			s = strings.Join(AttrStrings(sp.Attrs, ka.key), ",")
		case AttrContextDegraded, AttrUsageEstimated:
			if !AttrBool(sp.Attrs, ka.key) {
				continue
			}
			s = "true"
		default:
			s = AttrString(map[string]any{"v": v}, "v")
		}
		line += " " + ka.label + "=" + s
	}
	if sp.StatusMessage != "" && sp.Status != StatusOK {
		line += fmt.Sprintf(" message=%q", Oneline(sp.StatusMessage, 80))
	}
	w.printf("%s\n", line)
	kids := t.Children(sp.SpanID)
	for i, k := range kids {
		if i == len(kids)-1 {
			writeSpan(w, t, k, rest+"└─ ", rest+"   ")
		} else {
			writeSpan(w, t, k, rest+"├─ ", rest+"│  ")
		}
	}
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
