package chat

import "net/http"

// A chat follows its tab only over https (red-team pass 6b, OPEN-ITEMS 2 and 4).
//
// The tab's next page takes the chat when its page agent connects with a navigation the proxy
// noted and says in its hello that it came from a page of its origin in its tab. A page can
// hold a session of its own origin that says so in another window and keep it while its tab
// goes away: a same-origin popup whose Window its opener patched, or, over plain http, a fetch
// that forges a navigation's headers (Upgrade-Insecure-Requests) and whose token the page
// connects from a popup's realm. Over https the proxy gives a chat's next page a Window of its
// own (proxy/openerguard.go: Cross-Origin-Opener-Policy), and fetch metadata tells a navigation
// from a fetch; over http the browser ignores the policy and sends no metadata, so nothing
// would keep the chat from a page-made session. There a chat ends with its page: the next page's
// panel resumes it (panel.js keeps the chat's ID for the tab) once its wait (followGrace) ends.

// followsOver reports whether a chat may follow its tab to the document req asks for.
func followsOver(req *http.Request) bool { return req.URL.Scheme == "https" }
