package e2e

import (
	"fmt"
	"html"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// redirSite is a chain of 302s across paths that sets a cookie on the way, checks it on the
// next hop, and ends on another test host.
func redirSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "hop", Value: "1", Path: "/"})
		http.Redirect(w, r, "/step2", http.StatusFound)
	})
	mux.HandleFunc("/step2", func(w http.ResponseWriter, r *http.Request) {
		saw := "0"
		if c, err := r.Cookie("hop"); err == nil && c.Value == "1" {
			saw = "1"
		}
		http.Redirect(w, r, "/step3?sawcookie="+saw, http.StatusFound)
	})
	mux.HandleFunc("/step3", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://plain.test/landing?from=redir&sawcookie="+r.URL.Query().Get("sawcookie"), http.StatusFound)
	})
	return mux
}

// cookieSite sets an HttpOnly and a script-visible cookie, and shows what it receives.
func cookieSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cr3t", Path: "/", Secure: true, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		http.SetCookie(w, &http.Cookie{Name: "visible", Value: "yes", Path: "/", Secure: true, SameSite: http.SameSiteLaxMode})
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Cookies set</title></head>
<body><p>Two cookies set.</p><script>document.body.dataset.pageScript = 'ran';</script></body></html>`)
	})
	mux.HandleFunc("/read", func(w http.ResponseWriter, r *http.Request) {
		var names []string
		for _, c := range r.Cookies() {
			names = append(names, c.Name+"="+c.Value)
		}
		slices.Sort(names)
		htmlPage(w, fmt.Sprintf(`<!doctype html><html><head><meta charset="utf-8"><title>Cookies read</title></head>
<body><p>server saw: %s</p><p id="js"></p>
<script>
document.getElementById('js').textContent = 'document.cookie: ' + document.cookie;
document.body.dataset.pageScript = 'ran';
</script></body></html>`, html.EscapeString(strings.Join(names, "; "))))
	})
	return mux
}

func TestRedirectsAndCookies(t *testing.T) {
	t.Run("302 chain to another host", func(t *testing.T) {
		const want = "https://plain.test/landing?from=redir&sawcookie=1"
		direct, proxied := loadBoth(t, "https://redir.test/start")
		checkLikeDirect(t, direct, proxied)
		if got := direct.tab.URL(); got != want {
			t.Errorf("direct: ended at %s, want %s (fix the site)", got, want)
		}
		if got := proxied.tab.URL(); got != want {
			t.Errorf("through the proxy: ended at %s, want %s", got, want)
		}
	})

	t.Run("cookies", func(t *testing.T) {
		dtab, ptab := world.DirectTab(t), world.ProxiedTab(t)
		loadPage(t, dtab, "https://cookie.test/set", false)
		loadPage(t, ptab, "https://cookie.test/set", true)
		direct := loadPage(t, dtab, "https://cookie.test/read", false)
		proxied := loadPage(t, ptab, "https://cookie.test/read", true)
		checkLikeDirect(t, direct, proxied)
		for _, want := range []string{"server saw: session=s3cr3t; visible=yes", "document.cookie: visible=yes"} {
			if !strings.Contains(proxied.text, want) {
				t.Errorf("through the proxy the page says %q, want it to contain %q", proxied.text, want)
			}
		}
	})
}
