package netrules

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

func setOf(t testing.TB, owner string, sites Sites, js string) *Ruleset {
	t.Helper()
	rules, probs := Parse([]byte(js))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	rs, probs := Compile(owner, rules, sites)
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	return rs
}

// page is a subresource request made by a page on pageHost.
func page(pageHost, dest string) http.Header {
	return http.Header{"Sec-Fetch-Dest": {dest}, "Sec-Fetch-Site": {"cross-site"}, "Referer": {"https://" + pageHost + "/index.html"}}
}

func TestPriorityAndTieBreaks(t *testing.T) {
	every := Sites{Every: true}
	cases := []struct {
		name  string
		rules string
		want  string
		by    int
	}{
		{"higher priority wins", `[{"id":1,"priority":1,"action":{"type":"allow"},"condition":{"urlFilter":"x"}},
			{"id":2,"priority":2,"action":{"type":"block"},"condition":{"urlFilter":"x"}}]`, Block, 2},
		{"allow beats block at equal priority", `[{"id":1,"action":{"type":"block"},"condition":{"urlFilter":"x"}},
			{"id":2,"action":{"type":"allow"},"condition":{"urlFilter":"x"}}]`, "", 0},
		{"block beats upgradeScheme", `[{"id":1,"action":{"type":"upgradeScheme"},"condition":{"urlFilter":"x"}},
			{"id":2,"action":{"type":"block"},"condition":{"urlFilter":"x"}}]`, Block, 2},
		{"upgradeScheme beats redirect", `[{"id":1,"action":{"type":"redirect","redirect":{"url":"https://a.test/y"}},"condition":{"urlFilter":"||a.test/x"}},
			{"id":2,"action":{"type":"upgradeScheme"},"condition":{"urlFilter":"x"}}]`, UpgradeScheme, 2},
		{"redirect with higher priority beats block", `[{"id":1,"priority":5,"action":{"type":"redirect","redirect":{"url":"https://a.test/y"}},"condition":{"urlFilter":"||a.test/x"}},
			{"id":2,"action":{"type":"block"},"condition":{"urlFilter":"x"}}]`, Redirect, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSet(setOf(t, "rx", every, c.rules))
			res := s.Match(mustReq(t, "GET", "http://a.test/x", page("b.test", "image")))
			if res.Action != c.want || res.By.RuleID != c.by {
				t.Errorf("got %q by rule %d, want %q by rule %d", res.Action, res.By.RuleID, c.want, c.by)
			}
		})
	}
}

func TestModifyHeadersOrderAndAllowFloor(t *testing.T) {
	s := NewSet(setOf(t, "rx", Sites{Every: true}, `[
		{"id":1,"priority":1,"action":{"type":"modifyHeaders","requestHeaders":[{"header":"X-A","operation":"set","value":"low"}]},"condition":{"urlFilter":"x"}},
		{"id":2,"priority":3,"action":{"type":"modifyHeaders","requestHeaders":[{"header":"X-A","operation":"set","value":"high"}]},"condition":{"urlFilter":"x"}},
		{"id":3,"priority":3,"action":{"type":"modifyHeaders","responseHeaders":[{"header":"X-B","operation":"append","value":"1"}]},"condition":{"urlFilter":"x"}},
		{"id":4,"priority":2,"action":{"type":"modifyHeaders","responseHeaders":[{"header":"X-B","operation":"append","value":"2"}],"requestHeaders":[{"header":"X-C","operation":"remove"}]},"condition":{"urlFilter":"x"}},
		{"id":5,"priority":1,"action":{"type":"modifyHeaders","responseHeaders":[{"header":"X-B","operation":"set","value":"3"}]},"condition":{"urlFilter":"x"}}]`))
	res := s.Match(mustReq(t, "GET", "https://a.test/x", page("b.test", "script")))
	h := http.Header{"X-C": {"gone"}}
	res.ApplyRequestHeaders(h)
	if got := h.Get("X-A"); got != "high" {
		t.Errorf("X-A = %q, want high (the higher-priority set wins)", got)
	}
	if h.Get("X-C") != "" {
		t.Errorf("X-C not removed")
	}
	rh := http.Header{}
	res.ApplyResponseHeaders(rh)
	if got := rh.Values("X-B"); !slices.Equal(got, []string{"1", "2"}) {
		t.Errorf("X-B = %q, want [1 2] (appends in priority order; a set after an append is ignored)", got)
	}

	// An allow rule at priority 2 keeps modifyHeaders rules at 2 and below from applying.
	s = NewSet(setOf(t, "rx", Sites{Every: true}, `[
		{"id":1,"priority":2,"action":{"type":"allow"},"condition":{"urlFilter":"x"}},
		{"id":2,"priority":3,"action":{"type":"modifyHeaders","requestHeaders":[{"header":"X-A","operation":"set","value":"a"}]},"condition":{"urlFilter":"x"}},
		{"id":3,"priority":2,"action":{"type":"modifyHeaders","requestHeaders":[{"header":"X-B","operation":"set","value":"b"}]},"condition":{"urlFilter":"x"}}]`))
	res = s.Match(mustReq(t, "GET", "https://a.test/x", page("b.test", "script")))
	h = http.Header{}
	res.ApplyRequestHeaders(h)
	if h.Get("X-A") != "a" || h.Get("X-B") != "" {
		t.Errorf("headers %v, want X-A only", h)
	}
}

