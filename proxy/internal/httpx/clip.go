package httpx

import (
	"fmt"
	"unicode/utf8"
)

// Clip cuts s to at most n bytes, on a character boundary: a cut never leaves half a UTF-8
// character behind.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ClipNoted is Clip that says what it cut: "… (N more bytes)" follows a cut text.
func ClipNoted(s string, n int) string {
	cut := Clip(s, n)
	if len(cut) == len(s) {
		return s
	}
	return cut + fmt.Sprintf("… (%d more bytes)", len(s)-len(cut))
}
