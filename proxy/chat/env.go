package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/plain"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/proxy/remixlet"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// chatEnv is what the agent's tools act on for one chat (agent.Env). Every decision that
// matters is made here from the proxy's own records: the tab's origin comes from the page
// session (signed token, handshake Origin), never from the model; a remixlet activates only
// under the store's approval policy with the chat page's host, or after the person's click on
// a card; permissions come only from "Allow" on a card.
type chatEnv struct {
	c *chat
	// planOK: the person approved a plan in this turn (plan.go); a chatEnv lives for one turn.
	planOK atomic.Bool
	// red is the turn's redactor (redaction.go): addresses carrying a secret are refused.
	red *chatRedactor
}

var _ agent.Env = (*chatEnv)(nil)

// grantLifetime is how long an "Allow" on a permission card may be used by write_remixlet.
const grantLifetime = store.ApprovalLifetime

func (e *chatEnv) session() (page.Info, error) {
	// While the tab loads the next page of the site, tools wait for it (follow.go).
	ctx, cancel := context.WithTimeout(e.c.hub.ctx, followGrace+time.Second)
	defer cancel()
	sess, err := e.c.waitPage(ctx)
	if err != nil {
		return page.Info{}, errors.New("the page was closed or navigated away")
	}
	return sess, nil
}

// PageTool runs a page tool in the chat's tab (page/tools.go): open_page is the page agent's
// fetch_page, checked there against the tab's own origin before anything is fetched (and here
// for another site's address it carries, request_carried.go), and
// read_page_data gets the JSON responses the proxy saw.
func (e *chatEnv) PageTool(ctx context.Context, tool string, args json.RawMessage) (out json.RawMessage, err error) {
	// What the proxy held back after an earlier action's call had answered (sendguard.go).
	defer func() { out, err = lateSends(e.c, out, err) }()
	if err := e.planGate(tool); err != nil {
		return nil, err // plan review: no page action before an approved plan (plan.go)
	}
	sess, err := e.session()
	if err != nil {
		return nil, err
	}
	if tool == "open_page" || tool == "navigate" {
		if err := e.refuseSecretAddress(ctx, sess, tool, args); err != nil {
			return nil, err // an address carrying a secret (redaction.go)
		}
	}
	if tool == "open_page" {
		var a struct {
			URL string `json:"url"`
		}
		if json.Unmarshal(args, &a) == nil {
			if err := refuseCarriedRequest(tool, sess.URL, a.URL); err != nil {
				return nil, err // another site's address in its path or query (request_carried.go)
			}
		}
		if out, ok, err := e.openSameSite(ctx, sess, args); ok {
			return out, err // another origin of the site, fetched by the proxy (open.go)
		}
		tool = "fetch_page" // the page's own origin: fetched by the page agent, checked in Go first
	}
	// The tools that search the page answer as if the page were redacted (oracle.go).
	if out, ok, err := e.searchTool(ctx, sess, tool, args); ok {
		return out, err
	}
	return e.actPageTool(ctx, sess, tool, args) // Act checks: act.go
}

// ReadLog returns the newest entries of a remixlet's log.
func (e *chatEnv) ReadLog(ctx context.Context, name string) (string, error) {
	st := e.c.hub.st
	rx, err := st.Remixlet(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return "", &agent.ToolError{Message: fmt.Sprintf("there is no remixlet named %q", httpx.Clip(name, 100))}
	}
	if err != nil {
		return "", err
	}
	entries, err := st.Log(ctx, rx.ID, 50)
	if err != nil {
		return "", err
	}
	if len(entries) == 0 {
		return "The log of " + rx.Name + " is empty.", nil
	}
	var b strings.Builder
	for i := len(entries) - 1; i >= 0; i-- { // oldest first
		en := entries[i]
		fmt.Fprintf(&b, "%s %s %s\n", en.Time.Format(time.TimeOnly), en.Level, en.Message)
	}
	return b.String(), nil
}

// permGrant is one "Allow" on a permission card: the permissions it named, for one remixlet
// name, until expires. It is for the next save of that remixlet, which spends it whole
// (takeGrant), whichever of its permissions that save used and whether or not it covered the
// save (OPEN-ITEMS 104: an Allow for storage and clipboard spent by a save with storage alone
// no longer lets a second save add clipboard unseen). A later card for the same name replaces
// it.
type permGrant struct {
	perms   map[string]bool
	expires time.Time
}

