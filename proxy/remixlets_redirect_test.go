package proxy

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/sandbox"
)

func TestRedirectGuard(t *testing.T) {
	st := openTestStore(t)
	r := newRemixletRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(r.close)
	s := &Server{remixlets: r}
	m, _ := sandbox.ParseManifest([]byte(`{"name": "g", "description": "test", "api": 1, "matches": ["https://shop.test/*", "https://cdn.own.test/*"], "permissions": []}`))
	rx := addTestRemixlet(t, st, "g", `"https://shop.test/*"`, ``, rxTestScript)
	r.guard.add(rx.id, m, []string{"https://shop.test/go?to=x#frag", "https://SHOP.test:443/hop"})

	respond := func(from, loc string) *http.Response {
		u, _ := url.Parse(from)
		return &http.Response{StatusCode: http.StatusFound, Status: "302 Found", Header: http.Header{"Location": {loc}},
			Body: io.NopCloser(strings.NewReader("")), Request: &http.Request{URL: u}}
	}
	tests := []struct {
		from, loc string
		refused   bool
	}{
		{"https://shop.test/go?to=https://witness.test/", "https://witness.test/x", true},
		{"https://shop.test/go?other=query", "//witness.test/x", true},
		{"https://shop.test/go", `/\witness.test/x`, true},
		{"https://shop.test/go", "http://shop.test/x", false}, // another origin, but one of the remixlet's sites
		{"https://shop.test/go", "https://cdn.own.test/a.png", false},
		{"https://shop.test/go", "/same-origin", false},
		{"https://shop.test/same-origin", "https://witness.test/second-hop", true}, // the followed hop is guarded too
		{"https://shop.test/not-written", "https://witness.test/x", false},         // not an address a remixlet wrote
		{"https://shop.test/hop", "https://witness.test/x", true},
	}
	for _, tt := range tests {
		resp := respond(tt.from, tt.loc)
		s.guardRemixletRedirect(resp)
		if got := resp.StatusCode == http.StatusForbidden; got != tt.refused {
			t.Errorf("%s -> %s: status %d, refused %v, want %v", tt.from, tt.loc, resp.StatusCode, got, tt.refused)
		}
		if tt.refused && resp.Header.Get("Location") != "" {
			t.Errorf("%s -> %s: the refused answer still has a Location", tt.from, tt.loc)
		}
	}
	waitLog(t, st, rx.id, "redirects to https://witness.test/x")
}
