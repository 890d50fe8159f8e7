package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// bigOutline is an outline tool result of about 200 KB, as the page agent answers for a long
// page with filter "all": headings, links with destinations, paragraphs, fields, one JSON string.
func bigOutline() string {
	var b strings.Builder
	for i := 0; b.Len() < 200<<10; i++ {
		fmt.Fprintf(&b, " heading \"Section %d: what the committee said about the budget\" [level=2] [e%d]\n", i, 4*i)
		fmt.Fprintf(&b, "  \"The council met on Tuesday, 3 March 2026, and voted 7 to 2 to adopt the plan; order 2024-%06d was paid. See https://example.org/news/2026/03/%d-budget?ref=home for more…\"\n", i, i)
		fmt.Fprintf(&b, "  link \"Read the full report (PDF, 2.4 MB)\" -> /reports/2026/budget-%d.pdf [e%d]\n", i, 4*i+1)
		fmt.Fprintf(&b, "  textbox \"Comment\" value=\"I think sk-8 and ghp are fine; AKIA is a name, eyJ too.\" [e%d]\n", 4*i+2)
		fmt.Fprintf(&b, "  button \"Share\" [e%d]\n", 4*i+3)
	}
	out, _ := json.Marshal(map[string]any{"outline": b.String(), "truncated": false, "refs": 4000})
	return string(out)
}

// BenchmarkRedactPageOutline: the whole stage a tool result passes (RedactPage) on a large
// outline with no secret in it, with a hundred known cookie values as a chat has.
func BenchmarkRedactPageOutline(b *testing.B) {
	var secrets []Secret
	for i := 0; i < 100; i++ {
		secrets = append(secrets, Secret{fmt.Sprintf("cookie-value-%03d-x9", i), KindCookie})
	}
	r := New(secrets)
	in := bigOutline()
	b.SetBytes(int64(len(in)))
	for i := 0; i < b.N; i++ {
		r.RedactPage(in)
	}
}

func BenchmarkRedactKeysNone(b *testing.B) {
	var v struct{ Outline string }
	json.Unmarshal([]byte(bigOutline()), &v)
	b.SetBytes(int64(len(v.Outline)))
	for i := 0; i < b.N; i++ {
		redactKeys(v.Outline)
	}
}

// BenchmarkRedactKeysHostile: texts of 200 KB a hostile page could make so that each word
// start reads far (a repeated prefix, first lines of key blocks without a last one, JWT-like
// runs, cut marks): the cost stays linear.
func BenchmarkRedactKeysHostile(b *testing.B) {
	for _, c := range []struct{ name, unit string }{
		{"prefixes", "glpat-"},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\n"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9."},
		{"aws", "aws_secret_access_key="},
		{"cuts", "4111 1111 1111 111…"},
		{"base64", "Z2hwX2Fi/"},
	} {
		s := strings.Repeat(c.unit, 200<<10/len(c.unit))
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for i := 0; i < b.N; i++ {
				redactShown(s)
			}
		})
	}
}
