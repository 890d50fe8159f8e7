package httpx

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// zstdStall is a zstd frame that declares a window (a single-segment frame: its content
// size) and sends one raw block of five bytes, then nothing more.
func zstdStall(window uint64) []byte {
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xe0} // magic; one segment, an 8-byte content size
	frame = binary.LittleEndian.AppendUint64(frame, window)
	frame = append(frame, 5<<3, 0, 0) // a raw block of 5 bytes, not the last
	return append(frame, "hello"...)
}

// zstdWindowFrame is a frame header that declares a window of 2^log bytes (not one segment).
func zstdWindowFrame(log int) []byte {
	return append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, byte(log-10) << 3}, 5<<3, 0, 0, 'h', 'e', 'l', 'l', 'o')
}

func TestZstdWindowOverTheBrowsersIsRefused(t *testing.T) {
	for name, frame := range map[string][]byte{
		"one segment of 2 GiB": zstdStall(2 << 30),
		"a window of 1 GiB":    zstdWindowFrame(30),
		"one byte over 8 MiB":  zstdStall(8<<20 + 1),
	} {
		d, err := DecodeBody(io.NopCloser(bytes.NewReader(frame)), "zstd")
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Read(make([]byte, 16))
		d.Close()
		if err == nil || !strings.Contains(err.Error(), "over the 8 MiB browsers decode") {
			t.Errorf("%s: read error %v, want the window refused", name, err)
		}
	}
	if n := ZstdInUse(); n != 0 {
		t.Errorf("%d bytes of the zstd budget held after the refusals", n)
	}
}

func TestZstdDecodersShareOneBudget(t *testing.T) {
	open := func(window uint64) (io.ReadCloser, error) {
		d, err := DecodeBody(io.NopCloser(bytes.NewReader(zstdStall(window))), "zstd")
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 5)
		if _, err := io.ReadFull(d, buf); err != nil {
			d.Close()
			return nil, err
		}
		return d, nil
	}
	var held []io.ReadCloser
	for i := 0; i < ZstdBudget/(8<<20); i++ {
		d, err := open(8 << 20)
		if err != nil {
			t.Fatalf("decoder %d of 8 MiB: %v", i, err)
		}
		held = append(held, d)
	}
	if _, err := open(8 << 20); err == nil || !strings.Contains(err.Error(), "budget") {
		t.Errorf("a decoder past the budget: %v, want refused for the budget", err)
	}
	if _, err := open(64 << 10); err == nil {
		t.Errorf("a small decoder past the budget was started")
	}
	held[0].Close()
	d, err := open(8 << 20)
	if err != nil {
		t.Errorf("a decoder after one closed: %v", err)
	} else {
		d.Close()
	}
	for _, d := range held[1:] {
		d.Close()
	}
	if n := ZstdInUse(); n != 0 {
		t.Errorf("%d bytes of the zstd budget held after every decoder closed", n)
	}
}

func TestZstdBodiesLargerThanTheWindowDecode(t *testing.T) {
	plain := bytes.Repeat([]byte("<p>some text of a page, over and over</p>\n"), 100000) // 4 MiB
	var b bytes.Buffer
	enc, err := zstd.NewWriter(&b, zstd.WithWindowSize(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	enc.Write(plain)
	enc.Close()
	// A later frame with a larger window than the first reserved is refused.
	later := append(append([]byte(nil), b.Bytes()...), zstdWindowFrame(23)...)
	for name, tc := range map[string]struct {
		body []byte
		ok   bool
	}{"one frame": {b.Bytes(), true}, "a larger window in a later frame": {later, false}} {
		d, err := DecodeBody(io.NopCloser(bytes.NewReader(tc.body)), "zstd")
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(d)
		d.Close()
		if tc.ok && (err != nil || !bytes.Equal(got, plain)) {
			t.Errorf("%s: %d bytes, error %v; want the %d bytes", name, len(got), err, len(plain))
		}
		if !tc.ok && err == nil {
			t.Errorf("%s: decoded with no error", name)
		}
	}
	if n := ZstdInUse(); n != 0 {
		t.Errorf("%d bytes of the zstd budget held after the bodies", n)
	}
}
