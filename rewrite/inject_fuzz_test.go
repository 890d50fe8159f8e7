package rewrite

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// FuzzInject checks that the injector only ever inserts the one tag: the output minus the tag
// is the input, byte for byte, whatever the input, the cap and the MetaCSP hook (an identity
// hook must not change a byte either), and reading one byte at a time changes nothing.
func FuzzInject(f *testing.F) {
	seeds := []string{
		"",
		"<!DOCTYPE html><html><head><meta charset=utf-8><title>x</title></head><body><p>x</p></body></html>",
		"\xEF\xBB\xBF<!-- c --><html><head><script>a()</script>",
		"<head><meta http-equiv=content-security-policy content=\"script-src 'self'\"><template><svg><![CDATA[</template>]]></svg></template>",
		"<title>&lt;head&gt;</title><noscript><meta charset=utf-8></noscript><body>",
		"<!DOCTYPE html",
		"<!--",
		"<html><head><style>p{}</style><meta http-equiv=Content-Type content='text/html; charset=\"utf-8\"'>",
		"text<plaintext><head>",
		"<head><meta http-equiv=content-security-policy content=\"script-src 'self'\"><meta charset=utf-8><title>x</title>",
		"<html><meta http-equiv=content-security-policy content=\"default-src 'none'\"><meta charset=utf-8>",
	}
	for _, s := range seeds {
		f.Add(s, uint16(0), false)
		f.Add(s, uint16(16), true)
	}
	f.Fuzz(func(t *testing.T, input string, maxPrefix uint16, metaCSP bool) {
		opt := Options{Tag: []byte(testTag), MaxPrefix: int(maxPrefix)}
		if metaCSP {
			opt.MetaCSP = func(s string) string { return s }
		}
		in := NewInjector(strings.NewReader(input), opt)
		out, err := io.ReadAll(in)
		if err != nil {
			t.Fatalf("reading: got error %v, want none", err)
		}
		got := string(out)
		one, err := io.ReadAll(NewInjector(iotest.OneByteReader(strings.NewReader(input)), opt))
		if err != nil {
			t.Fatalf("reading one byte at a time: got error %v, want none", err)
		}
		if string(one) != got {
			t.Errorf("one byte at a time:\ngot  %q\nwant %q", one, got)
		}
		empty, err := io.ReadAll(NewInjector(strings.NewReader(input), Options{MaxPrefix: int(maxPrefix), MetaCSP: opt.MetaCSP}))
		if err != nil || string(empty) != input {
			t.Errorf("with an empty tag: got %q, %v, want the input %q", empty, err, input)
		}
		if strings.Contains(input, "data-remixproxy") {
			return
		}
		want := input
		if in.Injected() {
			var n int
			if got, n = removeInsertion(got, input); n != 1 {
				t.Fatalf("injected output holds the tag %d times, want once: %q", n, got)
			}
		}
		if got != want {
			t.Errorf("output without the tag:\ngot  %q\nwant %q (the input)", got, want)
		}
		// JSON served as HTML, and a page whose CSP meta before the insertion point allows no
		// script, pass as they are.
		if maxPrefix == 0 && input != "" && !hasUTF16BOM(input) && !startsLikeJSON(input) && !in.Injected() && in.metaVerdict != tagForbidden {
			t.Errorf("a %d-byte document under the default cap was not injected", len(input))
		}
	})
}
