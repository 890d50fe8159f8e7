package chat

import (
	"context"
	"errors"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// runCommand runs a remixlet command the person chose in the panel (panel.CommandMessage):
// the only way a command runs (proxy/page/commands.go). The confirmation window's socket
// (role=confirm) shows no commands and runs none. It returns an error text for the panel, or "".
func runCommand(ctx context.Context, p *panelConn, sess *page.Session, m *panel.CommandMessage) string {
	if p.confirm {
		return "commands are chosen in the panel"
	}
	err := sess.RunCommand(ctx, m.Remixlet, m.ID)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, page.ErrNoCommand):
		return err.Error()
	default:
		return "the command did not run: " + err.Error()
	}
}
