package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/manager"
)

// newMagicHost is the handler of remix.proxy, over http and https: the panel and its files, the
// page-agent and panel WebSockets, the service-worker relay, and the certificate install page.
// Its redirects and errors are headed as the proxy's own pages are (ownanswers.go).
func (s *Server) newMagicHost() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.serveCertPage)
	mux.HandleFunc("GET /cert", s.serveCertPage)
	mux.HandleFunc("GET /cert/remixproxy-ca.pem", s.serveCACert)
	mux.Handle("GET /panel", panelHTML)
	mux.HandleFunc("GET /panel.js", s.servePanelFile)
	mux.HandleFunc("GET /panel.css", s.servePanelFile)
	mux.Handle("GET /panel/confirm", confirmHTML)
	mux.HandleFunc("GET /confirm.js", s.servePanelFile)
	mux.HandleFunc("GET /agent/ws", s.pages.ServeAgentWS)
	mux.HandleFunc("GET "+s.boot.path, s.serveAgentScript)
	mux.HandleFunc("GET /panel/ws", s.chats.ServePanelWS)
	mux.HandleFunc("/sw/inject", s.serveSWInject)
	mux.Handle("/manager", s.manager)
	mux.Handle("/manager/", s.manager)
	return ownAnswers(mux)
}

// serveAgentScript serves the page agent for pages that load it with <script src>. Its path
// names its content, so browsers may cache it for good; any site may load it (it is the same
// public code in every page).
func (s *Server) serveAgentScript(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	httpx.SetType(h, "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Cross-Origin-Resource-Policy", "cross-origin")
	h.Set("Content-Length", strconv.Itoa(len(s.boot.script)))
	w.Write(s.boot.script)
}

