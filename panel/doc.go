// Package panel holds everything the proxy shows inside the browser: the page-agent bootstrap that
// is injected into every HTML document, the panel iframe served from https://remix.proxy/panel,
// and the proxy's own pages (certificate install, status, upstream error). Files are embedded
// with embed.FS; no front-end build step is needed.
//
// Data flow: rewrite/ inlines Bootstrap() into pages; proxy/ serves the rest on the magic host.
//
// The page agent is one closure at run time, so that it captures the built-ins it uses before
// any page script runs and keeps its secrets where no page script reaches. Its source is the
// ordered list of files in pageagent/, one concern each, which pageagent.go joins at start in
// the order of agentParts (as the content scripts of an extension's manifest) and minifies
// once: prologue.js (the token), capture.js (built-ins and DOM functions), helpers.js,
// channel.js (the WebSocket), navigation.js, the remixlet runtime rx_*.js (dom.* under the page
// policy: handles, policy, addresses, styles, events, build, layout, click, stylesheets), the
// AI agent's page tools tool_*.js (captures, helpers, geometry, frames, refs, names, outline,
// reading, click, Act mode's actions, find, page_state, fetch, secrets, the tools table),
// services.js (rmx services), launcher.js, and start.js, the one place it starts. Each file is
// a valid script on its own: top-level declarations and start-up captures. The rules for the
// files (one declaration per name in the whole closure, globals read only at start-up, no
// top-level use of a later file's variables, ASCII) are at the top of pageagent/prologue.js and
// checked by pageagent_test.go; testdata/pageagent holds unit tests of single files, and the
// harnesses testdata/agent_harness.js and agent_tools_harness.js test the joined agent, on its
// source and on the minified script.
//
// It must never: use Trusted Types sinks (innerHTML, eval, string timers) in the page agent, leave
// the page agent's secrets reachable from page scripts (they live in closures), or trust what a
// page says about its own URL beyond reporting same-origin SPA navigations.
package panel
