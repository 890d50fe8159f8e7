package panel

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"path"
	"time"
)

// The proxy's own pages: certificate install, status and upstream error. Each is one
// self-contained HTML document (inline <style>, no script, no external resource) meant to be
// served with the CSP "default-src 'none'; style-src 'unsafe-inline'; img-src data:". They are rendered with html/template, so every field is escaped for the
// context it lands in; a URL that is not http(s) or relative becomes "#ZgotmplZ" in an href.

//go:embed templates/*.html
var templateFiles embed.FS

var (
	certTemplate   = mustPage("cert.html")
	statusTemplate = mustPage("status.html")
	errorTemplate  = mustPage("error.html")
)

// mustPage parses the shared layout together with one page's "title" and "body".
func mustPage(name string) *template.Template {
	return template.Must(template.New(name).ParseFS(templateFiles,
		"templates/layout.html", "templates/"+name))
}

// render executes t into a buffer first, so that a failure writes nothing to w and the caller
// can still answer with a plain error.
func render(w io.Writer, t *template.Template, page string, data any) error {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
		return fmt.Errorf("rendering %s page: %w", page, err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("writing %s page: %w", page, err)
	}
	return nil
}

// CertPage is the certificate install page (like mitm.it): a download link for the CA
// certificate and, per platform, the steps to trust it.
type CertPage struct {
	// Fingerprint is the SHA-256 fingerprint of the CA certificate in colon hex, as
	// `openssl x509 -noout -fingerprint -sha256` prints it.
	Fingerprint string
	// SPKI is the base64 SHA-256 of the CA's SubjectPublicKeyInfo, for Chromium's
	// --ignore-certificate-errors-spki-list.
	SPKI string
	// CertURL is where the PEM downloads, e.g. "/cert/remixproxy-ca.pem". The last path
	// element names the file in the commands shown; if it is empty or holds characters other
	// than letters, digits, '.', '-' and '_', "remixproxy-ca.pem" is shown instead.
	CertURL string
	// Listen is the proxy's listen address, e.g. "127.0.0.1:8080". If empty, "HOST:PORT" is
	// shown.
	Listen string
	// Trusted says whether this browser already trusts the CA (the page is reached over https
	// through the proxy only when it does).
	Trusted bool
}

// certView is what cert.html sees.
type certView struct {
	CertPage
	File  string // file name used in the commands
	Proxy string // Listen, or a placeholder
}

// defaultCertFile is the file name shown when CertURL does not provide a usable one.
const defaultCertFile = "remixproxy-ca.pem"

// RenderCert writes the certificate install page to w.
func RenderCert(w io.Writer, p CertPage) error {
	v := certView{CertPage: p, File: certFileName(p.CertURL), Proxy: p.Listen}
	if v.Proxy == "" {
		v.Proxy = "HOST:PORT"
	}
	return render(w, certTemplate, "certificate", v)
}

// certFileName returns the last path element of rawURL if it is a plain file name that can be
// pasted into a shell command as is, and defaultCertFile otherwise.
func certFileName(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return defaultCertFile
	}
	name := path.Base(u.Path)
	if name == "" || name == "." || name == "/" || name == ".." {
		return defaultCertFile
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '.' || r == '-' || r == '_'
		if !ok {
			return defaultCertFile
		}
	}
	return name
}

// StatusPage mirrors /status.json.
type StatusPage struct {
	Version, CAFingerprint, Listen       string
	StartedAt                            time.Time
	Requests, Injected, AgentConnections int64
	Sessions                             []SessionInfo
}

// SessionInfo is one page session: a page agent that connected with its token.
type SessionInfo struct {
	ID, URL, Title string
	Connected      bool
	Since          time.Time
}

// RenderStatus writes the status page to w. Times are shown in their own location.
func RenderStatus(w io.Writer, s StatusPage) error {
	return render(w, statusTemplate, "status", s)
}

// ErrorPage is what the browser sees when the upstream fails (DNS, refused, reset, timeout,
// bad certificate ...).
type ErrorPage struct {
	// Status is the HTTP status the proxy answers with: 502 or 504. Zero means 502. RenderError
	// only shows it; the caller sets it on the response.
	Status int
	// Title is the headline, e.g. "This site's certificate is not valid". If empty, one is
	// chosen from Status.
	Title string
	// Host is the upstream host, URL the address that was asked for.
	Host, URL string
	// Reason is the plain-language reason, e.g. "x509: certificate signed by unknown authority".
	Reason string
	// Lead replaces the first sentence ("remixproxy could not get this page from HOST") when
	// the page is not about a failed upstream request, e.g. a navigation the proxy stopped.
	Lead string
	// Hint is what the person can do, e.g. "If this is your own development server, start
	// remixproxy with --upstream-ca FILE."
	Hint string
}

// errorView is what error.html sees.
type errorView struct {
	ErrorPage
	StatusText string
}

// RenderError writes the upstream error page to w.
func RenderError(w io.Writer, e ErrorPage) error {
	if e.Status == 0 {
		e.Status = http.StatusBadGateway
	}
	if e.Title == "" {
		if e.Status == http.StatusGatewayTimeout {
			e.Title = "The site took too long to answer"
		} else {
			e.Title = "This site cannot be reached"
		}
	}
	return render(w, errorTemplate, "error", errorView{ErrorPage: e, StatusText: http.StatusText(e.Status)})
}
