package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Held-out attack class: the one bit at the search tools' limits (pass 5d). The page agent
// read at most 100 find matches and 200 query matches and Go filtered those; whether the page
// agent had cut its list hung on every match before redaction. A page that plants exactly as
// many visible matches of a guess as the limit, next to a secret that matches only the right
// guess, learned the guess from whether the answer said "more" (and from the count). And a
// page that plants many elements whose secret matches the right guess before a few visible
// ones filled the page agent's list with matches Go then dropped. The model's view must be the
// same for the right and the wrong guess, at every limit.

// rtOracleLimitSite shows n decoys that match both guesses (one a line, or an element's
// attribute) and the key once, or k times before them.
func rtOracleLimitSite(decoys, keys int) http.Handler { return rtOracleFilledSite(decoys, keys, 0) }

// rtOracleFilledSite is rtOracleLimitSite after filler paragraphs of 150 characters.
func rtOracleFilledSite(decoys, keys, filler int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		for i := 0; i < filler; i++ {
			fmt.Fprintf(&b, "<li>filler %05d %s</li>\n", i, strings.Repeat("lorem ipsum ", 12))
		}
		for i := 0; i < keys; i++ {
			b.WriteString(`<li data-k="` + rtKeyGoogle + `">Maps key: ` + rtKeyGoogle + "</li>\n")
		}
		for i := 0; i < decoys; i++ {
			// Both guesses, in text and in the attribute, with no key format around them.
			b.WriteString(`<li data-k="i0IoFuc i0IoFuX">decoy AIzay75-i0IoF and AIzay75-i0IoG; i0IoFuc i0IoFuX</li>` + "\n")
		}
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Keys</title></head><body>
<h1>Keys</h1>
<ul>
`+b.String()+`</ul>
<button type="button" data-k="i0IoFuc i0IoFuX">decoy button</button>
<form><label>Password <input type="password" name="pw" value="`+rtOraclePw+`"></label></form>
<i data-p="`+rtOraclePw+`">hint</i>
<b data-long="`+strings.Repeat("x", 4000)+rtKeyGoogle+`">long</b>
<select id="env"><option>Production `+rtKeyGoogle+`</option><option>Staging</option></select>
<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>`)
	})
}

// TestRedteamOracleGivesNoBitAtTheLimits: planted decoys at the page agent's limits (100 find
// matches, 200 query matches) and keys that fill its list, for find and query at their default
// and largest limits and click by a selector: the model's view is the same for the right and
// the wrong guess. And query's text of a <select> whose option ends with a key, next to the
// following option's text, has the key redacted (the guard fails on it).
func TestRedteamOracleGivesNoBitAtTheLimits(t *testing.T) {
	findProbes := func(limit string) []rtOracleProbe {
		return []rtOracleProbe{
			{"find", "text", "AIzay75-i0IoF", "AIzay75-i0IoG", "find: the key's next character" + limit, limit},
			{"find", "text", "i0IoFuc", "i0IoFuX", "find: an n-gram of the key" + limit, limit},
		}
	}
	queryProbes := func(limit string) []rtOracleProbe {
		return []rtOracleProbe{
			{"query", "selector", `li[data-k*="i0IoFuc"]`, `li[data-k*="i0IoFuX"]`, "query: an n-gram of the key in an attribute" + limit, limit},
		}
	}
	clickProbe := rtOracleProbe{"click", "selector", `[data-k*="i0IoFuc"]`, `[data-k*="i0IoFuX"]`, "click: an n-gram of the key in the selector's attribute", ""}
	// The value of the page's password field in an attribute: the page agent takes it out of its
	// answers ("[redacted]"), so the redaction in Go saw nothing to redact in it.
	pwProbe := rtOracleProbe{"query", "selector", `[data-p*="Pw-72"]`, `[data-p*="Pw-73"]`, "query: the password's next character in an attribute", ""}
	// A key past the 4000 characters of an attribute's value the page agent sends Go: Go saw no
	// secret in what it was sent, and the browser matched the whole value.
	longProbe := rtOracleProbe{"query", "selector", `[data-long*="i0IoFuc"]`, `[data-long*="i0IoFuX"]`, "query: a key past the 4000th character of an attribute", ""}
	t.Run("find at 100 decoys", func(t *testing.T) {
		rtOracleRunOn(t, rtOracleLimitSite(100, 1), nil, append(findProbes(""), findProbes(`, "limit": 100`)...),
			[]string{rtOracleCall("query", "selector", "#env")}, []string{`"tag":"select"`})
	})
	t.Run("find after 150 keys", func(t *testing.T) {
		rtOracleRunOn(t, rtOracleLimitSite(3, 150), nil, append(findProbes(""), pwProbe, longProbe), nil, nil)
	})
	t.Run("query at 200 decoys", func(t *testing.T) {
		rtOracleRunOn(t, rtOracleLimitSite(200, 1), nil, queryProbes(""), nil, nil)
	})
	t.Run("click at 200 decoys", func(t *testing.T) { // 199 and the button
		rtOracleRunOn(t, rtOracleLimitSite(199, 1), nil, []rtOracleProbe{clickProbe}, nil, nil)
	})
	// An outline larger than one of the page agent's answers comes in parts: the search finds
	// what stands after the first part.
	t.Run("find over a large outline", func(t *testing.T) {
		rtOracleRunOn(t, rtOracleFilledSite(100, 1, 4000), nil, findProbes(""),
			[]string{rtOracleCall("find", "text", "decoy button"), rtOracleCall("find", "text", "filler 03999")},
			[]string{`button \"decoy button\"`, `"matches":1,`})
	})
	t.Run("query after 250 keys", func(t *testing.T) {
		rtOracleRunOn(t, rtOracleLimitSite(3, 250), nil, append(queryProbes(""), clickProbe), nil, nil)
	})
}

