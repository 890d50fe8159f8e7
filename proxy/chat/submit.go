package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// Act-mode actions that submit or destroy need the person's Allow (issue 11, hole 5; DESIGN
// invariant 11), unless the person switched on "Act may submit forms" for the chat.
//
// The paths are those of the duplicate-submit guard (act.go): click, set_field with
// submit, and Enter (press_keys) in a form field. Before such an action the chat asks the page
// agent for a probe: the same call with probe: true, which finds the target and runs every
// check of the action (visibility, what is on top, other sites, the duplicate-submit list) but
// does not act, and answers the facts of what the action would activate (submitFacts). The
// decision is made here, in Go (submitFacts.risk): a card is needed when
//   - the action submits a form whose method (or the button's formmethod) is POST, or
//   - the control's name, text, value or name/id attribute says it deletes, removes, pays,
//     transfers, sends, buys, unsubscribes, closes an account or cancels a subscription
//     (destructiveName; case-insensitive, whole words; a link only when its name is short, a
//     control's label rather than a headline).
//
// The card's words are the proxy's; the control's name is quoted from the page as a name, and
// the form's target is shown as an address. Allow is taken in the confirmation window as for
// every card that lets something happen (cards.go). Declined or withdrawn: nothing is done,
// and the tool result says so. Then the action is sent with expect: the probe's key, and the
// page agent refuses it if what it would activate changed since (a re-render, or a page that
// swaps the control while the card waits). The page agent runs in the page's world, so a page
// can lie about its controls; the facts are the page's own, and what a site's own script does on
// a click is the site's. The check is against text planted for the agent: a site's real
// "Delete account" or payment form cannot be pressed by the agent unless the person allows it.
//
// The switch: off by default, per chat, kept with the chat in the store like API access. The
// model has no tool for it and no page message reaches it. Turning it on lets these actions go
// without a card, so it is itself a card allowed in the confirmation window; turning it off
// takes effect at once. With it on, no probe is made: the ordinary "fill in and send the form I
// asked for" takes no extra click.

// submitSwitch is a chat's "Act may submit forms" switch.
type submitSwitch struct {
	on     bool
	asking string // the ID of the card asking to turn it on, "" when none waits
}

// submitFacts is what the page agent's probe reports about what an action would activate.
type submitFacts struct {
	How     string   `json:"how"`     // click, submit (set_field), enter (press_keys)
	Tag     string   `json:"tag"`     // of the activated control (a, button, input, …)
	Role    string   `json:"role"`    // its role in the outline
	Name    string   `json:"name"`    // its accessible name, normalised
	Shown   string   `json:"shown"`   // its accessible name as the page shows it
	Labels  []string `json:"labels"`  // its text, value, title, aria-label, name and id attributes
	Control string   `json:"control"` // its outline line, e.g. `button "Delete account" [e3]`
	Submits bool     `json:"submits"` // activating it submits a form
	Method  string   `json:"method"`  // the form's method: get, post, dialog
	// SubmitterMethod is the activated button's formmethod ("" when it has none; for a
	// submission by set_field or Enter, the form's default button's).
	SubmitterMethod string `json:"submitterMethod"`
	Action          string `json:"action"` // the form's target, absolute
	Link            string `json:"link"`   // a link's target, absolute
	Key             string `json:"key"`    // the facts' fingerprint, sent back as expect
}

// destructiveName matches what a control's label says when pressing it deletes, pays, sends or
// ends something. It runs on normalised text (normalName): lower case, words split at
// punctuation and camelCase.
var destructiveName = regexp.MustCompile(`\b(delete|remove|erase|destroy|wipe|purge|pay|make (a )?payment|transfer|send|purchase|buy|order now|place (your |my |the )?order|donate|unsubscribe|close (my |your |this |the )?account|deactivate|cancel (my |your |this |the )?(subscription|membership|order|plan|account)|terminate|revoke|withdraw)\b`)

// maxLinkWords is the longest link name the word rule looks at: a control's label, not a
// headline ("How to remove stains" is an article).
const maxLinkWords = 6

// normalName lower-cases s and splits it into words at anything that is not a letter or digit
// and at camelCase boundaries ("deleteAccount", "delete_account" → "delete account").
func normalName(s string) string {
	var b strings.Builder
	var prev rune
	space := true
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if unicode.IsUpper(r) && unicode.IsLower(prev) && !space {
				b.WriteByte(' ')
			}
			b.WriteRune(unicode.ToLower(r))
			space = false
		default:
			if !space {
				b.WriteByte(' ')
				space = true
			}
		}
		prev = r
	}
	return strings.TrimSpace(b.String())
}

