package remixlet

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// rmx.menu.add(id, label, callback) and rmx.menu.remove(id): commands in the launcher's menu on
// the remixlet's page. The proxy keeps the remixlet's commands for the page and sends the page
// agent the whole list after each change (panel.Menu); the callback stays in the sandbox as a
// listener, and a trusted click on the command comes back as an Event for it, dispatched by
// pageRun.receive like a dom.on event. A Release (the remixlet stopped on the page) removes the
// commands in the page.

// Limits of rmx.menu.
const (
	maxMenuCommands = 10
	maxMenuID       = 64 // bytes
	maxMenuLabel    = 60 // characters
)

// menuState is a remixlet's commands on one page (remixletHost.menu).
type menuState struct {
	mu   sync.Mutex
	cmds []panel.MenuCommand
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
	listener, err := listenerArg(args, 2, "the callback")
	if err != nil {
		return nil, err
	}
	m := &h.menu
	m.mu.Lock()
	defer m.mu.Unlock()
	i := slices.IndexFunc(m.cmds, func(c panel.MenuCommand) bool { return c.ID == id })
	if i < 0 && len(m.cmds) >= maxMenuCommands {
		return nil, &httpx.Refusal{Why: "more than 10 menu commands"}
	}
	h.p.setListener(h, listener, true)
	cmd := panel.MenuCommand{ID: id, Label: label, Listener: listener}
	if i >= 0 {
		h.p.setListener(h, m.cmds[i].Listener, false)
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
	i := slices.IndexFunc(m.cmds, func(c panel.MenuCommand) bool { return c.ID == id })
	if i < 0 {
		return nil, nil
	}
	h.p.setListener(h, m.cmds[i].Listener, false)
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

// sendMenu gives the page agent the remixlet's whole list of commands.
func (h *remixletHost) sendMenu(ctx context.Context, cmds []panel.MenuCommand) error {
	list := append([]panel.MenuCommand{}, cmds...)
	return h.p.tell(ctx, h, panel.Menu{Type: panel.TypeMenu, Remixlet: h.id, Source: h.manifest.Name, Commands: list})
}
