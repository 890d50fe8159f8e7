package store

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

// The golden vectors were computed with an independent implementation of the encoding
// documented on EncodeFiles (Python: struct.pack(">Q", n), hashlib.sha256). Changing any of
// them changes every stored digest: add a new encoding tag instead.
func TestDigestGolden(t *testing.T) {
	tests := []struct {
		name       string
		files      Files
		wantEncHex string
		wantDigest string
	}{
		{
			name:       "empty",
			files:      Files{},
			wantEncHex: "72656d697870726f78792d66696c65732d763100",
			wantDigest: "sha256:737eb3e54f0ddeffa4e0dbcf7d700fdeb2f4e86631f87dd020a5cf1c317e0498",
		},
		{
			name:       "one file",
			files:      Files{"script.js": []byte("x")},
			wantEncHex: "72656d697870726f78792d66696c65732d763100" + "0000000000000009" + "7363726970742e6a73" + "0000000000000001" + "78",
			wantDigest: "sha256:0266938af4f0ef58f79b6ac91c387f13a3df5d9e4ee61f0fa566b1c0f3b45e66",
		},
		{
			name:       "empty file is a file",
			files:      Files{"style.css": nil},
			wantEncHex: "72656d697870726f78792d66696c65732d763100" + "0000000000000009" + "7374796c652e637373" + "0000000000000000",
			wantDigest: "sha256:9bab52067f55a2e55516faabc7a98bb53021c48b31a2abffe0cbcebaef8a8898",
		},
		{
			name: "names sorted",
			files: Files{
				"script.js":     []byte("dom.hide('.promoted')\n"),
				"manifest.json": []byte(`{"name":"a","api":1}`),
			},
			wantEncHex: "72656d697870726f78792d66696c65732d763100" +
				"000000000000000d" + "6d616e69666573742e6a736f6e" + "0000000000000014" + "7b226e616d65223a2261222c22617069223a317d" +
				"0000000000000009" + "7363726970742e6a73" + "0000000000000016" + "646f6d2e6869646528272e70726f6d6f74656427290a",
			wantDigest: "sha256:0186b2b8ee12d102e530abe5a7d5d3375c0c758585e94a1746b0a3e8abfa12d7",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := hex.EncodeToString(EncodeFiles(tt.files)); got != tt.wantEncHex {
				t.Errorf("EncodeFiles = %s, want %s", got, tt.wantEncHex)
			}
			if got := Digest(tt.files); got != tt.wantDigest {
				t.Errorf("Digest = %s, want %s", got, tt.wantDigest)
			}
			back, err := DecodeFiles(EncodeFiles(tt.files))
			if err != nil {
				t.Fatalf("DecodeFiles: %v", err)
			}
			if got, want := Digest(back), tt.wantDigest; got != want {
				t.Errorf("Digest(DecodeFiles(EncodeFiles)) = %s, want %s", got, want)
			}
		})
	}
}

func TestDigestDistinguishes(t *testing.T) {
	// Each pair would collide under a naive concatenation of names and contents.
	tests := []struct {
		name string
		a, b Files
	}{
		{"boundary moved", Files{"ab": []byte("c")}, Files{"a": []byte("bc")}},
		{"empty file vs absent", Files{"style.css": nil}, Files{}},
		{"split across files", Files{"a": []byte("1b2")}, Files{"a": []byte("1"), "b": []byte("2")}},
		{"content differs", sampleFiles("a()"), sampleFiles("b()")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if da, db := Digest(tt.a), Digest(tt.b); da == db {
				t.Errorf("Digest(a) = Digest(b) = %s, want different", da)
			}
		})
	}
}

func TestDecodeFilesRefusesNonCanonical(t *testing.T) {
	valid := EncodeFiles(Files{"a": []byte("1"), "b": []byte("2")})
	tag := []byte(filesTag)
	chunk := func(s string) []byte {
		return append([]byte{0, 0, 0, 0, 0, 0, 0, byte(len(s))}, s...)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	tests := []struct {
		name string
		in   []byte
	}{
		{"no tag", []byte("hello")},
		{"other tag", cat([]byte("remixproxy-files-v2\x00"), chunk("a"), chunk("1"))},
		{"truncated length", valid[:len(tag)+4]},
		{"truncated content", valid[:len(valid)-1]},
		{"trailing byte", append(append([]byte{}, valid...), 0)},
		{"out of order", cat(tag, chunk("b"), chunk("2"), chunk("a"), chunk("1"))},
		{"repeated name", cat(tag, chunk("a"), chunk("1"), chunk("a"), chunk("2"))},
		{"missing content", cat(tag, chunk("a"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := DecodeFiles(tt.in)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("DecodeFiles = %v, %v; want ErrCorrupt", f, err)
			}
		})
	}
}