// risk decides whether the action needs the person's Allow: mutating when it submits a form
// with POST; word is the destructive word its labels carry ("" for none).
func (f submitFacts) risk() (mutating bool, word string) {
	method := strings.ToLower(strings.TrimSpace(f.Method))
	sub := strings.ToLower(strings.TrimSpace(f.SubmitterMethod))
	if f.Submits {
		switch {
		case f.How == "click" && sub != "":
			mutating = sub == "post" // the button's own formmethod wins
		case f.How == "click":
			mutating = method == "post"
		default:
			// set_field submits the form itself; a real Enter would use the default button's
			// formmethod: either one being POST counts.
			mutating = method == "post" || sub == "post"
		}
	}
	link := f.Tag == "a" || f.Tag == "area" || f.Role == "link"
	for _, l := range append([]string{f.Name, f.Shown}, f.Labels...) {
		n := normalName(l)
		if n == "" || link && len(strings.Fields(n)) > maxLinkWords {
			continue
		}
		if m := destructiveName.FindString(n); m != "" {
			return mutating, m
		}
	}
	return mutating, ""
}

// needsCard reports whether the facts call for the person's Allow.
func (f submitFacts) needsCard() bool {
	mutating, word := f.risk()
	return mutating || word != ""
}

// quotedName is the control's name as a card quotes it: the page's text, cut.
func quotedName(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 80 {
		s = string([]rune(s)[:80]) + "…"
	}
	return "“" + s + "”"
}