func TestAppendJoinsRequestHeaderValues(t *testing.T) {
	res := Result{RequestHeaders: []HeaderChange{{Matched{"rx", 1}, HeaderOp{"Accept-Language", OpAppend, "fr"}}}}
	h := http.Header{"Accept-Language": {"en"}}
	res.ApplyRequestHeaders(h)
	if got := h.Get("Accept-Language"); got != "en, fr" {
		t.Errorf("got %q, want %q", got, "en, fr")
	}
}

func TestForbiddenHeaderNeverApplied(t *testing.T) {
	// A Result built by hand (no Check) still cannot touch a security header.
	res := Result{ResponseHeaders: []HeaderChange{{Matched{"rx", 1}, HeaderOp{"content-security-policy", OpRemove, ""}}}}
	h := http.Header{"Content-Security-Policy": {"default-src 'self'"}}
	res.ApplyResponseHeaders(h)
	if h.Get("Content-Security-Policy") == "" {
		t.Error("CSP removed")
	}
}

func TestConditions(t *testing.T) {
	every := Sites{Every: true}
	cases := []struct {
		name   string
		cond   string
		method string
		url    string
		h      http.Header
		want   bool
	}{
		{"default types leave out main_frame", `{"urlFilter":"||a.test^"}`, "GET", "https://a.test/", page("b.test", "document"), false},
		{"main_frame when named", `{"urlFilter":"||a.test^","resourceTypes":["main_frame"]}`, "GET", "https://a.test/", page("b.test", "document"), true},
		{"excluded type", `{"urlFilter":"||a.test^","excludedResourceTypes":["image"]}`, "GET", "https://a.test/p.png", page("b.test", "image"), false},
		{"type matches", `{"urlFilter":"||a.test^","resourceTypes":["stylesheet"]}`, "GET", "https://a.test/s.css", page("b.test", "style"), true},
		{"xhr is empty dest", `{"resourceTypes":["xmlhttprequest"]}`, "GET", "https://a.test/api", page("b.test", "empty"), true},
		{"requestDomains covers subdomains", `{"requestDomains":["a.test"]}`, "GET", "https://img.a.test/x", page("b.test", "image"), true},
		{"requestDomains is not a suffix match", `{"requestDomains":["a.test"]}`, "GET", "https://nota.test/x", page("b.test", "image"), false},
		{"excludedRequestDomains", `{"requestDomains":["a.test"],"excludedRequestDomains":["img.a.test"]}`, "GET", "https://img.a.test/x", page("b.test", "image"), false},
		{"initiatorDomains", `{"initiatorDomains":["b.test"]}`, "GET", "https://a.test/x", page("www.b.test", "image"), true},
		{"initiatorDomains other", `{"initiatorDomains":["c.test"]}`, "GET", "https://a.test/x", page("b.test", "image"), false},
		{"excludedInitiatorDomains", `{"excludedInitiatorDomains":["b.test"]}`, "GET", "https://a.test/x", page("b.test", "image"), false},
		{"requestMethods", `{"requestMethods":["post"]}`, "POST", "https://a.test/x", page("b.test", "empty"), true},
		{"requestMethods other", `{"requestMethods":["post"]}`, "GET", "https://a.test/x", page("b.test", "empty"), false},
		{"excludedRequestMethods", `{"excludedRequestMethods":["get"]}`, "GET", "https://a.test/x", page("b.test", "empty"), false},
		{"regexFilter", `{"regexFilter":"^https://a\\.test/ads/[0-9]+$"}`, "GET", "https://a.test/ads/42", page("b.test", "image"), true},
		{"regexFilter case-insensitive by default", `{"regexFilter":"/ADS/"}`, "GET", "https://a.test/ads/42", page("b.test", "image"), true},
		{"regexFilter case-sensitive", `{"regexFilter":"/ADS/","isUrlFilterCaseSensitive":true}`, "GET", "https://a.test/ads/42", page("b.test", "image"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := NewSet(setOf(t, "rx", every, `[{"id":1,"action":{"type":"block"},"condition":`+c.cond+`}]`))
			res := s.Match(mustReq(t, c.method, c.url, c.h))
			if got := res.Action == Block; got != c.want {
				t.Errorf("blocked = %v, want %v", got, c.want)
			}
		})
	}
}