// RequestPermissions shows a permission card with the proxy's fixed text for each permission.
// An "Allow" is remembered for this chat and this remixlet name for grantLifetime, so that the
// next write_remixlet asking for these permissions activates without a second card — unless
// one of them reaches the network: that save's card shows its code (grantCovers). The Allow is
// good for that one save (permGrant).
func (e *chatEnv) RequestPermissions(ctx context.Context, remixlet string, perms []string) (string, error) {
	remixlet = strings.TrimSpace(remixlet)
	if remixlet == "" {
		return "", &agent.ToolError{Message: "name the remixlet the permissions are for"}
	}
	// The name goes on the card: it must read as what it is (as a manifest's name must), and the
	// card says in its own words when no such remixlet runs yet, so that a lookalike of one the
	// person knows is not taken for it.
	if err := plain.CheckName(remixlet); err != nil {
		return "", &agent.ToolError{Message: fmt.Sprintf("the remixlet's name %v; use plain text", err)}
	}
	onCard, err := e.remixletOnCard(ctx, remixlet, "")
	if err != nil {
		return "", err
	}
	var rows, bad []string
	seen := map[string]bool{}
	var names []string
	for _, p := range perms {
		if seen[p] {
			continue
		}
		seen[p] = true
		if err := sandbox.ValidatePermission(p); err != nil {
			bad = append(bad, fmt.Sprintf("%q (%v)", httpx.Clip(p, 100), err))
			continue
		}
		names = append(names, p)
		rows = append(rows, sandbox.PermissionText(p))
	}
	if len(bad) > 0 {
		return "", &agent.ToolError{Message: "unknown permissions: " + strings.Join(bad, "; ")}
	}
	allow, err := e.c.ask(ctx, chatItem{ID: "k" + httpx.RandomID()[:12], Card: "permissions", Title: "Remixlet needs permission",
		Remixlet: onCard, Rows: rows, Allow: "Allow", Deny: "Not now"})
	if err != nil {
		return "", &agent.ToolError{Message: "the person did not decide (the card was withdrawn: the turn stopped, the page left, or ten minutes passed). Nothing was granted."}
	}
	if !allow {
		return "The person chose \"Not now\": nothing was granted (" + strings.Join(names, ", ") + "). Do not ask again unless the person asks you to; go on without these permissions or tell the person what cannot be done without them.", nil
	}
	g := permGrant{perms: map[string]bool{}, expires: time.Now().Add(grantLifetime)}
	for _, n := range names {
		g.perms[n] = true
	}
	e.c.mu.Lock()
	e.c.grants[remixlet] = g
	e.c.mu.Unlock()
	for _, n := range names {
		if sandbox.IsNetworkPermission(n) {
			// grantCovers: the person approves the code that uses a network permission too.
			return "The person allowed: " + strings.Join(names, ", ") + ". Save the remixlet named " + fmt.Sprintf("%q", remixlet) + " with these permissions in its manifest within ten minutes. A permission that reaches the network is applied only with code the person has seen: the save shows the person its code on a card, and applies when they allow it.", nil
		}
	}
	return "The person allowed: " + strings.Join(names, ", ") + ". Save the remixlet named " + fmt.Sprintf("%q", remixlet) + " with these permissions in its manifest within ten minutes; it will then be applied without asking again, unless the change also needs the person's approval for something a permission does not cover (other sites, new code under a network permission it already holds, network rules).", nil
}

