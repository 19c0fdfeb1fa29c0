package server_test

import (
	"strings"
	"testing"

	"github.com/cairn-dev/cairn/protocol"
)

const layeredWS = `
-- go.mod --
module example.com/shop

go 1.22
-- cart/cart.go --
package cart

import "example.com/shop/pricing"

// Total sums the cart with the store's discount rules.
func Total(items []pricing.Item) int {
	sum := 0
	for _, it := range items {
		sum += pricing.ApplyDiscount(it)
	}
	return sum
}
-- pricing/discount.go --
package pricing

// Item is one line of a cart.
type Item struct {
	Price    int
	Quantity int
}

// ApplyDiscount returns the item's price after the bulk discount:
// ten or more units cost 10% less.
func ApplyDiscount(it Item) int {
	total := it.Price * it.Quantity
	if it.Quantity >= 10 {
		total = total * 9 / 10
	}
	return total
}
-- shipping/rates.go --
package shipping

// FlatRate is charged on every order below the free-shipping threshold.
const FlatRate = 499
`

func TestContextUsesDefinitionsMapAndSearch(t *testing.T) {
	e := newEnv(t, layeredWS, withScript("turns:\n  - text: ok\n"))
	if err := e.ed.WaitProgressEnd(e.ctx, "search index"); err != nil {
		t.Fatal(err)
	}
	e.open("cart/cart.go")
	run := e.ask("cart/cart.go", 6, 12, "How is the discount applied to bulk orders?")
	e.waitRun(run)
	prompt := e.provider.Received()[0].Messages[1].Content
	for _, want := range []string{
		"## Definition of ApplyDiscount", // a symbol the selection uses, from another file
		"total = total * 9 / 10",         // ... as a full snippet
		"## Repository map",              // the ranked map
		"pricing/discount.go",            // ... which names the file
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	report, err := e.ed.ContextReport(e.ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| definitions |", "| repo map |", "| search |"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
}

func TestSearchAndRepoMapTools(t *testing.T) {
	script := `
turns:
  - toolCalls:
      - name: search_code
        arguments: {query: "free shipping threshold"}
      - name: repo_map
        arguments: {focus: [pricing/discount.go]}
      - name: search_code
        arguments: {query: "\"unbalanced"}
  - text: done
`
	e := newEnv(t, layeredWS, withScript(script))
	if err := e.ed.WaitProgressEnd(e.ctx, "search index"); err != nil {
		t.Fatal(err)
	}
	evs := e.waitRun(e.ask("cart/cart.go", 0, 0, "where is shipping?"))
	if last(evs).Kind != protocol.EventFinished {
		t.Fatalf("%+v", last(evs))
	}
	tm := e.toolMessages(2)
	if !strings.Contains(tm[0].Content, "shipping/rates.go:") {
		t.Errorf("search_code: %q", tm[0].Content)
	}
	if !strings.Contains(tm[1].Content, "ApplyDiscount") || !strings.Contains(tm[1].Content, "pricing/discount.go") {
		t.Errorf("repo_map: %q", tm[1].Content)
	}
	if strings.HasPrefix(tm[2].Content, "error: search failed") && !strings.Contains(tm[2].Content, "quote") {
		t.Errorf("a bad query should get a clear answer: %q", tm[2].Content)
	}
}
