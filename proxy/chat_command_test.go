package proxy

import (
	"net/url"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestPanelCommandRefusals: a command runs only on a panel's choice of one its page has now
// (proxy/page/commands.go); the confirmation window's socket runs none.
func TestPanelCommandRefusals(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, htmlHandler(plainPage))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	_, body := f.get("https://" + siteHost + "/")
	c, err := f.dialWS("wss://remix.proxy/agent/ws?t="+url.QueryEscape(tokenFrom(t, body)), "https://"+siteHost)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.CloseNow()
	m, err := readMsg(t, c)
	if err != nil || m["type"] != "welcome" {
		t.Fatalf("welcome = %v (%v)", m, err)
	}
	panelToken, _ := m["panel"].(string)

	for _, tt := range []struct{ role, want string }{
		{"", "this command is no longer on the page"},
		{"&role=confirm", "commands are chosen in the panel"},
	} {
		p, err := f.dialWS("wss://remix.proxy/panel/ws?t="+url.QueryEscape(panelToken)+"&for=https://"+siteHost+tt.role, "https://remix.proxy")
		if err != nil {
			t.Fatalf("panel dial %q: %v", tt.role, err)
		}
		send(t, p, map[string]string{"type": "command", "remixlet": "rx_0123456789abcdef0123456789abcdef", "id": "expand"})
		for {
			pm, err := readMsg(t, p)
			if err != nil {
				t.Fatalf("panel %q: no answer to the command: %v", tt.role, err)
			}
			if pm["type"] == "error" {
				if msg, _ := pm["message"].(string); !strings.Contains(msg, tt.want) {
					t.Errorf("panel %q: error %q, want %q", tt.role, msg, tt.want)
				}
				break
			}
		}
		p.Close(websocket.StatusNormalClosure, "bye")
	}
}
