package httpx

import (
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short text is kept", "abc", 5, "abc"},
		{"exact length is kept", "abc", 3, "abc"},
		{"ASCII is cut at n", "abcdef", 4, "abcd"},
		{"a two-byte character is not split", "aé", 2, "a"},
		{"a four-byte character is not split", "x😀y", 3, "x"},
		{"a cut after a whole character keeps it", "é😀", 2, "é"},
		{"zero", "abc", 0, ""},
		{"negative", "abc", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Clip(tt.s, tt.n)
			if got != tt.want {
				t.Errorf("Clip(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Clip(%q, %d) = %q, not valid UTF-8", tt.s, tt.n, got)
			}
		})
	}
}

func TestClipNoted(t *testing.T) {
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short text is kept unmarked", "abc", 3, "abc"},
		{"a cut says how much was left out", "abcdef", 4, "abcd… (2 more bytes)"},
		{"a cut on a character boundary counts the whole character", "aé", 2, "a… (2 more bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClipNoted(tt.s, tt.n); got != tt.want {
				t.Errorf("ClipNoted(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
			}
		})
	}
}
