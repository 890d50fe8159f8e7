package agent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
)

// sseMaxLine is the longest line the SSE reader accepts. A model's chunk is a few hundred bytes;
// a megabyte leaves room for a whole tool call in one line without letting a broken server grow
// memory without bound.
const sseMaxLine = 1 << 20

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	Event string // the event: field; "" when the server sent none
	Data  string // the data: lines joined with "\n"
	ID    string // the last id: field seen
}

// sseReader reads server-sent events (the WHATWG event-stream format) from a response body.
//
// It is tolerant in the ways real model servers need: LF, CRLF and lone CR line endings,
// comment lines (": OPENROUTER PROCESSING"), retry: and id: fields, data split over several
// lines, events without an event: field, and a last event not followed by a blank line. Events
// with no data (a bare "event: ping") are not dispatched.
type sseReader struct {
	sc *bufio.Scanner
	id string
}

func newSSEReader(r io.Reader) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), sseMaxLine)
	sc.Split(scanSSELines)
	return &sseReader{sc: sc}
}

// Next returns the next event, io.EOF at the end of the stream, or the read error.
func (r *sseReader) Next() (sseEvent, error) {
	var (
		event   string
		data    strings.Builder
		hasData bool
	)
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if hasData {
				return sseEvent{Event: event, Data: data.String(), ID: r.id}, nil
			}
			event = ""
			continue
		}
		if line[0] == ':' {
			continue // a comment: keep-alives, "OPENROUTER PROCESSING"
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			event = value
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.WriteString(value)
			hasData = true
		case "id":
			if !strings.ContainsRune(value, 0) {
				r.id = value
			}
		case "retry":
			// Reconnection delay: meaningless for a single POST.
		default:
			// Unknown fields are ignored, as the format says.
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return sseEvent{}, fmt.Errorf("reading event stream: a line is longer than %d bytes: %w", sseMaxLine, err)
		}
		return sseEvent{}, fmt.Errorf("reading event stream: %w", err)
	}
	if hasData {
		// The stream ended without the final blank line; the event is complete enough.
		return sseEvent{Event: event, Data: data.String(), ID: r.id}, nil
	}
	return sseEvent{}, io.EOF
}

// scanSSELines is a bufio.SplitFunc for the three line endings of the event-stream format.
func scanSSELines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		// A CR: a CRLF pair counts as one ending, so look at the next byte.
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // need one more byte to know
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
