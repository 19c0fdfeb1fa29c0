package server_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/lspclient"
	"github.com/cairn-dev/cairn/protocol"
)

const monorepoWS = `
-- go.mod --
module example.com/mono
-- services/api/orders.go --
package api

// HandleOrder takes an order from the web shop.
func HandleOrder(id string) error { return nil }
-- services/api/orders_test.go --
package api

func TestOrders() { _ = HandleOrder("x") }
-- services/web/page.go --
package web

// RenderPage draws the shop's front page.
func RenderPage() string { return "shop" }
-- libs/money/round.go --
package money

// RoundCents rounds to whole cents.
func RoundCents(x float64) float64 { return x }
`

// index.include/index.exclude narrow the map and the search index alike,
// the file tools still read the rest, and a change through
// didChangeConfiguration re-indexes: files now excluded leave, newly
// included ones enter.
func TestIndexScopeNarrowsSearchAndMap(t *testing.T) {
	probe := `
      - name: search_code
        arguments: {query: "HandleOrder"}
      - name: search_code
        arguments: {query: "RenderPage"}
      - name: search_code
        arguments: {query: "RoundCents"}
      - name: search_code
        arguments: {query: "HandleOrder path:*_test.go"}
      - name: repo_map
        arguments: {}
`
	script := "turns:\n  - toolCalls:" + probe + `      - name: read_file
        arguments: {path: services/web/page.go}
  - text: one
  - toolCalls:` + probe + `  - text: two
`
	e := newEnv(t, monorepoWS, withScript(script), withSettings(map[string]any{"cairn": map[string]any{
		"index.include": []string{"services/api", "libs"},
		"index.exclude": []string{"**/*_test.go"},
	}}))
	if err := e.ed.WaitProgressEnd(e.ctx, "search index"); err != nil {
		t.Fatal(err)
	}
	run := func(n int) []string {
		t.Helper()
		evs := e.waitRun(e.ask("services/api/orders.go", 0, 0, "where are orders taken?"))
		if last(evs).Kind != protocol.EventFinished {
			t.Fatalf("run %d: %+v", n, last(evs))
		}
		var out []string
		for _, m := range e.toolMessages(2 * n) {
			out = append(out, m.Content)
		}
		return out
	}
	tm := run(1)
	if len(tm) != 6 {
		t.Fatalf("tool results: %q", tm)
	}
	if !strings.Contains(tm[0], "services/api/orders.go:4: func HandleOrder") {
		t.Errorf("HandleOrder, in scope: %q", tm[0])
	}
	if !strings.Contains(tm[1], "no matches") {
		t.Errorf("RenderPage is outside index.include: %q", tm[1])
	}
	if !strings.Contains(tm[2], "libs/money/round.go:4:") {
		t.Errorf("RoundCents, in scope: %q", tm[2])
	}
	if !strings.Contains(tm[3], "no matches") {
		t.Errorf("a _test.go file is excluded: %q", tm[3])
	}
	if !strings.Contains(tm[4], "HandleOrder") || !strings.Contains(tm[4], "RoundCents") || strings.Contains(tm[4], "RenderPage") || strings.Contains(tm[4], "TestOrders") {
		t.Errorf("repo map: %q", tm[4])
	}
	if !strings.Contains(tm[5], "func RenderPage()") {
		t.Errorf("read_file of a file outside the index scope: %q", tm[5])
	}

	// The scope moves to services/ (web in, libs out) and tests come back.
	changeSettings(t, e, map[string]any{"index": map[string]any{"include": []string{"services"}, "exclude": []string{}}})
	if err := e.ed.WaitUntil(e.ctx, func() bool {
		return slices.ContainsFunc(e.ed.Messages(), func(m string) bool { return strings.Contains(m, "index scope applied") })
	}); err != nil {
		t.Fatalf("no word that the new scope was applied: %v; messages: %q", err, e.ed.Messages())
	}
	tm = run(2)
	if len(tm) != 5 {
		t.Fatalf("tool results: %q", tm)
	}
	if !strings.Contains(tm[0], "services/api/orders.go:4:") {
		t.Errorf("HandleOrder: %q", tm[0])
	}
	if !strings.Contains(tm[1], "services/web/page.go:4: func RenderPage") {
		t.Errorf("RenderPage, newly included: %q", tm[1])
	}
	if !strings.Contains(tm[2], "no matches") {
		t.Errorf("RoundCents, now outside index.include: %q", tm[2])
	}
	if !strings.Contains(tm[3], "services/api/orders_test.go:3:") {
		t.Errorf("TestOrders, its file no longer excluded: %q", tm[3])
	}
	if !strings.Contains(tm[4], "RenderPage") || strings.Contains(tm[4], "RoundCents") {
		t.Errorf("repo map after the change: %q", tm[4])
	}
}

