package e2e

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// wait_for by text is decided in Go over the redacted page text (oracle4): the chat asks the
// page agent every 100 ms whether the text is there and, when it is, for the page's text. A
// page that holds the text only in a secret (never found, so the wait runs out), or that shows
// it while the model waits for it to go, sent its whole text ten times a second. The page agent
// now sends it only when it changed since the last it sent (pass 5d).

const waitPollMarker = "Static marker text for the polls"

func waitPollSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Polls</title></head><body>
<h1>Polls</h1>
<p>`+waitPollMarker+` `+strings.Repeat("padding words ", 2000)+`</p>
<p>Maps key: `+rtKeyGoogle+`</p>
<script>document.body.dataset.pageScript = 'ran';
setTimeout(function () { var p = document.createElement('p'); p.textContent = 'Appeared later'; document.body.appendChild(p); }, 5000);</script>
</body></html>`)
	})
}

// TestWaitForSendsThePageTextOnce: a 3-second wait for an n-gram of the key (on the page, only
// inside the key) runs out, and the page agent sent its text once for it, not at each poll; a
// text that appears later and one that is there are found.
func TestWaitForSendsThePageTextOnce(t *testing.T) {
	turns := []string{
		rtOracleCall("wait_for", "text", "i0IoFuc", `, "timeoutMs": 3000`),
		rtOracleCall("wait_for", "text", "Appeared later", `, "timeoutMs": 10000`),
		rtOracleCall("wait_for", "text", "Maps key"),
	}
	script := `{"turns": [` + strings.Join(turns, ",\n") + `, {"text": "Waited."}]}`
	aw, guard := newRTWorld(t, script, map[string]http.Handler{"polls.test": waitPollSite()}, rtKeyGoogle)

	var mu sync.Mutex
	sent := 0 // frames the page sent that carry its text
	err := chromedp.Listen(aw.tab.Context(), func(ev any) {
		if f, ok := ev.(*network.EventWebSocketFrameSent); ok && strings.Contains(string(f.Response.PayloadData), waitPollMarker) {
			mu.Lock()
			sent++
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("listening to the tab's events: %v", err)
	}
	ctx, cancel := context.WithTimeout(aw.tab.Context(), 10*time.Second)
	err = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
		_, err := cdp.Call(ctx, tt, network.Enable, network.EnableParams{})
		return err
	}))
	cancel()
	if err != nil {
		t.Fatalf("enabling the network events: %v", err)
	}

	actChat(t, aw.tab, "https://polls.test/", "wait for things")
	guard.reportLeaks(t, aw, len(turns)+1, "secret")
	results := rtModelResults(aw)
	if len(results) != len(turns) {
		t.Fatalf("%d tool results, want %d:\n%s", len(results), len(turns), head(strings.Join(results, "\n"), 3000))
	}
	for i, want := range []string{`did not appear after 3000 ms`, `"found":true`, `"found":true`} {
		if !strings.Contains(results[i], want) {
			t.Errorf("%s: got %s, want %s", turns[i], head(results[i], 300), want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// One for each wait (the second's when the text appears), and room for a reconnection.
	if sent == 0 || sent > 5 {
		t.Errorf("the page agent sent its text %d times for three waits (a 3-second one that ran out among them), want 1 to 5", sent)
	}
}