// WriteRemixlet saves the agent's files as a new version (author "agent") after the save-time
// checks, and activates it under the store's policy with the chat page's host — the one place
// that decides for every agent save (sandbox.NeedsApproval). When that needs the person, it
// uses the permissions they granted on a card in this chat if those are all it needs
// (grantCovers), or shows the activation card, with the change of code, and waits.
func (e *chatEnv) WriteRemixlet(ctx context.Context, w agent.RemixletWrite) (string, error) {
	c := e.c
	h := c.hub
	st := h.st
	sess, err := e.session()
	if err != nil {
		return "", err
	}
	host := c.host

	files, m, err := remixletFiles(w)
	if err != nil {
		return "", err
	}
	rx, oldManifest, err := remixletToSave(ctx, st, w.Name, m)
	if err != nil {
		return "", err
	}
	v, err := st.SaveVersion(ctx, rx.ID, files, store.AuthorAgent, httpx.Clip(w.Note, 500))
	if err != nil {
		return "", err
	}
	grant := e.takeGrant(rx.Name) // this save spends the last permission card's Allow
	link := "https://" + httpx.MagicHost + "/manager/r/" + rx.ID

	// The store's policy decides, with the chat page's host, for every agent save: a change to
	// code that runs on another site, or to code holding network permissions, needs the
	// person (sandbox.NeedsApproval; DESIGN invariant 11).
	err = st.ActivateFromChat(ctx, v.ID, host)
	switch {
	case err == nil:
		e.reload(ctx, oldManifest, m)
		return fmt.Sprintf("Saved version %d of %q and applied it (no approval needed: the change asks for nothing the person has not allowed). It now runs on this page; other open pages it matches were reloaded. Manager: %s", v.Number, rx.Name, link), nil
	case !errors.Is(err, store.ErrApprovalRequired):
		return "", err
	}
	return e.activateApproved(ctx, sess.ID, rx, v, files, oldManifest, m, link, grant)
}

// remixletFiles are the files of a write_remixlet call, checked (sandbox.CheckFiles): a tool
// error lists every problem, and nothing is saved.
func remixletFiles(w agent.RemixletWrite) (store.Files, *sandbox.Manifest, error) {
	files := store.Files{sandbox.ManifestFile: []byte(w.Manifest)}
	if strings.TrimSpace(w.Script) != "" {
		files[sandbox.ScriptFile] = []byte(w.Script)
	}
	if strings.TrimSpace(w.Style) != "" {
		files[sandbox.StyleFile] = []byte(w.Style)
	}
	if strings.TrimSpace(w.Rules) != "" && strings.TrimSpace(w.Rules) != "[]" {
		files[sandbox.RulesFile] = []byte(w.Rules)
	}
	m, probs := sandbox.CheckFiles(files)
	if len(probs) > 0 {
		var b strings.Builder
		b.WriteString("Not saved. Fix these problems and call write_remixlet again:\n")
		for _, p := range probs {
			b.WriteString("- ")
			b.WriteString(p.Error())
			b.WriteString("\n")
		}
		return nil, nil, &agent.ToolError{Message: b.String()}
	}
	return files, m, nil
}

// remixletToSave is the remixlet a write_remixlet call saves into: the one named (with the
// manifest of its active version, nil without one), or a new one named by the manifest m.
func remixletToSave(ctx context.Context, st *store.Store, name string, m *sandbox.Manifest) (store.Remixlet, *sandbox.Manifest, error) {
	if name != "" {
		rx, err := st.Remixlet(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return rx, nil, &agent.ToolError{Message: fmt.Sprintf("there is no remixlet named %q; leave name out to create one", httpx.Clip(name, 100))}
		}
		if err != nil {
			return rx, nil, err
		}
		_, old, err := remixlet.ActiveManifest(ctx, st, rx.ID)
		return rx, old, err
	}
	rx, err := st.CreateRemixlet(ctx, m.Name)
	if errors.Is(err, store.ErrDuplicateName) {
		return rx, nil, &agent.ToolError{Message: fmt.Sprintf("a remixlet named %q already exists; pass \"name\": %q to change it, or choose another name", m.Name, m.Name)}
	}
	if err != nil {
		return rx, nil, &agent.ToolError{Message: "manifest.json: name: " + err.Error()}
	}
	return rx, nil, nil
}

