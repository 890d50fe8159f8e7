package remixlet

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/remixproxy/remixproxy/internal/plain"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/sandbox"
)

// rmx.menu.add(id, label, callback) and rmx.menu.remove(id): commands of the remixlet on its
// page, chosen in the panel. The proxy keeps the remixlet's commands for the page session
// (page.Session.SetCommands, after each change): the panel lists them, and the person's click
// there runs the callback, which stays in the sandbox as a listener (page.Session.RunCommand ->
// runCommand). The page never can: a page may hold its own page-agent session (see
// proxy/page/commands.go), so the page agent's Event messages never reach a command's listener
// (they are not in runningRemixlet.listeners). The page agent is told only how many commands
// there are and their labels (panel.Menu), for the launcher's commands button, which opens the
// panel. A Release (the remixlet stopped on the page) removes the commands.

// Limits of rmx.menu.
const (
	maxMenuCommands = 10
	maxMenuID       = 64 // bytes
	maxMenuLabel    = 60 // characters
)

// menuState is a remixlet's commands on one page (remixletHost.menu).
type menuState struct {
	mu   sync.Mutex
	cmds []menuCommand
}

// menuCommand is one command and the sandbox listener its callback became.
type menuCommand struct {
	id, label string
	listener  int64
}

func rmxMenuAdd(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	id, err := menuID(h, args)
	if err != nil {
		return nil, err
	}
	label, err := rmxString(args, 1, "the label", 4*maxMenuLabel, false)
	if err != nil {
		return nil, err
	}
	label = strings.Join(strings.Fields(label), " ")
	switch {
	case label == "":
		return nil, &httpx.Refusal{Why: "the label is empty"}
	case len([]rune(label)) > maxMenuLabel:
		return nil, &httpx.Refusal{Why: "the label is longer than 60 characters"}
	}
	// The label is shown in the panel, next to the proxy's cards: it must read as what it is.
	if err := plain.CheckName(label); err != nil {
		return nil, &httpx.Refusal{Why: "the label " + err.Error()}
	}
	listener, err := listenerArg(args, 2, "the callback")
	if err != nil {
		return nil, err
	}
	m := &h.menu
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.IndexFunc(m.cmds, func(c menuCommand) bool { return c.id == id })
	if i < 0 && len(m.cmds) >= maxMenuCommands {
		return nil, &httpx.Refusal{Why: "more than 10 menu commands"}
	}
	cmd := menuCommand{id: id, label: label, listener: listener}
	if i >= 0 {
		m.cmds[i] = cmd
	} else {
		m.cmds = append(m.cmds, cmd)
	}
	return nil, h.sendMenu(ctx, m.cmds)
}

func rmxMenuRemove(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	id, err := menuID(h, args)
	if err != nil {
		return nil, err
	}
	m := &h.menu
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.IndexFunc(m.cmds, func(c menuCommand) bool { return c.id == id })
	if i < 0 {
		return nil, nil
	}
	m.cmds = slices.Delete(m.cmds, i, i+1)
	return nil, h.sendMenu(ctx, m.cmds)
}

// menuID checks that h may use rmx.menu (the menu permission) and reads the command's ID, the
// call's first argument; both of rmx.menu's calls start with it.
func menuID(h *remixletHost, args []json.RawMessage) (string, error) {
	if !h.manifest.HasPermission(sandbox.PermMenu) {
		return "", &httpx.Refusal{Why: "rmx.menu needs the menu permission in manifest.json"}
	}
	id, err := rmxString(args, 0, "the command id", maxMenuID, false)
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", &httpx.Refusal{Why: "the command id is empty"}
	}
	return id, nil
}

// sendMenu gives the page session the remixlet's whole list of commands (for the panel) and
// tells the page agent their labels (for the launcher's commands button). Called with h.menu.mu
// held.
func (h *remixletHost) sendMenu(ctx context.Context, cmds []menuCommand) error {
	items := make([]page.CommandItem, len(cmds))
	labels := make([]panel.MenuCommand, len(cmds))
	for i, c := range cmds {
		items[i] = page.CommandItem{ID: c.id, Label: c.label}
		labels[i] = panel.MenuCommand{ID: c.id, Label: c.label}
	}
	p := h.p
	if p.gone(h) {
		return errTellGone
	}
	if p.pc.setCommands != nil {
		p.pc.setCommands(h.id, h.manifest.Name, items, h.runCommand)
	}
	return p.tell(ctx, h, panel.Menu{Type: panel.TypeMenu, Remixlet: h.id, Source: h.manifest.Name, Commands: labels})
}

// runCommand runs the command id: the person chose it in the panel (page.Session.RunCommand,
// the only caller). The callback gets {type: "menu", id}.
func (h *remixletHost) runCommand(ctx context.Context, id string) error {
	m := &h.menu
	m.mu.Lock()
	i := slices.IndexFunc(m.cmds, func(c menuCommand) bool { return c.id == id })
	var listener int64
	if i >= 0 {
		listener = m.cmds[i].listener
	}
	m.mu.Unlock()
	if i < 0 {
		return page.ErrNoCommand
	}
	h.p.r.logf(h.id, "info", "menu command %q chosen in the panel", id)
	return h.p.dispatch(h, listener, map[string]string{"type": "menu", "id": id})
}
