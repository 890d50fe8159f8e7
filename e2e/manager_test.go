package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// managerWait bounds waiting for a manager form post to land on its next page.
const managerWait = 20 * time.Second

// hostileSite serves pages that, as soon as they load, post forged forms to the manager: the
// cross-site requests DESIGN invariant 6 says the manager refuses. target() names the remixlet
// the /delete page tries to delete.
func hostileSite(target func() string) http.Handler {
	autoPost := func(action, fields string) string {
		return `<!doctype html><html><head><title>Free prizes</title></head><body><h1>Free prizes</h1>
<form id="f" method="post" action="` + action + `">` + fields + `<input type="hidden" name="csrf" value="guessed"></form>
<script>document.getElementById('f').submit();</script></body></html>`
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/create", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, autoPost("https://remix.proxy/manager/save",
			`<input type="hidden" name="manifest" value='{"name": "Forged", "api": 1, "matches": ["<all_urls>"], "permissions": []}'>
<input type="hidden" name="script" value="rmx.log('forged');">`))
	})
	mux.HandleFunc("/delete", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, autoPost("https://remix.proxy/manager/r/"+target()+"/delete", ""))
	})
	return mux
}

// TestManagerCreateAndRefuseCrossSite creates a remixlet in the manager's own form in Chromium
// (a broken script first, refused with its line and column, the typed text kept), allows it on
// the approval page with a real click, sees it listed; then a hostile site's auto-submitting
// forms try to create and delete remixlets through the manager, and the store shows they did not.
func TestManagerCreateAndRefuseCrossSite(t *testing.T) {
	var mu sync.Mutex
	var targetID string
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"hostile.test": hostileSite(func() string { mu.Lock(); defer mu.Unlock(); return targetID }),
	}, e2etest.WithStore())
	ctx := context.Background()

	resp := tab.Navigate("https://remix.proxy/manager/new")
	if resp.Status != http.StatusOK {
		t.Fatalf("GET /manager/new: %d", resp.Status)
	}
	if csp := fmt.Sprint(resp.Headers["content-security-policy"], resp.Headers["Content-Security-Policy"]); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("the manager's CSP %q lacks frame-ancestors 'none'", csp)
	}

	manifest := `{"name": "Hide promoted", "api": 1, "matches": ["https://plain.test/*"], "permissions": [{"name": "storage", "reason": "IGNORE PREVIOUS INSTRUCTIONS"}]}`
	broken := "const items = dom.queryAll('.promoted');\nlet x = ;\n"
	fill := func(script string) {
		t.Helper()
		e2etest.Eval[bool](tab, fmt.Sprintf(`(() => {
			document.getElementById('manifest').value = %q;
			document.getElementById('script').value = %q;
			return true;
		})()`, manifest, script))
	}
	submit := func(sel string) {
		t.Helper()
		managerClick(t, tab, sel)
	}

	// A broken script is refused with file:line:column, and the form keeps what was typed.
	fill(broken)
	submit(`#edit button[type=submit]`)
	tab.WaitFor(managerWait, "the save to be refused with script.js:2:COL", `!!document.getElementById('problems') && /script\.js:2:\d+/.test(document.getElementById('problems').textContent)`)
	if got := e2etest.Eval[string](tab, `document.getElementById('script').value`); got != broken {
		t.Errorf("after the refusal the script textarea holds %q, want what was typed %q", got, broken)
	}
	if rs, _ := p.Store.ListRemixlets(ctx); len(rs) != 0 {
		t.Fatalf("a refused save created %d remixlets", len(rs))
	}

	// A good one needs approval (it runs on a site and asks for storage): the proxy's page shows
	// the fixed text, never the manifest's reason.
	fill("rmx.log('hello');\n")
	submit(`#edit button[type=submit]`)
	tab.WaitFor(managerWait, "the approval page", `location.pathname.startsWith('/manager/approval/') && !!document.getElementById('approval-card')`)
	card := e2etest.Eval[string](tab, `document.getElementById('approval-card').textContent`)
	if !strings.Contains(card, "Keep its own data in the proxy") || !strings.Contains(card, "plain.test") {
		t.Errorf("the approval card %q lacks the fixed permission text or the site", card)
	}
	if body := tab.BodyText(); strings.Contains(body, "IGNORE PREVIOUS") {
		t.Errorf("the approval page shows the manifest's reason:\n%s", body)
	}
	submit(`button[value=allow]`)
	tab.WaitFor(managerWait, "the remixlet page after Allow", `location.pathname.startsWith('/manager/r/')`)

	r, err := p.Store.Remixlet(ctx, "Hide promoted")
	if err != nil {
		t.Fatalf("the remixlet was not created: %v\nbody: %s", err, tab.BodyText())
	}
	if v, ok, _ := p.Store.Active(ctx, r.ID); !ok || v.Number != 1 {
		t.Errorf("after Allow, active version %v %v, want 1", v.Number, ok)
	}
	tab.Navigate("https://remix.proxy/manager")
	if body := tab.BodyText(); !strings.Contains(body, "Hide promoted") || !strings.Contains(body, "Keep its own data in the proxy") {
		t.Errorf("the list does not show the new remixlet:\n%s", body)
	}
	mu.Lock()
	targetID = r.ID
	mu.Unlock()

	// A hostile site's forms post to the manager as soon as they load; the browser lands on the
	// manager's refusal.
	for _, path := range []string{"/create", "/delete"} {
		tab.Navigate("https://hostile.test" + path)
		tab.WaitFor(managerWait, "the forged post from "+path+" to reach the manager",
			`location.hostname === 'remix.proxy' && document.readyState === 'complete' && !!document.body`)
		if _, err := p.Store.Remixlet(ctx, "Forged"); err == nil {
			t.Errorf("%s: a hostile site's form created a remixlet", path)
		}
		if _, err := p.Store.Remixlet(ctx, r.ID); err != nil {
			t.Errorf("%s: a hostile site's form deleted the remixlet: %v", path, err)
		}
		if body := tab.BodyText(); !strings.Contains(body, "refused") {
			t.Errorf("%s: the forged post was not refused; the browser shows:\n%s", path, body)
		}
	}
	if rs, _ := p.Store.ListRemixlets(ctx); len(rs) != 1 {
		t.Errorf("%d remixlets after the hostile forms, want 1", len(rs))
	}
	if !strings.Contains(p.Logs(), "manager: refused") {
		t.Errorf("the proxy did not log the refusals:\n%s", p.Logs())
	}
}
