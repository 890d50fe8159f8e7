package httpx

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"sync"
	"unicode/utf8"
)

// IsJSONType reports whether a media type is JSON.
func IsJSONType(mediaType string) bool {
	return mediaType == "application/json" || mediaType == "text/json" || strings.HasSuffix(mediaType, "+json")
}

// TextBody decodes what was copied of a body (at most limit bytes, as sent) and returns at
// most limit bytes of valid UTF-8 text; ok is false for a body that is not text. The page data
// record (page) and network:observe (remixlet) keep bodies this way.
func TextBody(raw []byte, enc string, limit int) (body string, truncated, ok bool) {
	truncated = len(raw) > limit
	if truncated {
		raw = raw[:limit]
	}
	if e := strings.TrimSpace(enc); e != "" && !strings.EqualFold(e, "identity") {
		d, err := DecodeBody(io.NopCloser(bytes.NewReader(raw)), enc)
		if err != nil {
			return "", false, false
		}
		var out bytes.Buffer
		_, rerr := io.Copy(&out, io.LimitReader(d, int64(limit)+1))
		d.Close()
		if rerr != nil {
			truncated = true // a prefix of a compressed stream decodes as far as it goes
		}
		raw = out.Bytes()
		if len(raw) > limit {
			raw, truncated = raw[:limit], true
		}
	}
	// Cut at a character boundary; a body that is not text is not recorded.
	for i := 0; i < utf8.UTFMax && len(raw) > 0 && !utf8.Valid(raw); i++ {
		raw = raw[:len(raw)-1]
	}
	if !utf8.Valid(raw) {
		return "", false, false
	}
	return string(raw), truncated, true
}

// TeeBody passes a body through unchanged and copies its first Limit+1 bytes aside; Finish
// runs once, on its own goroutine, at the end of the body or when it is closed. It never
// changes a byte and never makes the reader wait for Finish.
type TeeBody struct {
	RC     io.ReadCloser
	Enc    string // the body's Content-Encoding, handed to Finish
	Limit  int
	Finish func(raw []byte, enc string, complete bool)
	Log    *slog.Logger // where a panic in Finish is logged

	buf  []byte
	once sync.Once
}

func (t *TeeBody) Read(p []byte) (int, error) {
	n, err := t.RC.Read(p)
	if n > 0 && len(t.buf) <= t.Limit {
		take := min(n, t.Limit+1-len(t.buf))
		t.buf = append(t.buf, p[:take]...)
	}
	if err == io.EOF {
		t.done(true)
	}
	return n, err
}

func (t *TeeBody) Close() error {
	t.done(false)
	return t.RC.Close()
}

func (t *TeeBody) done(complete bool) {
	t.once.Do(func() {
		buf := t.buf
		t.buf = nil
		go func() {
			defer Recovered(t.Log, "keeping a copy of a response body")
			t.Finish(buf, t.Enc, complete)
		}()
	})
}
