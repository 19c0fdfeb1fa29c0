package model

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func collectSSE(t *testing.T, r io.Reader) ([]sseEvent, error) {
	t.Helper()
	s := newSSEReader(r)
	var evs []sseEvent
	for {
		ev, err := s.Next()
		if err != nil {
			if err == io.EOF {
				return evs, nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestSSEReader(t *testing.T) {
	in := ": keepalive\n\n" +
		"event: message_start\r\ndata: {\"a\":1}\r\n\r\n" +
		"data:no-space\n\n" +
		"data: line1\ndata: line2\nid: 7\nretry: 100\n\n" +
		"unknown: field\n\n" +
		"{\"error\":\"bare json\"}\n\n" +
		"data: [DONE]\n" // no final blank line
	want := []sseEvent{
		{Event: "message_start", Data: `{"a":1}`},
		{Data: "no-space"},
		{Data: "line1\nline2"},
		{Data: `{"error":"bare json"}`},
		{Data: "[DONE]"},
	}
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(in),
		"one-byte": iotest.OneByteReader(strings.NewReader(in)),
		"half":     iotest.HalfReader(strings.NewReader(in)),
	} {
		got, err := collectSSE(t, r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: got %d events %+v, want %d", name, len(got), got, len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: event %d = %+v, want %+v", name, i, got[i], want[i])
			}
		}
	}
}

func TestSSEReaderTruncatedLine(t *testing.T) {
	got, err := collectSSE(t, strings.NewReader("data: {\"a\":1}\n\ndata: {\"b\""))
	if !errors.Is(err, errSSETruncated) {
		t.Fatalf("err = %v, want errSSETruncated", err)
	}
	if len(got) != 1 {
		t.Fatalf("got %d events, want the one complete event", len(got))
	}
}

func TestSSEReaderLongLine(t *testing.T) {
	long := strings.Repeat("x", 200<<10) // longer than the bufio buffer
	got, err := collectSSE(t, strings.NewReader("data: "+long+"\n\n"))
	if err != nil || len(got) != 1 || got[0].Data != long {
		t.Fatalf("long line: err=%v events=%d", err, len(got))
	}
}

func TestSSEReaderReadError(t *testing.T) {
	boom := errors.New("connection reset")
	_, err := collectSSE(t, io.MultiReader(strings.NewReader("data: x\n"), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
}
