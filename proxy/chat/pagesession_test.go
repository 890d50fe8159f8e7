package chat

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// dialPageAgent connects to pages' agent channel (served at srv, an httptest server of
// ServeAgentWS) as the page agent of pageURL does, and returns the socket and the session's id
// from the welcome. The socket closes when the test ends.
func dialPageAgent(t *testing.T, ctx context.Context, pages *page.Hub, srv string, pageURL *url.URL) (*websocket.Conn, string) {
	t.Helper()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv, "http")+"/",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {pageURL.Scheme + "://" + pageURL.Host}},
			Subprotocols: []string{panel.AgentProtocolPrefix + pages.Mint(pageURL, time.Now())}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	var welcome struct{ Session string }
	_, raw, err := conn.Read(ctx)
	if err != nil || json.Unmarshal(raw, &welcome) != nil || welcome.Session == "" {
		t.Fatalf("welcome: %s, %v", raw, err)
	}
	return conn, welcome.Session
}
