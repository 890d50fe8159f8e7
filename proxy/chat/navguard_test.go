package chat

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
)

func navRequestFor(t *testing.T, method, rawURL string, hdr ...string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] != "" {
			r.Header.Set(hdr[i], hdr[i+1])
		}
	}
	return r
}

func TestNavExpectPairs(t *testing.T) {
	g := &navGuard{}
	x := g.arm("click", "https://www.shop.test/cart", "https://www.shop.test", []string{"https://www.shop.test/go?x=1"}, nil)
	for _, tt := range []struct {
		name      string
		url       string
		fetchSite string
		referer   string
		want      bool
	}{
		{"a link on the page", "https://www.shop.test/out?to=x", "same-origin", "https://www.shop.test/cart", true},
		{"the page's script sends the tab elsewhere", "https://witness.test/?d=1", "cross-site", "https://www.shop.test/cart", true},
		{"a Referer of the origin only (policy origin)", "https://witness.test/", "cross-site", "https://www.shop.test/", true},
		{"no Referer, same-origin", "https://www.shop.test/out", "same-origin", "", true},
		{"no Referer, same-site", "https://api.shop.test/x", "same-site", "", true},
		{"no Referer, cross-site: unknown initiator", "https://witness.test/", "cross-site", "", true},
		{"no Fetch metadata and no Referer (plain http)", "http://witness.test/", "", "", true},
		{"the expected address", "https://www.shop.test/go?x=1", "same-origin", "https://other.test/", true},
		{"the address bar", "https://witness.test/", "none", "", false},
		{"the address bar, to the site", "https://www.shop.test/out", "none", "", false},
		{"another site's tab", "https://witness.test/", "cross-site", "https://news.test/a", false},
		{"no Referer, same-origin of another site", "https://news.test/b", "same-origin", "", false},
		{"no Referer, same-site of another site", "https://a.news.test/b", "same-site", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := navRequestFor(t, "GET", tt.url, testsite.NavHeaders(tt.fetchSite, tt.referer)...)
			if tt.fetchSite == "" {
				r.Header.Del("Sec-Fetch-Dest")
				r.Header.Del("Sec-Fetch-Mode")
			}
			if top, _ := httpx.NavigationKind(r); !top {
				t.Fatal("not read as a navigation")
			}
			g.mu.Lock()
			got := x.pairs(readNavRequest(r))
			g.mu.Unlock()
			if got != tt.want {
				t.Errorf("pairs = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNavigationKind(t *testing.T) {
	for _, tt := range []struct {
		name       string
		method     string
		hdr        []string
		top, frame bool
	}{
		{"top-level document", "GET", []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate"}, true, false},
		{"a form's POST", "POST", []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate"}, true, false},
		{"an iframe", "GET", []string{"Sec-Fetch-Dest", "iframe", "Sec-Fetch-Mode", "navigate"}, false, true},
		{"a frame", "GET", []string{"Sec-Fetch-Dest", "frame", "Sec-Fetch-Mode", "navigate"}, false, true},
		{"an image", "GET", []string{"Sec-Fetch-Dest", "image", "Sec-Fetch-Mode", "no-cors"}, false, false},
		{"a fetch", "GET", []string{"Sec-Fetch-Dest", "empty", "Sec-Fetch-Mode", "cors"}, false, false},
		{"a document fetched, not navigated", "GET", []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "cors"}, false, false},
		{"plain http navigation", "GET", []string{"Upgrade-Insecure-Requests", "1"}, true, false},
		{"plain http by Accept", "GET", []string{"Accept", "text/html,application/xhtml+xml"}, true, false},
		{"plain http image", "GET", []string{"Accept", "image/avif,image/webp"}, false, false},
		{"a DELETE", "DELETE", []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate"}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			top, frame := httpx.NavigationKind(navRequestFor(t, tt.method, "https://shop.test/", tt.hdr...))
			if top != tt.top || frame != tt.frame {
				t.Errorf("navigationKind = %v, %v; want %v, %v", top, frame, tt.top, tt.frame)
			}
		})
	}
}

// TestNavHopLeaves: a Location is read against the request as the browser reads it (weburl),
// and it leaves the site exactly when the browser would go to another site — every spelling of
// the attack list included.
func TestNavHopLeaves(t *testing.T) {
	x := (&navGuard{}).arm("navigate", "https://www.shop.co.uk/a", "https://www.shop.co.uk", nil, nil)
	from, _ := weburl.Parse("https://www.shop.co.uk/out?to=x")
	for _, tt := range []struct {
		loc    string
		leaves bool
	}{
		{"/next", false},
		{"https://api.shop.co.uk/v1", false},
		{"http://shop.co.uk/", false},
		{"https://SHOP.CO.UK./x", false},
		{"https://www.shop.co.uk:8443/x", false},
		{"https://www.shop.co.uk:443/x", false},
		{"/a/../%2e%2e/next", false},
		{"https://\uff57\uff57\uff57.shop.co.uk/", false}, // fullwidth letters of the site
		{"https://shop\u3002co\uff0euk/", false},          // other full stops
		{"https://www.shop.co.uk\\@witness.test/", false}, // a backslash ends the host: a path on the site
		{"https:witness.test", false},                     // no "//", same scheme: a path on this origin
		{"https://witness.test/?d=secret", true},
		{"//witness.test/", true},
		{"https:\\\\witness.test/", true},
		{"/\\witness.test/", true},
		{"\\\\witness.test/", true},
		{" \thttps://wit\tness.test/\n", true},
		{"https://www.shop.co.uk@witness.test/", true},
		{"https://user@www.shop.co.uk/", true},
		{"https://witness.test\\@www.shop.co.uk/", true},
		{"https://co.uk/", true},
		{"https://other.co.uk/", true},
		{"http:witness.test", true}, // another scheme: the host witness.test
		{"https:///witness.test", true},
		{"javascript:alert(1)", true},
		{"data:text/html,x", true},
		{"mailto:a@witness.test", true},
		{"https://remix.proxy/manager", true},
		{"https://REMIX.PROXY./manager", true},
		{"https://\uff57itness.test/", true},
		{"https://www.shop.co.uk\u3002witness.test/", true},
		{"https://www.shop.co.uk%2ewitness.test/", true},
		{"https://0x7f.1/", true},
		{"http://2130706433/", true},
		{"https://[::1]/", true},
		{"https://sh op.co.uk/", true}, // does not parse: refused
	} {
		t.Run(tt.loc, func(t *testing.T) {
			m := &navMark{xs: []*navExpect{x}, from: from}
			why, _ := m.checkHop(from, tt.loc, "a redirect")
			if got := why != ""; got != tt.leaves {
				t.Errorf("checkHop(%q) refused = %v (%q), want %v", tt.loc, got, why, tt.leaves)
			}
		})
	}
}

// TestNavExpectBounds: expectations expire, and arming past the bound drops the oldest rather
// than leave an action unguarded.
func TestNavExpectBounds(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	g := &navGuard{now: func() time.Time { return now }}
	first := g.arm("click", "https://a.test/", "https://a.test", nil, nil)
	for i := 0; i < maxNavExpects+5; i++ {
		g.arm("click", "https://a.test/", "https://a.test", nil, nil)
	}
	g.mu.Lock()
	_, kept := g.xs[first.id]
	n := len(g.xs)
	g.mu.Unlock()
	if kept || n != maxNavExpects {
		t.Errorf("kept the oldest %v, %d live; want false, %d", kept, n, maxNavExpects)
	}
	g.mu.Lock()
	for _, x := range g.xs {
		x.running = false
		x.until = now.Add(navAfter)
	}
	g.mu.Unlock()
	now = now.Add(navAfter + time.Millisecond)
	g.arm("click", "https://a.test/", "https://a.test", nil, nil)
	if n := g.live.Load(); n != 1 {
		t.Errorf("%d live after the windows ended, want 1", n)
	}
	// An action that never answers is bounded too.
	now = now.Add(navMaxRunning)
	g.mu.Lock()
	g.pruneLocked(now)
	g.mu.Unlock()
	if n := g.live.Load(); n != 0 {
		t.Errorf("%d live after navMaxRunning, want 0", n)
	}
	var nilX *navExpect
	nilX.settle()
	nilX.expect("https://a.test/")
	if out, err := nilX.finish(context.Background(), "click", true, json.RawMessage(`{}`), nil); err != nil || string(out) != "{}" {
		t.Errorf("nil finish = %s, %v", out, err)
	}
}

// TestNavRuleWriter: a remixlet rule's redirect of the agent's navigation (netrules.go answers it
// itself) is checked like the site's: off the site it becomes the refusal page, on it it passes.
func TestNavRuleWriter(t *testing.T) {
	for _, tt := range []struct {
		name, loc string
		status    int
	}{
		{"off the site", "https://witness.test/?d=1", http.StatusForbidden},
		{"on the site", "https://www.shop.test/b", http.StatusTemporaryRedirect},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := (&navGuard{}).arm("click", "https://shop.test/", "https://shop.test", nil, nil)
			from, _ := weburl.Parse("https://shop.test/a")
			rec := httptest.NewRecorder()
			w := &navRuleWriter{ResponseWriter: rec, mark: &navMark{xs: []*navExpect{x}}, from: from}
			w.Header().Set("Location", tt.loc)
			w.Header().Set("X-Remixproxy", "redirected")
			w.WriteHeader(http.StatusTemporaryRedirect)
			w.Write([]byte("rule body"))
			if rec.Code != tt.status {
				t.Fatalf("status = %d, want %d", rec.Code, tt.status)
			}
			refused := tt.status == http.StatusForbidden
			if got := rec.Header().Get("Location") != ""; got == refused {
				t.Errorf("Location kept = %v", got)
			}
			if body := rec.Body.String(); refused != strings.Contains(body, "remixlet&#39;s redirect rule") || refused == strings.Contains(body, "rule body") {
				t.Errorf("body = %q", body)
			}
			if got := x.refusal() != ""; got != refused {
				t.Errorf("refusal recorded = %v, want %v", got, refused)
			}
		})
	}
}
