// Package page owns the page sessions: one per document the proxy injected its page agent
// into. It holds the token authority (sessions.go: tokens signed with the per-install secret,
// naming the URL of the response the proxy rewrote; claims.go: one live session per token,
// reopened only with its resume key), the page agent's channel
// wss://remix.proxy/agent/ws (channel.go), the page tools' calls and their waiting answers
// (tools.go), the JSON responses recorded for each page (data.go, fed by a response tap) and
// the secrets pages report for the agent's redaction stage (secrets.go).
//
// Data flow: proxy.New makes a Hub and adds its listeners (page.Listener: the chats, then the
// remixlet runner); the channel welcomes a page agent whose token and Origin match, then tells
// the listeners of the session's life (Opened, Navigated, Message, Gone). Other packages see a
// session as page.Info (a copy) or *page.Session (ID, Info, Send); none reaches into the table.
//
// It imports, of the proxy's packages, only proxy/internal/httpx. It must never let a page's
// claim decide which page a session belongs to (the token and the handshake's Origin decide),
// evaluate or grant anything a page sends (its messages are data for the listeners), or log,
// store or hand out a reported secret except to the redaction stage (Hub.Secrets).
package page
