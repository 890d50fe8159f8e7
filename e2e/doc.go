// Package e2e holds the end-to-end tests: real headless Chromium (Debian's chromium, driven with
// chromedp) browsing through the real proxy, with the proxy's CA trusted through an NSS database
// the way a user's browser trusts it, against local test sites on loopback reached by host name.
//
// It must never: reach beyond loopback, skip a test silently, or assert on wall-clock timings
// (speed is measured by the benchmarks, not by tests).
package e2e
