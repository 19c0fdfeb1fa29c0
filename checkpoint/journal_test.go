package checkpoint

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// writeJournal appends n records and returns the file's bytes and the
// offsets where each record's line starts.
func writeJournal(t *testing.T, n int) (string, []byte, []int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	var starts []int
	for i := 1; i <= n; i++ {
		fi, _ := os.Stat(path)
		starts = append(starts, int(fi.Size()))
		if _, err := j.Append(RecToolIntent, i, i, map[string]string{"callId": fmt.Sprintf("c%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	j.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, b, starts
}

func seqs(recs []Record) []int {
	var out []int
	for _, r := range recs {
		out = append(out, r.Seq)
	}
	return out
}

// TestJournalSkipsEachDamagedRecord damages each record in turn, in several
// ways, and checks that exactly that record is lost and reported.
func TestJournalSkipsEachDamagedRecord(t *testing.T) {
	const n = 5
	_, orig, starts := writeJournal(t, n)
	end := func(i int) int {
		if i+1 < len(starts) {
			return starts[i+1]
		}
		return len(orig)
	}
	damages := map[string]func(b []byte, start, end int){
		"flipped payload byte": func(b []byte, s, e int) { b[e-5] ^= 0x20 },
		"flipped length":       func(b []byte, s, e int) { b[s] = '9' },
		"flipped checksum":     func(b []byte, s, e int) { i := bytes.IndexByte(b[s:], ' ') + s + 1; b[i] ^= 1 },
		"zeroed record":        func(b []byte, s, e int) { copy(b[s:e-1], make([]byte, e-1-s)) },
	}
	for name, damage := range damages {
		for i := range n {
			t.Run(fmt.Sprintf("%s/record %d", name, i+1), func(t *testing.T) {
				b := bytes.Clone(orig)
				damage(b, starts[i], end(i))
				c := ParseJournal(b)
				var want []int
				for k := 1; k <= n; k++ {
					if k != i+1 {
						want = append(want, k)
					}
				}
				if got := seqs(c.Records); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("records %v, want %v", got, want)
				}
				if c.Torn || len(c.Damaged) != 1 || c.Damaged[0].Before != i || c.Damaged[0].Offset != int64(starts[i]) {
					t.Fatalf("damage %+v torn=%v, want one before record index %d at %d", c.Damaged, c.Torn, i, starts[i])
				}
				marked := c.WithDamage()
				if len(marked) != n || marked[i].Type != RecUnreadable {
					t.Fatalf("WithDamage: %+v", marked)
				}
			})
		}
	}
}

// TestJournalDamagedNewline: a record whose newline was overwritten is read
// by its length, and the next record too.
func TestJournalDamagedNewline(t *testing.T) {
	_, orig, starts := writeJournal(t, 3)
	b := bytes.Clone(orig)
	b[starts[1]-1] = 'x'
	c := ParseJournal(b)
	if got := seqs(c.Records); fmt.Sprint(got) != "[1 2 3]" || len(c.Damaged) != 0 {
		t.Fatalf("records %v damage %+v", got, c.Damaged)
	}
}

// TestJournalReadsUnframedFormat: journals written before framing (one bare
// JSON object per line) still read, and appending to one frames new records.
func TestJournalReadsUnframedFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	old := `{"seq":1,"time":"2026-01-01T00:00:00Z","type":"run_started","data":{"question":"q"}}
{"seq":2,"time":"2026-01-01T00:00:01Z","type":"step_started","step":1}
{"seq":3,"time":"2026-01-01T00:00:01Z","type":"model_res
{"seq":4,"time":"2026-01-01T00:00:02Z","type":"tool_intent","step":1}
`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := seqs(c.Records); fmt.Sprint(got) != "[1 2 4]" || len(c.Damaged) != 1 || c.Damaged[0].Before != 2 {
		t.Fatalf("records %v damage %+v", got, c.Damaged)
	}
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := j.Append(RecToolResult, 1, 0, nil)
	j.Close()
	if err != nil || r.Seq != 5 {
		t.Fatalf("append: %+v %v", r, err)
	}
	c, _ = LoadJournal(path)
	if got := seqs(c.Records); fmt.Sprint(got) != "[1 2 4 5]" || len(c.Damaged) != 1 {
		t.Fatalf("after append: records %v damage %+v", got, c.Damaged)
	}
}

// TestJournalKeepsDamagedLastLine: reopening cuts only a torn (unfinished)
// line; a complete damaged last line stays so later readers still see that
// a record was lost.
func TestJournalKeepsDamagedLastLine(t *testing.T) {
	path, orig, starts := writeJournal(t, 3)
	b := bytes.Clone(orig)
	b[len(b)-3] ^= 0x20
	os.WriteFile(path, b, 0o600)
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.Append(RecToolResult, 3, 0, nil); err != nil {
		t.Fatal(err)
	}
	j.Close()
	c, _ := LoadJournal(path)
	if got := seqs(c.Records); fmt.Sprint(got) != "[1 2 4]" || len(c.Damaged) != 1 || c.Damaged[0].Offset != int64(starts[2]) {
		t.Fatalf("records %v damage %+v", got, c.Damaged)
	}
}
