// Package panel holds everything the proxy shows inside the browser: the page-agent bootstrap that
// is injected into every HTML document, the panel iframe served from https://remix.proxy/panel,
// and the proxy's own pages (certificate install, status, upstream error). Files are embedded
// with embed.FS; no front-end build step is needed.
//
// Data flow: rewrite/ inlines Bootstrap() into pages; proxy/ serves the rest on the magic host.
//
// It must never: use Trusted Types sinks (innerHTML, eval, string timers) in the page agent, leave
// the page agent's secrets reachable from page scripts (they live in closures), or trust what a
// page says about its own URL beyond reporting same-origin SPA navigations.
package panel
