package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

// styledSite is a page whose CSP is style-src 'self': a <style> element (its own, as a control)
// is blocked, so a remixlet stylesheet can only apply if the page agent adopts it as a
// constructable stylesheet. The page records the policy violations it sees. /bg.png is an image
// the remixlet's stylesheet may load (a positive control for the witness).
func styledSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bg.png" {
			w.Header().Set("Content-Type", "image/png")
			w.Header().Set("Cache-Control", "no-store")
			w.Write(onePixelPNG)
			return
		}
		w.Header().Set("Content-Security-Policy", "style-src 'self'")
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Styled</title>
<style>.promoted { color: rgb(255, 0, 0) }</style>
<script>
document.documentElement.dataset.violations = '';
document.addEventListener('securitypolicyviolation', (e) => {
  document.documentElement.dataset.violations += e.effectiveDirective + ' ';
});
</script></head>
<body><h1>Styled</h1><h2>Subtitle</h2>
<ul id="list">
<li class="item promoted">promoted 1</li>
<li class="item">post 1</li>
<li class="item promoted">promoted 2</li>
<li class="item">post 2</li>
</ul>
<script>
// Items added later are hidden as well: the stylesheet does not depend on timing.
setTimeout(() => {
  const li = document.createElement('li');
  li.className = 'item promoted';
  li.textContent = 'promoted 3';
  document.getElementById('list').appendChild(li);
  document.body.dataset.added = 'yes';
}, 300);
</script></body></html>`)
	})
}

// onePixelPNG is a 1×1 transparent PNG.
var onePixelPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

const styleOnlyManifest = `{
  "name": "hide promoted by stylesheet",
  "description": "Hides promoted posts with a stylesheet.",
  "api": 1,
  "matches": ["https://styled.test/*"],
  "permissions": []
}`

// styleOnlyCSS hides the promoted items; its second and third rules would load from the
// witness (directly, and through an escaped url( that a browser reads as url(), and its last
// loads an image from the page's own site, which is allowed.
const styleOnlyCSS = `.promoted { display: none !important }
h1 { background: url(https://witness.test/x) }
h2 { background: \75rl(https://witness.test/y) }
.item { background-image: url(https://styled.test/bg.png) }
`

// saveUnchecked saves files as a new remixlet and activates it without the save-time checks, as
// a version stored by an older release (or with a stylesheet that no longer passes) would be:
// the proxy must check the stylesheet again when it inserts it.
func saveUnchecked(t *testing.T, st *store.Store, name string, files store.Files) store.Remixlet {
	t.Helper()
	rx, _ := storetest.Create(t, st, name, files)
	return rx
}

const visibleStyledPromoted = `[...document.querySelectorAll('#list .promoted')].filter((e) => getComputedStyle(e).display !== 'none').length`

func TestRemixletStylesheetHidesUnderStrictStyleCSP(t *testing.T) {
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"styled.test": styledSite(),
		"witness.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
		}),
	}, e2etest.WithStore())
	st := p.Store
	files := store.Files{
		sandbox.ManifestFile: []byte(styleOnlyManifest),
		sandbox.StyleFile:    []byte(styleOnlyCSS),
	}
	// The save-time checks refuse the witness addresses; this version skips them.
	if _, problems := sandbox.CheckFiles(files); len(problems) != 2 {
		t.Fatalf("the save-time checks found %d problems in the test stylesheet, want 2: %v", len(problems), problems)
	}
	rx := saveUnchecked(t, st, "hide promoted by stylesheet", files)
	diagnose := func() string {
		return fmt.Sprintf("remixlet log:\n%s\nproxy log tail:\n%s\n%s", remixletLog(t, st, rx.ID), tail(p.Logs(), 3000), tab.Diagnose())
	}

	tab.Navigate("https://styled.test/")
	tab.WaitConnected()
	// The page's own <style> is blocked by its policy: a <style> element from us would be too.
	if err := waitTrue(tab, 5*time.Second, `document.documentElement.dataset.violations.includes('style-src-elem')`); err != nil {
		t.Fatalf("the page's CSP did not block its own <style> element (the control): %v\n%s", err, diagnose())
	}
	if c := e2etest.Eval[string](tab, `getComputedStyle(document.querySelector('#list .promoted')).color`); c == "rgb(255, 0, 0)" {
		t.Fatalf("the page's inline <style> applied despite style-src 'self'")
	}
	if err := waitTrue(tab, 10*time.Second, `document.body.dataset.added === 'yes' && `+visibleStyledPromoted+` === 0 && document.querySelectorAll('#list .promoted').length === 3`); err != nil {
		t.Fatalf("the promoted items were not hidden by the remixlet's stylesheet: %v\n%s", err, diagnose())
	}
	if n := e2etest.Eval[int](tab, `[...document.querySelectorAll('#list li:not(.promoted)')].filter((e) => getComputedStyle(e).display !== 'none').length`); n != 2 {
		t.Errorf("%d other items visible, want 2", n)
	}
	// It is two adopted stylesheets (its own copy and the sheet as written, rx_sheets.js), not an
	// element; the page saw no other policy violation.
	if n := e2etest.Eval[int](tab, `document.adoptedStyleSheets.length`); n != 2 {
		t.Errorf("document.adoptedStyleSheets has %d sheets, want 2", n)
	}
	if n := e2etest.Eval[int](tab, `document.querySelectorAll('style, link[rel~=stylesheet]').length`); n != 1 {
		t.Errorf("%d <style>/<link> elements in the page, want only the page's own", n)
	}
	if v := strings.Fields(e2etest.Eval[string](tab, `document.documentElement.dataset.violations`)); len(v) != 1 {
		t.Errorf("policy violations %v, want only the page's own style-src-elem", v)
	}

	// The allowed url() loads (so loads do happen), the refused ones never reach the witness.
	deadline := time.Now().Add(5 * time.Second)
	for sites.Requests("styled.test", "/bg.png") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the allowed background image was never requested\n%s", diagnose())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if n := sites.Requests("witness.test", "/x") + sites.Requests("witness.test", "/y"); n != 0 {
		t.Errorf("the witness received %d requests\n%s", n, diagnose())
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		log := remixletLog(t, st, rx.ID)
		if strings.Contains(log, `url("https://witness.test/x"): witness.test is not one of the remixlet's sites`) &&
			strings.Count(log, "refused: style.css") == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the remixlet's log does not have the two refusals:\n%s", log)
			break
		}
	}

	// A paused site gets no stylesheet.
	if err := st.PauseSite(context.Background(), "styled.test"); err != nil {
		t.Fatal(err)
	}
	tab.Reload()
	tab.WaitConnected()
	if err := waitTrue(tab, 5*time.Second, `document.body.dataset.added === 'yes'`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := e2etest.Eval[int](tab, visibleStyledPromoted); n != 3 {
		t.Errorf("on the paused site %d promoted items visible, want 3\n%s", n, diagnose())
	}
	if n := e2etest.Eval[int](tab, `document.adoptedStyleSheets.length`); n != 0 {
		t.Errorf("on the paused site document.adoptedStyleSheets has %d sheets, want 0", n)
	}
}