// servePanelFile serves one of the panel's own files under the panel's policy.
func (s *Server) servePanelFile(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	b, err := fs.ReadFile(panel.Files(), name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	httpx.SetType(h, mime.TypeByExtension(path.Ext(name)))
	h.Set("Content-Security-Policy", panelCSP)
	h.Set("Cache-Control", "no-cache")
	w.Write(b)
}

// panelSources lets the panel's pages run their own files and talk to remix.proxy only.
const panelSources = "default-src 'self'; connect-src 'self' wss://remix.proxy ws://remix.proxy; img-src 'self' data:; base-uri 'none'; form-action 'none'; "

// panelCSP is the policy of the panel's files. The panel page itself may be framed only by the
// origin its address names (panelFrameCSP, panelorigin.go).
const panelCSP = panelSources + "frame-ancestors 'none'"

// confirmCSP is the confirmation window's policy: no page may frame it (it exists so that a
// decision is taken where no page can cover it).
const confirmCSP = panelSources + "frame-ancestors 'none'"

// panelPage is one of the two HTML pages of the panel's own: the panel a page frames, and the
// confirmation window of a card's "Allow" (panel/static/confirm.js), which no page may frame.
type panelPage struct {
	file   string      // in panel.Files()
	what   string      // for the error when the build lacks it
	header http.Header // set on top of the shared ones
	// csp, if not nil, gives the page's Content-Security-Policy for its request.
	csp func(r *http.Request) string
}

var (
	panelHTML = panelPage{file: "panel.html", what: "panel", csp: panelFrameCSP, header: http.Header{
		// Pages with COEP require-corp may still embed the panel.
		"Cross-Origin-Embedder-Policy": {"require-corp"},
		"Cross-Origin-Resource-Policy": {"cross-origin"},
	}}
	confirmHTML = panelPage{file: "confirm.html", what: "confirmation page", header: http.Header{
		"Content-Security-Policy":    {confirmCSP},
		"X-Frame-Options":            {"DENY"},
		"Cross-Origin-Opener-Policy": {"same-origin"},
	}}
)

// ServeHTTP serves the page: HTML, never cached, sending no referrer, under its own policy.
func (p panelPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, err := fs.ReadFile(panel.Files(), p.file)
	if err != nil {
		http.Error(w, "remixproxy: "+p.what+" missing from this build", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	httpx.SetType(h, "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	for k, v := range p.header {
		h[k] = v
	}
	if p.csp != nil {
		h.Set("Content-Security-Policy", p.csp(r))
	}
	w.Write(b)
}

func (s *Server) serveCertPage(w http.ResponseWriter, r *http.Request) {
	var buf bytes.Buffer
	err := panel.RenderCert(&buf, panel.CertPage{
		Fingerprint: s.cfg.CA.Fingerprint(),
		SPKI:        s.cfg.CA.SPKIHash(),
		CertURL:     "/cert/remixproxy-ca.pem",
		Listen:      s.cfg.Listen,
		Trusted:     r.TLS != nil,
	})
	if err != nil {
		http.Error(w, "remixproxy: rendering the certificate page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	httpx.WriteOwnPage(w, http.StatusOK, buf.Bytes())
}

func (s *Server) serveCACert(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	httpx.SetType(h, "application/x-x509-ca-cert")
	h.Set("Content-Disposition", `attachment; filename="remixproxy-ca.pem"`)
	w.Write(s.cfg.CA.CertPEM)
}

// serveListenAddress answers requests sent to the proxy's own address rather than through it:
// the install page, the PAC file and the status page. The Host header must name the proxy, so a
// web page cannot reach these through DNS rebinding.
func (s *Server) serveListenAddress(w http.ResponseWriter, r *http.Request) {
	if !s.isOwnHost(r.Host) {
		http.Error(w, "remixproxy: this is a proxy; the Host header does not name it", http.StatusMisdirectedRequest)
		return
	}
	switch r.URL.Path {
	case "/", "/cert":
		s.serveCertPage(w, r)
	case "/cert/remixproxy-ca.pem":
		s.serveCACert(w, r)
	case "/proxy.pac":
		s.servePAC(w, r)
	case "/status":
		s.serveStatus(w, r)
	case "/status.json":
		s.serveStatusJSON(w, r)
	default:
		if manager.IsPath(r.URL.Path) {
			// The magic host's mux routes /manager paths to the manager whatever the host.
			s.magic.ServeHTTP(w, r)
			return
		}
		http.NotFound(w, r)
	}
}

// isOwnHost reports whether host (from a Host header) names the proxy's listen address.
func (s *Server) isOwnHost(host string) bool {
	_, lport, err := net.SplitHostPort(s.cfg.Listen)
	if err != nil {
		return false
	}
	h, port, err := net.SplitHostPort(host)
	if err != nil || port != lport {
		return false
	}
	lhost, _, _ := net.SplitHostPort(s.cfg.Listen)
	switch strings.ToLower(h) {
	case "localhost", "127.0.0.1", "::1", strings.ToLower(lhost):
		return true
	}
	return false
}

// servePAC serves the PAC file. It is JavaScript: nosniff and CORP keep a page that reaches
// the listen address from running it as a script of its own (to find the proxy's port).
func (s *Server) servePAC(w http.ResponseWriter, r *http.Request) {
	httpx.SetType(w.Header(), "application/x-ns-proxy-autoconfig")
	w.Header().Set("Cross-Origin-Resource-Policy", "same-origin")
	w.Header().Set("Cache-Control", "no-cache")
	fmt.Fprintf(w, "function FindProxyForURL(url, host) {\n  if (isPlainHostName(host) || host === \"localhost\" || shExpMatch(host, \"127.*\") || host === \"[::1]\") return \"DIRECT\";\n  return \"PROXY %s\";\n}\n", s.cfg.Listen)
}

// Status is what /status.json reports.
type Status struct {
	Version          string          `json:"version"`
	CAFingerprint    string          `json:"ca_fingerprint"`
	Listen           string          `json:"listen"`
	StartedAt        time.Time       `json:"started_at"`
	Requests         int64           `json:"requests"`
	Injected         int64           `json:"injected"`
	AgentConnections int64           `json:"agent_connections"`
	Sessions         []SessionStatus `json:"sessions"`
}

// SessionStatus is one connected page in Status.
type SessionStatus struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Title     string    `json:"title"`
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since"`
}

// Status reports the proxy's counters and connected page sessions.
func (s *Server) Status() Status {
	st := Status{
		Version:          s.cfg.Version,
		CAFingerprint:    s.cfg.CA.Fingerprint(),
		Listen:           s.cfg.Listen,
		StartedAt:        s.started,
		Requests:         s.counts.requests.Load(),
		Injected:         s.counts.injected.Load(),
		AgentConnections: s.pages.Connections(),
		Sessions:         []SessionStatus{},
	}
	for _, ss := range s.pages.List() {
		st.Sessions = append(st.Sessions, SessionStatus{ID: ss.ID, URL: ss.URL, Title: ss.Title, Connected: ss.Connected, Since: ss.Since})
	}
	return st
}

func (s *Server) serveStatusJSON(w http.ResponseWriter, r *http.Request) {
	httpx.SetType(w.Header(), "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(s.Status())
}

func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	st := s.Status()
	page := panel.StatusPage{
		Version: st.Version, CAFingerprint: st.CAFingerprint, Listen: st.Listen, StartedAt: st.StartedAt,
		Requests: st.Requests, Injected: st.Injected, AgentConnections: st.AgentConnections,
	}
	for _, ss := range st.Sessions {
		page.Sessions = append(page.Sessions, panel.SessionInfo{ID: ss.ID, URL: ss.URL, Title: ss.Title, Connected: ss.Connected, Since: ss.Since})
	}
	var buf bytes.Buffer
	if err := panel.RenderStatus(&buf, page); err != nil {
		http.Error(w, "remixproxy: rendering the status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	httpx.WriteOwnPage(w, http.StatusOK, buf.Bytes())
}