// activateApproved applies a saved version v that needs the person: with the permissions
// they granted on a card in this chat (grant) when those are all it needs (grantCovers),
// otherwise after the activation card, which shows the change of code.
func (e *chatEnv) activateApproved(ctx context.Context, sessionID string, rx store.Remixlet, v store.Version, files store.Files,
	oldManifest, m *sandbox.Manifest, link string, grant *permGrant) (string, error) {
	c, st, host := e.c, e.c.hub.st, e.c.host
	// The approval records the version running now; the card's reasons and diff are the change
	// from that very version, and the approval applies only while it still runs (a person's
	// edit in the manager, or another chat's save, in between makes it another change).
	a, err := st.RequestApproval(ctx, v.ID, sessionID)
	if err != nil {
		return "", err
	}
	var activeFiles map[string][]byte
	if a.BaseVersionID != 0 {
		base, err := st.Version(ctx, a.BaseVersionID)
		if err != nil {
			return "", err
		}
		activeFiles = base.Files
	}
	reasons := sandbox.FilesApprovalReasons(activeFiles, files, host)
	baseChanged := func(err error) (string, error) {
		st.Decline(context.Background(), a.ID) // an approval that did not apply is not left approved
		if errors.Is(err, store.ErrBaseChanged) {
			return "", &agent.ToolError{Message: fmt.Sprintf("Saved version %d of %q but did not apply it: another version of it became active while the person was deciding, so what they were asked about is not the change this would make. Tell the person; save again only if they ask.", v.Number, rx.Name)}
		}
		return "", err
	}
	if grantCovers(grant, reasons) {
		if err := st.Approve(ctx, a.ID); err != nil {
			return "", err
		}
		if err := st.ActivateApproved(ctx, a.ID); err != nil {
			return baseChanged(err)
		}
		e.reload(ctx, oldManifest, m)
		return fmt.Sprintf("Saved version %d of %q and applied it with the permissions the person allowed. Manager: %s", v.Number, rx.Name, link), nil
	}

	onCard, err := e.remixletOnCard(ctx, rx.ID, link)
	if err != nil {
		return "", err
	}
	onCard.New = a.BaseVersionID == 0 // no version of it ran when the person was asked
	card := activationCard(onCard, reasons, activeFiles, files)
	allow, err := c.ask(ctx, card)
	if err != nil {
		st.Decline(context.Background(), a.ID)
		return "", &agent.ToolError{Message: fmt.Sprintf("Saved version %d of %q but did not apply it: the person did not decide (the turn stopped, the page left, or ten minutes passed). The previous version stays active.", v.Number, rx.Name)}
	}
	if !allow {
		if err := st.Decline(ctx, a.ID); err != nil {
			return "", err
		}
		return fmt.Sprintf("The person chose \"Don't allow\": version %d of %q is saved but not applied; the previous version stays active. Do not try to get around this; ask the person what they want instead.", v.Number, rx.Name), nil
	}
	if err := st.Approve(ctx, a.ID); err != nil {
		return "", err
	}
	if err := st.ActivateApproved(ctx, a.ID); err != nil {
		if errors.Is(err, store.ErrBaseChanged) {
			// The card says so too: it read "Allowed" though nothing was applied.
			card.Kind, card.State = "card", panel.CardStale
			c.put(card, true)
		}
		return baseChanged(err)
	}
	e.reload(ctx, oldManifest, m)
	return fmt.Sprintf("The person allowed it: version %d of %q is applied. Manager: %s", v.Number, rx.Name, link), nil
}

// grantCovers reports whether every reason the version needs approval for is a new permission
// that the person allowed on the permission card g stands for (this chat, this remixlet name,
// unexpired; nil: none), and that reaches no network. A permission card names permissions only: it never stands for
// code that runs on another site, new code under a permission held before, changed network
// rules, more sites or a narrowed remixlet — those always get the activation card
// (sandbox.NeedsApproval). Nor does it stand for the code of a save holding a new network
// permission (fetch:, network:observe:, netrules): the card said "Send requests to HOST as you",
// not what the code sends, and the person approves code, not only a permission (red-team pass
// 6e, OPEN-ITEMS 21) — that save's activation card shows its code.
func grantCovers(g *permGrant, reasons []sandbox.Reason) bool {
	if g == nil || len(reasons) == 0 || time.Now().After(g.expires) {
		return false
	}
	for _, r := range reasons {
		if r.Kind != sandbox.ReasonNewPermission || sandbox.IsNetworkPermission(r.Permission) || !g.perms[r.Permission] {
			return false
		}
	}
	return true
}

// takeGrant removes and returns the remixlet's grant (nil without one): a save spends it
// whole, whatever it needed (permGrant).
func (e *chatEnv) takeGrant(name string) *permGrant {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	g, ok := e.c.grants[name]
	if !ok {
		return nil
	}
	delete(e.c.grants, name)
	return &g
}

// reload applies an activated version (remixlet.Activator): other open pages the old or new
// version runs on reload (clearing what the old one did); the chat's own tab is not reloaded,
// which would end the chat's turn, but has its remixlets matched again, so the new version
// starts there now.
func (e *chatEnv) reload(ctx context.Context, old, next *sandbox.Manifest) {
	e.c.hub.activator.Applied(ctx, e.c.sessionIDNow(), old, next)
}

// cardRemixlet names the remixlet a card is about.
type cardRemixlet = panel.CardRemixlet
