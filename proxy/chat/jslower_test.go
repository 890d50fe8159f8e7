package chat

import "testing"

func TestJSLower(t *testing.T) {
	// Expected values as V8's toLowerCase gives them (checked with node, V8 as in Chromium).
	for in, want := range map[string]string{
		"AIzaSy":   "aizasy",
		"İzmir":    "i\u0307zmir",
		"ΟΔΟΣ":     "οδος",
		"ΟΔΟΣ ΚΑΙ": "οδος και",
		"Σ":        "σ",
		"ΑΣ.":      "ας.",
		"ΑΣΑ":      "ασα",
		"a Σ b":    "a σ b",
		"Straße":   "straße",
		"ǅ TITLE":  "ǆ title",
		"ΑΣ'Β":     "ασ'β",
	} {
		if got := jsLower(in); got != want {
			t.Errorf("jsLower(%q) = %q, want %q", in, got, want)
		}
	}
}
