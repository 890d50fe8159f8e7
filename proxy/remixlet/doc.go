// Package remixlet runs the remixlets on pages: when a page agent connects, the runner (a
// page.Listener) starts a sandbox for every enabled remixlet whose manifest matches the page
// (and whose site is not paused), relays the sandbox's dom.* calls to the page agent as data,
// answers rmx.* calls after checking them in Go against the stored manifest, and stops the
// sandboxes when the page goes. It also owns the remixlets' log writer (logs.go), the rmx
// services (rmx_services.go is their one table: storage events, clipboard, notify, menu,
// fetch, network:observe's records, schedule), the network rules at the proxy (netrules.go:
// Apply before a request leaves, header taps on the way back), the redirect guard of the
// addresses a remixlet wrote (redirect.go, htmladdr.go; a response tap), the scheduler
// (schedule.go) and the Activator that brings the running proxy in line with a change of the
// remixlets in the store (activate.go; the chat and the manager both use it).
//
// Every call a sandbox makes is checked on arrival (remixletHost.Call, host.go): the remixlet still
// exists, is enabled, not archived, still runs the version this sandbox was started with, its
// matches cover the page's current URL, and the page's site is not paused — so a remixlet paused
// while its sandbox runs gets nothing more. rmx.log alone skips these checks. dom.* calls then
// pass the static page policy (policy.go) before they are relayed; rmx.storage needs the storage
// permission in the stored manifest. Page-change notices wake a remixlet's rmx.keep checks only
// while it passes the same standing checks. Refusals go to the remixlet's log (a standing
// refusal once per reason, so a paused remixlet's timers cannot flood it).
//
// A remixlet's style.css is sent to the page when its agent connects (panel.Style), after
// rewrite.CheckStylesheet has run on it again with the hosts it may load from on that page
// (mayLoadOn: its sites within the page's site, and its fetch: hosts; sendhosts.go): the
// refused parts are left out and each goes to the remixlet's log, once per page session. The
// same candidates get it as get a sandbox (enabled, not archived, active version matching the
// page, site not paused); a style-only remixlet (no script.js) gets no sandbox at all.
//
// After a same-origin SPA navigation (the page agent's "nav") the candidates are listed again for
// the new URL with the same rules: the newly matching ones get their stylesheet and sandbox, the
// ones that no longer match are stopped and their sheet emptied (a Style with empty CSS), and the
// ones that still match keep running untouched — unless another version of one is active now: it
// is stopped and the new version started. Every remixlet stopped on a page is released there
// (panel.Release: its handles, dom.on listeners and stylesheet are dropped). The same matching
// runs again when a remixlet's Host finds its standing changed (paused, switched off, deleted,
// another version), so a running page follows the store without a navigation. Connect,
// navigations, re-matches and disconnect of one page session are serialized (pageRun.syncMu).
//
// It is configured by remixlet.Config (store, sandbox supervisor, logger, fetch client, observed
// records, clock) and imports, of the proxy's packages, only proxy/page, proxy/fetch and
// proxy/internal/httpx. It must never run remixlet code in the proxy's process, let a remixlet's
// call through without the checks above, decide a permission on anything but the stored
// manifest the person approved, or send a request on a remixlet's behalf other than rmx.fetch's
// (through fetch.Client, to a host a fetch: permission names).
package remixlet
