package remixlet

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/netrules"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Network rules (rules.json) of the active remixlets, applied in the pipeline:
//
//   - the pipeline's request stage calls Apply before a request leaves: a blocked request gets
//     a 403 with "X-Remixproxy: blocked" (the browser shows the load as failed), a redirected
//     or upgraded one a 307 to the new address; otherwise the request header changes travel in
//     the request's context to Rewrite (RequestHeaders) and the response header changes to the
//     first response tap (ResponseHeaders).
//   - Only browser requests reach this: remix.proxy and the listen address are answered before,
//     and the proxy's own requests (model calls, rmx.fetch) never enter serveProxied.
//   - The rule set holds the active version's rules of every enabled, unarchived remixlet with
//     the netrules permission, compiled by netrules.Compile against its sites. A rule that
//     breaks a limit is left out and the remixlet's log says which and why (once per version
//     and process). No rule acts on a request from or to a paused site.
//   - The set is rebuilt when the store changes: Invalidate (the Activator, after the manager's
//     and the chat's changes) makes the next request reload, and a cheap poll (the remixlet list
//     and the paused sites, at most once a second) catches changes made by another process,
//     such as the CLI.

// netRulesPoll is how often the store is looked at for changes made by other processes.
const netRulesPoll = time.Second

// maxNetRulesLogLines bounds the log lines one install writes about rules left out.
const maxNetRulesLogLines = 20

// NetRules are the network rules of the active remixlets, applied in the pipeline (see the
// top of the file). Use NewNetRules.
type NetRules struct {
	st      *store.Store
	log     *slog.Logger
	ownHost func(host string) bool // the proxy's listen address: never ruled

	cur      atomic.Pointer[netRulesSnapshot]
	dirty    atomic.Bool
	lastPoll atomic.Int64 // UnixNano of the last look at the store

	mu       sync.Mutex                  // one reload at a time; guards compiled
	compiled map[int64]*netrules.Ruleset // by version ID

	withheldMu sync.Mutex
	withheld   map[string]bool // "owner rule page-site" already logged (withheldLog)
}

// maxWithheldLogged bounds the withheld redirects remembered as logged; past it the record
// starts afresh (a line may then be written again).
const maxWithheldLogged = 1024

type netRulesSnapshot struct {
	set         *netrules.Set
	paused      map[string]bool
	names       map[string]string // remixlet ID → name
	fingerprint string
}

// NewNetRules makes the rules of the remixlets in st. ownHost reports whether a request's Host
// names the proxy's own listen address (no rule acts on those); log gets the rules' own lines.
func NewNetRules(st *store.Store, log *slog.Logger, ownHost func(host string) bool) *NetRules {
	n := &NetRules{st: st, log: log, ownHost: ownHost, compiled: map[int64]*netrules.Ruleset{}}
	n.cur.Store(&netRulesSnapshot{})
	n.dirty.Store(true)
	return n
}

// Invalidate makes the next browser request rebuild the rule set from the store: an Activator
// calls it after activations, switches, pauses and deletions. Nil-safe.
func (n *NetRules) Invalidate() {
	if n != nil {
		n.dirty.Store(true)
	}
}

// snapshot returns the current rule set, reloading it first when it was invalidated, and
// looking at the store for outside changes at most once per netRulesPoll (without making
// other requests wait for that look).
func (n *NetRules) snapshot(ctx context.Context) *netRulesSnapshot {
	if n.dirty.Load() {
		n.mu.Lock()
		if n.dirty.Swap(false) {
			n.reload(ctx)
		}
		n.mu.Unlock()
		return n.cur.Load()
	}
	now := time.Now().UnixNano()
	if last := n.lastPoll.Load(); now-last >= int64(netRulesPoll) && n.mu.TryLock() {
		if n.lastPoll.CompareAndSwap(last, now) {
			n.reload(ctx)
		}
		n.mu.Unlock()
	}
	return n.cur.Load()
}

