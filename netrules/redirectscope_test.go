package netrules

import (
	"net/http"
	"testing"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// A redirect goes only within the requesting page's site, the request's own site, or to a
// fetch: host; otherwise the request is left as it was and Result.Withheld names the rule.
func TestRedirectStaysOnThePagesSite(t *testing.T) {
	rules, probs := Parse([]byte(`[
		{"id":1,"action":{"type":"redirect","redirect":{"regexSubstitution":"https://evil.test/\\1"}},"condition":{"regexFilter":"^https://[^/]*bank\\.test/(.*)$"}},
		{"id":2,"action":{"type":"redirect","redirect":{"regexSubstitution":"https://bank.test/\\1"}},"condition":{"regexFilter":"^https://[^/]*\\.bank\\.test/(.*)$"}},
		{"id":3,"action":{"type":"redirect","redirect":{"url":"https://bob.github.io/x"}},"condition":{"urlFilter":"||alice.github.io/y"}},
		{"id":4,"action":{"type":"redirect","redirect":{"url":"https://alice.github.io/z"}},"condition":{"urlFilter":"||alice.github.io/w"}}]`))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	sites := Sites{Hosts: []string{"*.bank.test", "evil.test", "*.github.io"}}
	rs, probs := Compile("rx", rules, sites)
	granted, _ := Compile("granted", rules, Sites{Hosts: sites.Hosts, Fetch: []string{"evil.test"}})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	page := func(p string) http.Header {
		return http.Header{"Sec-Fetch-Dest": {"image"}, "Sec-Fetch-Site": {"cross-site"}, "Referer": {p}}
	}
	for _, c := range []struct {
		name, url, page string
		set             *Ruleset
		want, withheld  string
	}{
		{"bank.test's request on its page, to evil.test", "https://bank.test/a?b=1", "https://bank.test/", rs, "", "https://evil.test/a?b=1"},
		{"a subdomain's request on bank.test, to evil.test", "https://api.bank.test/a", "https://www.bank.test/", rs, "", "https://evil.test/a"},
		{"with a fetch:evil.test grant", "https://api.bank.test/a", "https://www.bank.test/", granted, "https://evil.test/a", ""},
		{"bank.test's request on evil.test's page", "https://bank.test/a", "https://evil.test/", rs, "https://evil.test/a", ""},
		{"evil.test's request on bank.test's page, to its own site", "https://x.evil.test/", "https://bank.test/", rs, "", ""},
		{"github.io: another user's site is another site", "https://alice.github.io/y", "https://alice.github.io/", rs, "", "https://bob.github.io/x"},
		{"github.io: the same user's site", "https://alice.github.io/w", "https://alice.github.io/", rs, "https://alice.github.io/z", ""},
	} {
		h := page(c.page)
		req := mustReq(t, "GET", c.url, h)
		pageHost := originHost(c.page)
		switch {
		case pageHost == req.Host:
			h.Set("Sec-Fetch-Site", "same-origin")
		case weburl.Site(pageHost) == weburl.Site(req.Host):
			h.Set("Sec-Fetch-Site", "same-site")
		}
		res := NewSet(c.set).Match(mustReq(t, "GET", c.url, h))
		if res.Location != c.want || res.WithheldTo != c.withheld {
			t.Errorf("%s: got Location %q, withheld %q; want %q, %q", c.name, res.Location, res.WithheldTo, c.want, c.withheld)
		}
	}
}
