package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

func TestFirstSheetsAttr(t *testing.T) {
	rx := "rx_" + strings.Repeat("ab", 16)
	tests := []struct {
		name string
		css  string
	}{
		{"plain", "h1 { outline: 3px solid red }"},
		{"quotes", `a[title="x"]::after { content: "it's" }`},
		{"markup", `p::after { content: "</script><script>alert(1)</script>&amp;" }`},
		{"non-ASCII", `p::before { content: "caf\u00e9 \u2028 \u2764" }`},
		{"astral", "p::before { content: \"\U0001F600\" }"},
		{"escapes", `p::before { content: "\22 \\" }`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []panel.FirstSheet{{Remixlet: rx, Version: 42, CSS: tt.css}}
			attr := firstSheetsAttr(in)
			for i := 0; i < len(attr); i++ {
				if attr[i] >= 0x80 || attr[i] == '"' || attr[i] == '<' || attr[i] == '>' {
					t.Fatalf("attribute has byte %q at %d: %s", attr[i], i, attr)
				}
			}
			// As the browser reads the attribute, then the page agent's JSON.parse.
			doc, err := xhtml.Parse(strings.NewReader(`<script data-remixproxy-sheets="` + attr + `"></script>`))
			if err != nil {
				t.Fatal(err)
			}
			var value string
			var walk func(n *xhtml.Node)
			walk = func(n *xhtml.Node) {
				for _, a := range n.Attr {
					if a.Key == "data-remixproxy-sheets" {
						value = a.Val
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(doc)
			var got []panel.FirstSheet
			if err := json.Unmarshal([]byte(value), &got); err != nil {
				t.Fatalf("attribute value %q is not JSON: %v", value, err)
			}
			if !reflect.DeepEqual(got, in) {
				t.Errorf("got %+v, want %+v", got, in)
			}
		})
	}
	if got := firstSheetsAttr(nil); got != "" {
		t.Errorf("no sheets: got %q, want no attribute", got)
	}
}

// sheetsAttrOf is the first-frame sheets the bootstrap tag of an injected page carries.
func sheetsAttrOf(t *testing.T, body []byte) []panel.FirstSheet {
	t.Helper()
	_, tag := stripTag(t, body)
	z := xhtml.NewTokenizer(strings.NewReader(tag))
	z.Next()
	for _, a := range z.Token().Attr {
		if a.Key == "data-remixproxy-sheets" {
			var out []panel.FirstSheet
			if err := json.Unmarshal([]byte(a.Val), &out); err != nil {
				t.Fatalf("sheets attribute %q: %v", a.Val, err)
			}
			return out
		}
	}
	return nil
}

// tagForm is one of the two forms of the bootstrap tag, and the page policy that gets it.
type tagForm struct {
	name string
	csp  string // the page's Content-Security-Policy, if any
	tag  string // what the tag must contain
}

var tagForms = []tagForm{
	{"external tag", "", ` src="https://remix.proxy/agent/`},
	{"inline tag", "script-src 'sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' 'strict-dynamic'", string(panel.Bootstrap()[:20])},
}

// tagFormFixture is a manager fixture whose site serves plainPage with tc's policy.
func tagFormFixture(t *testing.T, tc tagForm) *managerFixture {
	t.Helper()
	var hdr []string
	if tc.csp != "" {
		hdr = []string{"Content-Security-Policy", tc.csp}
	}
	resolve, roots := tlsSite(t, siteHost, htmlHandler(plainPage, hdr...))
	return newManagerFixture(t, fixtureOpts{resolve: resolve, roots: roots})
}

func TestBootstrapCarriesFirstFrameSheets(t *testing.T) {
	ctx := context.Background()
	const css = `h1 { outline: 3px solid red } p::after { content: "\"</script>" }`
	manifest := func(name string) []byte {
		return []byte(fmt.Sprintf(`{"name": %q, "description": "t", "api": 1, "matches": ["https://%s/*"], "permissions": []}`, name, siteHost))
	}
	for _, tc := range tagForms {
		t.Run(tc.name, func(t *testing.T) {
			f := tagFormFixture(t, tc)
			rx := personRemixlet(t, f.st, "outline", store.Files{sandbox.ManifestFile: manifest("outline"), sandbox.StyleFile: []byte(css)})
			personRemixlet(t, f.st, "evil", store.Files{sandbox.ManifestFile: manifest("evil"), sandbox.StyleFile: []byte(`h2 { background: url(https://evil.test/x) }`)})
			v, _, err := f.st.Active(ctx, rx.ID)
			if err != nil {
				t.Fatal(err)
			}

			_, body := f.get("https://" + siteHost + "/")
			_, tag := stripTag(t, body)
			if !strings.Contains(tag, tc.tag) {
				t.Fatalf("tag %q lacks %q", tag[:min(len(tag), 300)], tc.tag)
			}
			// With its own copy (rewrite.OwnSheet), kept after the first key of a secret.
			own := `h1:where([data-remixlet-own]){ outline: 3px solid red } p:where([data-remixlet-own])::after{ content: "\"</script>" }`
			want := []panel.FirstSheet{{Remixlet: rx.ID, Version: v.ID, CSS: css, Own: own}}
			if got := sheetsAttrOf(t, body); !reflect.DeepEqual(got, want) {
				t.Errorf("sheets: got %+v, want %+v (the refused stylesheet left out)", got, want)
			}
			rest, _ := stripTag(t, body)
			if string(rest) != plainPage {
				t.Errorf("page minus tag = %q", rest)
			}

			// Paused: the next load carries none.
			if err := f.st.PauseSite(ctx, siteHost); err != nil {
				t.Fatal(err)
			}
			_, body = f.get("https://" + siteHost + "/")
			if got := sheetsAttrOf(t, body); got != nil {
				t.Errorf("paused site: sheets %+v, want none", got)
			}
		})
	}
}

// TestBootstrapSaysWhereRemixletsRun: the tag carries data-remixproxy-now exactly when a
// remixlet would run on the page (or a chat may follow its tab there: follow_test.go) — a script-only one too, which has no first-frame sheet — so
// the page agent connects at once there and after the page's load elsewhere (start.js).
func TestBootstrapSaysWhereRemixletsRun(t *testing.T) {
	ctx := context.Background()
	manifest := func(name, host string) []byte {
		return []byte(fmt.Sprintf(`{"name": %q, "description": "t", "api": 1, "matches": ["https://%s/*"], "permissions": []}`, name, host))
	}
	const attr = ` data-remixproxy-now=""`
	for _, tc := range tagForms {
		t.Run(tc.name, func(t *testing.T) {
			f := tagFormFixture(t, tc)
			has := func() bool {
				t.Helper()
				_, body := f.get("https://" + siteHost + "/")
				rest, tag := stripTag(t, body)
				if string(rest) != plainPage {
					t.Fatalf("page minus tag = %q", rest)
				}
				if !strings.Contains(tag, tc.tag) {
					t.Fatalf("tag %q lacks %q", tag[:min(len(tag), 300)], tc.tag)
				}
				return strings.Contains(tag, attr)
			}
			if has() {
				t.Error("no remixlet at all: the tag says remixlets run")
			}
			personRemixlet(t, f.st, "elsewhere", store.Files{sandbox.ManifestFile: manifest("elsewhere", "other.test"), sandbox.ScriptFile: []byte(`dom.hide(dom.query("h1"))`)})
			if has() {
				t.Error("a remixlet of another site only: the tag says remixlets run")
			}
			personRemixlet(t, f.st, "script only", store.Files{sandbox.ManifestFile: manifest("script only", siteHost), sandbox.ScriptFile: []byte(`dom.hide(dom.query("h1"))`)})
			if !has() {
				t.Error("a script remixlet matches the page: the tag does not say remixlets run")
			}
			if err := f.st.PauseSite(ctx, siteHost); err != nil {
				t.Fatal(err)
			}
			if has() {
				t.Error("paused site: the tag says remixlets run")
			}
		})
	}
}
