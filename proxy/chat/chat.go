package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/fetch"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/proxy/remixlet"
	"github.com/remixproxy/remixproxy/store"
)

// The chat: the panel's side of the agent (issue 4). A chat belongs to the tab (page session)
// it started on; the panel of that tab talks to it over wss://remix.proxy/panel/ws. The agent
// loop (agent/) runs one turn at a time per chat; its tools reach the page, the store and the
// person through chatEnv (env.go), which holds every check that matters. The panel's
// messages are the person's clicks and words: only they decide cards (cards.go).

// Limits on what a panel may send.
const (
	maxChatText       = 20000 // characters of one message to the agent
	panelSendQueue    = 256   // messages queued to one panel before it is dropped as too slow
	streamInterval    = 60 * time.Millisecond
	chatItemTextLimit = 4000 // characters of a tool line's arguments or result in the panel
)

// Config is what the chats need.
type Config struct {
	// Store keeps the chats, their items and messages, the remixlets the agent writes and the
	// approvals. Required.
	Store *store.Store
	// DataDir holds providers.json (the agent's settings). If empty, only the environment and
	// ModelURL give providers.
	DataDir string
	// ModelURL and ModelAPI are proxy.Config's: a provider offered ahead of Settings' own.
	ModelURL, ModelAPI string
	// ModelClient is the HTTP client for model providers. If nil, a direct client with a
	// ten-minute overall timeout.
	ModelClient *http.Client
	// Logger receives one line per notable event. If nil, slog.Default().
	Logger *slog.Logger
	// Pages are the page sessions: the chats' tabs and their page tools. Required.
	Pages *page.Hub
	// Fetch sends the agent's http_request and open_page on another origin as the person.
	// Required.
	Fetch *fetch.Client
	// RefusedAnyway is asked by the send guard before it holds a page's request for the
	// person's card (sendguard.go): a request a later stage would refuse anyway (the proxy's
	// local-network check) is answered by it with that refusal (true), and no card asks the
	// person about a request that can never go. If nil, every request the guard holds gets
	// its card.
	RefusedAnyway func(w http.ResponseWriter, r *http.Request) bool
	// Activator applies a remixlet the agent saved to the open pages. Required.
	Activator *remixlet.Activator
}

// Hub is the table of chats with a tab. A chat without a tab (its page left) stays in the
// store and can be resumed on a page of the same origin. Use New.
type Hub struct {
	cfg       Config
	ctx       context.Context // ends when the proxy shuts down
	st        *store.Store
	log       *slog.Logger
	pages     *page.Hub
	fetch     *fetch.Client
	activator *remixlet.Activator
	modelHTTP *http.Client // to model providers, directly: never through the proxy's pipeline
	acts      actStates    // the chats' Act-mode safety state (act.go)

	mu        sync.Mutex
	bySession map[string]*chat
	follow    follow    // chats waiting for their tab's next page of the site (follow.go)
	traces    traceKeep // the last turns' traces, for the manager's download (traces.go)
	nav       navGuard  // the agent's navigations, held to the chat's site (navguard.go)
}

// New makes the chats' hub; ctx ends every turn when the proxy shuts down.
func New(ctx context.Context, cfg Config) *Hub {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := newHub(cfg.Store, ctx)
	h.cfg, h.log, h.pages, h.fetch, h.activator = cfg, cfg.Logger, cfg.Pages, cfg.Fetch, cfg.Activator
	h.modelHTTP = cfg.ModelClient
	if h.modelHTTP == nil {
		h.modelHTTP = &http.Client{Timeout: 10 * time.Minute}
	}
	return h
}

func newHub(st *store.Store, ctx context.Context) *Hub {
	return &Hub{st: st, ctx: ctx, log: slog.Default(), bySession: map[string]*chat{}, follow: newFollow(),
		acts: actStates{m: map[string]*actState{}}}
}

