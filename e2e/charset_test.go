package e2e

import (
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// The text of the legacy-charset pages, as the browser must show it.
const (
	japaneseText = "日本語のページです。こんにちは、世界！カタカナとひらがな、漢字も表示されます。"
	cyrillicText = "Съешь же ещё этих мягких французских булок, да выпей чаю. Привет, мир!"
)

type charsetPage struct {
	label string // charset label as the page gives it
	enc   encoding.Encoding
	text  string
}

var charsetPages = map[string]charsetPage{
	"sjis":   {label: "Shift_JIS", enc: japanese.ShiftJIS, text: japaneseText},
	"cp1251": {label: "windows-1251", enc: charmap.Windows1251, text: cyrillicText},
}

// charsetSite serves /{sjis,cp1251}/WHERE: the page in a legacy encoding, with its charset
// declared only in <meta charset> (meta), only in <meta http-equiv=Content-Type> (http-equiv),
// in that meta after a page script (after-script), only in the Content-Type header (header), or in
// a <meta charset> near the end of the first 1024 bytes (late-meta). An injection at the top of
// <head> must not push a declaration out of the browser's 1024-byte prescan window.
func charsetSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{page}/{where}", func(w http.ResponseWriter, r *http.Request) {
		p, ok := charsetPages[r.PathValue("page")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		meta, pad := "", ""
		contentType := "text/html"
		switch r.PathValue("where") {
		case "meta":
			meta = `<meta charset="` + p.label + `">`
		case "late-meta":
			meta = `<meta charset="` + p.label + `">`
			pad = "<!-- " + strings.Repeat("padding ", 110) + "-->\n"
		case "after-script":
			// The shape of a real page (yahoo-3 in the corpus): body content before <head>, then
			// a timing script, then the declaration. The bootstrap must run before that script,
			// so it lands before the declaration, which must still be found by the browser.
			pad = "<div hidden></div><script>window.headStart = 1;</script>\n"
			meta = `<meta http-equiv="Content-Type" content="text/html; charset=` + p.label + `">`
		case "http-equiv":
			meta = `<meta http-equiv="Content-Type" content="text/html; charset=` + p.label + `">`
		case "header":
			contentType = "text/html; charset=" + p.label
		default:
			http.NotFound(w, r)
			return
		}
		page := fmt.Sprintf(`<!doctype html>
<html><head>%s%s<title>%s</title></head><body>
<p>%s</p>
<script>document.body.dataset.pageScript = 'ran'; document.body.dataset.charset = document.characterSet;</script>
</body></html>
`, pad, meta, p.label, p.text)
		if r.PathValue("where") == "late-meta" {
			if i := strings.Index(page, "<meta"); i < 900 || i > 1000 {
				panic(fmt.Sprintf("late meta at byte %d, want 900..1000", i))
			}
		}
		body, err := p.enc.NewEncoder().String(page)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprint(w, body)
	})
	return mux
}

func TestLegacyCharsets(t *testing.T) {
	for _, page := range []string{"sjis", "cp1251"} {
		for _, where := range []string{"meta", "http-equiv", "after-script", "header", "late-meta"} {
			t.Run(page+"/"+where, func(t *testing.T) {
				direct, proxied := loadBoth(t, "https://charset.test/"+page+"/"+where)
				checkLikeDirect(t, direct, proxied)
				want := charsetPages[page].text
				if direct.text != want {
					t.Errorf("direct text %q, want %q (fix the page)", direct.text, want)
				}
				if proxied.text != want {
					t.Errorf("proxied text %q, want %q", proxied.text, want)
				}
				cs := `document.body.dataset.charset`
				if d, p := e2etest.Eval[string](direct.tab, cs), e2etest.Eval[string](proxied.tab, cs); d != p {
					t.Errorf("document.characterSet: proxied %q, direct %q", p, d)
				}
				// Chromium may guess a lost declaration right from the text, so check the bytes too.
				checkCharsetStillDeclared(t, "https://charset.test/"+page+"/"+where)
			})
		}
	}
}

// prescanCharset matches a charset declaration in a <meta> the way a browser's pre-scan finds it.
var prescanCharset = regexp.MustCompile(`(?i)<meta[^>]*charset\s*=\s*["']?([a-z0-9_.:-]+)`)

// checkCharsetStillDeclared fetches url directly and through the proxy (as bytes): a charset the
// original declares within the first 1024 bytes must, through the proxy, still be declared there
// or in the Content-Type header.
func checkCharsetStillDeclared(t *testing.T, url string) {
	t.Helper()
	want := fetchRaw(t, world.Sites(t).Client(), url, nil)
	got := fetchRaw(t, world.Proxy(t).Client(), url, nil)
	m := prescanCharset.FindSubmatch(want.body[:min(1024, len(want.body))])
	if m == nil {
		return // declared in the header only
	}
	if _, params, _ := mime.ParseMediaType(got.header.Get("Content-Type")); strings.EqualFold(params["charset"], string(m[1])) {
		return
	}
	loc := prescanCharset.FindIndex(got.body)
	if loc == nil || loc[0] >= 1024 {
		at := "nowhere"
		if loc != nil {
			at = fmt.Sprintf("at byte %d", loc[0])
		}
		t.Errorf("the charset declaration %q is within the first 1024 bytes directly, but through the proxy it is %s "+
			"and the Content-Type header (%q) does not name it: a browser's pre-scan no longer finds it", m[0], at, got.header.Get("Content-Type"))
	}
}
