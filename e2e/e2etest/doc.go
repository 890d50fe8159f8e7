// Package e2etest is the harness of the end-to-end tests, so that each test in e2e reads as a
// story: load this page directly and through the proxy, and compare.
//
//   - Sites: the upstream test websites on 127.0.0.1 under made-up host names (plain.test, …),
//     with certificates from a test CA of their own (never the proxy's); Resolve and
//     HostResolverRules make the same URLs work through the proxy and directly.
//   - Proxy (StartProxy, NewProxy): a real remixproxy in front of the sites, with a fresh CA in a
//     temporary data dir, dialing only the sites (OnlyResolved) and verifying them against the
//     sites' CA; status.json and a Go client that goes through it.
//   - Chromium (Browser, NewChromium): Debian's headless chromium with a fresh profile and a
//     temporary $HOME whose NSS database trusts either the proxy's CA (through-proxy mode, as a
//     user's browser would) or the sites' CA (direct mode).
//   - Tab: a tab in a browser context of its own that records console errors, exceptions, error
//     log entries and CSP violations (seen from an isolated world the page cannot touch), with
//     helpers to navigate, evaluate, and wait — always with a bound and a failure message that
//     says what was awaited, including the proxy's status.json for the page agent.
//   - World: the sites, proxy and two browsers shared by every test of a package.
//
// It must never: reach beyond loopback, share the proxy's CA key with the sites, change a page
// it watches (the CSP watcher lives in an isolated world), or assert on timings.
package e2etest
