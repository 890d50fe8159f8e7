package page

import (
	"context"
	"errors"
	"sort"
)

// Remixlet commands (rmx.menu) are chosen in the panel, never in the page. A command runs the
// remixlet's callback as if the person asked for it, so the click that chooses it must be one
// the page cannot make. The page agent runs in the page's world, and a page can hold its own
// page-agent session on paths the proxy cannot close (a same-origin popup whose about:blank
// Window Chromium reuses, plain http, a site's own service worker): an Event it sends saying
// "the person clicked the command" would be believed. The panel is a remix.proxy document with
// its own socket, which only remix.proxy pages can open; so the proxy keeps each page's
// commands here, the panel shows them (State) and sends the person's choice
// (panel.CommandMessage), and RunCommand is the only way a command runs. Userscript managers
// do the same: their menu commands live in the extension's own menu, not in the page.

// CommandGroup is one remixlet's commands on a page, as the panel shows them.
type CommandGroup struct {
	Remixlet string        `json:"remixlet"`
	Source   string        `json:"source"` // the remixlet's name
	Commands []CommandItem `json:"commands"`
}

// CommandItem is one command: its ID (rmx.menu.add's first argument) and label.
type CommandItem struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// RunFunc runs one of a remixlet's commands by its ID.
type RunFunc func(ctx context.Context, id string) error

type commandEntry struct {
	group CommandGroup
	run   RunFunc
}

// SetCommands replaces remixlet's commands on this page and tells the session's panels; an
// empty list (or a nil run) removes them. run is called for the person's choice of one.
func (s *Session) SetCommands(remixlet, source string, cmds []CommandItem, run RunFunc) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(cmds) == 0 || run == nil {
		if _, ok := s.commands[remixlet]; !ok {
			return
		}
		delete(s.commands, remixlet)
	} else {
		if s.commands == nil {
			s.commands = map[string]commandEntry{}
		}
		s.commands[remixlet] = commandEntry{group: CommandGroup{Remixlet: remixlet, Source: source,
			Commands: append([]CommandItem(nil), cmds...)}, run: run}
	}
	h.notifyLocked(s)
}

// Commands returns the page's commands, grouped by remixlet, by name then ID.
func (s *Session) Commands() []CommandGroup {
	s.h.mu.Lock()
	out := make([]CommandGroup, 0, len(s.commands))
	for _, e := range s.commands {
		g := e.group
		g.Commands = append([]CommandItem(nil), g.Commands...)
		out = append(out, g)
	}
	s.h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Source != out[j].Source {
			return out[i].Source < out[j].Source
		}
		return out[i].Remixlet < out[j].Remixlet
	})
	return out
}

// ErrNoCommand is RunCommand's error for a command the page does not have (any more).
var ErrNoCommand = errors.New("this command is no longer on the page (its remixlet stopped or removed it); the list above shows the commands the page has now")

// RunCommand runs the command id of remixlet: the panel's report of the person's click
// (proxy/chat). It is the only way a command runs.
func (s *Session) RunCommand(ctx context.Context, remixlet, id string) error {
	s.h.mu.Lock()
	e, ok := s.commands[remixlet]
	s.h.mu.Unlock()
	if !ok {
		return ErrNoCommand
	}
	for _, c := range e.group.Commands {
		if c.ID == id {
			return e.run(ctx, id)
		}
	}
	return ErrNoCommand
}
