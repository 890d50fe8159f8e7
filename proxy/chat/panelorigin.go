package chat

// A panel socket is accepted only from a panel shown inside a page of its session's origin.
//
// The page agent frames the panel at /panel?for=ITS-ORIGIN; the proxy serves that page with
// frame-ancestors ITS-ORIGIN, so the browser renders it only inside pages of that origin
// (proxy/panelorigin.go), and the panel sends the same origin on its socket
// (panel.FrameOriginParam). A page that holds a panel token of its own origin (OPEN-ITEMS 1, 2)
// and frames the panel on another site gets a panel whose origin is that site's: refused here,
// with the reason shown in the panel and logged. The confirmation window (role=confirm) is never
// framed (frame-ancestors 'none') and names no origin.

// panelOriginRefusal is why a panel socket whose panel names frameOrigin may not open the
// session of origin sessionOrigin, or "" when it may. The reason is a close reason (at most
// 123 bytes), so it names no origin; the log does. It says what to do as well as what happened:
// the panel shows it to a person who may not know why their chat is not there.
func panelOriginRefusal(confirm bool, frameOrigin, sessionOrigin string) string {
	switch {
	case confirm:
		return ""
	case frameOrigin == "":
		return "this panel opens only inside its page; open the chat from the page's remixproxy button"
	case frameOrigin != sessionOrigin:
		return "this panel is shown inside a page of another origin; reload the page and open the chat from its remixproxy button"
	}
	return ""
}
