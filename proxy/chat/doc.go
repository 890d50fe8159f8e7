// Package chat is the agent's side of the chat panel: one chat per tab (page session), talked
// to over wss://remix.proxy/panel/ws. It owns the chats and their stored items (chat.go), the
// agent's environment — every tool call the model makes passes a check here before anything
// happens (env.go) — the person's cards and the confirmation window's decisions (cards.go),
// Act mode's safety state (act.go), plan review (plan.go), following the tab to the next page
// of its site (follow.go), open_page on another origin of the site (open.go), http_request
// (request.go), the submit gate (submit.go), the agent navigation guard (navguard.go: the
// pipeline calls Hub.GuardNavigation on each request and Hub.GuardRedirect as a response tap),
// the links in replies (links.go), the traces kept per chat (traces.go) and the gathering of
// the secrets the redaction stage removes (redaction.go; the text work is
// proxy/internal/redact).
//
// Data flow: the panel's messages are the person's clicks and words; a message runs a turn of
// the agent loop (agent.Run) with a chatEnv whose tools reach the page through proxy/page, the
// person's requests through proxy/fetch and the remixlets through the store and
// remixlet.Activator. Every tool result and every model request passes the chat's redactor.
//
// It is configured by chat.Config and imports, of the proxy's packages, proxy/remixlet,
// proxy/page, proxy/fetch and proxy/internal. It must never let the model decide what needs the
// person's approval (only the panel's decisions on armed cards do), let a secret it knows reach
// a model or leave through a tool, let the agent's navigations or requests leave the chat's
// site, or carry a card over to another page.
package chat
