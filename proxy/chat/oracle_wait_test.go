package chat

import (
	"testing"
)

func TestHasShownText(t *testing.T) {
	if hasShownText("Recovery\n  Hint", "recovery hint", false) {
		t.Error("a page text over the page agent's length was collapsed")
	}
	for _, tc := range []struct {
		shown, want string
		ok          bool
	}{
		{"Maps key: [redacted: key]", "maps key", true},
		{"Maps key: [redacted: key]", "qz9", false},
		{"Recovery\n  Hint", "recovery hint", true},
		{"a\u00a0b", "a b", true},
	} {
		if got := hasShownText(tc.shown, tc.want, true); got != tc.ok {
			t.Errorf("hasShownText(%q, %q) = %v", tc.shown, tc.want, got)
		}
	}
}