// reload rebuilds the snapshot when the store's remixlets or paused sites changed. n.mu is held.
func (n *NetRules) reload(ctx context.Context) {
	n.lastPoll.Store(time.Now().UnixNano())
	ctx = context.WithoutCancel(ctx)
	rxs, err := n.st.ListRemixlets(ctx)
	if err != nil {
		n.log.Warn("netrules: reading remixlets", "err", err)
		return
	}
	paused, err := n.st.PausedSites(ctx)
	if err != nil {
		n.log.Warn("netrules: reading paused sites", "err", err)
		return
	}
	var fp strings.Builder
	for _, rx := range rxs {
		fmt.Fprintf(&fp, "%s %t %t %d %d;", rx.ID, rx.Enabled, rx.Archived, rx.ActiveVersionID, rx.UpdatedAt.UnixNano())
	}
	fp.WriteString(strings.Join(paused, ","))
	if old := n.cur.Load(); old.fingerprint == fp.String() && old.set != nil {
		return
	}

	snap := &netRulesSnapshot{paused: map[string]bool{}, names: map[string]string{}, fingerprint: fp.String()}
	for _, h := range paused {
		snap.paused[h] = true
	}
	var sets []*netrules.Ruleset
	keep := map[int64]bool{}
	for _, rx := range rxs { // sorted by name: earlier names win ties between remixlets
		if !rx.Enabled || rx.Archived || rx.ActiveVersionID == 0 {
			continue
		}
		keep[rx.ActiveVersionID] = true
		rs, ok := n.compiled[rx.ActiveVersionID]
		if !ok {
			rs = n.install(ctx, rx)
			n.compiled[rx.ActiveVersionID] = rs
		}
		if rs != nil {
			sets = append(sets, rs)
			snap.names[rx.ID] = rx.Name
		}
	}
	for id := range n.compiled {
		if !keep[id] {
			delete(n.compiled, id)
		}
	}
	snap.set = netrules.NewSet(sets...)
	n.cur.Store(snap)
}

// install compiles the active version's rules of rx, or returns nil when it has none in
// effect. Rules that break a limit are left out and logged to the remixlet's log.
func (n *NetRules) install(ctx context.Context, rx store.Remixlet) *netrules.Ruleset {
	v, ok, err := n.st.Active(ctx, rx.ID)
	if err != nil || !ok || v.ID != rx.ActiveVersionID {
		if err != nil {
			n.log.Warn("netrules: reading active version", "remixlet", rx.ID, "err", err)
		}
		return nil
	}
	raw, ok := v.Files[sandbox.RulesFile]
	if !ok || len(strings.TrimSpace(string(raw))) == 0 {
		return nil
	}
	m, mprobs := sandbox.ParseManifest(v.Files[sandbox.ManifestFile])
	type line struct{ level, msg string }
	var lines []line
	warn := func(msg string) { lines = append(lines, line{"warn", msg}) }
	var rs *netrules.Ruleset
	switch {
	case m == nil:
		warn(fmt.Sprintf("rules.json not installed: manifest.json has problems (%v)", mprobs))
	case !m.HasPermission(sandbox.PermNetRules):
		if strings.TrimSpace(string(raw)) != "[]" {
			warn("rules.json not installed: the manifest does not have the netrules permission")
		}
	default:
		rules, probs := netrules.Parse(raw)
		var cprobs []netrules.Problem
		rs, cprobs = netrules.Compile(rx.ID, rules, sandbox.RuleSites(m))
		probs = append(probs, cprobs...)
		for i, p := range probs {
			if i == maxNetRulesLogLines {
				warn(fmt.Sprintf("rules.json: %d more problems not shown", len(probs)-i))
				break
			}
			if p.Index < 0 {
				warn("rules.json: " + p.Message)
			} else {
				warn("rules.json: left out " + p.Error())
			}
		}
		if len(rs.Rules) == 0 {
			rs = nil
		} else {
			lines = append(lines, line{"info", fmt.Sprintf("rules.json: %d rules in effect (version %d)", len(rs.Rules), v.Number)})
		}
	}
	for _, l := range lines {
		if err := n.st.AppendLog(ctx, rx.ID, l.level, l.msg); err != nil {
			n.log.Warn("netrules: writing remixlet log", "remixlet", rx.ID, "err", err)
		}
	}
	return rs
}

type netRulesKey struct{}

