package rewrite

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// tagNamesAgree tokenizes doc twice in lockstep and fails at the first tag whose name tagName
// (reading the first tokenizer's token, which TagName may be asked once) gives differently from
// the second tokenizer's TagName.
func tagNamesAgree(t *testing.T, doc string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(doc))
	ref := html.NewTokenizer(strings.NewReader(doc))
	for {
		tt := z.Next()
		if rt := ref.Next(); rt != tt {
			t.Fatalf("the two tokenizers disagree: %v, %v", tt, rt)
		}
		if tt == html.ErrorToken {
			return
		}
		if tt != html.StartTagToken && tt != html.EndTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		raw := bytes.Clone(z.Raw())
		got := (&Injector{z: z}).tagName(raw)
		if want, _ := ref.TagName(); got != string(want) {
			t.Fatalf("tag %q: tagName = %q, want the tokenizer's %q", raw, got, want)
		}
	}
}

// TestTagNameAgreesWithTokenizer: reading a tag's name from its raw bytes gives the tokenizer's
// TagName for every tag of the html5lib tests and of the corpus pages, and allocates nothing for
// the names the injector compares.
func TestTagNameAgreesWithTokenizer(t *testing.T) {
	for _, in := range loadHTML5Lib(t) {
		tagNamesAgree(t, in.data)
	}
	for name, page := range corpusPages(t) {
		t.Run(name, func(t *testing.T) { tagNamesAgree(t, string(page)) })
	}
}

// TestRawTagNameKnownNames: the names the injector looks at are read from the raw bytes, whatever
// their case, without an allocation; others are left to the tokenizer.
func TestRawTagNameKnownNames(t *testing.T) {
	cases := []struct {
		raw, want string
		ok        bool
	}{
		{"<META charset=utf-8>", "meta", true},
		{"<script src=x>", "script", true},
		{"</Head>", "head", true},
		{"<noscript>", "noscript", true},
		{"<PlainText>", "plaintext", true},
		{"<br/>", "br", true},
		{"<title\n>", "title", true},
		{"</body", "body", true},
		{"<div class=x>", "", false},
		{"<m\x00eta>", "", false},
		{"<métа>", "", false},
		{"<plaintexts>", "", false},
	}
	for _, c := range cases {
		t.Run(c.raw, func(t *testing.T) {
			raw := []byte(c.raw)
			if got, ok := rawTagName(raw); got != c.want || ok != c.ok {
				t.Fatalf("rawTagName(%q) = %q, %v; want %q, %v", c.raw, got, ok, c.want, c.ok)
			}
			if n := testing.AllocsPerRun(100, func() { rawTagName(raw) }); n != 0 {
				t.Errorf("rawTagName(%q) allocates %v times, want 0", c.raw, n)
			}
		})
	}
}

// FuzzTagName: tagName agrees with the tokenizer's TagName on any input.
func FuzzTagName(f *testing.F) {
	for _, s := range []string{"<META charset=utf-8><Title>x</TITLE>", "<a/b><x\x00y>", "</ScRiPt ><svg:x>", "<\xc3\xa9t\xc3\xa9>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) { tagNamesAgree(t, doc) })
}
