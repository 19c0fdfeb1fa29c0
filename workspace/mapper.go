package workspace

import (
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// Position is an LSP position: a 0-based line and a 0-based offset in UTF-16
// code units. All conversions between LSP positions and byte offsets go
// through Mapper; nothing else in Cairn counts UTF-16 units.
//
// It is the one position type of Cairn's edges: protocol's wire types alias
// it, and protocol/lsp.go converts it to and from go.lsp.dev/protocol's.
type Position struct {
	Line      uint32 `json:"line"`
	Character uint32 `json:"character"`
}

// Range is a half-open LSP range.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Mapper converts between byte offsets and LSP positions for one text.
type Mapper struct {
	text       string
	lineStarts []int // byte offset of the start of each line
}

// NewMapper indexes the line starts of text.
func NewMapper(text string) *Mapper {
	m := &Mapper{text: text, lineStarts: []int{0}}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			m.lineStarts = append(m.lineStarts, i+1)
		}
	}
	return m
}

// Offset converts an LSP position into a byte offset. A character past the
// end of its line clamps to the line end (as LSP requires); a line past the
// end of the text is an error.
func (m *Mapper) Offset(p Position) (int, error) {
	line := int(p.Line)
	if line >= len(m.lineStarts) {
		if line == len(m.lineStarts) && p.Character == 0 {
			return len(m.text), nil
		}
		return 0, fmt.Errorf("line %d is past the end of the text (%d lines)", line, len(m.lineStarts))
	}
	start := m.lineStarts[line]
	end := len(m.text)
	if line+1 < len(m.lineStarts) {
		end = m.lineStarts[line+1] - 1 // the '\n'
		if end > start && m.text[end-1] == '\r' {
			end--
		}
	}
	units := uint32(0)
	off := start
	for off < end && units < p.Character {
		r, size := utf8.DecodeRuneInString(m.text[off:end])
		n := uint32(1)
		if r >= 0x10000 {
			n = 2
		}
		if units+n > p.Character {
			break // inside a surrogate pair: stay before the rune
		}
		units += n
		off += size
	}
	return off, nil
}

// Position converts a byte offset into an LSP position.
func (m *Mapper) Position(offset int) Position {
	if offset < 0 {
		offset = 0
	}
	if offset > len(m.text) {
		offset = len(m.text)
	}
	// binary search for the line
	lo, hi := 0, len(m.lineStarts)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if m.lineStarts[mid] <= offset {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	seg := m.text[m.lineStarts[lo]:offset]
	var units uint32
	for _, r := range seg {
		units += uint32(len(utf16.Encode([]rune{r})))
	}
	return Position{Line: uint32(lo), Character: units}
}
