package httpx

import "testing"

func TestTextBody(t *testing.T) {
	const limit = 32 << 10
	// A body cut inside a multi-byte character is cut before it; binary is not recorded.
	s, trunc, ok := TextBody([]byte("{\"a\":\"\xc3"), "", limit)
	if !ok || s != `{"a":"` || trunc {
		t.Errorf("cut UTF-8: got %q %v %v, want %q false true", s, trunc, ok, `{"a":"`)
	}
	if _, _, ok := TextBody([]byte{0xff, 0xfe, 0, 1, 2, 0xff, 0xff, 0xff, 0xff, 0xff}, "", limit); ok {
		t.Error("a binary body: got ok, want not text")
	}
	if _, _, ok := TextBody([]byte("{}"), "compress", limit); ok {
		t.Error("an unknown encoding: got ok, want not text")
	}
}
