package chat

import (
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// Links in the agent's replies. The model's text is rendered by panel.RenderReply: a link stays
// a link only to the chat page's own site (registrable domain, from the proxy's record of the
// tab's page, never from the model); a link to any other host becomes its text and that host.
// A steered model cannot then put a one-click exfiltration address ("details here", with what it
// read in the query) in front of the person.

// linkOnSite reports whether host (as the browser reads it) is on the chat page's site.
func (c *chat) linkOnSite(host string) bool {
	c.mu.Lock()
	page := c.host
	c.mu.Unlock()
	if page == "" || httpx.IsMagicHost(host) {
		return false
	}
	return weburl.Site(host) == weburl.Site(page)
}
