package remixlet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/sandbox"
)

func TestMenuCommands(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	h, f := newServiceHost(t, st, "expander", sandbox.PermMenu)
	rr := &runningRemixlet{host: h, listeners: map[int64]bool{}}
	f.run.running[h.id] = rr
	// What the page session (the panel's list) was given last.
	var panelCmds []page.CommandItem
	var run page.RunFunc
	f.run.pc.setCommands = func(remixlet, source string, cmds []page.CommandItem, r page.RunFunc) {
		if remixlet != h.id || (len(cmds) > 0 && source != "expander") {
			t.Errorf("setCommands(%q, %q)", remixlet, source)
		}
		panelCmds, run = cmds, r
	}

	call := func(method, args string) error {
		_, err := h.Call(ctx, "rmx", method, json.RawMessage(args))
		return err
	}
	last := func() panel.Menu {
		m := sentOf[panel.Menu](f)
		if len(m) == 0 {
			t.Fatal("no menu sent")
		}
		return m[len(m)-1]
	}
	if err := call("menu.add", `["all", "Expand  <all>\n posts", {"$listener": 7}]`); err != nil {
		t.Fatal(err)
	}
	if err := call("menu.add", `["none", "Collapse", {"$listener": 8}]`); err != nil {
		t.Fatal(err)
	}
	// The page agent learns the labels only; the panel's list has the same.
	want := panel.Menu{Type: panel.TypeMenu, Remixlet: h.id, Source: "expander", Commands: []panel.MenuCommand{
		{ID: "all", Label: "Expand <all> posts"}, {ID: "none", Label: "Collapse"}}}
	if got := last(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("menu = %+v, want %+v", got, want)
	}
	if want := []page.CommandItem{{ID: "all", Label: "Expand <all> posts"}, {ID: "none", Label: "Collapse"}}; fmt.Sprint(panelCmds) != fmt.Sprint(want) || run == nil {
		t.Fatalf("the panel's commands = %+v, want %+v", panelCmds, want)
	}
	// No page-agent Event reaches a command's callback: a page can hold its own session.
	if len(rr.listeners) != 0 {
		t.Errorf("listeners relayed from the page: %v, want none", rr.listeners)
	}
	if err := call("menu.add", `["all", "Expand", {"$listener": 9}]`); err != nil {
		t.Fatal(err)
	}
	if err := call("menu.remove", `["none"]`); err != nil {
		t.Fatal(err)
	}
	if got := last(); len(got.Commands) != 1 || got.Commands[0].ID != "all" || len(panelCmds) != 1 || panelCmds[0].Label != "Expand" {
		t.Errorf("after remove: %+v, the panel's %+v", got, panelCmds)
	}
	if err := run(ctx, "none"); !errors.Is(err, page.ErrNoCommand) {
		t.Errorf("running a removed command: %v, want ErrNoCommand", err)
	}
	if err := call("menu.remove", `["never added"]`); err != nil {
		t.Errorf("removing a missing command: %v", err)
	}

	for _, tt := range []struct{ name, args, want string }{
		{"no callback", `["x", "X"]`, "must be a function"},
		{"callback not a function", `["x", "X", "alert(1)"]`, "must be a function"},
		{"empty id", `["", "X", {"$listener": 1}]`, "empty"},
		{"long id", `["` + strings.Repeat("i", maxMenuID+1) + `", "X", {"$listener": 1}]`, "more than"},
		{"empty label", `["x", "  ", {"$listener": 1}]`, "empty"},
		{"long label", `["x", "` + strings.Repeat("l", maxMenuLabel+1) + `", {"$listener": 1}]`, "longer than 60"},
		{"label not text", `["x", {"b": 1}, {"$listener": 1}]`, "must be a string"},
		{"label with a bidirectional override", `["x", "Allow \u202eylppa", {"$listener": 1}]`, "invisible character U+202E"},
		{"label with a zero width space", `["x", "Al\u200blow", {"$listener": 1}]`, "invisible character U+200B"},
	} {
		before := len(sentOf[panel.Menu](f))
		if err := call("menu.add", tt.args); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want a refusal containing %q", tt.name, err, tt.want)
		}
		if len(sentOf[panel.Menu](f)) != before {
			t.Errorf("%s: refused, but a menu was sent", tt.name)
		}
	}
	for i := 1; i < maxMenuCommands; i++ {
		if err := call("menu.add", fmt.Sprintf(`["c%d", "C", {"$listener": %d}]`, i, 100+i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := call("menu.add", `["one more", "C", {"$listener": 200}]`); err == nil || !strings.Contains(err.Error(), "more than 10") {
		t.Errorf("command 11: got %v, want a refusal", err)
	}
	if err := call("menu.add", `["c1", "Renamed", {"$listener": 201}]`); err != nil {
		t.Errorf("replacing a command at the limit: %v", err)
	}
}
