package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// badcert.test (wired in addSites) serves the plain page with a certificate from a CA nobody
// trusts.

func TestBadUpstreamCertificate(t *testing.T) {
	t.Run("direct browser refuses it", func(t *testing.T) {
		// Makes sure the site is really bad, so the proxied case means something.
		if _, err := world.DirectTab(t).NavigateErr("https://badcert.test/"); err == nil || !strings.Contains(err.Error(), "CERT") {
			t.Errorf("direct load of https://badcert.test/: err %v, want a certificate error", err)
		}
	})

	t.Run("chromium sees the error page", func(t *testing.T) {
		tab := world.ProxiedTab(t)
		resp := tab.Navigate("https://badcert.test/")
		text := tab.BodyText()
		if resp.Status != http.StatusBadGateway {
			t.Errorf("status %d, want 502", resp.Status)
		}
		checkErrorPage(t, text)
		if strings.Contains(text, "Plain page") {
			t.Errorf("the page from the untrusted server was shown: %q", text)
		}

		// The proxy keeps serving other sites afterwards, in the same tab.
		l := loadPage(t, tab, "https://plain.test/", true)
		if l.status != 200 || !l.scriptRan || !l.connected {
			t.Errorf("after the bad certificate, https://plain.test/: status %d, script ran %v, connected %v", l.status, l.scriptRan, l.connected)
		}
	})

	t.Run("go client gets 502", func(t *testing.T) {
		c := world.Proxy(t).Client()
		defer c.CloseIdleConnections()
		resp, err := c.Get("https://badcert.test/")
		if err != nil {
			t.Fatalf("GET through the proxy: %v (want the proxy's error page, not a TLS failure towards the client)", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Errorf("status %s, want 502", resp.Status)
		}
		checkErrorPage(t, string(body))
	})
}

// checkErrorPage checks that an upstream TLS failure page names the host and the reason.
func checkErrorPage(t *testing.T, text string) {
	t.Helper()
	if !strings.Contains(text, "badcert.test") {
		t.Errorf("error page does not name the host badcert.test:\n%s", head(text, 2000))
	}
	lower := strings.ToLower(text)
	if !strings.Contains(lower, "certificate") && !strings.Contains(lower, "x509") {
		t.Errorf("error page does not give the reason (a certificate problem):\n%s", head(text, 2000))
	}
}
