package panel

import (
	"errors"
	"io/fs"
	"regexp"
	"strings"
	"testing"
	"time"
)

const hostile = `<script>alert(1)</script>`

// render runs one Render function into a string.
func renderString(t *testing.T, f func(*strings.Builder) error) string {
	t.Helper()
	var sb strings.Builder
	if err := f(&sb); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// samplePages renders each page once with ordinary values.
func samplePages(t *testing.T) map[string]string {
	t.Helper()
	started := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	return map[string]string{
		"cert": renderString(t, func(w *strings.Builder) error {
			return RenderCert(w, CertPage{Fingerprint: "AA:BB", SPKI: "c3Br", CertURL: "/cert/remixproxy-ca.pem", Listen: "127.0.0.1:8080"})
		}),
		"status": renderString(t, func(w *strings.Builder) error {
			return RenderStatus(w, StatusPage{Version: "v1", Listen: "127.0.0.1:8080", StartedAt: started,
				Sessions: []SessionInfo{{ID: "s1", URL: "https://a.test/", Title: "A", Connected: true, Since: started}}})
		}),
		"error": renderString(t, func(w *strings.Builder) error {
			return RenderError(w, ErrorPage{Status: 502, Host: "a.test", URL: "https://a.test/x", Reason: "connection refused", Hint: "Start the server."})
		}),
	}
}

func TestRenderEscapesHostileInput(t *testing.T) {
	tests := []struct {
		name   string
		render func(*strings.Builder) error
	}{
		{"cert", func(w *strings.Builder) error {
			return RenderCert(w, CertPage{Fingerprint: hostile, SPKI: hostile, CertURL: hostile, Listen: hostile})
		}},
		{"status", func(w *strings.Builder) error {
			return RenderStatus(w, StatusPage{Version: hostile, CAFingerprint: hostile, Listen: hostile,
				Sessions: []SessionInfo{{ID: hostile, URL: hostile, Title: hostile}}})
		}},
		{"error", func(w *strings.Builder) error {
			return RenderError(w, ErrorPage{Title: hostile, Host: hostile, URL: hostile, Reason: hostile, Hint: hostile})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := renderString(t, tt.render)
			if strings.Contains(out, "<script") {
				t.Errorf("output has an unescaped <script:\n%s", out)
			}
			if !strings.Contains(out, "&lt;script&gt;alert(1)&lt;/script&gt;") {
				t.Errorf("output does not show the escaped input:\n%s", out)
			}
		})
	}
}

func TestRenderErrorNeutralisesScriptURL(t *testing.T) {
	out := renderString(t, func(w *strings.Builder) error {
		return RenderError(w, ErrorPage{Host: "a.test", URL: "javascript:alert(1)"})
	})
	if strings.Contains(out, `href="javascript:`) {
		t.Fatalf("javascript: URL made it into an href:\n%s", out)
	}
	if !strings.Contains(out, `href="#ZgotmplZ"`) {
		t.Fatalf("want the Try again link neutralised, got:\n%s", out)
	}
}

// TestPagesFitPageCSP checks every page against the proxy pages' CSP: no script, no external
// resource, no resource URL in CSS, one inline <style>.
func TestPagesFitPageCSP(t *testing.T) {
	forbidden := []struct{ name, re string }{
		{"script", `<script`},
		{"external resource element", `<(?:link|img|iframe|frame|object|embed|form|base|audio|video|source)\b`},
		{"src attribute", `\ssrc\s*=`},
		{"event handler attribute", `\son[a-z]+\s*=`},
		{"meta refresh or CSP", `http-equiv`},
		{"CSS resource", `url\(|@import|image-set\(`},
		{"absolute link", `href="(?:https?:)?//`},
	}
	for name, out := range samplePages(t) {
		// The error page's one absolute link is "Try again", to the address that failed.
		out := strings.Replace(out, `href="https://a.test/x"`, `href=""`, 1)
		for _, f := range forbidden {
			if m := regexp.MustCompile(`(?i)` + f.re).FindString(out); m != "" {
				t.Errorf("%s page has %s: %q", name, f.name, m)
			}
		}
		if n := strings.Count(out, "<style>"); n != 1 {
			t.Errorf("%s page has %d <style> elements, want 1", name, n)
		}
		if !strings.HasPrefix(out, "<!doctype html>") {
			t.Errorf("%s page does not start with <!doctype html>: %.40q", name, out)
		}
	}
}

func TestRenderCertShowsEveryPlatform(t *testing.T) {
	out := renderString(t, func(w *strings.Builder) error {
		return RenderCert(w, CertPage{
			Fingerprint: "12:34:AB:CD",
			SPKI:        "c3BraWhhc2g=",
			CertURL:     "/cert/remixproxy-ca.pem",
			Listen:      "127.0.0.1:8080",
		})
	})
	for _, want := range []string{
		"12:34:AB:CD",
		`href="/cert/remixproxy-ca.pem" download="remixproxy-ca.pem"`,
		"remixproxy trust",
		"remixproxy browser",
		"--ignore-certificate-errors-spki-list=c3BraWhhc2g=",
		"--proxy-server=http://127.0.0.1:8080",
		"sudo cp remixproxy-ca.pem /usr/local/share/ca-certificates/remixproxy.crt &amp;&amp; sudo update-ca-certificates",
		"certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n remixproxy -i remixproxy-ca.pem",
		"Settings &rarr; Privacy &amp; Security &rarr; Certificates",
		"Import&hellip;",
		"sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain remixproxy-ca.pem",
		"certutil -addstore -f ROOT remixproxy-ca.pem",
		"openssl x509 -noout -fingerprint -sha256 -in remixproxy-ca.pem",
		"does not trust remixproxy yet",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("certificate page lacks %q", want)
		}
	}
}

