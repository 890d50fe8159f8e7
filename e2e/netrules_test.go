package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Network rules (rules.json) in real Chromium through the real proxy: a block rule blocks a
// page's image, and hostile rules are refused at save and, forced into the store around the
// checks, left out at install with a log line, while the witness receives nothing.

// gif1x1 is a transparent 1×1 GIF.
var gif1x1 = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

// imageSite answers every path with the GIF (and 204 to anything but GET).
func imageSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "image/gif")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(gif1x1)
	})
}

// imagesPage is a page that loads each address as an image and records, in data-state on the
// image, whether it loaded or failed; body.dataset.done is set when all have settled.
func imagesPage(extra string, srcs ...string) string {
	var imgs strings.Builder
	for i, s := range srcs {
		fmt.Fprintf(&imgs, `<img id="i%d" src="%s" onload="this.dataset.state='loaded';settle()" onerror="this.dataset.state='failed';settle()">`, i, s)
	}
	return `<!doctype html><html><head><meta charset="utf-8"><title>images</title>
<script>function settle(){ if ([...document.images].every((i) => i.dataset.state)) document.body.dataset.done = '1'; }</script>
</head><body>` + imgs.String() + extra + `</body></html>`
}

func imageStates(tab *e2etest.Tab) map[string]string {
	return e2etest.Eval[map[string]string](tab, `Object.fromEntries([...document.images].map((i) => [i.id, i.dataset.state || 'pending']))`)
}

func netrulesManifest(name, matches string) string {
	return fmt.Sprintf(`{"name": %q, "api": 1, "matches": [%s], "permissions": [{"name": "netrules", "reason": "Blocks ads."}]}`, name, matches)
}

func TestNetRulesBlockAPageImage(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, imagesPage("", "https://ads.test/banner.png", "https://ads.test/logo.png"))
	})
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"ads.test": imageSite(), "shop.test": page, "other.test": page}, e2etest.WithStore())
	rx := saveAndActivate(t, p.Store, "ad blocker", store.Files{
		sandbox.ManifestFile: []byte(netrulesManifest("ad blocker", `"https://shop.test/*"`)),
		sandbox.ScriptFile:   []byte("rmx.log('on');\n"),
		sandbox.RulesFile:    []byte(`[{"id": 1, "action": {"type": "block"}, "condition": {"urlFilter": "||ads.test/banner", "resourceTypes": ["image"]}}]`),
	})
	p.Server.InvalidateNetRules()

	tab.Navigate("https://shop.test/")
	tab.WaitFor(10*time.Second, "the images settled", `document.body.dataset.done === '1'`)
	if got := imageStates(tab); got["i0"] != "failed" || got["i1"] != "loaded" {
		t.Errorf("on shop.test: images %v, want the banner (i0) failed and the logo (i1) loaded\nremixlet log:\n%s", got, remixletLog(t, p.Store, rx.ID))
	}
	if n := sites.Requests("ads.test", "/banner.png"); n != 0 {
		t.Errorf("ads.test got %d requests for the blocked banner, want 0", n)
	}

	// The remixlet does not run on other.test, so its rule does not act on that page's requests.
	tab.Navigate("https://other.test/")
	tab.WaitFor(10*time.Second, "the images settled", `document.body.dataset.done === '1'`)
	if got := imageStates(tab); got["i0"] != "loaded" || got["i1"] != "loaded" {
		t.Errorf("on other.test: images %v, want both loaded", got)
	}
}

// hostileRules are rules that each break one limit, by rule id; rule 1 is a good one.
var hostileRules = map[int]struct {
	rule, field string
}{
	2: {`{"id": 2, "action": {"type": "redirect", "redirect": {"url": "https://shop.test/landing"}}, "condition": {"urlFilter": "||cdn.test/post-me", "requestMethods": ["post"]}}`,
		"rules[0].condition.requestMethods[0]"},
	3: {`{"id": 3, "action": {"type": "redirect", "redirect": {"url": "http://shop.test/x.png"}}, "condition": {"urlFilter": "||cdn.test/http.png"}}`,
		"rules[0].action.redirect.url"},
	4: {`{"id": 4, "action": {"type": "redirect", "redirect": {"url": "https://witness.test/steal"}}, "condition": {"urlFilter": "||cdn.test/steal.png"}}`,
		"rules[0].action.redirect.url"},
	5: {`{"id": 5, "action": {"type": "modifyHeaders", "responseHeaders": [{"header": "Content-Security-Policy", "operation": "remove"}]}, "condition": {"requestDomains": ["shop.test"], "resourceTypes": ["main_frame"]}}`,
		"rules[0].action.responseHeaders[0].header"},
	6: {`{"id": 6, "action": {"type": "block"}, "condition": {"urlFilter": "||cdn.test/other-img.png", "initiatorDomains": ["other.test"]}}`,
		"rules[0].condition.initiatorDomains[0]"},
}

