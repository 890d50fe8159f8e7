package proxy

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// navHeaders are the headers Chromium sends with a navigation started in a page of from
// (fetchSite as it computes it); referer "" leaves the Referer out.
func navHeaders(fetchSite, referer string) []string {
	h := []string{"Sec-Fetch-Dest", "document", "Sec-Fetch-Mode", "navigate", "Sec-Fetch-Site", fetchSite, "Upgrade-Insecure-Requests", "1"}
	if referer != "" {
		h = append(h, "Referer", referer)
	}
	return h
}

// navSite is a site with an open redirect, a same-site redirect into it, a page that refreshes
// off the site, and a page; it records what it answered.
type navSite struct {
	mu   sync.Mutex
	seen []string
}

func (s *navSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.Method+" "+r.Host+r.URL.RequestURI())
	s.mu.Unlock()
	switch r.URL.Path {
	case "/out":
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	case "/hop":
		http.Redirect(w, r, "https://www.example.com/out?to="+url.QueryEscape(r.URL.Query().Get("to")), http.StatusMovedPermanently)
	case "/refresh":
		w.Header().Set("Refresh", "0; url=https://witness.test/r")
		htmlHandler(`<!doctype html><title>R</title>`)(w, r)
	default:
		htmlHandler(`<!doctype html><title>Shop</title><p>shop</p>`)(w, r)
	}
}

func (s *navSite) requests() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, "\n")
}

// TestChatNavigateStopped: a whole chat. The model, obeying the page, navigates to the site's
// open redirect with data in the address; the page agent (stand-in) goes there as the browser
// would, the proxy refuses the redirect, the page goes, and the tool result and a notice say
// the navigation was stopped.
func TestChatNavigateStopped(t *testing.T) {
	site := &navSite{}
	cf := newChatFixtureWith(t, `{"turns": [
		{"tool_calls": [{"name": "navigate", "arguments": {"url": "/out?to=https%3A%2F%2Fwitness.test%2F%3Fd%3Dsecret"}}]},
		{"text": "should not be reached"}
	]}`, chatOptions{site: site})
	cf.srv.chats.SetFollowGrace(300 * time.Millisecond)
	var navigated sync.Once
	cf.toolMu.Lock()
	cf.reply = func(tool string, args json.RawMessage) any {
		if tool != "navigate" {
			return nil
		}
		var a struct{ URL string }
		json.Unmarshal(args, &a)
		navigated.Do(func() {
			go func() {
				time.Sleep(30 * time.Millisecond) // the page agent answers first, then assigns
				req, _ := http.NewRequest("GET", a.URL, nil)
				for h := navHeaders("same-origin", "https://example.com/"); len(h) > 1; h = h[2:] {
					req.Header.Set(h[0], h[1])
				}
				if resp, err := cf.client.Do(req); err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusForbidden {
						cf.page.Close(websocket.StatusGoingAway, "the tab shows the refusal page")
					}
				}
			}()
		})
		return map[string]any{"navigating": "/out?…", "sameDocument": false, "mayLeave": true}
	}
	cf.toolMu.Unlock()
	cf.actMode(t)
	cf.say(t, map[string]string{"type": "send", "text": "go on"})
	r := cf.waitItem(t, "navigate", toolDone("navigate"))
	if r["status"] != "error" || !strings.Contains(resultOf(r), "navigate: stopped by the proxy: the site answered https://example.com/out?… with a redirect (302) to https://witness.test/?…, which would have left the site example.com") {
		t.Errorf("navigate = %v", r["result"])
	}
	cf.waitIdle(t)
	if !strings.Contains(cf.raw.String(), "remixproxy stopped the agent's navigation: the site answered") {
		t.Error("no notice says the navigation was stopped")
	}
	if n := len(cf.model.Requests()); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
	if !strings.Contains(cf.raw.String(), "the proxy stopped the agent's navigation") {
		t.Error("the turn's stop does not say the proxy stopped the navigation")
	}
}
