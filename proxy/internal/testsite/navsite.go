package testsite

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// NavHeaders are the headers Chromium sends with a navigation started in a page of from
// (fetchSite as it computes it), as name, value pairs; referer "" leaves the Referer out.
func NavHeaders(fetchSite, referer string) []string {
	h := []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", fetchSite, "Upgrade-Insecure-Requests", "1"}
	if referer != "" {
		h = append(h, "Referer", referer)
	}
	return h
}

// NavSite is a site with an open redirect (/out?to=; /outpieces?host=witness&d= goes to
// https://witness.test/?d=, an address no reading of its query sees), a same-site redirect into it (/hop?to=,
// via www.example.com), a page that refreshes off the site to witness.test (/refresh), a 307
// redirect that keeps a POST (/post307 to /account2), and a page everywhere else; it records
// what it answered.
type NavSite struct {
	mu   sync.Mutex
	seen []string
}

func (s *NavSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.Method+" "+r.Host+r.URL.RequestURI())
	s.mu.Unlock()
	switch r.URL.Path {
	case "/out":
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	case "/outpieces":
		// An address assembled from pieces ("witness" + ".test"), which no reading of the query
		// sees as an address (proxy/chat/navguard_carried.go): the redirect guard's own case.
		http.Redirect(w, r, "https://"+r.URL.Query().Get("host")+".test/?d="+url.QueryEscape(r.URL.Query().Get("d")), http.StatusFound)
	case "/hop":
		http.Redirect(w, r, "https://www.example.com/out?to="+url.QueryEscape(r.URL.Query().Get("to")), http.StatusMovedPermanently)
	case "/refresh":
		w.Header().Set("Refresh", "0; url=https://witness.test/r")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>R</title>`)
	case "/post307":
		http.Redirect(w, r, "/account2", http.StatusTemporaryRedirect)
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><title>Shop</title><p>shop</p>`)
	}
}

// Requests lists what the site answered, one "METHOD host/path?query" a line, oldest first.
func (s *NavSite) Requests() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, "\n")
}
