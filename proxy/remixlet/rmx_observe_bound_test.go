package remixlet

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/page"
)

// TestObservedIsBoundedForAllSessions: any page may fetch from an observed host, and a site
// whose pages open sessions from many subdomains (live ones: attach keeps only those), each
// with a whole page's record, is bounded by maxObservedAll, not by the browser's socket limit;
// it loses its own oldest responses first, and another site's page keeps its record.
func TestObservedIsBoundedForAllSessions(t *testing.T) {
	o := NewObserved(page.New(page.Config{Secret: []byte("k")}), nil, slog.New(slog.DiscardHandler))
	body := strings.Repeat("y", maxObservedBody-100)
	fill := func(id, pageURL string) *observedSession {
		o.mu.Lock()
		defer o.mu.Unlock()
		r := &observedSession{Site: siteOf(pageURL)}
		o.bySession[id] = r
		for i := 0; i < maxObservedPerPageBytes/maxObservedBody; i++ {
			o.record(r, ObservedResponse{URL: fmt.Sprint("https://api.test/", i), Body: body, At: 1, host: "api.test", path: "/"})
		}
		return r
	}
	shop := fill("shop", "https://shop.test/cart")
	kept := len(shop.Items)
	for i := range 250 { // 250 MiB without the bound
		fill(fmt.Sprint("evil-", i), fmt.Sprintf("https://s%d.evil.test/p", i))
	}
	o.mu.Lock()
	total, sum := o.total, 0
	for _, r := range o.bySession {
		sum += r.Bytes
	}
	o.mu.Unlock()
	if total != sum || sum > maxObservedAll || sum > 32*maxObservedPerPageBytes {
		t.Errorf("the records hold %d MiB (counted %d bytes), want at most %d MiB", sum>>20, total, min(maxObservedAll, 32*maxObservedPerPageBytes)>>20)
	}
	if got := len(o.Responses("shop", "https://shop.test/cart", "api.test", "", 0)); got != kept || kept == 0 {
		t.Errorf("the other site's page kept %d of its %d responses", got, kept)
	}
}
