package remixlet

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestFindHTMLAddresses(t *testing.T) {
	tests := []struct {
		name, html string
		want       []string
	}{
		{"plain", `<a href="/a">x</a><img src=b.png>`, []string{"/a", "b.png"}},
		// The tree builder moves an <img> out of foreign content; a bare tokenizer reads
		// <svg><style> as a raw-text style element and never sees it.
		{"img breaking out of svg style", `<svg><style><img src="/redirect?to=x"></style></svg>`, []string{"/redirect?to=x"}},
		// <mtext> is an HTML integration point: a <style> in it is HTML raw text, as in the
		// browser, so the second "img" is text.
		{"img breaking out of math", `<math><mi><img src="/m1"></mi><mtext><style><img src="/m2">`, []string{"/m1"}},
		{"noscript is markup in an inert document", `<noscript><img src="/ns"></noscript>`, []string{"/ns"}},
		{"template content", `<template><a href="/tpl">t</a></template>`, []string{"/tpl"}},
		{"style element text is not an address", `<style>a{}</style><img src="/after-style">`, []string{"/after-style"}},
		{"textarea text is not an address", `<textarea><img src="/in-textarea"></textarea>`, nil},
		{"title in head", `<title><img src="/in-title"></title><img src="/body">`, []string{"/body"}},
		{"upper case and entities", `<IMG SRC="&#x2F;e&#110;t">`, []string{"/ent"}},
		{"every loading attribute", `<img srcset="/s1 1x, /s2 2x" lowsrc="/low"><video poster="/p"></video><object data="/d"></object>` +
			`<form action="/act"><button formaction="/fa"></button></form><a ping="/p1 /p2" href="/h">x</a><table background="/bg"></table>`,
			[]string{"/s1", "/s2", "/low", "/p", "/d", "/act", "/fa", "/h", "/p1", "/p2", "/bg"}},
		{"svg xlink href", `<svg><use xlink:href="/sprite#i"></use><image href="/im"></image></svg>`, []string{"/sprite#i", "/im"}},
		{"meta refresh", `<meta http-equiv="refresh" content="0; url='/go'">`, []string{"/go"}},
		{"unclosed attribute eats the rest", `<img src="/a><img src="/b">`, []string{"/a><img src="}},
	}
	for _, tt := range tests {
		got, err := findHTMLAddresses(tt.html)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: findHTMLAddresses(%q) = %q, want %q", tt.name, tt.html, got, tt.want)
		}
	}
}

// setHTML's HTML of the largest size with the densest addresses is still read whole: every
// address is found (no count limit), and a call whose addresses resolve to more than the bound
// is refused whole.
func TestCheckSetHTMLFindsEveryAddress(t *testing.T) {
	pol := testPolicy(t, "https://shop.test/", ``)
	var b strings.Builder
	n := 0
	for b.Len() < maxHTMLLen-20 {
		b.WriteString(`<img src=/i>`)
		n++
	}
	call := domCall{args: jsonArgs(t, `{"$h":1}`, b.String())}
	if err := pol.checkSetHTML(&call); err != nil {
		t.Fatal(err)
	}
	if len(call.addresses) != n {
		t.Errorf("found %d addresses, want %d", len(call.addresses), n)
	}
	long := testPolicy(t, "https://shop.test/"+strings.Repeat("p", 4000), ``)
	b.Reset()
	for b.Len() < maxHTMLLen-20 {
		b.WriteString(`<img src=?>`)
	}
	call = domCall{args: jsonArgs(t, `{"$h":1}`, b.String())}
	if err := long.checkSetHTML(&call); err == nil || !strings.Contains(err.Error(), "split it") {
		t.Errorf("addresses over the bound: got %v, want a refusal", err)
	}
}

func jsonArgs(t *testing.T, handle, s string) []json.RawMessage {
	t.Helper()
	j, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return []json.RawMessage{json.RawMessage(handle), j}
}
