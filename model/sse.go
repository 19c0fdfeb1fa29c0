package model

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Event string // the "event:" field, "" when absent
	Data  string // the "data:" lines joined with "\n"
}

// maxSSELine bounds one line of an event stream (a single data line carries
// a whole JSON chunk; tool arguments can make them long, never this long).
const maxSSELine = 8 << 20

// errSSETruncated reports a stream that ended in the middle of a line.
var errSSETruncated = errors.New("event stream ended in the middle of a line")

// sseReader parses a text/event-stream body (WHATWG "server-sent events").
// It reads through a bufio.Reader, so an event may arrive split across any
// number of TCP segments and Read calls. Lines end in "\n" or "\r\n"
// (a lone "\r" line terminator is not supported: no model server sends it).
// Comment lines (":" keepalives) are skipped; "id:" and "retry:" are ignored.
//
// Tolerances beyond the spec, for OpenAI-compatible servers:
//   - a line that starts with "{" is taken as a data line (some servers
//     write a bare JSON error object into the stream);
//   - at EOF, a pending event whose last line was complete is dispatched
//     even without the closing blank line.
//
// At EOF in the middle of a line, Next returns errSSETruncated.
type sseReader struct {
	r       *bufio.Reader
	line    []byte
	event   string
	data    bytes.Buffer
	hasData bool
}

// sseBufferSize is the read buffer of an event stream; a *bufio.Reader of
// this size passed to newSSEReader is used as is.
const sseBufferSize = 32 << 10

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, sseBufferSize)}
}

// readLine returns the next line without its terminator. complete is false
// when the input ended before a "\n".
func (s *sseReader) readLine() (line []byte, complete bool, err error) {
	s.line = s.line[:0]
	for {
		frag, err := s.r.ReadSlice('\n')
		s.line = append(s.line, frag...)
		if len(s.line) > maxSSELine {
			return nil, false, fmt.Errorf("event stream line longer than %d bytes", maxSSELine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if err == io.EOF && len(s.line) > 0 {
				return s.line, false, nil
			}
			return nil, false, err
		}
		l := s.line[:len(s.line)-1]
		if n := len(l); n > 0 && l[n-1] == '\r' {
			l = l[:n-1]
		}
		return l, true, nil
	}
}

// Next returns the next event, io.EOF at a clean end of stream, or the
// read error (errSSETruncated when the stream stopped mid-line).
func (s *sseReader) Next() (sseEvent, error) {
	for {
		line, complete, err := s.readLine()
		if err != nil {
			if err == io.EOF && s.hasData {
				return s.dispatch(), nil
			}
			return sseEvent{}, err
		}
		if !complete {
			// EOF in the middle of a line: whatever it was, it is cut.
			s.reset()
			return sseEvent{}, errSSETruncated
		}
		if len(line) == 0 {
			if s.hasData {
				return s.dispatch(), nil
			}
			s.event = ""
			continue
		}
		if line[0] == ':' {
			continue // comment / keepalive
		}
		if line[0] == '{' {
			s.addData(line)
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			s.addData(value)
		case "event":
			s.event = string(value)
		}
	}
}

func (s *sseReader) addData(v []byte) {
	if s.hasData {
		s.data.WriteByte('\n')
	}
	s.data.Write(v)
	s.hasData = true
}

func (s *sseReader) dispatch() sseEvent {
	ev := sseEvent{Event: s.event, Data: s.data.String()}
	s.reset()
	return ev
}

func (s *sseReader) reset() {
	s.event = ""
	s.data.Reset()
	s.hasData = false
}
