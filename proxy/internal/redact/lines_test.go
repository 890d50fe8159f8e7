package redact

import (
	"slices"
	"testing"
)

// TestRedactPageLinesKeepsContext: a private key block written across lines that are shown
// apart (find's outline lines, one an element) is redacted on every line it covers, as the
// whole text would be; other lines are redacted alone.
func TestRedactPageLinesKeepsContext(t *testing.T) {
	const body1 = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
	const body2 = "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK"
	r := New(nil)
	for _, tc := range []struct {
		name     string
		in, want []string
	}{
		{"a block across elements",
			[]string{"main [e1]", `  "-----BEGIN RSA PRIVATE KEY-----"`, `  "` + body1 + `"`, `  "` + body2 + `"`, `  "-----END RSA PRIVATE KEY-----"`, `  "build passed"`},
			[]string{"main [e1]", `  "[redacted: key]"`, "  [redacted: key]", "  [redacted: key]", "  [redacted: key]", `  "build passed"`}},
		{"no block", []string{"a", body1}, []string{"a", body1}},
		{"a block on one line", []string{"-----BEGIN PRIVATE KEY----- " + body1 + " -----END PRIVATE KEY-----", "next"},
			[]string{"[redacted: key]", "next"}},
	} {
		if got := r.RedactPageLines(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
