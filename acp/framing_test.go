package acp

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// Malformed lines are answered with JSON-RPC errors and dropped; good
// lines pass on whole, in order, and the stream goes on after each.
func TestGuardInput(t *testing.T) {
	huge := `{"x":"` + strings.Repeat("a", maxMessage) + `"}`
	input := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`not json`,
		`[{"jsonrpc":"2.0","id":2,"method":"a"}]`,
		``,
		huge,
		"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"b\"}\r",
		`{"jsonrpc":"2.0","id":4,"method":"c"}`, // no final newline
	}, "\n")
	var out bytes.Buffer
	got, err := io.ReadAll(guardInput(strings.NewReader(input), &lockedWriter{w: &out}, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n" + `{"jsonrpc":"2.0","id":3,"method":"b"}` + "\n" + `{"jsonrpc":"2.0","id":4,"method":"c"}` + "\n"
	if string(got) != want {
		t.Errorf("passed on:\n%s\nwant:\n%s", got, want)
	}
	errs := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(errs) != 3 || !strings.Contains(errs[0], "-32700") || !strings.Contains(errs[1], "no batches") || !strings.Contains(errs[2], "larger than") {
		t.Errorf("answers:\n%s", out.String())
	}
}
