package e2e

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/panel"
)

// The inline script of the hashed pages, and its CSP hash.
const hashedScript = `document.body.dataset.pageScript = 'ran';`

func cspHash(script string) string {
	sum := sha256.Sum256([]byte(script))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// cspSite serves one page per kind of Content-Security-Policy a page agent must live with.
func cspSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/nonce", func(w http.ResponseWriter, r *http.Request) {
		nonce := rand.Text()
		w.Header().Set("Content-Security-Policy", fmt.Sprintf("script-src 'nonce-%s' 'strict-dynamic'; object-src 'none'; base-uri 'none'", nonce))
		htmlPage(w, fmt.Sprintf(`<!doctype html>
<html><head><meta charset="utf-8"><title>Nonce CSP</title>
<script nonce="%[1]s">document.documentElement.dataset.headScript = 'ran';</script>
</head><body>
<p>A strict nonce policy with strict-dynamic.</p>
<script nonce="%[1]s">
document.body.dataset.pageScript = 'ran';
const s = document.createElement('script');
s.src = '/dynamic.js';
document.body.appendChild(s);
</script>
</body></html>
`, nonce))
	})
	mux.HandleFunc("/dynamic.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `const p = document.createElement('p'); p.textContent = 'strict-dynamic script ran'; document.body.appendChild(p);`)
	})
	mux.HandleFunc("/hash", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src "+cspHash(hashedScript))
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Hash CSP</title>
<link rel="stylesheet" href="/style.css">
</head><body>
<p>A hash policy with default-src 'self'.</p>
<script>`+hashedScript+`</script>
</body></html>
`)
	})
	mux.HandleFunc("/hash-strict-dynamic", func(w http.ResponseWriter, r *http.Request) {
		// Hashes with 'strict-dynamic' and no nonce: a host-source would be inert, so the proxy
		// must inline the page agent and allow it by its hash.
		w.Header().Set("Content-Security-Policy", "script-src "+cspHash(hashedScript)+" 'strict-dynamic'; object-src 'none'")
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Hash strict-dynamic CSP</title></head><body>
<p>A hash policy with strict-dynamic.</p>
<script>`+hashedScript+`</script>
</body></html>
`)
	})
	mux.HandleFunc("/meta", func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'self'; script-src `+cspHash(hashedScript)+`">
<title>Meta CSP</title>
<link rel="stylesheet" href="/style.css">
</head><body>
<p>A policy in a meta element.</p>
<script>`+hashedScript+`</script>
</body></html>
`)
	})
	mux.HandleFunc("/meta-first", func(w http.ResponseWriter, r *http.Request) {
		// The policy comes before <meta charset>, so the bootstrap's insertion point (after the
		// charset declaration) is under it, and with 'strict-dynamic' a host-source for
		// remix.proxy would be inert: the proxy must put the page agent ahead of this policy.
		htmlPage(w, `<!doctype html>
<html><head>
<meta http-equiv="Content-Security-Policy" content="script-src `+cspHash(hashedScript)+` 'strict-dynamic'; object-src 'none'">
<meta charset="utf-8">
<title>Meta CSP first</title>
</head><body>
<p>A policy in a meta element before the charset declaration.</p>
<script>`+hashedScript+`</script>
</body></html>
`)
	})
	mux.HandleFunc("/trusted-types", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "require-trusted-types-for 'script'; trusted-types default")
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Trusted Types</title></head><body>
<p>Trusted Types are enforced; no default policy exists, so any string sink use throws.</p>
<script>
const p = document.createElement('p');
p.textContent = 'trusted types page script ran';
document.body.appendChild(p);
document.body.dataset.pageScript = 'ran';
</script>
</body></html>
`)
	})
	mux.HandleFunc("/none", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "script-src 'none'")
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>No scripts</title>
<link rel="stylesheet" href="/style.css">
</head><body>
<p>This page allows no script at all.</p>
</body></html>
`)
	})
	mux.HandleFunc("/style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, `p { margin: 1em; }`)
	})
	return mux
}

func TestCSP(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		meta       bool   // the policy is in a <meta> element, not the header
		wantText   string // a line the page's scripts add
	}{
		{name: "nonce strict-dynamic", path: "/nonce", wantText: "strict-dynamic script ran"},
		{name: "hash default-src self", path: "/hash"},
		{name: "hash strict-dynamic", path: "/hash-strict-dynamic"},
		{name: "meta policy", path: "/meta", meta: true},
		{name: "meta policy before the insertion point", path: "/meta-first", meta: true},
		{name: "trusted types", path: "/trusted-types", wantText: "trusted types page script ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			direct, proxied := loadBoth(t, "https://csp.test"+tc.path)
			checkLikeDirect(t, direct, proxied)
			if tc.wantText != "" && !strings.Contains(proxied.text, tc.wantText) {
				t.Errorf("proxied text %q lacks %q", proxied.text, tc.wantText)
			}
			if tc.path == "/nonce" && !e2etest.Eval[bool](proxied.tab, `document.documentElement.dataset.headScript === 'ran'`) {
				t.Errorf("the page's nonce'd <head> script did not run through the proxy")
			}
			wantPolicy, gotPolicy := direct.headers["content-security-policy"], proxied.headers["content-security-policy"]
			if tc.meta {
				const metaCSP = `[...document.querySelectorAll('meta[http-equiv="Content-Security-Policy" i]')].map(m => m.content).join('\n')`
				wantPolicy = e2etest.Eval[string](direct.tab, metaCSP)
				gotPolicy = e2etest.Eval[string](proxied.tab, metaCSP)
			}
			checkPolicyOnlyWidened(t, wantPolicy, gotPolicy)
			// How the page agent got in: loaded from remix.proxy where a host-source works,
			// inlined and allowed by its hash where 'strict-dynamic' makes host-sources inert.
			switch tc.path {
			case "/hash":
				if !strings.Contains(gotPolicy, "https://remix.proxy") {
					t.Errorf("policy %q does not allow the page agent's origin", gotPolicy)
				}
			case "/hash-strict-dynamic":
				if !strings.Contains(gotPolicy, panel.BootstrapHash()) {
					t.Errorf("policy %q does not carry the inlined page agent's hash %s", gotPolicy, panel.BootstrapHash())
				}
			}
		})
	}

	t.Run("script-src none", func(t *testing.T) {
		// Nothing can run here, so the proxy must leave the page alone: no bootstrap, no errors.
		url := "https://csp.test/none"
		direct := loadPage(t, world.DirectTab(t), url, false)
		proxied := loadPage(t, world.ProxiedTab(t), url, false)
		if proxied.status != direct.status || proxied.title != direct.title || proxied.text != direct.text {
			t.Errorf("page differs: proxied %d %q %q, direct %d %q %q", proxied.status, proxied.title, proxied.text, direct.status, direct.title, direct.text)
		}
		if len(direct.problems) > 0 {
			t.Errorf("the test page has problems directly (fix the page): %v", direct.problems)
		}
		if len(proxied.problems) > 0 {
			t.Errorf("problems through the proxy (want none):\n%s", joinProblems(proxied.problems))
		}
		if proxied.hasScript {
			t.Errorf("a <script data-remixproxy> was injected into a page whose policy forbids every script")
		}
		if proxied.tab.HasLauncher() {
			t.Errorf("a launcher exists on a page whose policy forbids every script")
		}
		if got, want := proxied.headers["content-security-policy"], direct.headers["content-security-policy"]; got != want {
			t.Errorf("Content-Security-Policy: proxied %q, direct %q (want it unmodified)", got, want)
		}
	})
}

// checkPolicyOnlyWidened checks the proxy's CSP adjustment against the design: every directive
// and source of the original policy is kept, and no 'unsafe-inline' or 'unsafe-eval' is added.
func checkPolicyOnlyWidened(t *testing.T, original, adjusted string) {
	t.Helper()
	orig, adj := parseCSP(original), parseCSP(adjusted)
	for name, sources := range orig {
		got, ok := adj[name]
		if !ok {
			t.Errorf("CSP directive %q was dropped: original %q, through the proxy %q", name, original, adjusted)
			continue
		}
		for _, s := range sources {
			if !slices.Contains(got, s) {
				t.Errorf("CSP directive %q lost source %s: original %q, through the proxy %q", name, s, original, adjusted)
			}
		}
	}
	for name, sources := range adj {
		for _, bad := range []string{"'unsafe-inline'", "'unsafe-eval'"} {
			if slices.Contains(sources, bad) && !slices.Contains(orig[name], bad) {
				t.Errorf("CSP directive %q gained %s through the proxy: %q", name, bad, adjusted)
			}
		}
	}
}

// parseCSP reads one or more policies (separated by commas or newlines, as DevTools joins repeated
// headers) into directive → sources; a directive repeated across policies collects all sources.
// Nonce values become 'nonce-*': the test pages pick a new nonce per response.
func parseCSP(policy string) map[string][]string {
	m := map[string][]string{}
	for _, p := range strings.FieldsFunc(policy, func(r rune) bool { return r == ',' || r == '\n' }) {
		for _, d := range strings.Split(p, ";") {
			f := strings.Fields(d)
			if len(f) == 0 {
				continue
			}
			name := strings.ToLower(f[0])
			for _, src := range f[1:] {
				if strings.HasPrefix(src, "'nonce-") {
					src = "'nonce-*'"
				}
				m[name] = append(m[name], src)
			}
		}
	}
	return m
}
