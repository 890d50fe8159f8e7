package netrules

import (
	"fmt"
	"strings"
	"testing"
)

var siteA = Sites{Hosts: []string{"a.test", "*.shop.test"}}

// problemsOf parses and checks rules.json for a remixlet on sites.
func problemsOf(t *testing.T, js string, sites Sites) []Problem {
	t.Helper()
	rules, probs := Parse([]byte(js))
	return append(probs, Check(rules, sites)...)
}

func TestParseAndCheck(t *testing.T) {
	cases := []struct {
		name  string
		sites Sites
		rules string
		// want is "" for no problems, else "ID FIELD SUBSTRING" of the first problem.
		wantID    int
		wantField string
		wantMsg   string
	}{
		{name: "block ok", rules: `[{"id":1,"action":{"type":"block"},"condition":{"urlFilter":"||ads.test^","resourceTypes":["image"]}}]`},
		{name: "all fields ok", rules: `[{"id":7,"priority":3,"action":{"type":"modifyHeaders","requestHeaders":[{"header":"X-Test","operation":"set","value":"1"}],
			"responseHeaders":[{"header":"Cache-Control","operation":"remove"}]},
			"condition":{"regexFilter":"^https://a\\.test/api/","isUrlFilterCaseSensitive":true,"requestDomains":["a.test"],"excludedRequestDomains":["x.a.test"],
			"initiatorDomains":["a.test"],"excludedInitiatorDomains":["b.shop.test"],"excludedResourceTypes":["main_frame"],"requestMethods":["get","post"],"excludedRequestMethods":["put"]}}]`},
		{name: "redirect to own site", rules: `[{"id":2,"action":{"type":"redirect","redirect":{"url":"https://www.shop.test/x.js"}},"condition":{"urlFilter":"||cdn.test/x.js"}}]`},
		{name: "regexSubstitution to own site", rules: `[{"id":2,"action":{"type":"redirect","redirect":{"regexSubstitution":"https://a.test/\\1"}},"condition":{"regexFilter":"^https://cdn\\.test/(.*)"}}]`},
		{name: "not an array", rules: `{}`, wantMsg: "JSON array"},
		{name: "missing id", rules: `[{"action":{"type":"block"},"condition":{}}]`, wantField: "rules[0].id", wantMsg: "missing"},
		{name: "zero id", rules: `[{"id":0,"action":{"type":"block"},"condition":{}}]`, wantField: "rules[0].id", wantMsg: "1 or more"},
		{name: "duplicate id", rules: `[{"id":3,"action":{"type":"block"},"condition":{}},{"id":3,"action":{"type":"allow"},"condition":{}}]`, wantID: 3, wantField: "rules[0].id", wantMsg: "more than one"},
		{name: "wrong type", rules: `[{"id":4,"action":{"type":"block"},"condition":{"urlFilter":5}}]`, wantID: 4, wantField: "rules[0].condition.urlFilter", wantMsg: "a string"},
		{name: "unknown key", rules: `[{"id":4,"action":{"type":"block"},"condition":{"urlfilter":"x"}}]`, wantID: 4, wantField: "rules[0].condition.urlfilter", wantMsg: "not a known field"},
		{name: "transform unsupported", rules: `[{"id":4,"action":{"type":"redirect","redirect":{"transform":{}}},"condition":{}}]`, wantID: 4, wantField: "rules[0].action.redirect.transform", wantMsg: "not supported"},
		{name: "bad action", rules: `[{"id":5,"action":{"type":"explode"},"condition":{}}]`, wantID: 5, wantField: "rules[0].action.type"},
		{name: "allowAllRequests", rules: `[{"id":5,"action":{"type":"allowAllRequests"},"condition":{}}]`, wantID: 5, wantField: "rules[0].action.type", wantMsg: "not supported"},
		{name: "both filters", rules: `[{"id":6,"action":{"type":"block"},"condition":{"urlFilter":"a","regexFilter":"b"}}]`, wantID: 6, wantField: "rules[0].condition"},
		{name: "bad regex", rules: `[{"id":6,"action":{"type":"block"},"condition":{"regexFilter":"(a"}}]`, wantID: 6, wantField: "rules[0].condition.regexFilter", wantMsg: "RE2"},
		{name: "backreference is not RE2", rules: `[{"id":6,"action":{"type":"block"},"condition":{"regexFilter":"(a)\\1"}}]`, wantID: 6, wantField: "rules[0].condition.regexFilter"},
		{name: "regex too long", rules: `[{"id":6,"action":{"type":"block"},"condition":{"regexFilter":"` + strings.Repeat("a", MaxRegexLen+1) + `"}}]`, wantID: 6, wantMsg: "limit"},
		{name: "regex too complex", rules: `[{"id":6,"action":{"type":"block"},"condition":{"regexFilter":"(a{1,100}){1,100}"}}]`, wantID: 6, wantField: "rules[0].condition.regexFilter"},
		{name: "bad resource type", rules: `[{"id":8,"action":{"type":"block"},"condition":{"resourceTypes":["img"]}}]`, wantID: 8, wantField: "rules[0].condition.resourceTypes[0]"},
		{name: "uppercase domain", rules: `[{"id":8,"action":{"type":"block"},"condition":{"requestDomains":["Ads.test"]}}]`, wantID: 8, wantField: "rules[0].condition.requestDomains[0]", wantMsg: "capital"},
		{name: "empty domain list", rules: `[{"id":8,"action":{"type":"block"},"condition":{"requestDomains":[]}}]`, wantID: 8, wantField: "rules[0].condition.requestDomains"},
		{name: "priority zero", rules: `[{"id":9,"priority":0,"action":{"type":"block"},"condition":{}}]`, wantID: 9, wantField: "rules[0].priority"},
		// Safety limits.
		{name: "redirect of a POST", rules: `[{"id":10,"action":{"type":"redirect","redirect":{"url":"https://a.test/"}},"condition":{"urlFilter":"||a.test/form","requestMethods":["post"]}}]`, wantID: 10, wantField: "rules[0].condition.requestMethods[0]", wantMsg: "only to GET"},
		{name: "redirect to http", rules: `[{"id":11,"action":{"type":"redirect","redirect":{"url":"http://a.test/x"}},"condition":{"urlFilter":"x"}}]`, wantID: 11, wantField: "rules[0].action.redirect.url", wantMsg: "not https"},
		{name: "redirect to another site", rules: `[{"id":12,"action":{"type":"redirect","redirect":{"url":"https://witness.test/x"}},"condition":{"urlFilter":"x"}}]`, wantID: 12, wantField: "rules[0].action.redirect.url", wantMsg: "not one of the remixlet's sites"},
		{name: "redirect with userinfo", rules: `[{"id":12,"action":{"type":"redirect","redirect":{"url":"https://a.test@witness.test/x"}},"condition":{"urlFilter":"x"}}]`, wantID: 12, wantField: "rules[0].action.redirect.url"},
		{name: "regexSubstitution to another site", rules: `[{"id":13,"action":{"type":"redirect","redirect":{"regexSubstitution":"https://witness.test/\\1"}},"condition":{"regexFilter":"^https://a\\.test/(.*)"}}]`, wantID: 13, wantField: "rules[0].action.redirect.regexSubstitution", wantMsg: "not one of"},
		{name: "regexSubstitution with a variable host", rules: `[{"id":13,"action":{"type":"redirect","redirect":{"regexSubstitution":"https://a.test\\1/"}},"condition":{"regexFilter":"^https://a\\.test(.*)"}}]`, wantID: 13, wantField: "rules[0].action.redirect.regexSubstitution", wantMsg: "fixed"},
		{name: "every-site redirect within the named site", sites: Sites{Every: true}, rules: `[{"id":14,"action":{"type":"redirect","redirect":{"url":"https://www.news.test/a"}},"condition":{"urlFilter":"||cdn.news.test^"}}]`},
		{name: "every-site redirect to another site", sites: Sites{Every: true}, rules: `[{"id":14,"action":{"type":"redirect","redirect":{"url":"https://witness.test/a"}},"condition":{"requestDomains":["news.test"]}}]`, wantID: 14, wantMsg: "not the same site"},
		{name: "every-site redirect naming no host", sites: Sites{Every: true}, rules: `[{"id":14,"action":{"type":"redirect","redirect":{"url":"https://news.test/a"}},"condition":{"urlFilter":"ads"}}]`, wantID: 14, wantMsg: "name the hosts"},
		{name: "security header response", rules: `[{"id":15,"action":{"type":"modifyHeaders","responseHeaders":[{"header":"content-security-policy","operation":"remove"}]},"condition":{}}]`, wantID: 15, wantField: "rules[0].action.responseHeaders[0].header", wantMsg: "security header"},
		{name: "security header cors", rules: `[{"id":15,"action":{"type":"modifyHeaders","responseHeaders":[{"header":"Access-Control-Allow-Origin","operation":"set","value":"*"}]},"condition":{}}]`, wantID: 15, wantMsg: "security header"},
		{name: "security header cookie", rules: `[{"id":15,"action":{"type":"modifyHeaders","requestHeaders":[{"header":"COOKIE","operation":"append","value":"a=b"}]},"condition":{}}]`, wantID: 15, wantMsg: "security header"},
		{name: "location header", rules: `[{"id":15,"action":{"type":"modifyHeaders","responseHeaders":[{"header":"Location","operation":"set","value":"https://witness.test/"}]},"condition":{}}]`, wantID: 15, wantMsg: "load or send"},
		{name: "sec-fetch header", rules: `[{"id":15,"action":{"type":"modifyHeaders","requestHeaders":[{"header":"Sec-Fetch-Site","operation":"set","value":"none"}]},"condition":{}}]`, wantID: 15, wantMsg: "browser"},
		{name: "header value with newline", rules: `[{"id":15,"action":{"type":"modifyHeaders","requestHeaders":[{"header":"X-A","operation":"set","value":"a\r\nb"}]},"condition":{}}]`, wantID: 15, wantField: "rules[0].action.requestHeaders[0].value"},
		{name: "initiator of another site", rules: `[{"id":16,"action":{"type":"block"},"condition":{"initiatorDomains":["other.test"]}}]`, wantID: 16, wantField: "rules[0].condition.initiatorDomains[0]", wantMsg: "does not run on"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sites := c.sites
			if !sites.Every && sites.Hosts == nil {
				sites = siteA
			}
			probs := problemsOf(t, c.rules, sites)
			if c.wantField == "" && c.wantMsg == "" && c.wantID == 0 {
				if len(probs) > 0 {
					t.Fatalf("got problems %v, want none", probs)
				}
				return
			}
			if len(probs) == 0 {
				t.Fatalf("got no problems, want one (rule %d, %s, %q)", c.wantID, c.wantField, c.wantMsg)
			}
			p := probs[0]
			if p.RuleID != c.wantID || c.wantField != "" && p.Field != c.wantField || !strings.Contains(p.Message, c.wantMsg) {
				t.Errorf("got %+v, want rule %d, field %q, message containing %q", p, c.wantID, c.wantField, c.wantMsg)
			}
			if c.wantID != 0 && !strings.Contains(p.Error(), "rule ") {
				t.Errorf("Error() = %q does not name the rule", p.Error())
			}
		})
	}
}

