package httpx

import "testing"

func TestRefreshURL(t *testing.T) {
	for in, want := range map[string]string{
		"0; url=https://witness.test/": "https://witness.test/",
		"5;URL='/next'":                "/next",
		"3, url = /a":                  "/a",
		"0;https://witness.test/x":     "https://witness.test/x",
		"10":                           "",
	} {
		if got := RefreshURL(in); got != want {
			t.Errorf("RefreshURL(%q) = %q, want %q", in, got, want)
		}
	}
}