// displayName is the control's name for the card: its accessible name, else its first label.
func (f submitFacts) displayName() string {
	if strings.TrimSpace(f.Shown) != "" {
		return f.Shown
	}
	if strings.TrimSpace(f.Name) != "" {
		return f.Name
	}
	for _, l := range f.Labels {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return f.Tag
}

// submitCard is the card for one action; every word but the control's name and the addresses
// is the proxy's.
func submitCard(site string, f submitFacts) chatItem {
	mutating, word := f.risk()
	name := quotedName(f.displayName())
	title := "Let the agent press " + name + "?"
	allow := "Press it"
	if f.How != "click" {
		title = "Let the agent submit the form of " + name + "?"
		allow = "Submit it"
	}
	var rows []string
	method := strings.ToUpper(f.Method)
	if f.SubmitterMethod != "" && f.How == "click" {
		method = strings.ToUpper(f.SubmitterMethod)
	}
	if mutating && method != "POST" {
		method = "POST"
	}
	switch {
	case f.Submits && f.Action != "":
		rows = append(rows, fmt.Sprintf("It submits a form: %s %s", method, httpx.Clip(f.Action, 200)))
	case f.Link != "":
		rows = append(rows, "It opens "+httpx.Clip(f.Link, 200))
	}
	// Short rows: the card must fit the panel's log whole, or it never arms.
	var why []string
	if mutating {
		why = append(why, "A POST form changes something on "+site+" as you")
	}
	if word != "" {
		why = append(why, "its name says “"+word+"”")
	}
	if len(why) > 0 {
		w := strings.Join(why, "; ")
		rows = append(rows, strings.ToUpper(w[:1])+w[1:]+".")
	}
	rows = append(rows, "Allow only if you asked for it: a page can ask the agent to do this.")
	return chatItem{ID: "k" + httpx.RandomID()[:12], Card: panel.CardSubmit, Title: title, Rows: rows, Allow: allow, Deny: "Not now"}
}

// switchCard is the card that turns "Act may submit forms" on.
func switchCard(site string) chatItem {
	return chatItem{ID: "k" + httpx.RandomID()[:12], Card: panel.CardSubmit, Title: "Let the agent submit forms in this chat?",
		Rows: []string{
			"In Act mode, in this chat, the agent may then submit forms on " + site + " and press controls named delete, pay, send and the like without asking.",
			"Pages can ask the agent to do things: turn this on for a task you gave it, and off again after.",
		},
		Allow: "Turn on", Deny: "Not now"}
}

// setActSubmits is the person's switch (a panel message; nothing else calls it). Off takes
// effect at once; on asks for an Allow on a card first (see the top of the file).
func (c *chat) setActSubmits(on bool) string {
	c.mu.Lock()
	if !on {
		was := c.submits.on
		c.submits.on = false
		c.mu.Unlock()
		c.saveActSubmits()
		if was {
			c.notice("“Act may submit forms” is off for this chat: the agent asks you on a card before it submits a form or presses a control that deletes, pays or sends.")
		}
		c.broadcastState()
		return ""
	}
	if c.submits.on || c.submits.asking != "" {
		c.mu.Unlock()
		return "" // on already, or its card waits
	}
	if c.sessionID == "" {
		c.mu.Unlock()
		return "this page was closed; reload it to chat"
	}
	site := weburl.Site(c.host)
	cd := switchCard(site)
	c.submits.asking = cd.ID
	c.mu.Unlock()
	go func() {
		allow, err := c.ask(c.hub.ctx, cd)
		c.mu.Lock()
		mine := c.submits.asking == cd.ID
		if mine {
			c.submits.asking = ""
		}
		turnedOn := mine && err == nil && allow
		if turnedOn {
			c.submits.on = true
		}
		c.mu.Unlock()
		if turnedOn {
			c.saveActSubmits()
			c.notice("“Act may submit forms” is on for this chat: in Act mode the agent submits forms and presses controls that delete, pay or send without asking you each time.")
			c.broadcastState()
		}
	}()
	return ""
}

// actSubmitsKey is the key of the stored item that keeps a chat's switch; the panel ignores the
// item (its kind is not one it shows).
const actSubmitsKey = "act-submits"

// saveActSubmits stores the switch with the chat, once the chat is stored (switches.go).
func (c *chat) saveActSubmits() {
	c.saveSwitch(actSubmitsKey, "Act may submit forms switch", func() bool { return c.submits.on })
}

// submitNotes is what the system prompt of an Act turn says about the switch; it informs only.
func (c *chat) submitNotes(mode agent.Mode) string {
	if mode != agent.ModeAct {
		return ""
	}
	c.mu.Lock()
	on := c.submits.on
	c.mu.Unlock()
	if on {
		return "\n\n“Act may submit forms” is on for this chat: forms are submitted without a card. Still submit only what the person asked for."
	}
	return "\n\n“Act may submit forms” is off for this chat: submitting a form with POST, or pressing a control named delete, remove, pay, send, buy and the like, first asks the person on a card, and your call waits for their decision. If they choose Not now, do not try another way."
}

// submitGate is an actPage whose actions may need the person's Allow (chatActPage).
type submitGate interface {
	// submitsAllowed reports whether the person switched "Act may submit forms" on.
	submitsAllowed() bool
	// confirmSubmit shows the card for f and waits for the person.
	confirmSubmit(ctx context.Context, f submitFacts) (bool, error)
}

// readProbe reads a probe's answer: {probe: facts} or {probe: null} (nothing is submitted or
// pressed that needs facts, e.g. press_keys without Enter); ok is false when the answer has
// no probe at all.
func readProbe(out json.RawMessage) (f *submitFacts, ok bool) {
	var res struct {
		Probe json.RawMessage `json:"probe"`
	}
	if json.Unmarshal(out, &res) != nil || len(res.Probe) == 0 {
		return nil, false
	}
	if string(res.Probe) == "null" {
		return nil, true
	}
	f = &submitFacts{}
	if json.Unmarshal(res.Probe, f) != nil {
		return nil, false
	}
	return f, true
}

// probeFacts asks the page agent what tool with args would activate, without doing it (the
// probe): the facts, nil when it activates nothing that needs them, or the error that ends the
// call with nothing done.
func probeFacts(ctx context.Context, pg actPage, tool string, args map[string]json.RawMessage) (*submitFacts, error) {
	probe := make(map[string]json.RawMessage, len(args)+1)
	for k, v := range args {
		probe[k] = v
	}
	probe["probe"] = json.RawMessage("true")
	raw, _ := json.Marshal(probe)
	out, err := pg.call(ctx, tool, raw)
	if err != nil {
		// A page that does not answer the probe in time is not acted on; the model is told that
		// nothing was done, which the page's silence alone does not say.
		return nil, fmt.Errorf("%w (asked what this would activate, before doing it: nothing was done)", err)
	}
	f, ok := readProbe(out)
	if !ok {
		return nil, &agent.ToolError{Message: tool + ": the page did not say what this would activate, so nothing was done"}
	}
	return f, nil
}

// gateSubmit runs, for click, set_field (submit) and press_keys, the probe and the card when
// the page is a submitGate with the switch off. It returns the expect value to send with the
// action ("" when the probe found nothing to submit), whether to send one, the probe's facts
// (nil when there were none), whether the person allowed them on the card, or the error that
// ends the call with nothing done.
func gateSubmit(ctx context.Context, pg actPage, tool string, args map[string]json.RawMessage) (string, bool, *submitFacts, bool, error) {
	gate, ok := pg.(submitGate)
	if !ok || gate.submitsAllowed() {
		return "", false, nil, false, nil
	}
	if tool == "set_field" {
		var submit bool
		json.Unmarshal(args["submit"], &submit)
		if !submit {
			return "", false, nil, false, nil // typing submits nothing
		}
	}
	f, err := probeFacts(ctx, pg, tool, args)
	if err != nil {
		return "", false, nil, false, err
	}
	if f == nil {
		return "", true, nil, false, nil
	}
	allowed := false
	if f.needsCard() {
		allow, err := gate.confirmSubmit(ctx, *f)
		name := quotedName(f.displayName())
		if err != nil {
			return "", false, nil, false, &agent.ToolError{Message: tool + ": the person did not decide (the card was withdrawn: the turn stopped, the page left, or ten minutes passed). " + name + " was not pressed and nothing was submitted."}
		}
		if !allow {
			return "", false, nil, false, &agent.ToolError{Message: tool + " refused: the person chose \"Not now\"; " + name + " was not pressed and nothing was submitted. Do not press it again or try another way unless the person asks you to."}
		}
		allowed = true
	}
	return f.Key, true, f, allowed, nil
}

// Form submissions that an agent action caused by any path (issue 11's open hole: a change
// handler that calls requestSubmit()). The probe above sees what a click, set_field's submit or
// Enter would activate; it cannot see what the page's own handlers do on select's change event,
// on set_field's input events, on focus or blur, or on a click of a control that is no submit
// button. Every such submission is a navigation of the tab (or of a frame) with a method other
// than GET, and every navigation an action causes is paired with it by the navigation guard
// (navguard.go), which every proxied request passes. So that is where it is held: a paired
// non-GET document request, while "Act may submit forms" is off, waits for the person's card
// (holdAgentPost) — released upstream on Allow, answered with the proxy's page on Not now or
// when the card goes (the page left, ten minutes), and the action's tool result says so. The
// same holds for the documents the agent loaded (their leases): a page the agent opened that
// posts a form by itself later is the agent's doing too. A submission the person already
// allowed on the probe's card is not asked again (allowPost), nor is the same submission sent
// on by a 307/308 redirect of the site.

// postAsk is a held submission as the card shows it.
type postAsk struct {
	method  string
	to      *weburl.URL
	site    string
	control string // the action that caused it, e.g. select “Delete my data”
	script  bool   // a request of the page's script, not a navigation (sendguard.go)
}

// postCard is the card for a held submission; every word but the action's argument and the
// address is the proxy's.
func postCard(p postAsk) chatItem {
	m := strings.ToUpper(p.method) + " " + shownAddress(p.to)
	if p.script {
		c := heldCard(p, "Let the agent's action send this?",
			"During or after the agent's "+p.control+", the page's script sent "+m, "request", "Send it")
		c.Rows = slices.Insert(c.Rows, 2, sendUnheld) // what the send guard does not hold (sendguard_socket.go)
		return c
	}
	return heldCard(p, "Let the agent's action submit a form?",
		"The agent's "+p.control+" made the page send a form: "+m, "form", "Submit it")
}

// heldCard is the shape both of postCard's cards share: what was sent (sent), what a request
// of that method does (noun: "request" or "form"), and the Allow button's words (verb).
func heldCard(p postAsk, title, sent, noun, verb string) chatItem {
	return chatItem{ID: "k" + httpx.RandomID()[:12], Card: panel.CardSubmit, Title: title,
		Rows: []string{
			sent,
			"A " + strings.ToUpper(p.method) + " " + noun + " changes something on " + p.site + " as you.",
			"Allow only if you asked for it: a page can ask the agent to do this.",
		},
		Allow: verb, Deny: "Not now"}
}

// confirmPost is the chat's answer to a held submission: at once when the switch is on, else
// the person's on the card.
func (p chatActPage) confirmPost(ctx context.Context, a postAsk) (bool, error) {
	if p.submitsAllowed() {
		return true, nil
	}
	return p.c.ask(ctx, postCard(a))
}

// actionShown names an action for the card: the tool and its main argument, quoted.
func actionShown(tool string, raw json.RawMessage) string {
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil {
		return tool
	}
	for _, k := range []string{"option", "text", "keys", "value", "selector", "ref", "url"} {
		var v any
		if json.Unmarshal(args[k], &v) != nil {
			continue
		}
		switch v := v.(type) {
		case string:
			if strings.TrimSpace(v) != "" {
				return tool + " " + quotedName(v)
			}
		case []any:
			var parts []string
			for _, e := range v {
				if s, ok := e.(string); ok {
					parts = append(parts, s)
				}
			}
			if len(parts) > 0 {
				return tool + " " + quotedName(strings.Join(parts, " "))
			}
		}
	}
	return tool
}

// allowPost records that the person allowed the submission to target (an absolute address;
// "" for the action's first submission wherever it goes) on the probe's card. Nil-safe.
func (x *navExpect) allowPost(target string) {
	if x == nil {
		return
	}
	k := ""
	if u, err := weburl.Parse(target); err == nil && target != "" {
		k = weburl.Key(u)
	}
	x.g.mu.Lock()
	defer x.g.mu.Unlock()
	if x.postOK == nil {
		x.postOK = map[string]int{}
	}
	if x.postOK[k] < maxNavURLs {
		x.postOK[k]++
	}
}

// takeAllowanceLocked uses up an allowance for a submission to key, if there is one.
func (x *navExpect) takeAllowanceLocked(key string) bool {
	for _, k := range []string{key, ""} {
		if x.postOK[k] > 0 {
			x.postOK[k]--
			return true
		}
	}
	return false
}

// holdAgentPost holds a non-GET navigation nr paired with the actions xs until the person
// decides; it returns the refusal's words and the site when it must not go (nothing sent).
func holdAgentPost(ctx context.Context, nr navRequest, xs []*navExpect) (why, site string) {
	g := xs[0].g
	var ask *navExpect
	g.mu.Lock()
	for _, x := range xs {
		if x.confirmPost == nil || x.takeAllowanceLocked(nr.key) {
			continue
		}
		if ask == nil {
			ask = x
		}
	}
	if ask == nil {
		g.mu.Unlock()
		return "", ""
	}
	for _, x := range xs {
		x.holding++
	}
	g.mu.Unlock()
	allow, err := ask.confirmPost(ctx, postAsk{method: nr.method, to: nr.url, site: ask.site, control: ask.control})
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, x := range xs {
		x.holding--
	}
	if err == nil && allow {
		return "", ""
	}
	sent := "the " + ask.control + " made the page send a form (" + strings.ToUpper(nr.method) + " " + shownAddress(nr.url) + ")"
	switch {
	case err != nil:
		why = sent + " and the person did not decide (the card was withdrawn: the page left, the turn stopped, or ten minutes passed), so it was not sent"
	default:
		why = sent + " and the person chose “Not now”, so it was not sent"
	}
	for _, x := range xs {
		if len(x.denied) < 4 {
			x.denied = append(x.denied, why)
		}
		g.stopLocked(x.owner, why)
	}
	return why, ask.site
}

// carryAllowance lets a submission that went on by a 307 or 308 redirect (the browser sends the
// same form again, to loc) go without a second card.
func (m *navMark) carryAllowance(from *weburl.URL, loc string) {
	to, err := weburl.Resolve(from, loc)
	if err != nil {
		return
	}
	for _, x := range m.xs {
		x.allowPost(to.Href())
	}
}

// writeSubmitRefusal answers a held submission the person did not allow with the proxy's page.
func writeSubmitRefusal(w http.ResponseWriter, site, why string) {
	var body bytes.Buffer
	err := panel.RenderError(&body, panel.ErrorPage{
		Status: http.StatusForbidden,
		Title:  "remixproxy held back a form the agent's action sent",
		Lead:   "An action of the AI agent made this page send a form to " + site + ", which can change something there as you, and you did not allow it.",
		Reason: why,
		Hint:   "Nothing was sent. Go back to return to the page. To send the form yourself, submit it with your own click; to let the agent submit forms, turn on “Act may submit forms” in the panel.",
	})
	if err != nil {
		fmt.Fprintf(&body, "remixproxy held back a form the agent's action sent: %s\n", why)
	}
	w.Header().Set(httpx.MarkerHeader, "error")
	httpx.WriteOwnPage(w, http.StatusForbidden, body.Bytes())
}
