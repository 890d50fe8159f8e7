package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// TestAgentConnectsAfterLoadWhereNoRemixletRuns: on a page where no remixlet runs, the page
// agent opens its socket only after the page's load event, off the person's wait, or a second
// after DOMContentLoaded when the load is slow to come; on a page where one runs it opens it at
// once, while the page is still being parsed, so the remixlet acts early. A remixlet switched on for a page while it loads
// runs on it when its agent connects. The order is read from Chromium's own events (the
// socket's handshake, DOMContentLoaded, load) on one clock; the pages are slow by seconds where
// the order matters, so the cases are far apart.
func TestAgentConnectsAfterLoadWhereNoRemixletRuns(t *testing.T) {
	site := http.NewServeMux()
	// ?hold=MS sends the end of the document MS after its start; ?img=MS adds an image that
	// arrives after MS (the load event waits for it).
	site.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		ms := func(name string) time.Duration {
			n, _ := strconv.Atoi(r.URL.Query().Get(name))
			return time.Duration(n) * time.Millisecond
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		img := ""
		if d := ms("img"); d > 0 {
			img = fmt.Sprintf(`<img src="/slow.png?ms=%d" alt="slow">`, d.Milliseconds())
		}
		fmt.Fprint(w, `<!doctype html><html><head><meta charset="utf-8"><title>Slow</title></head>
<body><h1>A slow page</h1>`+img)
		w.(http.Flusher).Flush()
		select {
		case <-time.After(ms("hold")):
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, `<p>The end of the page.</p></body></html>`)
	})
	site.HandleFunc("/slow.png", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		select {
		case <-time.After(time.Duration(n) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(onePixelPNG)
	})
	sites := e2etest.StartSites(t)
	sites.Handle("slowpage.test", site)
	p := e2etest.StartProxy(t, sites, e2etest.WithStore())
	rx := saveAndActivate(t, p.Store, "log on rx pages", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "log on rx pages", "description": "e2e", "api": 1, "matches": ["https://slowpage.test/rx/*"], "permissions": []}`),
		sandbox.ScriptFile:   []byte(`const { url } = await rmx.page(); rmx.log("ran on " + url);`),
	})
	tab := e2etest.Browser(t, e2etest.ThroughProxy(p)).NewTab(t)

	// times are one navigation's events, in Chromium's monotonic seconds.
	type times struct{ dcl, load, handshake []float64 }
	var mu sync.Mutex
	var got times
	err := chromedp.Listen(tab.Context(), func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *page.EventDomContentEventFired:
			got.dcl = append(got.dcl, ev.Timestamp.Float64())
		case *page.EventLoadEventFired:
			got.load = append(got.load, ev.Timestamp.Float64())
		case *network.EventWebSocketWillSendHandshakeRequest:
			got.handshake = append(got.handshake, ev.Timestamp.Float64())
		}
	})
	if err != nil {
		t.Fatalf("listening to the tab's events: %v", err)
	}
	ctx, cancel := context.WithTimeout(tab.Context(), 10*time.Second)
	err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tt, network.Enable, network.EnableParams{})
		return err
	}))
	cancel()
	if err != nil {
		t.Fatalf("enabling the network events: %v", err)
	}
	// visit loads url and returns when the socket's handshake went out after DOMContentLoaded
	// and after the load event (negative: before).
	visit := func(url string) (afterDCL, afterLoad time.Duration) {
		t.Helper()
		mu.Lock()
		got = times{}
		mu.Unlock()
		tab.Navigate(url)
		tab.WaitConnected()
		mu.Lock()
		defer mu.Unlock()
		if len(got.dcl) != 1 || len(got.load) != 1 || len(got.handshake) != 1 {
			t.Fatalf("%s: %d DOMContentLoaded, %d load events and %d socket handshakes, want one of each\n%s", url, len(got.dcl), len(got.load), len(got.handshake), tab.Diagnose())
		}
		sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
		return sec(got.handshake[0] - got.dcl[0]), sec(got.handshake[0] - got.load[0])
	}

	if _, d := visit("https://slowpage.test/plain"); d < 0 {
		t.Errorf("no remixlet runs on the page, yet its agent opened the socket %v before the load event", -d)
	}
	if dcl, load := visit("https://slowpage.test/plain?img=3000"); dcl < 950*time.Millisecond || load > 0 {
		t.Errorf("no remixlet runs on the page and its load is slow: the agent opened the socket %v after DOMContentLoaded and %v after the load event, want a second after DOMContentLoaded, before the load", dcl, load)
	}
	if dcl, _ := visit("https://slowpage.test/rx/page?hold=1500"); dcl > 0 {
		t.Errorf("a remixlet runs on the page, yet its agent opened the socket %v after DOMContentLoaded (want at once, while the page is parsed)", dcl)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(remixletLog(t, p.Store, rx.ID), "ran on https://slowpage.test/rx/page"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the remixlet did not run on its page:\n%s\n%s", remixletLog(t, p.Store, rx.ID), tab.Diagnose())
		}
	}

	// A remixlet switched on for a page while it loads (served without one, so its agent waits
	// for the load) runs on it when the agent connects.
	e2etest.Eval[any](tab, `location.href = '/later?img=3000', true`)
	tab.WaitFor(e2etest.ConnectedTimeout, "the page parsed, its image still loading", `location.pathname === '/later' && document.readyState === 'interactive'`)
	later := saveAndActivate(t, p.Store, "log everywhere", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "log everywhere", "description": "e2e", "api": 1, "matches": ["https://slowpage.test/*"], "permissions": []}`),
		sandbox.ScriptFile:   []byte(`const { url } = await rmx.page(); rmx.log("live on " + url);`),
	})
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(remixletLog(t, p.Store, later.ID), "live on https://slowpage.test/later?img=3000"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a remixlet switched on while the page loaded did not run on it:\n%s\n%s", remixletLog(t, p.Store, later.ID), tab.Diagnose())
		}
	}
}