// rtPEMSplitSite shows a private key block written across elements, one line each.
func rtPEMSplitSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Deploy key</title></head><body>
<h1>Deploy key</h1>
<div class="key"><div>-----BEGIN RSA PRIVATE KEY-----</div><div>`+rtKeyPEMLine+`</div>
<div>VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK</div><div>-----END RSA PRIVATE KEY-----</div></div>
<p>Rotate it monthly.</p>
<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>`)
	})
}

// TestRedteamFindKeepsAKeyBlockAcrossElements: find judged and showed each outline line alone,
// and a line of a private key block written across elements is no format the redaction knows
// without the block's first line: find showed it (the guard fails on it) and matched in it.
// Now every line the block covers in the whole outline is the key's marker (RedactPageLines).
func TestRedteamFindKeepsAKeyBlockAcrossElements(t *testing.T) {
	rtOracleRunOn(t, rtPEMSplitSite(), nil, []rtOracleProbe{
		{"find", "text", "MIIEowIBAAK", "MIIEowIBAAX", "find: a line of a private key block across elements", ""},
		{"find", "text", "VTLw7o", "VTLw7X", "find: the second line of the block", ""},
	}, []string{rtOracleCall("find", "text", "rotate")}, []string{`Rotate it monthly`})
}

// rtClickKeysSite shows 250 buttons named with the key before 3 decoys named with both guesses.
func rtClickKeysSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		for i := 0; i < 250; i++ {
			b.WriteString(`<button type="button">Copy ` + rtKeyGoogle + "</button>\n")
		}
		for i := 0; i < 3; i++ {
			b.WriteString(`<button type="button">Copy i0IoFuc i0IoFuX</button>` + "\n")
		}
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Buttons</title></head><body>
<h1>Buttons</h1>
`+b.String()+`<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>`)
	})
}

// TestRedteamClickByTextGivesNoBitAtTheLimit: click by text's candidates were the first 200
// shown clickable elements whose name held the text, and Go dropped those that held it only in
// a secret: 200 buttons named with the key filled the list for the right guess only (the model
// was told no element for it, three for the wrong one). Now every candidate is read, in parts.
func TestRedteamClickByTextGivesNoBitAtTheLimit(t *testing.T) {
	rtOracleRunOn(t, rtClickKeysSite(), nil, []rtOracleProbe{
		{"click", "text", "i0IoFuc", "i0IoFuX", "click: an n-gram of the key in 250 buttons' names", ""},
	}, nil, nil)
}

// rtManyLinksSite shows 3000 links with long addresses (about 400 KB of href values, more than
// one of the page agent's answers) and one with the key.
func rtManyLinksSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<a href="/maps?key=` + rtKeyGoogle + `">Office map</a>` + "\n")
		for i := 0; i < 3000; i++ {
			fmt.Fprintf(&b, "<a href=\"/p/%05d/%s\">page %d</a>\n", i, strings.Repeat("segment-", 14), i)
		}
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Links</title></head><body>
<h1>Links</h1>
`+b.String()+`<script>document.body.dataset.pageScript = 'ran';</script>
</body></html>`)
	})
}

// TestRedteamQueryValuesComeInParts: on a page whose links' addresses are more than one answer
// of the page agent, query's values come in parts: a probe of the key in a link gives the same
// view for the right and the wrong guess, and an ordinary query finds its link.
func TestRedteamQueryValuesComeInParts(t *testing.T) {
	rtOracleRunOn(t, rtManyLinksSite(), nil, []rtOracleProbe{
		{"query", "selector", `a[href*="i0IoFuc"]`, `a[href*="i0IoFuX"]`, "query: an n-gram of the key in one of 3001 links", ""},
	}, []string{rtOracleCall("query", "selector", `a[href^="/p/02999/"]`)}, []string{`"total":1,`})
}