// search.zoekt (here from $CAIRN_ZOEKT, as `cairn serve --zoekt` sets it)
// sends code search to a Zoekt webserver's JSON API while the repo map
// stays local; when the webserver stops answering, the user is told and
// searches come from the local index, marked as such.
func TestZoektServesSearchAndTheMapStaysLocal(t *testing.T) {
	zoekt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/search" {
			http.Error(w, "wrong endpoint", http.StatusNotFound)
			return
		}
		// "func HandleOrder() // from the cluster", base64 as Zoekt sends []byte.
		w.Write([]byte(`{"Result":{"MatchCount":1,"Files":[{"FileName":"services/api/orders.go","LineMatches":[{"Line":"ZnVuYyBIYW5kbGVPcmRlcigpIC8vIGZyb20gdGhlIGNsdXN0ZXI=","LineNumber":40}]}]}}`))
	}))
	defer zoekt.Close()
	script := `
turns:
  - toolCalls:
      - name: search_code
        arguments: {query: "HandleOrder"}
      - name: repo_map
        arguments: {}
  - text: one
  - toolCalls:
      - name: search_code
        arguments: {query: "HandleOrder"}
  - text: two
`
	e := newEnv(t, monorepoWS, withScript(script), withEnv(map[string]string{"CAIRN_ZOEKT": zoekt.URL}))
	if err := e.ed.WaitProgressEnd(e.ctx, "search index"); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(e.ed.Messages(), func(m string) bool { return strings.Contains(m, "code search is served by Zoekt at "+zoekt.URL) }) {
		t.Errorf("the status does not name the backend: %q", e.ed.Messages())
	}
	runID := e.ask("services/api/orders.go", 0, 0, "where are orders taken?")
	evs := e.waitRun(runID)
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("%+v", last(evs))
	}
	if report, err := e.ed.ContextReport(e.ctx, runID); err != nil || !strings.Contains(report, "search hits come from Zoekt at "+zoekt.URL) {
		t.Errorf("the context report does not name the search backend (%v):\n%s", err, report)
	}
	tm := e.toolMessages(2)
	if len(tm) != 2 || !strings.Contains(tm[0].Content, "services/api/orders.go:40: func HandleOrder() // from the cluster") {
		t.Fatalf("search_code should come from Zoekt: %q", tm)
	}
	if !strings.Contains(tm[1].Content, "RenderPage") || !strings.Contains(tm[1].Content, "RoundCents") {
		t.Errorf("repo map, local: %q", tm[1].Content)
	}
	zoekt.Close()
	evs = e.waitRun(e.ask("services/api/orders.go", 0, 0, "and now?"))
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("%+v", last(evs))
	}
	tm = e.toolMessages(4)
	got := tm[len(tm)-1].Content
	if !strings.Contains(got, "did not answer") || !strings.Contains(got, "services/api/orders.go:4: func HandleOrder(id string)") {
		t.Errorf("fallback to the local index: %q", got)
	}
	if !slices.ContainsFunc(e.ed.Messages(), func(m string) bool { return strings.Contains(m, "does not answer") }) {
		t.Errorf("the outage was not reported: %q", e.ed.Messages())
	}
}

// search.zoekt arriving through didChangeConfiguration decides where code
// searches go: it is held until the user allows it, as model.baseURL is.
func TestChangedZoektNeedsConfirmation(t *testing.T) {
	zoekt := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"Result":{"Files":[]}}`))
	}))
	defer zoekt.Close()
	served := func(e *env) bool {
		return slices.ContainsFunc(e.ed.Messages(), func(m string) bool { return strings.Contains(m, "served by Zoekt at "+zoekt.URL) })
	}
	for _, answer := range []string{protocol.ActionDeny, protocol.ActionAllowOnce} {
		q := &questionLog{answer: answer}
		e := newEnv(t, monorepoWS, withScript(sensitiveScript), withEditor(lspclient.Options{Approve: q.approve}))
		changeSettings(t, e, map[string]any{"search": map[string]any{"zoekt": zoekt.URL}})
		waitFor(t, "the question about search.zoekt", func() bool { return len(q.list()) == 1 })
		if msg := q.list()[0]; !strings.Contains(msg, "search.zoekt = "+zoekt.URL) || !strings.Contains(msg, "code searches") {
			t.Errorf("question:\n%s", msg)
		}
		if answer == protocol.ActionAllowOnce {
			waitFor(t, "search served by Zoekt once allowed", func() bool { return served(e) })
			continue
		}
		e.waitRun(e.ask("services/api/orders.go", 0, 0, "q")) // settings apply in wire order before it
		if served(e) {
			t.Errorf("a denied search.zoekt was applied: %q", e.ed.Messages())
		}
	}
}