func TestRedirectOnlyGETAndUpgradeOnlyHTTP(t *testing.T) {
	s := NewSet(setOf(t, "rx", siteA, `[
		{"id":1,"action":{"type":"redirect","redirect":{"url":"https://a.test/new.js"}},"condition":{"urlFilter":"/old.js"}},
		{"id":2,"action":{"type":"upgradeScheme"},"condition":{"urlFilter":"/insecure"}},
		{"id":3,"action":{"type":"redirect","redirect":{"regexSubstitution":"https://a.test/v2/\\1"}},"condition":{"regexFilter":"^https://cdn\\.test/v1/(.*)$"}}]`))
	h := page("a.test", "script")
	if res := s.Match(mustReq(t, "GET", "https://cdn.test/old.js", h)); res.Action != Redirect || res.Location != "https://a.test/new.js" {
		t.Errorf("GET: %+v, want a redirect to https://a.test/new.js", res)
	}
	if res := s.Match(mustReq(t, "POST", "https://cdn.test/old.js", h)); res.Action != "" {
		t.Errorf("POST: %+v, want nothing (redirects act on GET only)", res)
	}
	if res := s.Match(mustReq(t, "GET", "http://cdn.test/insecure?a=1", h)); res.Action != UpgradeScheme || res.Location != "https://cdn.test/insecure?a=1" {
		t.Errorf("http: %+v, want an upgrade", res)
	}
	if res := s.Match(mustReq(t, "GET", "https://cdn.test/insecure", h)); res.Action != "" {
		t.Errorf("https: %+v, want nothing", res)
	}
	if res := s.Match(mustReq(t, "GET", "https://cdn.test/v1/lib.js?x", h)); res.Action != Redirect || res.Location != "https://a.test/v2/lib.js?x" {
		t.Errorf("regexSubstitution: %+v", res)
	}
}

func TestScope(t *testing.T) {
	rules := `[{"id":1,"action":{"type":"block"},"condition":{"urlFilter":"||ads.test^","resourceTypes":["image","main_frame"]}}]`
	site := NewSet(setOf(t, "site", siteA, rules))
	every := NewSet(setOf(t, "every", Sites{Every: true}, rules))
	cases := []struct {
		name       string
		h          http.Header
		site, evry bool
	}{
		{"from its page", page("a.test", "image"), true, true},
		{"from a subdomain its matches cover", page("x.shop.test", "image"), true, true},
		{"from another site's page", page("other.test", "image"), false, true},
		{"unknown initiator", http.Header{"Sec-Fetch-Dest": {"image"}, "Sec-Fetch-Site": {"cross-site"}}, false, true},
		{"Origin wins over Referer", http.Header{"Sec-Fetch-Dest": {"image"}, "Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://other.test"}, "Referer": {"https://a.test/"}}, false, true},
		{"Sec-Fetch-Site contradicts Referer", http.Header{"Sec-Fetch-Dest": {"image"}, "Sec-Fetch-Site": {"same-origin"}, "Referer": {"https://a.test/"}}, false, true},
		{"navigation from its page", page("a.test", "document"), true, true},
		{"navigation the person typed", http.Header{"Sec-Fetch-Dest": {"document"}, "Sec-Fetch-Site": {"none"}}, false, true},
		{"plain http page, Referer only", http.Header{"Accept": {"image/png"}, "Referer": {"http://a.test/p"}}, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustReq(t, "GET", "https://ads.test/x.png", c.h)
			if got := site.Match(r).Action == Block; got != c.site {
				t.Errorf("site remixlet blocked = %v, want %v (initiator %d %q)", got, c.site, r.InitiatorState, r.Initiator)
			}
			if got := every.Match(r).Action == Block; got != c.evry {
				t.Errorf("every-site remixlet blocked = %v, want %v", got, c.evry)
			}
		})
	}
}

