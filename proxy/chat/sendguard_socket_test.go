package chat

import (
	"bytes"
	"encoding/json"
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

// TestFrameScan: the scan counts the messages that end in what it reads (a text, binary or
// continuation frame with FIN), not control frames nor a fragment without FIN, across writes
// that cut frames and headers anywhere.
func TestFrameScan(t *testing.T) {
	const text, binary, cont, ping, pong, closing = 1, 2, 0, 9, 10, 8
	frag := wsFrame(text, 3)
	frag[0] &^= 0x80 // the first frame of a message in two
	for _, tt := range []struct {
		name   string
		frames [][]byte
		cut    int // write in pieces of cut bytes; 0: one write
		want   int
	}{
		{"a text frame", [][]byte{wsFrame(text, 5)}, 0, 1},
		{"a binary frame", [][]byte{wsFrame(binary, 200)}, 0, 1},
		{"three text frames", [][]byte{wsFrame(text, 5), wsFrame(text, 0), wsFrame(text, 130)}, 0, 3},
		{"a message in two frames", [][]byte{frag, wsFrame(cont, 3)}, 0, 1},
		{"a fragment without FIN", [][]byte{frag}, 0, 0},
		{"a pong", [][]byte{wsFrame(pong, 4)}, 0, 0},
		{"a ping and a close", [][]byte{wsFrame(ping, 0), wsFrame(closing, 2)}, 0, 0},
		{"pongs whose payloads look like text headers", [][]byte{wsFrame(pong, 125), wsFrame(pong, 125)}, 0, 0},
		{"a pong then a text frame, byte by byte", [][]byte{wsFrame(pong, 4), wsFrame(text, 5)}, 1, 1},
		{"a 300-byte pong (16-bit length), cut in 7s", [][]byte{wsFrame(pong, 300)}, 7, 0},
		{"a 70000-byte pong (64-bit length), then text, cut in 1000s", [][]byte{wsFrame(pong, 70000), wsFrame(text, 1)}, 1000, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			all := bytes.Join(tt.frames, nil)
			var f frameScan
			got := 0
			if tt.cut == 0 {
				got = f.scan(all)
			}
			for i := 0; tt.cut > 0 && i < len(all); i += tt.cut {
				got += f.scan(all[i:min(i+tt.cut, len(all))])
			}
			if got != tt.want || f.n != 0 || f.left != 0 {
				t.Errorf("%d messages (header bytes held %d, payload left %d), want %d at a frame boundary", got, f.n, f.left, tt.want)
			}
		})
	}
}

// socketConn is the site's end of a relayed WebSocket: it keeps what is written.
type socketConn struct{ bytes.Buffer }

func (*socketConn) Close() error { return nil }

// openSocket is the 101 answer of the site to to for a WebSocket a page of origin opened,
// through h's watch (WatchSocket); its Body is the site's end.
func openSocket(h *Hub, origin, to string) *http.Response {
	r := httptest.NewRequest("GET", to, nil)
	r.Header.Set("Origin", origin)
	r.Header.Set("Sec-Fetch-Mode", "websocket")
	resp := &http.Response{StatusCode: http.StatusSwitchingProtocols, Header: http.Header{"Upgrade": {"websocket"}},
		Request: r, Body: &socketConn{}}
	h.WatchSocket(resp)
	return resp
}

// sendFrame writes frame from the browser on the socket of resp (openSocket).
func sendFrame(t *testing.T, resp *http.Response, frame []byte) {
	t.Helper()
	rwc := resp.Body.(interface{ Write([]byte) (int, error) })
	if n, err := rwc.Write(frame); n != len(frame) || err != nil {
		t.Fatalf("write: %d, %v", n, err)
	}
}

// TestWatchSocketLogs: a page's WebSocket to the site that opens during an agent action's window,
// or carries a data frame while one is live, is logged once per socket and action; its bytes
// pass unchanged. A socket of another site, a pong, and a socket with no action live are not.
func TestWatchSocketLogs(t *testing.T) {
	w := newPersonSendWorld(t)
	h := w.cf.h
	logs := &bytes.Buffer{} // written by the calls below, in this goroutine
	h.log = slog.New(slog.NewTextHandler(logs, nil))
	open := func(origin, to string) *http.Response { return openSocket(h, origin, to) }
	send := func(resp *http.Response, frame []byte) {
		t.Helper()
		sendFrame(t, resp, frame)
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

// TestSocketNoteInTheChat: the messages a page sends on a WebSocket during an agent action's
// window are told to the person in the action's chat, after the action answered, as one note
// per action with their count (updated in place when more come in the window); nothing
// before the answer, a new action gets its own note, and nothing after the window.
func TestSocketNoteInTheChat(t *testing.T) {
	w := newPersonSendWorld(t)
	h := w.cf.h
	c := &chat{hub: h, panels: map[*panelConn]struct{}{}}
	act := func(control string) *navExpect {
		return h.nav.armAs(navOwner{owner: c, control: control, confirmPost: w.ask.confirm}, "click", "https://example.com/", "https://example.com", nil, nil)
	}
	notes := func() []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		var out []string
		for _, it := range c.items {
			if it.Kind == "notice" {
				b, _ := json.Marshal(it.MD)
				out = append(out, it.ID+" "+string(b))
			}
		}
		return out
	}
	waitNotes := func(what string, want ...string) []string {
		t.Helper()
		var got []string
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			got = notes()
			ok := len(got) == len(want)
			for i := 0; ok && i < len(want); i++ {
				ok = strings.Contains(got[i], want[i])
			}
			if ok {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the chat's notes are %q, want %q", what, got, want)
			}
		}
	}
	const reply = "During or after the agent's click “Post reply”, the page sent "
	const unheld = " on an open connection (WebSocket); such messages are not held."

	sock := openSocket(h, "https://example.com", "https://example.com/live") // opened before the action
	sendFrame(t, sock, wsFrame(1, 10))
	x := act(`click “Post reply”`)
	frag := wsFrame(1, 3)
	frag[0] &^= 0x80 // a message in two frames: the first without FIN
	for _, f := range [][]byte{wsFrame(1, 10), wsFrame(10, 4), wsFrame(2, 300), frag, wsFrame(0, 2)} {
		sendFrame(t, sock, f)
	}
	time.Sleep(socketNoteAfter + 300*time.Millisecond)
	if got := notes(); len(got) != 0 {
		t.Fatalf("notes while the action's call runs: %q", got)
	}
	x.settle()
	first := waitNotes("after the answer", reply+"3 messages"+unheld)

	sendFrame(t, sock, wsFrame(1, 10)) // more in the window: the same note, counted on
	again := waitNotes("a message later in the window", reply+"4 messages"+unheld)
	if id, _, _ := strings.Cut(first[0], " "); !strings.HasPrefix(again[0], id+" ") {
		t.Errorf("a second note %q, want the first (%q) updated", again[0], first[0])
	}

	sendFrame(t, sock, wsFrame(1, 10))
	act(`click “Like”`).settle() // the chat's next action, at once: a note of its own
	sendFrame(t, sock, wsFrame(1, 10))
	waitNotes("the next action", reply+"5 messages", "During or after the agent's click “Like”, the page sent 1 message"+unheld)

	w.wait(sendAfter + time.Second) // the window is over
	sendFrame(t, sock, wsFrame(1, 10))
	time.Sleep(socketNoteAfter + 300*time.Millisecond)
	waitNotes("after the window", reply+"5 messages", "“Like”, the page sent 1 message"+unheld)
}
