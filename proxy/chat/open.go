package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/fetch"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// open_page on another origin of the same site (www.shop.test → help.shop.test): the page agent
// can fetch only its own origin (CORS, and its cookies), so the proxy fetches the page itself,
// as the person (the cookie view, the checked client of rmx.fetch: same registrable domain only,
// redirects re-checked), and hands the HTML to the page agent to parse inert and outline
// (outline_html). The model names only the address; the HTML never comes from it.

// openSameSite answers open_page when the address is on the page's site but another origin;
// handled is false for the page's own origin (fetch_page) or for another site (fetch_page
// refuses it in its own words).
func (e *chatEnv) openSameSite(ctx context.Context, sess page.Info, args json.RawMessage) (out json.RawMessage, handled bool, err error) {
	var a struct {
		URL    string `json:"url"`
		Budget *int   `json:"budget,omitempty"`
	}
	if json.Unmarshal(args, &a) != nil {
		return nil, false, nil
	}
	pageAddr, err := weburl.Parse(sess.URL)
	if err != nil {
		return nil, false, nil
	}
	if ref, err := weburl.Resolve(pageAddr, a.URL); err != nil || weburl.SameOrigin(ref, pageAddr) {
		return nil, false, nil
	}
	target, err := sameSiteRequestURL(pageAddr, a.URL)
	if err != nil {
		return nil, false, nil
	}
	n := e.c.hub.fetch
	if n == nil {
		return nil, true, &agent.ToolError{Message: "open_page: this proxy cannot fetch other pages of the site"}
	}
	res, err := n.Fetch(ctx, requestHosts(pageAddr, target), target.String(), fetch.Options{Method: "GET", As: "text"})
	if err != nil {
		var r *httpx.Refusal
		if errors.As(err, &r) {
			return nil, true, &agent.ToolError{Message: "open_page refused: " + r.Why}
		}
		return nil, true, &agent.ToolError{Message: "open_page: fetching " + httpx.Clip(target.String(), 200) + " failed: " + err.Error()}
	}
	if res.Status < 200 || res.Status > 299 {
		return nil, true, &agent.ToolError{Message: "open_page: the site answered " + strconv.Itoa(res.Status) + " for " + httpx.Clip(target.String(), 200)}
	}
	body := ""
	if res.Text != nil {
		body = *res.Text
	}
	truncated := false
	if len(body) > page.MaxOutlineHTML {
		body, truncated = httpx.Clip(body, page.MaxOutlineHTML), true
	}
	call := map[string]any{"url": res.URL, "status": res.Status, "contentType": headerValue(res.Headers, "Content-Type"), "html": body}
	if a.Budget != nil {
		call["budget"] = *a.Budget
	}
	b, _ := json.Marshal(call)
	out, err = e.c.hub.pages.Tool(ctx, sess.ID, "outline_html", b)
	if err == nil && truncated {
		out = withField(out, "note", "the page was longer than the proxy reads; the outline covers its beginning")
	}
	return out, true, err
}