func TestForbiddenHeaderIsCaseInsensitive(t *testing.T) {
	for _, h := range []string{"Content-Security-Policy", "content-security-policy-report-only", "Set-Cookie", "Cookie",
		"Access-Control-Allow-Origin", "access-control-expose-headers", "Origin", "Authorization", "Strict-Transport-Security",
		"X-Frame-Options", "X-Content-Type-Options", "Cross-Origin-Opener-Policy", "cross-origin-embedder-policy",
		"Cross-Origin-Resource-Policy", "Referrer-Policy", "Permissions-Policy", "SET-COOKIE"} {
		if bad, _ := ForbiddenHeader(h); !bad {
			t.Errorf("ForbiddenHeader(%q) = false, want true", h)
		}
	}
	for _, h := range []string{"X-Test", "Cache-Control", "User-Agent", "Accept-Language", "DNT"} {
		if bad, why := ForbiddenHeader(h); bad {
			t.Errorf("ForbiddenHeader(%q) = true (%s), want false", h, why)
		}
	}
}

func TestCompileLeavesOutBadRulesKeepsTheRest(t *testing.T) {
	rules, probs := Parse([]byte(`[
		{"id":1,"action":{"type":"block"},"condition":{"urlFilter":"||ads.test^"}},
		{"id":2,"action":{"type":"redirect","redirect":{"url":"https://witness.test/"}},"condition":{"urlFilter":"x"}},
		{"id":3,"action":{"type":"modifyHeaders","responseHeaders":[{"header":"Set-Cookie","operation":"remove"}]},"condition":{}}]`))
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	rs, probs := Compile("rx", rules, siteA)
	if len(rs.Rules) != 1 || rs.Rules[0].ID != 1 {
		t.Errorf("kept %v, want rule 1 only", rs.Rules)
	}
	if len(probs) != 2 || probs[0].RuleID != 2 || probs[1].RuleID != 3 {
		t.Errorf("problems %v, want one for rule 2 and one for rule 3", probs)
	}
}

func TestParseTooManyRulesKeepsTheFirst(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := 1; i <= MaxRules+2; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":%d,"action":{"type":"block"},"condition":{"urlFilter":"||h%d.test^"}}`, i, i)
	}
	b.WriteString("]")
	rules, probs := Parse([]byte(b.String()))
	if len(rules) != MaxRules || len(probs) != 1 || probs[0].Index != -1 || !strings.Contains(probs[0].Message, "the limit is 30000") {
		t.Errorf("got %d rules and %v, want %d rules and one problem for the file", len(rules), probs, MaxRules)
	}
}
