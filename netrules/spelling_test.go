package netrules

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// A redirect target is checked as the browser reads the Location it gets (DESIGN invariant 9):
// every spelling of a host of the remixlet's sites passes, every spelling of another host is
// refused, whatever Go's net/url would make of it.
func TestRedirectTargetReadAsTheBrowserReadsIt(t *testing.T) {
	for _, tt := range []struct {
		name, url string
		refused   string // "" when the rule is accepted
	}{
		{"plain", "https://www.shop.test/x.js", ""},
		{"upper case", "HTTPS://WWW.SHOP.TEST/x.js", ""},
		{"fullwidth letters", "https://www.\uff53\uff48\uff4f\uff50.test/x.js", ""},
		{"ideographic full stop", "https://www.shop\u3002test/x.js", ""},
		{"percent-encoded host", "https://www.%73hop.test/x.js", ""},
		{"default port", "https://www.shop.test:443/x.js", ""},
		{"trailing dot", "https://www.shop.test./x.js", ""},
		{"tab in the host", "https://www.sh\top.test/x.js", ""},
		{"no slashes, same host", "https:a.test/x.js", ""},
		{"dot segments", "https://a.test/a/../%2e%2e/x.js", ""},
		{"backslash ends the host", `https://a.test\@witness.test/x.js`, ""},
		{"backslash before the user info", `https://witness.test\@a.test/x.js`, "goes to witness.test"},
		{"user info", "https://a.test@witness.test/x.js", "user name"},
		{"no slashes, another host", "https:witness.test/x.js", "goes to witness.test"},
		{"three slashes", "https:///witness.test/x.js", "goes to witness.test"},
		{"fullwidth other host", "https://\uff57itness.test/", "goes to witness.test"},
		{"other host behind a full stop", "https://a\u3002test\u3002witness.test/", "goes to a.test.witness.test"},
		{"numeric IPv4", "https://0x7f.1/", "goes to 127.0.0.1"},
		{"not https", "http://a.test/x.js", "not https"},
		{"upper-case scheme, not https", "HTTP://a.test/x.js", "not https"},
		{"relative", "/x.js", "not an absolute address"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rule, _ := json.Marshal([]map[string]any{{"id": 1, "action": map[string]any{"type": "redirect", "redirect": map[string]any{"url": tt.url}},
				"condition": map[string]any{"urlFilter": "||cdn.test/x.js"}}})
			probs := problemsOf(t, string(rule), siteA)
			switch {
			case tt.refused == "" && len(probs) > 0:
				t.Errorf("redirect to %q: got %v, want no problem", tt.url, probs)
			case tt.refused != "" && (len(probs) == 0 || !strings.Contains(probs[0].Message, tt.refused)):
				t.Errorf("redirect to %q: got %v, want a problem with %q", tt.url, probs, tt.refused)
			}
		})
	}
}

// The Location a redirect rule answers with is the address that was checked, as the browser
// reads it; a substitution's result is held to the checked host in the same reading.
func TestRedirectLocationIsTheCheckedAddress(t *testing.T) {
	s := NewSet(setOf(t, "rx", siteA, `[
		{"id":1,"action":{"type":"redirect","redirect":{"url":"https://\uff41.test/a/../new.js"}},"condition":{"urlFilter":"/old.js"}},
		{"id":2,"action":{"type":"redirect","redirect":{"regexSubstitution":"https://A.TEST/v2/\\1"}},"condition":{"regexFilter":"^https://cdn\\.test/v1/(.*)$"}}]`))
	h := page("a.test", "script")
	for _, tt := range []struct{ req, want string }{
		{"https://cdn.test/old.js", "https://a.test/new.js"},
		{"https://cdn.test/v1/lib.js?x", "https://a.test/v2/lib.js?x"},
	} {
		res := s.Match(mustReq(t, "GET", tt.req, h))
		if res.Action != Redirect || res.Location != tt.want {
			t.Errorf("%s: got %s to %q, want a redirect to %q", tt.req, res.Action, res.Location, tt.want)
		}
	}
}

// Requests and their initiators are read as the browser reads them: rules match the address
// the browser requests, and an Origin or Referer in another spelling names the same host.
func TestRequestReadAsTheBrowserReadsIt(t *testing.T) {
	for _, tt := range []struct{ raw, url, host string }{
		{"https://Shop.Test:443/a/../b?q", "https://shop.test/b?q", "shop.test"},
		{"https://shop.test./%2e%2e/b", "https://shop.test/b", "shop.test"},
		{"http://0x7f.1:8080/x", "http://127.0.0.1:8080/x", "127.0.0.1"},
		{"https://[::1]/x", "https://[::1]/x", "::1"},
	} {
		r := mustReq(t, "GET", tt.raw, http.Header{})
		if r.URL() != tt.url || r.Host != tt.host {
			t.Errorf("NewRequest(%q): URL %q, Host %q; want %q, %q", tt.raw, r.URL(), r.Host, tt.url, tt.host)
		}
	}
	for _, tt := range []struct{ referer, want string }{
		{"https://WWW.A.TEST./p", "www.a.test"},
		{"https://www.\uff41.test/p", "www.a.test"},
		{"https://b.test/p", ""}, // same-site claimed, another site: unknown
	} {
		r := mustReq(t, "GET", "https://img.a.test/x", http.Header{"Sec-Fetch-Site": {"same-site"}, "Referer": {tt.referer}})
		if r.Initiator != tt.want {
			t.Errorf("Referer %q: initiator %q, want %q", tt.referer, r.Initiator, tt.want)
		}
	}
}