func TestInitiatorOf(t *testing.T) {
	cases := []struct {
		name  string
		url   string
		h     http.Header
		state int
		host  string
	}{
		{"none", "https://a.test/", http.Header{"Sec-Fetch-Site": {"none"}}, InitiatorNone, ""},
		{"same-origin without referer", "https://a.test/x", http.Header{"Sec-Fetch-Site": {"same-origin"}}, InitiatorKnown, "a.test"},
		{"same-site", "https://img.a.test/x", http.Header{"Sec-Fetch-Site": {"same-site"}, "Referer": {"https://www.a.test/p"}}, InitiatorKnown, "www.a.test"},
		{"same-site lie", "https://img.a.test/x", http.Header{"Sec-Fetch-Site": {"same-site"}, "Referer": {"https://b.test/p"}}, InitiatorUnknown, ""},
		{"cross-site", "https://c.test/x", http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://b.test"}}, InitiatorKnown, "b.test"},
		{"cross-site without headers", "https://c.test/x", http.Header{"Sec-Fetch-Site": {"cross-site"}}, InitiatorUnknown, ""},
		{"origin null", "https://c.test/x", http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"null"}, "Referer": {"https://b.test/"}}, InitiatorKnown, "b.test"},
		{"bogus value", "https://c.test/x", http.Header{"Sec-Fetch-Site": {"weird"}, "Origin": {"https://b.test"}}, InitiatorUnknown, ""},
		{"nothing", "http://c.test/x", http.Header{}, InitiatorUnknown, ""},
	}
	for _, c := range cases {
		r := mustReq(t, "GET", c.url, c.h)
		if r.InitiatorState != c.state || r.Initiator != c.host {
			t.Errorf("%s: got %d %q, want %d %q", c.name, r.InitiatorState, r.Initiator, c.state, c.host)
		}
	}
}

func TestResourceType(t *testing.T) {
	cases := []struct {
		h    http.Header
		want string
	}{
		{http.Header{"Sec-Fetch-Dest": {"document"}}, "main_frame"},
		{http.Header{"Sec-Fetch-Dest": {"iframe"}}, "sub_frame"},
		{http.Header{"Sec-Fetch-Dest": {"style"}}, "stylesheet"},
		{http.Header{"Sec-Fetch-Dest": {"script"}}, "script"},
		{http.Header{"Sec-Fetch-Dest": {"image"}}, "image"},
		{http.Header{"Sec-Fetch-Dest": {"font"}}, "font"},
		{http.Header{"Sec-Fetch-Dest": {"video"}}, "media"},
		{http.Header{"Sec-Fetch-Dest": {"embed"}}, "object"},
		{http.Header{"Sec-Fetch-Dest": {"report"}}, "csp_report"},
		{http.Header{"Sec-Fetch-Dest": {"empty"}, "Sec-Fetch-Mode": {"cors"}}, "xmlhttprequest"},
		{http.Header{"Sec-Fetch-Dest": {"empty"}, "Sec-Fetch-Mode": {"websocket"}}, "websocket"},
		{http.Header{"Sec-Fetch-Dest": {"empty"}, "Ping-To": {"https://a.test/"}}, "ping"},
		{http.Header{"Sec-Fetch-Dest": {"manifest"}}, "other"},
		{http.Header{"Upgrade": {"websocket"}}, "websocket"},
		{http.Header{"Accept": {"text/html,application/xhtml+xml"}}, "main_frame"},
		{http.Header{"Accept": {"image/avif,image/webp,*/*"}}, "image"},
		{http.Header{"Accept": {"text/css,*/*;q=0.1"}}, "stylesheet"},
		{http.Header{"Accept": {"*/*"}}, "other"},
	}
	for _, c := range cases {
		if got := ResourceType(c.h); got != c.want {
			t.Errorf("ResourceType(%v) = %q, want %q", c.h, got, c.want)
		}
	}
}

func TestAcrossRemixletsBlockWins(t *testing.T) {
	a := setOf(t, "a", Sites{Every: true}, `[{"id":1,"priority":9,"action":{"type":"allow"},"condition":{"urlFilter":"x"}}]`)
	b := setOf(t, "b", Sites{Every: true}, `[{"id":1,"action":{"type":"block"},"condition":{"urlFilter":"x"}}]`)
	res := NewSet(a, b).Match(mustReq(t, "GET", "https://a.test/x", page("b.test", "image")))
	if res.Action != Block || res.By.Owner != "b" {
		t.Errorf("got %+v, want a block by b (an allow acts only within its own remixlet)", res)
	}
}

func TestModifyHeadersOnNavigationsNeedTheDestination(t *testing.T) {
	s := NewSet(setOf(t, "rx", siteA, `[{"id":1,"action":{"type":"modifyHeaders","responseHeaders":[{"header":"X-A","operation":"set","value":"1"}]},
		"condition":{"resourceTypes":["main_frame","image"]}}]`))
	cases := []struct {
		url, dest string
		want      bool
	}{
		{"https://other.test/", "document", false}, // a link from its page to another site
		{"https://a.test/next", "document", true},
		{"https://other.test/p.png", "image", true}, // its page's own subresource
	}
	for _, c := range cases {
		h := page("a.test", c.dest)
		if strings.Contains(c.url, "a.test") {
			h.Set("Sec-Fetch-Site", "same-origin")
		}
		res := s.Match(mustReq(t, "GET", c.url, h))
		if got := len(res.ResponseHeaders) > 0; got != c.want {
			t.Errorf("%s (%s): header change %v, want %v", c.url, c.dest, got, c.want)
		}
	}
}
