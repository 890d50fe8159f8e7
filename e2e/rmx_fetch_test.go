package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// rmx.fetch and network:observe in real Chromium: the shop (shop.test) signs the person in with
// a cookie for the whole site; its API (api.shop.test) answers only with that cookie.

const shopSessionCookie = "person-42"

// shopAPI records what reached api.shop.test.
type shopAPI struct {
	mu   sync.Mutex
	seen []string // "path cookie=… authorization=…"
}

func (a *shopAPI) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

func (a *shopAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, fmt.Sprintf("%s cookie=%q authorization=%q", r.URL.RequestURI(), r.Header.Get("Cookie"), r.Header.Get("Authorization")))
	a.mu.Unlock()
	w.Header().Set("Access-Control-Allow-Origin", "https://shop.test")
	w.Header().Set("Access-Control-Allow-Credentials", "true")
	switch r.URL.Path {
	case "/redirect":
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		return
	case "/echo":
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"authorization": r.Header.Get("Authorization"), "host": r.Host})
		return
	}
	c, err := r.Cookie("sid")
	if err != nil || c.Value != shopSessionCookie {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"not signed in"}`))
		return
	}
	switch r.URL.Path {
	case "/me":
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"user":%q,"points":1234}`, c.Value)
	case "/prices":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"items":[{"name":"tea","price":3.5}]}`))
	default:
		http.NotFound(w, r)
	}
}

// shopSite serves / (which signs the person in), /account (for the fetching remixlet) and
// /deals (whose own script loads prices from the API, for the observing one).
func shopSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: shopSessionCookie, Domain: "shop.test", Path: "/",
				Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: 3600})
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title></head>
<body><h1>Welcome</h1><script>document.body.dataset.pageScript = 'ran';</script></body></html>`)
		case "/account":
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Account</title></head>
<body><h1>Account</h1><p id="out">not loaded</p></body></html>`)
		case "/deals":
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Deals</title></head>
<body><h1>Deals</h1><p id="out">not loaded</p><p id="event">no event</p><p id="page">-</p>
<script>
const load = () => fetch('https://api.shop.test/prices', {credentials: 'include'}).then((r) => r.json()).then((j) => { document.getElementById('page').textContent = j.items.length + ' items' });
setTimeout(load, 300);
setTimeout(load, 2000); // the page refreshes its prices
</script>
</body></html>`)
		case "/hostile":
			var status strings.Builder
			for i := range hostileFetchCaseCount {
				fmt.Fprintf(&status, "<p class=st id=s-%d></p>\n", i)
			}
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Hostile fetch</title></head>
<body><h1>Hostile fetch</h1>`+status.String()+`</body></html>`)
		default:
			http.NotFound(w, r)
		}
	})
}

func fetchManifest(name, matches string, permissions ...string) string {
	perms := make([]string, len(permissions))
	for i, p := range permissions {
		perms[i] = fmt.Sprintf(`{"name": %q, "reason": "e2e"}`, p)
	}
	return fmt.Sprintf(`{"name": %q, "description": "rmx.fetch e2e remixlet.", "api": 1, "matches": [%q], "permissions": [%s]}`,
		name, matches, strings.Join(perms, ", "))
}

func TestRemixletFetchesSignedInAsThePerson(t *testing.T) {
	api := &shopAPI{}
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"shop.test": shopSite(), "api.shop.test": api}, e2etest.WithStore())
	rx := saveAndActivate(t, p.Store, "account points", store.Files{
		sandbox.ManifestFile: []byte(fetchManifest("account points", "https://shop.test/account*", "fetch:api.shop.test")),
		sandbox.ScriptFile: []byte(`const r = await rmx.fetch('https://API.shop.test./me', { as: 'json' });
await dom.setText(await dom.query('#out'), r.status + ' ' + r.json.user + ' ' + r.json.points);
`),
	})

	// The person signs in: the site sets its cookie (HttpOnly: no page script could read it).
	tab.Navigate("https://shop.test/")
	tab.Navigate("https://shop.test/account")
	tab.WaitConnected()
	if err := waitTrue(tab, 15*time.Second, `document.getElementById('out').textContent === '200 person-42 1234'`); err != nil {
		t.Fatalf("the remixlet did not write the person's data: %v; #out = %q\nremixlet log:\n%s\napi saw: %q\nproxy log tail:\n%s",
			err, e2etest.Eval[string](tab, `document.getElementById('out').textContent`), remixletLog(t, p.Store, rx.ID), api.requests(), tail(p.Logs(), 2000))
	}
	if seen := api.requests(); len(seen) != 1 || !strings.Contains(seen[0], `cookie="sid=person-42"`) {
		t.Errorf("the API saw %q; want one request with the person's cookie", seen)
	}
}

func TestRemixletObservesTheResponsesItsPageReceives(t *testing.T) {
	api := &shopAPI{}
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"shop.test": shopSite(), "api.shop.test": api}, e2etest.WithStore())
	rx := saveAndActivate(t, p.Store, "deal watcher", store.Files{
		sandbox.ManifestFile: []byte(fetchManifest("deal watcher", "https://shop.test/deals*", "network:observe:api.shop.test")),
		sandbox.ScriptFile: []byte(`const out = await dom.query('#out');
const ev = await dom.query('#event');
await rmx.network.onResponse({ host: 'api.shop.test', path: '/prices' }, async (r) => {
  await dom.setText(ev, 'event ' + r.status + ' ' + r.url);
});
for (let i = 0; i < 100; i++) {
  const rs = await rmx.network.responses({ host: 'api.shop.test', path: '/prices' });
  if (rs.length > 0) {
    const r = rs[0];
    await dom.setText(out, r.status + ' ' + r.method + ' ' + JSON.parse(r.body).items[0].name);
    break;
  }
  await new Promise((res) => setTimeout(res, 100));
}
`),
	})
	tab.Navigate("https://shop.test/")
	tab.Navigate("https://shop.test/deals")
	tab.WaitConnected()
	if err := waitTrue(tab, 15*time.Second, `document.getElementById('out').textContent === '200 GET tea'`); err != nil {
		t.Fatalf("the remixlet did not read the page's response: %v; #out = %q, #page = %q\nremixlet log:\n%s\napi saw: %q",
			err, e2etest.Eval[string](tab, `document.getElementById('out').textContent`), e2etest.Eval[string](tab, `document.getElementById('page').textContent`),
			remixletLog(t, p.Store, rx.ID), api.requests())
	}
	if err := waitTrue(tab, 15*time.Second, `document.getElementById('event').textContent === 'event 200 https://api.shop.test/prices'`); err != nil {
		t.Errorf("no rmx.network.onResponse event: %v; #event = %q\nremixlet log:\n%s",
			err, e2etest.Eval[string](tab, `document.getElementById('event').textContent`), remixletLog(t, p.Store, rx.ID))
	}
	// Observing loaded nothing: the API saw only the page's own requests.
	for _, seen := range api.requests() {
		if !strings.HasPrefix(seen, "/prices ") {
			t.Errorf("the API saw %q; want only the page's own requests", seen)
		}
	}
	if got := e2etest.Eval[string](tab, `document.getElementById('page').textContent`); got != "1 items" {
		t.Errorf("the page's own fetch got %q; recording changed its response?", got)
	}
}