// Apply runs the rules on a browser request before it leaves (the pipeline's request stage). It
// answers a blocked, redirected or upgraded request itself (done is true); otherwise it returns
// the request, carrying the header changes in its context when there are any. Nil-safe.
func (n *NetRules) Apply(w http.ResponseWriter, r *http.Request) (_ *http.Request, done bool) {
	if n == nil || httpx.IsMagicHost(httpx.HostOnly(r.Host)) || n.ownHost != nil && n.ownHost(r.Host) {
		return r, false
	}
	snap := n.snapshot(r.Context())
	if snap.set.Len() == 0 {
		return r, false
	}
	// The request as the browser sent it, read as the browser reads addresses (weburl): rules
	// match, and their hosts are compared with, the address the browser asked for.
	u, err := httpx.RequestedAddress(r)
	if err != nil {
		return r, false
	}
	req := netrules.NewRequest(r.Method, u, r.Header)
	if snap.paused[req.Host] || req.InitiatorState == netrules.InitiatorKnown && snap.paused[req.Initiator] {
		return r, false
	}
	res := snap.set.Match(req)
	if res.Withheld.Owner != "" {
		n.withheldLog(r.Context(), req, &res)
	}
	if res.Empty() {
		return r, false
	}
	switch res.Action {
	case netrules.Block:
		n.log.Debug("netrules: blocked", "url", req.URL(), "remixlet", res.By.Owner, "rule", res.By.RuleID)
		w.Header().Set("X-Remixproxy", "blocked")
		// The body names no remixlet: a page reads the refusal of a request to its own origin,
		// and the names of the person's remixlets are not the page's to learn (refusal.go).
		writeRefusal(w, fmt.Appendf(nil, "remixproxy: blocked by rule %d of a remixlet's network rules.\nThe remixlets of this page in %s show their rules.\n", res.By.RuleID, managerAddress))
		return r, true
	case netrules.Redirect, netrules.UpgradeScheme:
		if _, err := weburl.Parse(res.Location); err != nil {
			return r, false
		}
		n.log.Debug("netrules: redirected", "url", req.URL(), "to", res.Location, "remixlet", res.By.Owner, "rule", res.By.RuleID)
		h := w.Header()
		h.Set("X-Remixproxy", "redirected")
		h.Set("Location", res.Location)
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusTemporaryRedirect)
		return r, true
	}
	return r.WithContext(context.WithValue(r.Context(), netRulesKey{}, &res)), false
}

// withheldLog tells the remixlet's log, once per rule and requesting page's site, that a
// redirect was left undone because it would leave the page's site (netrules/redirectscope.go).
func (n *NetRules) withheldLog(ctx context.Context, req *netrules.Request, res *netrules.Result) {
	page := "(no page)"
	if req.InitiatorState == netrules.InitiatorKnown {
		page = weburl.Site(req.Initiator)
	}
	key := fmt.Sprintf("%s %d %s", res.Withheld.Owner, res.Withheld.RuleID, page)
	n.withheldMu.Lock()
	if n.withheld == nil || len(n.withheld) >= maxWithheldLogged {
		n.withheld = map[string]bool{}
	}
	seen := n.withheld[key]
	n.withheld[key] = true
	n.withheldMu.Unlock()
	n.log.Debug("netrules: redirect withheld", "url", req.URL(), "to", res.WithheldTo, "remixlet", res.Withheld.Owner, "rule", res.Withheld.RuleID)
	if seen {
		return
	}
	msg := fmt.Sprintf("rules.json: rule %d did not redirect a request of a %s page to %s: a redirect goes only within the page's site, "+
		"the site the request was going to, or to a host a fetch: permission names", res.Withheld.RuleID, page, hostOf(res.WithheldTo))
	if err := n.st.AppendLog(context.WithoutCancel(ctx), res.Withheld.Owner, "warn", msg); err != nil {
		n.log.Warn("netrules: writing remixlet log", "remixlet", res.Withheld.Owner, "err", err)
	}
}

// hostOf is the host of an address the rules produced, or the address when it has none.
func hostOf(addr string) string {
	if u, err := weburl.Parse(addr); err == nil && u.HostKey() != "" {
		return u.HostKey()
	}
	return addr
}

// RequestHeaders applies the rules' request header changes to the outgoing request (the
// pipeline's Rewrite; the inbound request is never modified).
func RequestHeaders(pr *httputil.ProxyRequest) {
	if res, ok := pr.In.Context().Value(netRulesKey{}).(*netrules.Result); ok {
		res.ApplyRequestHeaders(pr.Out.Header)
	}
}

// ResponseHeaders applies the rules' response header changes (a response tap, the first).
func ResponseHeaders(resp *http.Response) {
	if resp == nil || resp.Request == nil {
		return
	}
	if res, ok := resp.Request.Context().Value(netRulesKey{}).(*netrules.Result); ok {
		res.ApplyResponseHeaders(resp.Header)
	}
}
