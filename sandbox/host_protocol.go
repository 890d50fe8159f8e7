package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The sandbox host protocol: the supervisor (parent) and the sandbox host (child) exchange
// frames over the child's stdin and stdout. A frame is a 4-byte big-endian length followed by
// that many bytes of JSON (one frameMsg). Either side refuses a frame longer than the agreed
// maximum (DefaultMaxFrameBytes) from its header alone, before reading or allocating the body,
// and treats it as a broken stream: the parent kills the child, the child exits.
//
// Parent → child:
//
//	{"op":"init","host_limits":{…}}                    first frame: OS limits to apply
//	{"op":"start","rt":N,"remixlet":…,"api":…,"script":…,"page":{…},"limits":{…}}
//	{"op":"stop","rt":N}
//	{"op":"reply","call":C,"result":…} or {"op":"reply","call":C,"error":"…"}
//	{"op":"dispatch","rt":N,"listener":L,"event":…}    an event for a dom.on listener
//	{"op":"mutated","rt":N}                            the page changed: re-check rmx.keep
//
// Child → parent:
//
//	{"op":"ready","pid":P,"msg":"…"}                   after init; msg says which limits hold
//	{"op":"busy","rt":N} / {"op":"idle","rt":N}        around every macrotask, written before
//	                                                   the task runs, so a crash is attributed
//	{"op":"call","rt":N,"call":C,"ns":"dom","method":"query","args":[…]}
//	{"op":"log","rt":N,"level":"info","msg":"…"}
//	{"op":"exit","rt":N,"reason":"…"}                  runtime stopped by a limit or failed to start
//	{"op":"dying","rt":N,"reason":"…"}                 runtime N is stuck in a built-in; the
//	                                                   child exits right after this frame
//
// Call ids are the child's; runtime ids are the supervisor's handle ids.

// DefaultMaxFrameBytes is the largest frame either side accepts: room for a script of
// DefaultMaxScriptBytes and a message of DefaultMaxMessageBytes with their JSON escaping.
const DefaultMaxFrameBytes = 4 << 20

// ErrFrameTooLarge is returned for a frame over the maximum, on writing and on reading.
var ErrFrameTooLarge = errors.New("sandbox host frame too large")

// frameMsg is every frame's JSON shape; each op uses some of the fields.
type frameMsg struct {
	Op         string          `json:"op"`
	RT         uint64          `json:"rt,omitempty"`
	Call       uint64          `json:"call,omitempty"`
	Remixlet   string          `json:"remixlet,omitempty"`
	API        int             `json:"api,omitempty"`
	Script     string          `json:"script,omitempty"`
	Page       *PageInfo       `json:"page,omitempty"`
	Limits     *Limits         `json:"limits,omitempty"`
	HostLimits *HostLimits     `json:"host_limits,omitempty"`
	NS         string          `json:"ns,omitempty"`
	Method     string          `json:"method,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      string          `json:"error,omitempty"`
	Level      string          `json:"level,omitempty"`
	Msg        string          `json:"msg,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Listener   int64           `json:"listener,omitempty"`
	Event      json.RawMessage `json:"event,omitempty"`
	PID        int             `json:"pid,omitempty"`
}

// encodeFrame returns the frame bytes (header and body) for m, refusing more than max bytes.
func encodeFrame(m *frameMsg, max int) ([]byte, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding %s frame: %w", m.Op, err)
	}
	if len(body) > max {
		return nil, fmt.Errorf("encoding %s frame of %d bytes (max %d): %w", m.Op, len(body), max, ErrFrameTooLarge)
	}
	b := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(b, uint32(len(body)))
	copy(b[4:], body)
	return b, nil
}

// readFrame reads one frame, refusing a header that announces more than max bytes before
// reading or allocating the body.
func readFrame(r io.Reader, max int) (*frameMsg, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err // io.EOF at a frame boundary is the normal end
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if uint64(n) > uint64(max) {
		return nil, fmt.Errorf("reading a frame of %d bytes (max %d): %w", n, max, ErrFrameTooLarge)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("reading a frame body of %d bytes: %w", n, err)
	}
	m := new(frameMsg)
	if err := json.Unmarshal(body, m); err != nil {
		return nil, fmt.Errorf("decoding a frame: %w", err)
	}
	return m, nil
}
