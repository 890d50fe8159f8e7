// Package chromeflags is the one list of command-line flags with which the end-to-end tests
// (e2e/e2etest) and the benchmark programs (e2e/benchkit) start Debian's headless Chromium.
//
// It sits outside the data flow: it only describes how a test browser starts. It must never
// add a flag that lets the browser reach beyond loopback or trust a certificate by itself; the
// callers add the proxy, the trust (an NSS database or an SPKI pin) and the profile.
package chromeflags

import "github.com/chromedp/chromedp"

// Common returns the flags every test and benchmark browser uses: headless, no sandbox (the
// machine runs it as root), no GPU, no QUIC (it would bypass an HTTP proxy), and nothing
// that fetches or syncs at start or throttles a background tab.
func Common(chromium, userDataDir string) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", "new"),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		// HTTPS-Upgrades would turn the http:// loads into https:// ones; the tests choose the
		// scheme themselves.
		chromedp.Flag("disable-features", "HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,Translate,MediaRouter,OptimizationHints"),
		chromedp.Flag("user-data-dir", userDataDir),
		chromedp.Flag("window-size", "1280,900"),
	}
}
