package agent

import (
	"github.com/cairn-dev/cairn/protocol"
	"github.com/cairn-dev/cairn/tokencount"
	"github.com/cairn-dev/cairn/trace"
)

// prices is the price table in effect for the run: the defaults with the
// `model.prices` setting on top.
func (r *Run) prices() trace.Prices {
	return trace.DefaultPrices().With(r.cfg.Prices)
}

// usageWithCost prices u. A run talks to one model, and a price is linear
// in each kind of token, so the run's cost is the price of its summed
// usage; this also holds for a resumed run, whose usage comes back from
// the journal.
func (r *Run) usageWithCost(u tokencount.Usage) protocol.Usage {
	usd, known := r.prices().Cost(providerName(r.cfg.Provider), r.cfg.ModelName, u)
	if !known {
		return protocol.Usage{Usage: u, CostUnknown: true}
	}
	return protocol.Usage{Usage: u, CostUSD: usd}
}

// threadUsage totals the usage of a thread's turns that recorded one.
func threadUsage(turns []ThreadTurn) *protocol.Usage {
	var total *protocol.Usage
	for _, t := range turns {
		if t.Usage == nil {
			continue
		}
		if total == nil {
			total = &protocol.Usage{}
		}
		total.Add(*t.Usage)
	}
	return total
}