// chat is one conversation attached to a tab.
type chat struct {
	hub *Hub

	mu        sync.Mutex
	rec       store.Chat // zero ID until the first message creates it
	sessionID string
	origin    string
	host      string // the tab's host, from the proxy's session record
	msgs      []agent.Message
	items     []chatItem
	cancel    context.CancelFunc // the running turn's, nil when idle
	panels    map[*panelConn]struct{}
	cards     map[string]*card
	grants    map[string]permGrant // remixlet name → the last permission card's Allow (env.go)
	lastSend  map[string]time.Time // assistant item ID → when it was last sent
	steps     int                  // model calls in the running turn
	waiting   chan struct{}        // closed when the tab's next page takes the chat (follow.go)
	apiAccess bool                 // the person's API access switch, off by default (request.go)
	submits   submitSwitch         // the person's "Act may submit forms" switch (submit.go)
	navStop   navStop              // the last navigation of the agent the proxy refused (navguard.go)
	plans     map[string]*planCard // pending plan cards (plan.go)
}

// panelState is what the panel is told about its page.
type panelState struct {
	Type      string `json:"type"`
	Connected bool   `json:"connected"`
	Session   string `json:"session"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	// Commands are the page's remixlet commands (rmx.menu), chosen here only
	// (proxy/page/commands.go).
	Commands []page.CommandGroup `json:"commands"`
}

// chatItem is one entry of the panel's conversation (panel.Item).
type chatItem = panel.Item

// panelConn is one open panel; writes go through out so a slow panel never blocks the agent.
type panelConn struct {
	// confirm marks a confirmation window's connection (panel/static/confirm.js, a top-level
	// page no site can frame): only it may allow a card.
	confirm bool
	out     chan []byte
	gone    chan struct{}
	once    sync.Once
	// shown records when each card was first delivered to this panel (for arming).
	shownMu sync.Mutex
	shown   map[string]time.Time
}

func (p *panelConn) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	select {
	case p.out <- b:
	case <-p.gone:
	default:
		p.close() // too slow: it reconnects and gets the whole chat again
	}
}

func (p *panelConn) close() { p.once.Do(func() { close(p.gone) }) }

// forSession returns the chat of a tab, creating an empty one (not yet stored) the first time.
func (h *Hub) forSession(sess page.Info) *chat {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.bySession[sess.ID]; ok {
		return c
	}
	c := &chat{hub: h, sessionID: sess.ID, origin: sess.Origin, host: pageHost(sess.URL),
		panels: map[*panelConn]struct{}{}, cards: map[string]*card{}, grants: map[string]permGrant{},
		lastSend: map[string]time.Time{}}
	h.bySession[sess.ID] = c
	return c
}

// pageHost is the host of a page's address as the browser reads it (weburl's HostKey: no
// trailing dot), the host every "same site" decision of the chat starts from; "" when the
// address is not http(s).
func pageHost(pageURL string) string {
	u, err := weburl.Parse(pageURL)
	if err != nil || !u.IsHTTP() {
		return ""
	}
	return u.HostKey()
}

// pageGone runs when a tab's page went (closed, reloaded, navigated): pending cards expire, and
// permissions granted in the chat and approvals asked from that page are dropped. The chat then
// waits a few seconds for the tab's next page of the same site (follow.go); if none comes,
// its turn stops at its next step. The conversation stays in the store.
func (h *Hub) pageGone(sessionID string) {
	h.mu.Lock()
	c, ok := h.bySession[sessionID]
	delete(h.bySession, sessionID)
	h.mu.Unlock()
	if !ok {
		return
	}
	lastURL := ""
	if sess, ok := h.pages.Get(sessionID); ok {
		lastURL = sess.URL
	}
	c.mu.Lock()
	c.sessionID = ""
	c.grants = map[string]permGrant{}
	keep := (c.cancel != nil || c.rec.ID != "") && lastURL != ""
	var wait chan struct{}
	if keep {
		// Set before the cards expire, so a turn woken by that waits for the next page.
		wait = make(chan struct{})
		c.waiting = wait
	}
	for _, cd := range c.cards {
		cd.expire()
	}
	c.mu.Unlock()
	if keep {
		h.orphan(c, wait, lastURL)
	}
	if st := h.st; st != nil {
		if err := st.DropApprovalsForSession(context.Background(), sessionID); err != nil {
			h.log.Warn("dropping approvals of a closed page", "err", err)
		}
	}
}

// SettingsChanged tells every open panel, whose model list may have changed.
func (h *Hub) SettingsChanged() {
	for _, c := range h.all() {
		c.broadcastState()
	}
}

// ForgetAll empties every open chat after the person deleted all chats: running turns stop
// and each panel starts afresh.
func (h *Hub) ForgetAll(ctx context.Context) {
	for _, c := range h.all() {
		c.mu.Lock()
		if c.cancel != nil {
			c.cancel()
		}
		c.mu.Unlock()
		c.forget()
	}
}

func (h *Hub) all() []*chat {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*chat, 0, len(h.bySession))
	for _, c := range h.bySession {
		out = append(out, c)
	}
	return out
}

// attach connects a panel to the chat and sends it everything.
func (c *chat) attach(p *panelConn) {
	c.mu.Lock()
	c.panels[p] = struct{}{}
	items := append([]chatItem(nil), c.items...)
	c.mu.Unlock()
	p.send(map[string]string{"type": "clear"})
	for _, it := range items {
		c.deliver(p, it)
	}
	p.send(c.state())
}

func (c *chat) detach(p *panelConn) {
	c.mu.Lock()
	delete(c.panels, p)
	c.mu.Unlock()
}

// deliver sends one item to one panel, noting when a card was first shown there.
func (c *chat) deliver(p *panelConn, it chatItem) {
	if it.Kind == "card" {
		p.shownMu.Lock()
		if _, ok := p.shown[it.ID]; !ok {
			p.shown[it.ID] = time.Now()
		}
		p.shownMu.Unlock()
	}
	p.send(map[string]any{"type": "item", "item": it})
}

// put adds or replaces an item, sends it to every panel and stores it (unless it is a
// streaming assistant reply in progress: those are stored when final).
func (c *chat) put(it chatItem, persist bool) {
	c.mu.Lock()
	found := false
	for i := range c.items {
		if c.items[i].ID == it.ID {
			c.items[i] = it
			found = true
			break
		}
	}
	if !found {
		c.items = append(c.items, it)
		if len(c.items) > 2000 {
			c.items = c.items[len(c.items)-2000:]
		}
	}
	panels := c.panelList()
	chatID := c.rec.ID
	c.mu.Unlock()
	for _, p := range panels {
		c.deliver(p, it)
	}
	if persist && chatID != "" {
		if b, err := json.Marshal(it); err == nil {
			if err := c.hub.st.PutChatItem(context.Background(), chatID, it.ID, b); err != nil {
				c.hub.log.Warn("saving a chat item", "err", err)
			}
		}
	}
}

func (c *chat) panelList() []*panelConn {
	out := make([]*panelConn, 0, len(c.panels))
	for p := range c.panels {
		out = append(out, p)
	}
	return out
}

func (c *chat) notice(text string) {
	c.put(chatItem{ID: "n" + httpx.RandomID()[:12], Kind: "notice", MD: panel.RenderMarkdown(text)}, true)
}

func (c *chat) broadcastState() {
	st := c.state()
	c.mu.Lock()
	panels := c.panelList()
	c.mu.Unlock()
	for _, p := range panels {
		p.send(st)
	}
}

// state is the chat's header for the panel: mode, model, counts, the providers to pick from.
func (c *chat) state() panel.ChatMessage {
	settings, _ := c.hub.settings()
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := c.rec
	if rec.Mode == "" {
		rec.Mode = string(agent.ModeBuild)
	}
	if rec.Provider == "" && settings != nil {
		rec.Provider, rec.Model = settings.Default.Provider, settings.Default.Model
	}
	maxSteps := agent.DefaultMaxSteps
	var providers []panel.Provider
	if settings != nil {
		if settings.MaxSteps > 0 {
			maxSteps = settings.MaxSteps
		}
		for _, p := range settings.Providers {
			providers = append(providers, panel.Provider{Name: p.Name, Models: p.Models})
		}
	}
	cost := ""
	switch {
	case rec.CostMicro > 0:
		cost = fmt.Sprintf("$%.4f", float64(rec.CostMicro)/1e6)
	case rec.CostMicro == 0 && rec.InputTokens > 0:
		cost = "$0.0000"
	}
	return panel.ChatMessage{Type: panel.TypeChat, Chat: panel.ChatState{
		ID: rec.ID, Mode: rec.Mode, Provider: rec.Provider, Model: rec.Model, Running: c.cancel != nil,
		Steps: c.steps, MaxSteps: maxSteps, InputTokens: rec.InputTokens, OutputTokens: rec.OutputTokens, Cost: cost,
		APIAccess: c.apiAccess, ActSubmits: c.submits.on,
	}, Providers: providers, ManagerURL: "https://" + httpx.MagicHost + "/manager"}
}

// settings loads the provider settings: the data dir's providers.json, the environment, and
// --model-url.
func (h *Hub) settings() (*agent.Settings, error) {
	settings, err := agent.LoadSettings(h.cfg.DataDir, os.Getenv)
	if err != nil {
		return nil, err
	}
	if h.cfg.ModelURL != "" {
		kind := h.cfg.ModelAPI
		if kind == "" {
			kind = "openai"
		}
		local := agent.ProviderConfig{Name: "local", Kind: kind, BaseURL: h.cfg.ModelURL, Models: []string{"scripted"}}
		settings.Providers = append([]agent.ProviderConfig{local}, settings.Providers...)
		settings.Default.Provider, settings.Default.Model = "local", "scripted"
	}
	if settings.Default.Provider == "" && len(settings.Providers) > 0 {
		settings.Default.Provider = settings.Providers[0].Name
		if len(settings.Providers[0].Models) > 0 {
			settings.Default.Model = settings.Providers[0].Models[0]
		}
	}
	return settings, nil
}

// ServePanelWS is the panel's channel: wss://remix.proxy/panel/ws?t=PANELTOKEN, from the panel
// page on remix.proxy only. It sends the page's state and the chat, and takes the person's
// messages, Stop, mode and model changes, and card decisions. Without a store the panel gets
// the page's state and is told the agent is not available.
func (h *Hub) ServePanelWS(w http.ResponseWriter, r *http.Request) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true}) // Origin checked below
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(page.MaxMessage)
	switch r.Header.Get("Origin") {
	case "https://" + httpx.MagicHost, "http://" + httpx.MagicHost:
	default:
		c.Close(page.CloseRefused, "the panel channel is for remix.proxy only")
		return
	}
	changed := make(chan struct{}, 1)
	sess, unwatch, ok := h.pages.Watch(r.URL.Query().Get("t"), changed)
	if !ok {
		c.Close(page.CloseBadToken, "unknown panel token")
		return
	}
	defer unwatch()
	confirm := r.URL.Query().Get("role") == "confirm"
	frameOrigin := r.URL.Query().Get(panel.FrameOriginParam)
	if why := panelOriginRefusal(confirm, frameOrigin, sess.Info().Origin); why != "" {
		h.log.Info("panel socket refused", "session", sess.Info().ID, "origin", sess.Info().Origin, "shown_in", frameOrigin, "why", why)
		c.Close(page.CloseRefused, why)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	p := &panelConn{out: make(chan []byte, panelSendQueue), gone: make(chan struct{}), shown: map[string]time.Time{},
		confirm: confirm}
	defer p.close()
	go func() { // the writer
		defer cancel()
		for {
			select {
			case b := <-p.out:
				wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
				err := c.Write(wctx, websocket.MessageText, b)
				wcancel()
				if err != nil {
					return
				}
			case <-p.gone:
				c.Close(websocket.StatusPolicyViolation, "the panel fell behind; reconnect")
				return
			case <-ctx.Done():
				return
			}
		}
	}()

	snap := sess.Info()
	var ch *chat
	if h.st != nil {
		ch = h.forSession(snap)
		ch.attach(p)
		defer ch.detach(p)
	}
	go func() { // page state changes
		for {
			snap := sess.Info()
			p.send(panelState{Type: "state", Connected: snap.Connected, Session: snap.ID, URL: snap.URL, Title: snap.Title,
				Commands: sess.Commands()})
			if !snap.Connected {
				return
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		_, raw, err := c.Read(ctx)
		if err != nil {
			return
		}
		m, err := panel.ParsePanelMessage(raw)
		if err != nil {
			p.send(map[string]string{"type": "error", "message": err.Error()})
			continue
		}
		if _, ok := m.(*panel.ActiveMessage); ok {
			// The person's input in the panel. The navigation guard no longer needs it: a
			// lease lets ?1 go only to an address the person clicked (navguard_person.go).
			continue
		}
		if cm, ok := m.(*panel.CommandMessage); ok {
			if msg := runCommand(ctx, p, sess, cm); msg != "" {
				p.send(map[string]string{"type": "error", "message": msg})
			}
			continue
		}
		if ch == nil {
			p.send(map[string]string{"type": "error", "message": "the agent needs the remixlet store, which this proxy runs without"})
			continue
		}
		if msg := ch.handle(p, m); msg != "" {
			p.send(map[string]string{"type": "error", "message": msg})
		}
	}
}

// handle acts on one panel message (from panel.ParsePanelMessage); it returns an error text
// for the panel, or "".
func (c *chat) handle(p *panelConn, msg any) string {
	switch m := msg.(type) {
	case *panel.SendMessage:
		return c.send(m.Text)
	case *panel.StopMessage:
		c.mu.Lock()
		if c.cancel != nil {
			c.cancel()
		}
		c.mu.Unlock()
	case *panel.NewMessage:
		return c.reset()
	case *panel.ModeMessage:
		mode, err := agent.ParseMode(m.Mode)
		if err != nil {
			return err.Error()
		}
		return c.update(func(r *store.Chat) { r.Mode = string(mode) })
	case *panel.ModelMessage:
		settings, err := c.hub.settings()
		if err != nil {
			return err.Error()
		}
		if !hasModel(settings, m.Provider, m.Model) {
			return "that model is not in Settings"
		}
		return c.update(func(r *store.Chat) { r.Provider, r.Model = m.Provider, m.Model })
	case *panel.DecideMessage:
		return c.decide(p, m.ID, m.Allow)
	case *panel.APIAccessMessage:
		return c.setAPIAccess(m.On) // request.go
	case *panel.ActSubmitsMessage:
		return c.setActSubmits(m.On) // submit.go
	case *panel.PlanMessage:
		return c.decidePlan(p, m) // plan.go
	case *panel.ResumeMessage:
		return c.resume(p, m.Chat)
	}
	return ""
}

// update changes the chat's record (creating it when needed) and tells the panels.
func (c *chat) update(f func(*store.Chat)) string {
	c.mu.Lock()
	if c.cancel != nil {
		c.mu.Unlock()
		return "wait for the agent to finish, or press Stop, before changing this"
	}
	f(&c.rec)
	rec := c.rec
	c.mu.Unlock()
	if rec.ID != "" {
		if err := c.hub.st.UpdateChat(context.Background(), rec); err != nil {
			return "could not save the change: " + err.Error()
		}
	}
	c.broadcastState()
	return ""
}

// reset starts a new conversation in this tab.
func (c *chat) reset() string {
	c.mu.Lock()
	running := c.cancel != nil
	c.mu.Unlock()
	if running {
		return "press Stop before starting a new chat"
	}
	c.forget()
	return ""
}

// forget drops the chat's conversation from this tab (the store keeps it unless deleted).
func (c *chat) forget() {
	c.mu.Lock()
	mode, prov, model := c.rec.Mode, c.rec.Provider, c.rec.Model
	c.rec = store.Chat{Mode: mode, Provider: prov, Model: model}
	c.submits = submitSwitch{} // a new chat's Act actions do not submit without asking (submit.go)
	c.msgs, c.items = nil, nil
	c.apiAccess = false // a new chat starts without API access
	for _, cd := range c.cards {
		cd.expire()
	}
	c.cards = map[string]*card{}
	panels := c.panelList()
	c.mu.Unlock()
	for _, p := range panels {
		p.send(map[string]string{"type": "clear"})
	}
	c.broadcastState()
}

// resume loads a stored chat into this tab: the panel keeps the ID of its chat in its own
// sessionStorage (per tab, on remix.proxy), so a chat survives reloads and proxy restarts. Only
// a chat of the same origin that no other tab holds can be resumed.
func (c *chat) resume(p *panelConn, id string) string {
	st := c.hub.st
	c.mu.Lock()
	busy := c.rec.ID != "" || c.cancel != nil
	origin := c.origin
	c.mu.Unlock()
	if busy || id == "" {
		return "" // this tab already has its chat
	}
	rec, err := st.Chat(context.Background(), id)
	if err != nil || rec.Origin != origin {
		return "" // nothing to resume here: start afresh
	}
	c.hub.mu.Lock()
	for _, other := range c.hub.bySession {
		if other != c {
			other.mu.Lock()
			taken := other.rec.ID == id
			other.mu.Unlock()
			if taken {
				c.hub.mu.Unlock()
				return ""
			}
		}
	}
	c.hub.mu.Unlock()
	bodies, err := st.ChatMessages(context.Background(), id)
	if err != nil {
		return "could not load the chat: " + err.Error()
	}
	msgs, damaged := agent.UnmarshalMessages(bodies)
	stored, err := st.ChatItems(context.Background(), id)
	if err != nil {
		return "could not load the chat: " + err.Error()
	}
	var items []chatItem
	for _, si := range stored {
		var it chatItem
		if json.Unmarshal(si.Body, &it) == nil {
			if it.Kind == "card" && it.State == "pending" {
				it.State = "expired"
			}
			if it.Kind == "tool" && it.Status == "running" {
				it.Status, it.Result = "error", "interrupted"
			}
			items = append(items, it)
		}
	}
	c.mu.Lock()
	c.rec, c.msgs, c.items = rec, msgs, items
	c.apiAccess = switchIn(items, apiAccessKey) // kept with the chat (switches.go)
	c.submits = submitSwitch{on: switchIn(items, actSubmitsKey)}
	panels := c.panelList()
	c.mu.Unlock()
	for _, q := range panels {
		c.attach(q)
	}
	if damaged > 0 {
		c.notice(fmt.Sprintf("%d damaged messages of this chat could not be read and were left out.", damaged))
	}
	return ""
}

// send starts a turn with the person's text.
func (c *chat) send(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return ""
	}
	if !utf8.ValidString(text) || utf8.RuneCountInString(text) > maxChatText {
		return fmt.Sprintf("a message can be at most %d characters", maxChatText)
	}
	h := c.hub
	settings, err := h.settings()
	if err != nil {
		return "the model settings could not be read: " + err.Error()
	}
	c.mu.Lock()
	if c.cancel != nil {
		c.mu.Unlock()
		return "the agent is still working; wait, or press Stop"
	}
	if c.sessionID == "" {
		c.mu.Unlock()
		return "this page was closed; reload it to chat"
	}
	if c.rec.Mode == "" {
		c.rec.Mode = string(agent.ModeBuild)
	}
	if c.rec.Provider == "" {
		c.rec.Provider, c.rec.Model = settings.Default.Provider, settings.Default.Model
	}
	rec := c.rec
	c.mu.Unlock()
	if rec.Provider == "" {
		c.notice("No model is set up yet. Add a provider and key in [Settings](https://" + httpx.MagicHost + "/manager/settings), set `OPENAI_API_KEY`, `ANTHROPIC_API_KEY` or `OLLAMA_HOST`, or start remixproxy with `--model-url`.")
		return ""
	}
	prov, pcfg, err := settings.Provider(rec.Provider, h.modelHTTP)
	if err != nil {
		c.notice("The model could not be used: " + err.Error())
		return ""
	}
	snap, ok := h.pages.Get(c.sessionIDNow())
	if !ok {
		return "this page was closed; reload it to chat"
	}
	if rec.ID == "" {
		rec.Origin, rec.URL, rec.Title = c.origin, snap.URL, httpx.Clip(snap.Title, 512)
		created, err := h.st.CreateChat(context.Background(), rec)
		if err != nil {
			return "could not save the chat: " + err.Error()
		}
		rec = created
		defer c.saveAPIAccess() // the API access switch may predate the stored chat (request.go)
		defer c.saveActSubmits()
	} else {
		rec.URL, rec.Title = snap.URL, httpx.Clip(snap.Title, 512)
	}
	ctx, cancel := context.WithCancel(c.hub.ctx)
	c.mu.Lock()
	c.rec = rec
	c.cancel = cancel
	c.steps = 0
	history := append([]agent.Message(nil), c.msgs...)
	c.mu.Unlock()
	c.put(chatItem{ID: "u" + httpx.RandomID()[:12], Kind: "user", MD: panel.PlainNodes(text)}, true)
	c.broadcastState()

	mode, _ := agent.ParseMode(rec.Mode)
	red := c.newRedactor(settings) // every tool result and model request passes through it (redaction.go)
	// The page's address and title are what the page shows, as a tool result is: its keys and
	// card numbers go too (a model request passes Redact, which keeps the person's own).
	shown := agent.PageInfo{URL: red.RedactPage(snap.URL), Title: red.RedactPage(snap.Title)}
	cfg := agent.Config{
		Provider: prov, Model: rec.Model, Mode: mode,
		System: agent.SystemPrompt(mode, shown),
		Env:    &chatEnv{c: c, red: red}, MaxSteps: settings.MaxSteps, Redactor: red,
		// A turn goes on only while the tab is on the chat's site (follow.go).
		BeforeStep: c.beforeStep,
	}
	cfg.System += c.actNotes(mode, settings) // plan review and API access (request.go)
	cfg.System += c.submitNotes(mode)        // "Act may submit forms" (submit.go)
	go c.run(ctx, cancel, cfg, pcfg, history, text)
	return ""
}

func (c *chat) sessionIDNow() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// run is one turn, on its own goroutine.
func (c *chat) run(ctx context.Context, cancel context.CancelFunc, cfg agent.Config, pcfg agent.ProviderConfig, history []agent.Message, text string) {
	defer func() {
		if v := recover(); v != nil {
			c.hub.log.Error("the agent turn panicked", "panic", v)
			c.notice("The agent failed unexpectedly; the proxy keeps running. Try again.")
		}
		cancel()
		c.mu.Lock()
		c.cancel = nil
		c.mu.Unlock()
		c.broadcastState()
	}()
	obs := &chatObserver{c: c, pcfg: pcfg}
	msgs, err := agent.Run(ctx, cfg, history, text, obs)
	c.mu.Lock()
	c.msgs = msgs
	c.mu.Unlock()
	if err != nil {
		var pe *agent.ProviderError
		if errors.As(err, &pe) {
			c.notice("The model could not answer: " + pe.Error())
		} else {
			c.notice("The agent stopped: " + err.Error())
		}
	}
}

// chatObserver turns the loop's events into panel items and stored messages.
type chatObserver struct {
	c    *chat
	pcfg agent.ProviderConfig
}

func (o *chatObserver) Text(stepID, text string, final bool) {
	c := o.c
	c.mu.Lock()
	last := c.lastSend[stepID]
	due := final || time.Since(last) >= streamInterval
	if due {
		c.lastSend[stepID] = time.Now()
	}
	if final {
		delete(c.lastSend, stepID)
	}
	c.mu.Unlock()
	if !due || strings.TrimSpace(text) == "" {
		return
	}
	c.put(chatItem{ID: "a" + stepID, Kind: "assistant", MD: panel.RenderReply(text, c.linkOnSite)}, final) // links: links.go
}

func (o *chatObserver) Tool(call agent.ToolCall, status, result string) {
	o.c.put(chatItem{ID: "t" + call.ID, Kind: "tool", Name: httpx.Clip(call.Name, 80), Args: httpx.ClipNoted(prettyJSON(call.Arguments), chatItemTextLimit),
		Status: status, Result: httpx.ClipNoted(result, chatItemTextLimit)}, status != "running")
}

func (o *chatObserver) Notice(text string) { o.c.notice(text) }

func (o *chatObserver) Append(msgs ...agent.Message) {
	c := o.c
	c.mu.Lock()
	c.msgs = append(c.msgs, msgs...)
	id := c.rec.ID
	c.mu.Unlock()
	if err := c.hub.st.AppendChatMessages(context.Background(), id, agent.MarshalMessages(msgs...)...); err != nil {
		c.hub.log.Warn("saving chat messages", "err", err)
	}
}

func (o *chatObserver) Replace(msgs []agent.Message) {
	c := o.c
	c.mu.Lock()
	c.msgs = append([]agent.Message(nil), msgs...)
	id := c.rec.ID
	c.mu.Unlock()
	if err := c.hub.st.ReplaceChatMessages(context.Background(), id, agent.MarshalMessages(msgs...)...); err != nil {
		c.hub.log.Warn("saving compacted chat", "err", err)
	}
}

func (o *chatObserver) Usage(u agent.Usage) {
	c := o.c
	c.mu.Lock()
	c.steps++
	c.rec.InputTokens += int64(u.InputTokens)
	c.rec.OutputTokens += int64(u.OutputTokens)
	if usd, known := agent.Cost(o.pcfg, u); known && c.rec.CostMicro >= 0 {
		c.rec.CostMicro += int64(math.Round(usd * 1e6))
	} else if !known {
		c.rec.CostMicro = -1
	}
	rec := c.rec
	c.mu.Unlock()
	if err := c.hub.st.UpdateChat(context.Background(), rec); err != nil {
		c.hub.log.Warn("saving chat counts", "err", err)
	}
	c.broadcastState()
}

func hasModel(s *agent.Settings, provider, model string) bool {
	for _, p := range s.Providers {
		if p.Name != provider {
			continue
		}
		for _, m := range p.Models {
			if m == model {
				return true
			}
		}
	}
	return false
}

func prettyJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return s
	}
	return string(b)
}
