// Package manager is the manager web UI: the remixlets (list, page, edit, history, log,
// approvals, restore, archive, delete, network rules, schedules, stored data, paused sites),
// Settings (the agent's providers and options, delete all chats) and Traces (the recorded
// turns of the agent, their comparison and export, and the in-memory traces.json). It is
// served at https://remix.proxy/manager and http://remix.proxy/manager, and at /manager on the
// listen address (behind its Host check); the proxy routes IsPath paths to a Manager.
//
// Pages are rendered by panel (html/template; their one script, /manager/arm.js, only holds
// back a click that comes before the window has had the focus for a moment and the pointer
// moved: double-click-jacking); every state-changing route is POST and passes
// checkManagerPost first:
//
//   - the Origin header must be present and equal the origin the manager is served from
//     (https://remix.proxy, http://remix.proxy or http://LISTEN-ADDRESS, see managerOrigin); a
//     missing or "null" Origin is refused, since browsers send Origin on every POST;
//   - the form field "csrf" must equal the per-install form token (managerToken), an HMAC of a
//     fixed label under the per-install secret, compared in constant time.
//
// No manager response carries CORS headers; every one carries managerHeaders (strict CSP,
// frame-ancestors 'none', X-Frame-Options DENY, no-store). GET routes only read. Refusals are 403
// and change nothing (DESIGN invariant 6). Permissions are described with sandbox.PermissionText
// only; a manifest's reason is shown only on the Restore confirmation, labelled as the author's
// words (invariant 1). A change the person makes reaches the open pages through the same
// remixlet.Activator the chat uses.
//
// It is configured by manager.Config and imports, of the proxy's packages, proxy/chat,
// proxy/remixlet and proxy/internal/httpx. It must never change state on a GET or on a POST
// that fails either check, run or serve a script but its own arming, show a permission in a remixlet author's
// words as if they were the proxy's, or show a provider key it stores.
package manager
