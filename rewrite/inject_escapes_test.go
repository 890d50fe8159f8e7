package rewrite

import (
	"strings"
	"testing"
)

// TestInjectEscapesBeforeTheInsertionPoint: an ESC byte before the insertion point may have
// switched an ISO-2022-JP decoder out of ASCII, and the browser would read the tag as other
// characters, or inside a comment or attribute value the tokenizer saw closed (Options.EscapesInert).
// Such a document passes through unchanged unless the header fixes an encoding where ESC is
// inert; one after the insertion point changes nothing.
func TestInjectEscapesBeforeTheInsertionPoint(t *testing.T) {
	const comment = "<!DOCTYPE html>\n<!--\x1b$B--><!DOCTYPE\x1b(B><title>J</title>--><p>x"
	tests := []struct {
		name, doc    string
		escapesInert bool
		injected     bool
	}{
		{"in a comment the browser keeps open", comment, false, false},
		{"in the html element's attribute (the quick scan's shape)", "<!DOCTYPE html><html lang=\"\x1b$B\"><head><meta charset=\"iso-2022-jp\"><title>J</title>", false, false},
		{"before a meta charset", "<!--\x1b$B\x1b(B--><meta charset=\"iso-2022-jp\"><title>J</title>", false, false},
		{"in a doctype, end of input", "<!DOCTYPE html \x1b$B>", false, false},
		{"the header fixes another encoding", comment, true, true},
		{"after the insertion point", "<!DOCTYPE html><html><head><title>\x1b$BF|K\\\x1b(B</title><p>x", false, true},
		{"none", "<!DOCTYPE html><title>J</title><p>x", false, true},
	}
	for _, tc := range tests {
		for _, r := range readers {
			t.Run(tc.name+"/"+r.name, func(t *testing.T) {
				in := NewInjector(r.wrap(strings.NewReader(tc.doc)), Options{
					Tag: []byte(testTag), CharsetKnown: tc.escapesInert, EscapesInert: tc.escapesInert,
					MetaCSP: func(s string) string { return s },
				})
				got := readAll(t, in)
				if !tc.injected {
					if got != tc.doc || in.Injected() {
						t.Errorf("got %q (injected %v), want the document unchanged", got, in.Injected())
					}
					return
				}
				if rest, n := removeInsertion(got, tc.doc); rest != tc.doc || n != 1 || !in.Injected() {
					t.Errorf("got %q, want the document with one tag", got)
				}
			})
		}
	}
}

// TestInjectUTF8BOMMakesEscapesInert: a UTF-8 byte order mark fixes the encoding, whatever
// the header or a meta says, so an ESC is an ordinary character.
func TestInjectUTF8BOMMakesEscapesInert(t *testing.T) {
	doc := "\xef\xbb\xbf<!--\x1b$B--><title>J</title><p>x"
	in := NewInjector(strings.NewReader(doc), Options{Tag: []byte(testTag)})
	got := readAll(t, in)
	if rest, n := removeInsertion(got, doc); rest != doc || n != 1 {
		t.Errorf("got %q, want the document with one tag", got)
	}
}

// TestInjectDecide: Decide settles Injected before anything is read, and the output is the same
// as without it.
func TestInjectDecide(t *testing.T) {
	for _, doc := range []string{
		"<!DOCTYPE html><html><head><meta charset=utf-8><title>x</title><p>y",
		"<!--\x1b$B--><title>J</title><p>x",
		`{"json": true}`,
		"\xfe\xff\x00<",
		"",
		"<!-- unterminated",
	} {
		for _, r := range readers {
			plain := readAll(t, NewInjector(r.wrap(strings.NewReader(doc)), Options{Tag: []byte(testTag)}))
			in := NewInjector(r.wrap(strings.NewReader(doc)), Options{Tag: []byte(testTag)})
			in.Decide()
			decided := in.Injected()
			if got := readAll(t, in); got != plain || decided != strings.Contains(plain, testTag) {
				t.Errorf("%q/%s: after Decide (injected %v) got %q, want %q", doc, r.name, decided, got, plain)
			}
		}
	}
}
