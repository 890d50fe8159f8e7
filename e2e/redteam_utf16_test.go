package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"unicode/utf16"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// utf16Site serves its pages in UTF-16LE, named by a charset label the browser reads as
// UTF-16LE (WHATWG Encoding: csunicode, iso-10646-ucs-2, or utf-16 with spaces around it).
// The proxy's ASCII tag, read two bytes a character, is text at the top of the body, and each
// character gives back two bytes of the tag: the page finds its token there. The tag's length
// decides whether the page's own characters after it stay aligned, so the site has pages at
// four path lengths (the token holds the address).
type utf16Site struct{}

const utf16Script = `<script>
window.found = '';
{
  let bytes = '';
  const w = document.createTreeWalker(document, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_COMMENT);
  for (let n = w.nextNode(); n; n = w.nextNode()) {
    for (const ch of n.data) { const c = ch.charCodeAt(0); bytes += String.fromCharCode(c & 0xff, c >> 8); }
  }
  const m = new RegExp('data-remix' + 'proxy="([^"]+)"').exec(bytes);
  if (m) window.found = m[1];
}
window.ran = true;
</script>`

func (utf16Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch cs := r.URL.Query().Get("cs"); cs {
	case "two headers":
		w.Header()["Content-Type"] = []string{"text/html; charset=utf-8", "text/html; charset=utf-16le"}
	case "none":
		w.Header().Set("Content-Type", "text/html")
	default:
		w.Header().Set("Content-Type", "text/html; charset="+cs)
	}
	doc := fmt.Sprintf(`<!DOCTYPE html><html><head><title>U</title></head><body><p>A UTF-16 page.</p>%s</body></html>`, utf16Script)
	u := utf16.Encode([]rune(doc))
	b := make([]byte, 0, 2*len(u))
	for _, c := range u {
		b = append(b, byte(c), byte(c>>8))
	}
	w.Write(b)
}

// TestRedteamUTF16LabelsGetNoTag: a page declared UTF-16 by any label the browser reads so
// gets no ASCII tag, which would be text it reads its token from.
func TestRedteamUTF16LabelsGetNoTag(t *testing.T) {
	_, _, tab := e2etest.StartProxied(t, map[string]http.Handler{"utf16.test": utf16Site{}})
	for _, cs := range []string{"csunicode", "iso-10646-ucs-2", `" utf-16 "`, "two headers", "none"} {
		t.Run(cs, func(t *testing.T) {
			ran := 0
			for _, path := range []string{"/a", "/ab", "/abc", "/abcd"} {
				tab.Navigate("https://utf16.test" + path + "?cs=" + url.QueryEscape(cs))
				if !e2etest.Eval[bool](tab, `window.ran === true`) { // Navigate waited for the load
					continue // misaligned: the page's own script is garbage
				}
				ran++
				if cset := e2etest.Eval[string](tab, `document.characterSet`); cset != "UTF-16LE" {
					t.Fatalf("%s read as %s, want UTF-16LE", path, cset)
				}
				if tok := e2etest.Eval[string](tab, `window.found`); tok != "" {
					t.Errorf("%s: the page read its token from the text the tag became: %q", path, tok)
				}
			}
			if ran == 0 && cs != "none" { // undeclared, Chromium reads the page as windows-1252
				t.Errorf("the page's script ran at no path length")
			}
		})
	}
}
