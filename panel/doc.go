// Package panel holds everything the proxy shows inside the browser: the page-agent bootstrap that
// is injected into every HTML document, the panel iframe served from https://remix.proxy/panel,
// and the proxy's own pages (certificate install, status, upstream error). Files are embedded
// with embed.FS; no front-end build step is needed.
//
// Data flow: rewrite/ inlines Bootstrap() (the page agent's boot) into pages; proxy/ serves the
// rest of the page agent (Rest, at RestPath) on the magic host, and the panel.
//
// The page agent runs in two closures (pageagent.go): the boot, inlined as the first script, so
// that it captures every built-in the agent uses before any page script runs, and the rest,
// which the boot loads with a created <script async> checked by its SRI hash (from the
// browser's cache, without pausing the parser) and hands its names once, only to that element,
// through a fixed window property. Secrets stay in the closures. The source is the ordered
// list of files in pageagent/, one concern each, which pageagent.go joins at start in the
// order of bootParts and restParts (as the content scripts of an extension's manifest) and
// minifies once. The boot: prologue.js (the token), capture.js (built-ins and DOM functions),
// helpers.js, tool_capture.js (the page tools' captures), rx_revealed.js, rx_sheets.js (the
// first-frame stylesheets), rx_ready.js, early.js (window listeners and history wrappers that
// must come first), boot.js (its start and the hand-over). The rest: channel.js (the
// WebSocket), navigation.js, the remixlet runtime rx_*.js (dom.* under the page policy:
// handles, policy, addresses, styles, events, build, layout, click, waitFor), the AI agent's
// page tools tool_*.js (helpers, geometry, frames, refs, names, outline, reading, click, Act
// mode's actions, find, page_state, fetch, secrets, the tools table), services.js (rmx
// services), launcher.js, and start.js. Each file is a valid script on its own: top-level
// declarations and start-up captures. The rules for the files (one declaration per name, globals
// read only at the boot's start-up, the rest reading no global and capturing nothing, the names
// handed over never reassigned, no top-level use of a later file's variables, ASCII) are at the
// top of pageagent/prologue.js and checked by pageagent_test.go; testdata/pageagent holds unit
// tests of single files, and the harnesses testdata/agent_harness.js and agent_tools_harness.js
// test the joined agent (both closures' files in one, agentSource), on its source and minified.
//
// It must never: use Trusted Types sinks (innerHTML, eval, string timers) in the page agent, leave
// the page agent's secrets reachable from page scripts (they live in closures), or trust what a
// page says about its own URL beyond reporting same-origin SPA navigations.
package panel
