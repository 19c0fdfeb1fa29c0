package contextengine

import (
	"fmt"
	"sort"
	"strings"

	"github.com/cairn-dev/cairn/tokencount"
)

// mergeOverlaps makes one range per file region: included items whose
// line ranges in the same file overlap or touch (the selection, the
// enclosing symbol and the surrounding code; two definitions; a search hit
// across a definition) become one numbered range held by the item
// allocated first (the selection when it is one of them), with the
// selection's lines marked ›. The others are marked "merged into"; what
// the merge saves is returned for fillLeftover. Items cut to fit are left
// alone (their text is not their whole range). Merged text goes through
// redact like everything else.
func mergeOverlaps(items []*Item, linesOf func(rel string) []string, sel *span, redactText func(string) string, report *Report) int {
	type part struct {
		it         *Item
		rel        string
		start, end int
		order      int
	}
	var parts []part
	for i, it := range items {
		if !it.Included || strings.Contains(it.Reason, "cut to") || strings.Contains(it.Reason, "shortened") {
			continue
		}
		switch it.Source {
		case SourceSelection, SourceWindow, SourceEnclosing, SourceDefinitions, SourceCallees, SourceSearch:
		default:
			continue
		}
		rel, a, b, ok := spanOf(it.Location)
		if !ok {
			continue
		}
		parts = append(parts, part{it, rel, a, b, i})
	}
	sort.Slice(parts, func(i, j int) bool {
		if parts[i].rel != parts[j].rel {
			return parts[i].rel < parts[j].rel
		}
		if parts[i].start != parts[j].start {
			return parts[i].start < parts[j].start
		}
		return parts[i].order < parts[j].order
	})
	freed := 0
	for i := 0; i < len(parts); {
		j, end := i+1, parts[i].end
		for j < len(parts) && parts[j].rel == parts[i].rel && parts[j].start <= end+1 {
			end = max(end, parts[j].end)
			j++
		}
		group := parts[i:j]
		i = j
		if len(group) < 2 {
			continue
		}
		rel, start := group[0].rel, group[0].start
		lines := linesOf(rel)
		if len(lines) == 0 || end > len(lines) {
			continue
		}
		// The holder: required first (the selection), then allocation order.
		holder := group[0]
		for _, p := range group[1:] {
			a, b := p.it, holder.it
			if a.Required != b.Required && a.Required ||
				a.Required == b.Required && (a.Priority < b.Priority || a.Priority == b.Priority && a.Score > b.Score) {
				holder = p
			}
		}
		var labels []string
		for _, p := range group {
			if p.it == holder.it {
				continue
			}
			labels = append(labels, header(p.it.Text))
		}
		var b strings.Builder
		selStart, selEnd := 0, -1
		if sel != nil && sel.rel == rel && sel.start <= end && sel.end >= start {
			selStart, selEnd = sel.start, sel.end
			fmt.Fprintf(&b, "## Selection: %s lines %d-%d (marked ›), shown in lines %d-%d with: %s\n", rel, sel.start, sel.end, start, end, strings.Join(labels, "; "))
		} else {
			fmt.Fprintf(&b, "## %s lines %d-%d: %s; %s\n", rel, start, end, header(holder.it.Text), strings.Join(labels, "; "))
		}
		for n := start; n <= end; n++ {
			mark := "\t"
			if n >= selStart && n <= selEnd {
				mark = "›"
			}
			fmt.Fprintf(&b, "%5d%s%s", n, mark, lines[n-1])
			if !strings.HasSuffix(lines[n-1], "\n") {
				b.WriteByte('\n')
			}
		}
		text := redactText(b.String())
		before := 0
		for _, p := range group {
			before += p.it.Tokens
		}
		holder.it.Text = text
		holder.it.Tokens = tokencount.Count(text)
		holder.it.Location = fmt.Sprintf("%s:%d-%d", rel, start, end)
		holder.it.Reason += fmt.Sprintf("; merged with %d overlapping item(s) into one range", len(group)-1)
		for _, p := range group {
			if p.it != holder.it {
				p.it.Included = false
				p.it.Reason = "merged into " + holder.it.Location
			}
		}
		freed += before - holder.it.Tokens
	}
	return freed
}

// header returns an item's first line without its "## " (what it is).
func header(text string) string {
	h, _, _ := strings.Cut(text, "\n")
	h = strings.TrimPrefix(h, "## ")
	return strings.TrimSuffix(h, ":")
}
