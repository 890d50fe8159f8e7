package e2e

import (
	"crypto/rand"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// sessionTimeout bounds waiting for the proxy's session table to show a change.
const sessionTimeout = 20 * time.Second

// sessionWatch follows one page session in the proxy's status.json and keeps every URL it
// reported for it.
type sessionWatch struct {
	t    *testing.T
	tab  *e2etest.Tab
	p    *e2etest.Proxy
	id   string
	seen []string // distinct URLs in the order seen
}

// findSession waits for the session whose URL is exactly url (the page this test just loaded,
// with a query of its own) and returns a watch on it.
func findSession(t *testing.T, tab *e2etest.Tab, url string) *sessionWatch {
	t.Helper()
	p := world.Proxy(t)
	deadline := time.Now().Add(sessionTimeout)
	for {
		st, raw, err := p.Status()
		if err == nil {
			for _, s := range st.Sessions {
				if s.URL == url {
					return &sessionWatch{t: t, tab: tab, p: p, id: s.ID, seen: []string{s.URL}}
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session with url %s in status.json within %v (last error: %v):\n%s\n%s", url, sessionTimeout, err, raw, tab.Diagnose())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// url returns the session's URL now, recording it; it fails the test if the session is gone.
func (w *sessionWatch) url() (string, error) {
	w.t.Helper()
	st, raw, err := w.p.Status()
	if err != nil {
		return "", err
	}
	for _, s := range st.Sessions {
		if s.ID == w.id {
			if !s.Connected {
				return "", fmt.Errorf("session %s is not connected:\n%s", w.id, raw)
			}
			if w.seen[len(w.seen)-1] != s.URL {
				w.seen = append(w.seen, s.URL)
			}
			return s.URL, nil
		}
	}
	w.t.Fatalf("session %s left status.json (the page agent disconnected?); URLs it had: %q\n%s\n%s", w.id, w.seen, raw, w.tab.Diagnose())
	return "", nil
}

// waitURL polls status.json until the session's URL satisfies ok, for at most sessionTimeout.
func (w *sessionWatch) waitURL(what string, ok func(string) bool) string {
	w.t.Helper()
	deadline := time.Now().Add(sessionTimeout)
	var last error
	for {
		u, err := w.url()
		if err == nil && ok(u) {
			return u
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the session's url did not become %s within %v (last error: %v); URLs seen: %q\nproxy log tail:\n%s\n%s",
				what, sessionTimeout, last, w.seen, tail(w.p.Logs(), 3000), w.tab.Diagnose())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestSPANavigationUpdatesSession(t *testing.T) {
	const origin = "https://plain.test"
	tab := world.ProxiedTab(t)
	start := origin + "/?spa=" + rand.Text()
	tab.Navigate(start)
	tab.WaitConnected()
	w := findSession(t, tab, start)

	// The page's own script moves to another path of its origin without loading it.
	next := origin + "/spa/next?x=1"
	if got := e2etest.Eval[string](tab, `history.pushState({}, '', '/spa/next?x=1'), location.href`); got != next {
		t.Fatalf("after pushState, location.href is %s, want %s", got, next)
	}
	w.waitURL("…/spa/next?x=1 after history.pushState", func(u string) bool { return strings.HasSuffix(u, "/spa/next?x=1") })

	// Another origin is out of pushState's reach: the browser throws, the page stays where it
	// was, and nothing is reported.
	res := e2etest.Eval[map[string]string](tab, `(() => {
		let error = 'no error';
		try { history.pushState({}, '', 'https://evil.test/'); } catch (e) { error = e.name; }
		return {error, href: location.href};
	})()`)
	if res["error"] != "SecurityError" {
		t.Errorf("history.pushState to another origin: got %s, want a SecurityError", res["error"])
	}
	if res["href"] != next {
		t.Errorf("after the refused pushState, location.href is %s, want %s", res["href"], next)
	}

	// A fragment change is reported too. The agent's reports travel in order on one socket, so
	// once this one shows, anything the refused pushState could have sent has arrived before it.
	if got := e2etest.Eval[string](tab, `location.hash = '#h', location.href`); got != next+"#h" {
		t.Fatalf("after location.hash = '#h', location.href is %s, want %s#h", got, next)
	}
	w.waitURL("…/spa/next?x=1#h after location.hash = '#h'", func(u string) bool { return strings.HasSuffix(u, "/spa/next?x=1#h") })

	// Going back is a traversal (popstate, hashchange) and is reported as well.
	e2etest.Eval[bool](tab, `history.back(), true`)
	tab.WaitFor(sessionTimeout, "history.back() to leave #h", `location.href === '`+next+`'`)
	w.waitURL("…/spa/next?x=1 after history.back()", func(u string) bool { return u == next })

	t.Logf("session URLs seen: %q", w.seen)
	for _, u := range w.seen {
		if !strings.HasPrefix(u, origin+"/") {
			t.Errorf("the session's url was %s at some point, outside the page's origin %s; URLs seen: %q", u, origin, w.seen)
		}
	}

}
