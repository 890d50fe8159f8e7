package remixlet

import (
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// A page's own <embed> of another host is fetched again each time it is shown after being
// hidden (OPEN-ITEMS 101, measured: 5 requests for the page's load and 4 hide/show cycles of its
// container; TestRedteamEmbedShownAgainAsksItsHostAgain). An <object> is fetched once more at
// most (pass 5a), and its own second request on load (seen with a 204 answer) must not be
// refused, so objects are left alone. A remixlet with no
// permission that toggles display on an ancestor — dom.hide and dom.show, setStyle, a class a
// sheet rule keys on, addStyle — so asks the embed's host as often, and in the rhythm, it
// likes: a channel to that host for anything it read. Refusing display changes around embeds
// would cost the common use (hiding an ad container), and a sheet rule can flip them anyway.
//
// So the bound is on what leaves: while a remixlet's script runs on a page of an origin, an
// embed request (Sec-Fetch-Dest embed) from that origin (its Referer's
// origin; no Referer: any page) for an address already asked from it since the origin's last
// document navigation gets the proxy's 403, with a line in the log of the remixlets running
// there. Each embed then reaches its host at most once per page load (the page's own load; a
// first one that came before any script ran, the first re-show). A navigation of the origin (a
// reload, the next page) starts afresh. Cost: a page's own script that hides and shows its
// embed again (tabs) while a remixlet runs on the page shows it empty after the first time;
// plain http (no Fetch metadata) is not covered.

const (
	maxEmbedOrigins = 1024 // past it, the record starts afresh
	maxEmbedsPer    = 256  // addresses per origin; past it, new ones are not recorded
)

// embedGuard records the embed addresses each origin's pages asked for. The zero value is
// ready.
type embedGuard struct {
	n    atomic.Int32 // len(seen), read without the lock on every navigation
	mu   sync.Mutex
	seen map[string]map[string]bool // page origin ("" without a Referer) → weburl.Key
}

// guardEmbedRefetch is the request side (GuardPageRequests): see the top of the file.
func (r *Runner) guardEmbedRefetch(w http.ResponseWriter, req *http.Request) bool {
	if req.Header.Get("Sec-Fetch-Dest") != "embed" {
		if r.embeds.n.Load() > 0 {
			if top, frame := httpx.NavigationKind(req); top || frame {
				if u, err := httpx.RequestedAddress(req); err == nil {
					r.embeds.forget(u.Origin())
				}
			}
		}
		return false
	}
	u, err := httpx.RequestedAddress(req)
	if err != nil {
		return false
	}
	origin := ""
	if ref, err := weburl.Parse(req.Header.Get("Referer")); err == nil && ref.IsHTTP() {
		origin = ref.Origin()
	}
	if !r.embeds.again(origin, weburl.Key(u)) {
		return false
	}
	running := r.scriptsOn(origin)
	if len(running) == 0 {
		return false
	}
	for _, id := range running {
		r.logf(id, "warn", "refused: the page asked again for its embedded %s (shown again after it was hidden?) while this remixlet runs on it; the browser got a 403 instead (a page's embed reaches its host once per page load while a remixlet runs there)",
			httpx.Clip(u.Request(), 300))
	}
	writeRefusal(w, refusalBody("an embed asked for again while a remixlet runs on the page was refused",
		"reload the page to show it again (while a remixlet runs on a page, the page's embed reaches its site once per page load)"))
	return true
}

// again records key as asked from origin's pages and reports whether it had been already.
func (g *embedGuard) again(origin, key string) bool {
	if key == "" {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil || len(g.seen) >= maxEmbedOrigins {
		g.seen = map[string]map[string]bool{}
	}
	keys := g.seen[origin]
	if keys == nil {
		keys = map[string]bool{}
		g.seen[origin] = keys
	}
	if keys[key] {
		return true
	}
	if len(keys) < maxEmbedsPer {
		keys[key] = true
	}
	g.n.Store(int32(len(g.seen)))
	return false
}

// forget starts origin's record afresh (a document navigation of it), and the record of pages
// without a Referer.
func (g *embedGuard) forget(origin string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.seen, origin)
	delete(g.seen, "")
	g.n.Store(int32(len(g.seen)))
}

// scriptsOn are the remixlets whose scripts run on a connected page of origin ("": any page).
func (r *Runner) scriptsOn(origin string) []string {
	r.mu.Lock()
	pages := make([]*pageRun, 0, len(r.pages))
	for _, p := range r.pages {
		pages = append(pages, p)
	}
	r.mu.Unlock()
	var ids []string
	for _, p := range pages {
		if origin != "" {
			u, err := weburl.Parse(p.pc.url())
			if err != nil || u.Origin() != origin {
				continue
			}
		}
		p.mu.Lock()
		for id := range p.running {
			ids = append(ids, id)
		}
		p.mu.Unlock()
	}
	return ids
}