func TestRenderCertTrusted(t *testing.T) {
	out := renderString(t, func(w *strings.Builder) error {
		return RenderCert(w, CertPage{Fingerprint: "AA", CertURL: "/cert/ca.pem", Trusted: true})
	})
	if !strings.Contains(out, "already trusts remixproxy") || strings.Contains(out, "does not trust") {
		t.Errorf("trusted page shows the wrong banner:\n%s", out)
	}
	if !strings.Contains(out, "--proxy-server=http://HOST:PORT") {
		t.Errorf("empty Listen: want the HOST:PORT placeholder")
	}
}

func TestCertFileName(t *testing.T) {
	tests := []struct{ url, want string }{
		{"/cert/remixproxy-ca.pem", "remixproxy-ca.pem"},
		{"https://remix.proxy/cert/my_ca.crt?x=1", "my_ca.crt"},
		{"", defaultCertFile},
		{"/", defaultCertFile},
		{"/cert/", "cert"},
		{"/cert/a%20b.pem", defaultCertFile},
		{"/cert/$(rm -rf ~).pem", defaultCertFile},
		{"/cert/ca;reboot", defaultCertFile},
		{"%zz", defaultCertFile},
	}
	for _, tt := range tests {
		if got := certFileName(tt.url); got != tt.want {
			t.Errorf("certFileName(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestRenderErrorDefaults(t *testing.T) {
	tests := []struct {
		name  string
		page  ErrorPage
		wants []string
	}{
		{"zero status is 502", ErrorPage{Host: "a.test"},
			[]string{"502 Bad Gateway", "<h1>This site cannot be reached</h1>", "<strong>a.test</strong>"}},
		{"timeout", ErrorPage{Status: 504, Host: "slow.test"},
			[]string{"504 Gateway Timeout", "<h1>The site took too long to answer</h1>"}},
		{"given title, reason and hint", ErrorPage{
			Status: 502, Title: "This site's certificate is not valid", Host: "dev.test", URL: "https://dev.test/",
			Reason: "x509: certificate signed by unknown authority",
			Hint:   "If this is your own development server, start remixproxy with --upstream-ca FILE.",
		}, []string{
			"<h1>This site&#39;s certificate is not valid</h1>",
			"x509: certificate signed by unknown authority",
			"start remixproxy with --upstream-ca FILE.",
			`<a class="button" href="https://dev.test/">Try again</a>`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := renderString(t, func(w *strings.Builder) error { return RenderError(w, tt.page) })
			for _, want := range tt.wants {
				if !strings.Contains(out, want) {
					t.Errorf("error page lacks %q", want)
				}
			}
		})
	}
}

func TestRenderStatus(t *testing.T) {
	out := samplePages(t)["status"]
	for _, want := range []string{
		"<dt>Version</dt><dd>v1</dd>",
		`<time datetime="2026-03-04T05:06:07Z">2026-03-04 05:06:07 UTC</time>`,
		"<code>https://a.test/</code>",
		"<td>connected</td>",
		`href="/status.json"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status page lacks %q", want)
		}
	}
	empty := renderString(t, func(w *strings.Builder) error { return RenderStatus(w, StatusPage{}) })
	if !strings.Contains(empty, "No pages are connected.") || !strings.Contains(empty, "<dd>&ndash;</dd>") {
		t.Errorf("empty status page: want the no-pages note and a dash for the start time:\n%s", empty)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func TestRenderWrapsWriteErrors(t *testing.T) {
	boom := errors.New("boom")
	w := failingWriter{boom}
	for name, err := range map[string]error{
		"cert":   RenderCert(w, CertPage{}),
		"status": RenderStatus(w, StatusPage{}),
		"error":  RenderError(w, ErrorPage{}),
	} {
		if !errors.Is(err, boom) {
			t.Errorf("%s: got %v, want an error wrapping %v", name, err, boom)
		}
	}
}

func TestTemplatesAreASCII(t *testing.T) {
	err := fs.WalkDir(templateFiles, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(templateFiles, p)
		if err != nil {
			return err
		}
		for i, c := range b {
			if c >= 0x80 {
				t.Errorf("%s: non-ASCII byte at offset %d; use an HTML entity", p, i)
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
