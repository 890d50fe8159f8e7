package agent

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func readAllSSE(t *testing.T, r io.Reader) ([]sseEvent, error) {
	t.Helper()
	sr := newSSEReader(r)
	var got []sseEvent
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, ev)
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []sseEvent
	}{
		{
			name: "lf",
			in:   "event: a\ndata: one\n\nevent: b\ndata: two\n\n",
			want: []sseEvent{{Event: "a", Data: "one"}, {Event: "b", Data: "two"}},
		},
		{
			name: "crlf",
			in:   "event: a\r\ndata: one\r\n\r\ndata: two\r\n\r\n",
			want: []sseEvent{{Event: "a", Data: "one"}, {Data: "two"}},
		},
		{
			name: "lone cr",
			in:   "event: a\rdata: one\r\rdata: two\r\r",
			want: []sseEvent{{Event: "a", Data: "one"}, {Data: "two"}},
		},
		{
			name: "comments and retry are skipped",
			in:   ": OPENROUTER PROCESSING\n\nretry: 3000\n: keep-alive\ndata: x\n\n",
			want: []sseEvent{{Data: "x"}},
		},
		{
			name: "id is remembered",
			in:   "id: 7\ndata: x\n\ndata: y\n\n",
			want: []sseEvent{{Data: "x", ID: "7"}, {Data: "y", ID: "7"}},
		},
		{
			name: "multi-line data",
			in:   "data: {\"a\":\ndata: 1}\n\n",
			want: []sseEvent{{Data: "{\"a\":\n1}"}},
		},
		{
			name: "no space after colon",
			in:   "event:ping\ndata:{}\n\n",
			want: []sseEvent{{Event: "ping", Data: "{}"}},
		},
		{
			name: "only one leading space is removed",
			in:   "data:  two spaces\n\n",
			want: []sseEvent{{Data: " two spaces"}},
		},
		{
			name: "done marker is data",
			in:   "data: {}\n\ndata: [DONE]\n\n",
			want: []sseEvent{{Data: "{}"}, {Data: "[DONE]"}},
		},
		{
			name: "event without data is not dispatched",
			in:   "event: ping\n\nevent: real\ndata: 1\n\n",
			want: []sseEvent{{Event: "real", Data: "1"}},
		},
		{
			name: "unknown fields ignored",
			in:   "foo: bar\nnocolon\ndata: 1\n\n",
			want: []sseEvent{{Data: "1"}},
		},
		{
			name: "last event without blank line",
			in:   "data: 1\n\ndata: 2",
			want: []sseEvent{{Data: "1"}, {Data: "2"}},
		},
		{
			name: "empty data line still dispatches",
			in:   "data:\n\n",
			want: []sseEvent{{Data: ""}},
		},
		{
			name: "blank lines between events",
			in:   "\n\n\ndata: 1\n\n\n\n",
			want: []sseEvent{{Data: "1"}},
		},
		{
			name: "empty stream",
			in:   "",
			want: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, mode := range []string{"whole", "one byte at a time"} {
				var r io.Reader = strings.NewReader(tt.in)
				if mode != "whole" {
					r = iotest.OneByteReader(r)
				}
				got, err := readAllSSE(t, r)
				if err != nil {
					t.Fatalf("%s: Next: %v", mode, err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("%s: got %+v, want %+v", mode, got, tt.want)
				}
			}
		})
	}
}

func TestSSEReaderLineTooLong(t *testing.T) {
	in := "data: " + strings.Repeat("x", sseMaxLine+10) + "\n\n"
	_, err := readAllSSE(t, strings.NewReader(in))
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("got %v, want a line-too-long error", err)
	}
}

func TestSSEReaderReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: 1\n\n"), iotest.ErrReader(boom))
	got, err := readAllSSE(t, r)
	if len(got) != 1 || !errors.Is(err, boom) {
		t.Fatalf("got %v, %v; want one event then %v", got, err, boom)
	}
}