func TestNetRulesHostileRulesRefusedAndLeftOut(t *testing.T) {
	const matches = `"https://shop.test/*"`
	// Refused at save, each with its id and field.
	for id, h := range hostileRules {
		_, probs := sandbox.CheckFiles(store.Files{
			sandbox.ManifestFile: []byte(netrulesManifest("hostile", matches)),
			sandbox.ScriptFile:   []byte("rmx.log('on');\n"),
			sandbox.RulesFile:    []byte("[" + h.rule + "]"),
		})
		if len(probs) == 0 || probs[0].File != sandbox.RulesFile || probs[0].Field != h.field || !strings.Contains(probs[0].Message, fmt.Sprintf("rule %d:", id)) {
			t.Errorf("rule %d at save: got %v, want a rules.json problem at %s naming the rule", id, probs, h.field)
		}
	}

	wit := &witness{}
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"witness.test": wit,
		"cdn.test":     imageSite(),
		"shop.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				htmlPage(w, imagesPage(`<script>fetch('https://cdn.test/post-me', {method: 'POST', mode: 'no-cors', body: 'x'})
  .then(() => document.body.dataset.posted = 'ok', () => document.body.dataset.posted = 'failed');</script>`,
					"https://cdn.test/blocked.png", "https://cdn.test/http.png", "https://cdn.test/steal.png"))
			case "/csp":
				// With its policy intact, this page cannot load the witness's image.
				w.Header().Set("Content-Security-Policy", "img-src 'self'")
				htmlPage(w, imagesPage("", "https://witness.test/csp-probe.png"))
			default:
				http.NotFound(w, r)
			}
		}),
		"other.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			htmlPage(w, imagesPage("", "https://cdn.test/other-img.png", "https://cdn.test/plain-img.png"))
		}),
	}, e2etest.WithStore())

	// Forced into the store around the checks: the good rules 1 and 7 and every hostile one.
	rules := []string{
		`{"id": 1, "action": {"type": "block"}, "condition": {"urlFilter": "||cdn.test/blocked.png", "resourceTypes": ["image"]}}`,
		`{"id": 7, "action": {"type": "block"}, "condition": {"urlFilter": "||cdn.test/plain-img.png", "resourceTypes": ["image"]}}`,
	}
	for id := 2; id <= 6; id++ {
		rules = append(rules, hostileRules[id].rule)
	}
	rx := saveUnchecked(t, p.Store, "hostile rules", store.Files{
		sandbox.ManifestFile: []byte(netrulesManifest("hostile rules", matches)),
		sandbox.ScriptFile:   []byte("rmx.log('on');\n"),
		sandbox.RulesFile:    []byte("[" + strings.Join(rules, ",\n") + "]"),
	})
	p.Server.InvalidateNetRules()
	diagnose := func() string {
		return fmt.Sprintf("remixlet log:\n%s\nproxy log tail:\n%s", remixletLog(t, p.Store, rx.ID), tail(p.Logs(), 2000))
	}

	tab.Navigate("https://shop.test/")
	tab.WaitFor(10*time.Second, "the images and the POST settled", `document.body.dataset.done === '1' && document.body.dataset.posted`)
	if got := imageStates(tab); got["i0"] != "failed" || got["i1"] != "loaded" || got["i2"] != "loaded" {
		t.Errorf("on shop.test: images %v, want i0 failed (the good rule), i1 and i2 loaded from cdn.test (rules 3 and 4 left out)\n%s", got, diagnose())
	}
	if n := sites.Requests("cdn.test", "/post-me"); n != 1 {
		t.Errorf("cdn.test got %d POSTs, want 1 (rule 2 left out: the POST is not redirected)", n)
	}
	for _, path := range []string{"/landing", "/x.png"} {
		if n := sites.Requests("shop.test", path); n != 0 {
			t.Errorf("shop.test got %d requests for %s, want 0", n, path)
		}
	}

	// Rule 5 would remove the policy of a page its own page navigates to.
	e2etest.Eval[bool](tab, `(location.href = '/csp', true)`)
	tab.WaitFor(10*time.Second, "the /csp page settled", `location.pathname === '/csp' && document.body && document.body.dataset.done === '1'`)
	if got := imageStates(tab); got["i0"] != "failed" {
		t.Errorf("on shop.test/csp: the witness image %q, want failed (the policy intact)", got["i0"])
	}

	// Rules act only on requests of the remixlet's own pages: on other.test nothing is blocked,
	// neither by rule 6 (left out) nor by rule 7 (in effect on shop.test's pages only).
	tab.Navigate("https://other.test/")
	tab.WaitFor(10*time.Second, "the images settled", `document.body.dataset.done === '1'`)
	if got := imageStates(tab); got["i0"] != "loaded" || got["i1"] != "loaded" {
		t.Errorf("on other.test: images %v, want both loaded\n%s", got, diagnose())
	}

	// The log says which rules were left out and why.
	log := remixletLog(t, p.Store, rx.ID)
	for id, h := range hostileRules {
		want := fmt.Sprintf("left out rule %d (rules[%d]", id, id) // rule n is at index n in the file
		if !strings.Contains(log, want) || !strings.Contains(log, strings.TrimPrefix(h.field, "rules[0]")) {
			t.Errorf("the log lacks %q (%s):\n%s", want, h.field, log)
		}
	}
	if !strings.Contains(log, "2 rules in effect") {
		t.Errorf("the log does not say 2 rules are in effect:\n%s", log)
	}

	if n, seen := sites.HostRequests("witness.test"), wit.requests(); n != 0 || len(seen) != 0 {
		t.Errorf("the witness received %d requests:\n  %s", n, strings.Join(seen, "\n  "))
	}
	// Positive control: the witness does record what reaches it from this page through the proxy.
	e2etest.Eval[bool](tab, `fetch('https://witness.test/control', {mode: 'no-cors'}).then(() => true, () => false)`)
	for deadline := time.Now().Add(5 * time.Second); sites.Requests("witness.test", "/control") == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the control request never reached the witness: the zero counts prove nothing")
		}
	}
}
