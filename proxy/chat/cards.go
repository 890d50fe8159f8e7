package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Cards: the person's decisions in the chat. A card's text is written here, by the proxy, from
// fixed words (sandbox.PermissionText and sandbox.NeedsApproval's reasons) — never the model's.
// Only a "decide" message on the panel's own channel (remix.proxy origin, the tab's panel
// token) answers a card; no tool can.
//
// Clickjacking. The panel is an iframe in the page, and a page can cover or disguise it: a
// translucent layer with pointer-events: none lets a click through to the real button, and
// IntersectionObserver v2 does not see such a layer (its occlusion test is a hit test; the e2e
// suite showed isVisible staying true under one). So "Allow" is never taken from the framed
// panel: its Allow button opens a confirmation window (panel/static/confirm.js), a top-level
// remix.proxy page that no site can frame or cover, which connects with role=confirm and is the
// only connection whose allow counts. Declining is harmless and is taken from the panel. Both
// surfaces arm their buttons only after a delay and a pointer movement (the panel also waits for
// IntersectionObserver v2 to report it visible, which catches opacity, transforms and filters),
// and the proxy repeats the delay: a decision sooner than CardArmAfter after the card reached
// that connection is refused.

// CardArmAfter is how long a card must have been on a panel before its decision counts
// (exported for the proxy's integration tests, which wait it out before deciding).
const CardArmAfter = 800 * time.Millisecond

// cardLifetime is how long a card waits for the person (the approvals it stands for expire
// after the same time, store.ApprovalLifetime).
const cardLifetime = store.ApprovalLifetime

var errCardGone = errors.New("the card was withdrawn")

// card is one pending decision.
type card struct {
	id      string
	decided chan bool // receives the person's decision once

	mu    sync.Mutex
	state string // pending, allowed, denied, expired
}

func (cd *card) expire() {
	cd.mu.Lock()
	defer cd.mu.Unlock()
	if cd.state == "pending" {
		cd.state = "expired"
		close(cd.decided)
	}
}

// ask shows a card and waits for the person: true for allow, false for deny. It returns
// errCardGone when the card expired, the page left or the turn was stopped.
func (c *chat) ask(ctx context.Context, it chatItem) (bool, error) {
	cd := &card{id: it.ID, decided: make(chan bool, 1), state: "pending"}
	it.Kind, it.State, it.ArmAfterMs = "card", "pending", int(CardArmAfter/time.Millisecond)
	c.mu.Lock()
	if c.sessionID == "" {
		c.mu.Unlock()
		return false, errCardGone
	}
	c.cards[cd.id] = cd
	c.mu.Unlock()
	c.put(it, true)

	timer := time.NewTimer(cardLifetime)
	defer timer.Stop()
	var allow, ok bool
	select {
	case allow, ok = <-cd.decided:
	case <-ctx.Done():
	case <-timer.C:
	}
	cd.expire()
	c.mu.Lock()
	delete(c.cards, cd.id)
	c.mu.Unlock()
	switch {
	case !ok:
		it.State = "expired"
	case allow:
		it.State = "allowed"
	default:
		it.State = "denied"
	}
	c.put(it, true)
	if !ok {
		return false, errCardGone
	}
	return allow, nil
}

// decide is the person's click on a card's button, from panel p.
func (c *chat) decide(p *panelConn, id string, allow bool) string {
	c.mu.Lock()
	cd, ok := c.cards[id]
	c.mu.Unlock()
	if !ok {
		return "this question is no longer open"
	}
	if allow && !p.confirm {
		return "Allow is confirmed in the remixproxy window that the panel opens"
	}
	p.shownMu.Lock()
	shown, seen := p.shown[id]
	p.shownMu.Unlock()
	if !seen || time.Since(shown) < CardArmAfter {
		return "too quick: read the card, then decide"
	}
	cd.mu.Lock()
	defer cd.mu.Unlock()
	if cd.state != "pending" {
		return "this question is no longer open"
	}
	if allow {
		cd.state = "allowed"
	} else {
		cd.state = "denied"
	}
	cd.decided <- allow
	close(cd.decided)
	return ""
}

// activationCard asks the person to apply a version the agent saved. Its rows are the policy's
// reasons in the proxy's fixed words (which other sites the code runs on, which permission is at
// stake); the change of code (script.js, style.css, rules.json) against the running version goes
// with it as data — the panel sums it up, the confirmation window where Allow is taken shows the
// lines (panel.CardDiffs).
// rx names the remixlet in the proxy's words (remixletOnCard).
//
// A row names at most sandbox.MaxSitesInText sites ("… and 45 more", OPEN-ITEMS 34); the sites
// it leaves out go with the diff as a list of their own (sitesInFull), which the confirmation
// window shows line by line like the code, so every one is seen before Allow is taken.
func activationCard(rx *cardRemixlet, reasons []sandbox.Reason, active, next map[string][]byte) chatItem {
	rows := make([]string, 0, len(reasons))
	diff := panel.CardDiffs(rulesByLine(active), rulesByLine(next), sandbox.CodeFiles)
	for _, r := range reasons {
		if r.SitesCut == 0 {
			rows = append(rows, r.Text)
			continue
		}
		rows = append(rows, r.Text+" (the window where you allow lists every one)")
		diff = append(diff, sitesInFull(r.Sites)...)
	}
	if len(rows) == 0 {
		rows = []string{"Apply a new version"}
	}
	return chatItem{ID: "k" + httpx.RandomID()[:12], Card: "activation", Title: "Apply this change?",
		Remixlet: rx, Rows: rows, Allow: "Allow and apply", Deny: "Don't allow", Diff: diff}
}

// sitesFile names the list of a row's sites in a card's diff.
const sitesFile = "sites (every one)"

// sitesInFull is a row's sites as a card diff: one added line each, as sandbox.SiteText writes
// them, under the card's line bound (panel.CardDiffs).
func sitesInFull(sites []string) []panel.CodeDiff {
	lines := make([]string, len(sites))
	for i, h := range sites {
		lines[i] = sandbox.SiteText(h)
	}
	return panel.CardDiffs(nil, map[string][]byte{sitesFile: []byte(strings.Join(lines, "\n"))}, []string{sitesFile})
}

// rulesByLine returns files with rules.json written one rule a line, for a card's diff: JSON is
// often written on one line, which the diff would show cut at its line bound, a rule after many
// others out of sight. files itself is not changed; a rules.json that is not a JSON array is
// shown as it is.
func rulesByLine(files map[string][]byte) map[string][]byte {
	raw, ok := files[sandbox.RulesFile]
	if !ok {
		return files
	}
	var rules []json.RawMessage
	if err := json.Unmarshal(raw, &rules); err != nil {
		return files
	}
	var b bytes.Buffer
	b.WriteString("[\n")
	for i, r := range rules {
		if err := json.Compact(&b, r); err != nil {
			return files
		}
		if i < len(rules)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]\n")
	out := maps.Clone(files)
	out[sandbox.RulesFile] = b.Bytes()
	return out
}
