package chat

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// wsFrame is a frame as a browser sends it: FIN, opcode op, masked, with n payload bytes.
func wsFrame(op byte, n int) []byte {
	b := []byte{0x80 | op}
	switch {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n < 1<<16:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	b = append(b, 1, 2, 3, 4) // the mask
	// A payload that looks like frame headers, which the scan must skip.
	return append(b, bytes.Repeat([]byte{0x81}, n)...)
}

// TestFrameScan: the scan finds the start of a data frame (text, binary, continuation) and not
// of a control frame, across writes that cut frames and headers anywhere.
func TestFrameScan(t *testing.T) {
	const text, binary, cont, ping, pong, closing = 1, 2, 0, 9, 10, 8
	for _, tt := range []struct {
		name   string
		frames [][]byte
		cut    int // write in pieces of cut bytes; 0: one write
		want   bool
	}{
		{"a text frame", [][]byte{wsFrame(text, 5)}, 0, true},
		{"a binary frame", [][]byte{wsFrame(binary, 200)}, 0, true},
		{"a continuation", [][]byte{wsFrame(cont, 3)}, 0, true},
		{"a pong", [][]byte{wsFrame(pong, 4)}, 0, false},
		{"a ping and a close", [][]byte{wsFrame(ping, 0), wsFrame(closing, 2)}, 0, false},
		{"pongs whose payloads look like text headers", [][]byte{wsFrame(pong, 125), wsFrame(pong, 125)}, 0, false},
		{"a pong then a text frame, byte by byte", [][]byte{wsFrame(pong, 4), wsFrame(text, 5)}, 1, true},
		{"a 300-byte pong (16-bit length), cut in 7s", [][]byte{wsFrame(pong, 300)}, 7, false},
		{"a 70000-byte pong (64-bit length), then text, cut in 1000s", [][]byte{wsFrame(pong, 70000), wsFrame(text, 1)}, 1000, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			all := bytes.Join(tt.frames, nil)
			var f frameScan
			got := false
			if tt.cut == 0 {
				got = f.scan(all)
			}
			for i := 0; tt.cut > 0 && i < len(all); i += tt.cut {
				got = f.scan(all[i:min(i+tt.cut, len(all))]) || got
			}
			if got != tt.want || f.n != 0 || f.left != 0 {
				t.Errorf("data %v (header bytes held %d, payload left %d), want %v at a frame boundary", got, f.n, f.left, tt.want)
			}
		})
	}
}

// socketConn is the site's end of a relayed WebSocket: it keeps what is written.
type socketConn struct{ bytes.Buffer }

func (*socketConn) Close() error { return nil }

// TestWatchSocketLogs: a page's WebSocket to the site that opens during an agent action's window,
// or carries a data frame while one is live, is logged once per socket and action; its bytes
// pass unchanged. A socket of another site, a pong, and a socket with no action live are not.
func TestWatchSocketLogs(t *testing.T) {
	w := newPersonSendWorld(t)
	h := w.cf.h
	logs := &bytes.Buffer{} // written by the calls below, in this goroutine
	h.log = slog.New(slog.NewTextHandler(logs, nil))
	open := func(origin, to string) *http.Response {
		r := httptest.NewRequest("GET", to, nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Sec-Fetch-Mode", "websocket")
		resp := &http.Response{StatusCode: http.StatusSwitchingProtocols, Header: http.Header{"Upgrade": {"websocket"}},
			Request: r, Body: &socketConn{}}
		h.WatchSocket(resp)
		return resp
	}
	send := func(resp *http.Response, frame []byte) {
		t.Helper()
		rwc := resp.Body.(interface{ Write([]byte) (int, error) })
		if n, err := rwc.Write(frame); n != len(frame) || err != nil {
			t.Fatalf("write: %d, %v", n, err)
		}
	}
	lines := func(what string) int { return strings.Count(logs.String(), what) }
	const opened, sent = "a WebSocket opened during an agent action", "the page sent messages on a WebSocket during an agent action"

	before := open("https://example.com", "https://example.com/live") // opened before any action
	send(before, wsFrame(1, 10))
	w.act().settle()
	send(before, wsFrame(10, 4)) // a pong: no message of the page's
	if n := lines(sent); n != 0 {
		t.Fatalf("%d lines for a socket with no data frame in the window:\n%s", n, logs)
	}
	send(before, wsFrame(1, 10))
	w.wait(2 * socketLook)
	send(before, wsFrame(1, 10))
	if n := lines(sent); n != 1 || !strings.Contains(logs.String(), `action="click “Send”"`) {
		t.Errorf("%d lines for the socket opened before (want 1, naming the action):\n%s", n, logs)
	}

	during := open("https://example.com", "https://example.com/chat")
	send(during, wsFrame(1, 10))
	if n := lines(opened); n != 1 {
		t.Errorf("%d lines for a socket opened in the window, want 1:\n%s", n, logs)
	}
	other := open("https://other.test", "https://other.test/socket")
	w.wait(2 * socketLook)
	send(other, wsFrame(1, 10))
	if n := lines(opened) + lines(sent); n != 2 {
		t.Errorf("another site's socket was logged:\n%s", logs)
	}
	if got, want := before.Body.(*watchedSocket).ReadWriteCloser.(*socketConn).Len(), 3*16+10; got != want {
		t.Errorf("the site got %d bytes, want %d: the frames unchanged", got, want)
	}

	w.wait(sendAfter + time.Second) // the window is over
	send(before, wsFrame(1, 10))
	open("https://example.com", "https://example.com/later")
	if n := lines(opened) + lines(sent); n != 2 {
		t.Errorf("logged after the window:\n%s", logs)
	}
}
