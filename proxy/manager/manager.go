package manager

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/chat"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/remixlet"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// managerCSP lets a manager page use its inline <style>, its one script (the arming of its
// buttons, /manager/arm.js) and post forms to itself, and nothing else: no inline script, no
// frames, no other loads.
const managerCSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// managerReferrerPolicy keeps the manager's addresses from every other site. It is
// "same-origin", not "no-referrer": under "no-referrer" a browser sends "Origin: null" with the
// manager's own form posts (Fetch, "serializing a request origin"), which the Origin check must
// refuse.
const managerReferrerPolicy = "same-origin"

// maxManagerForm bounds a posted form: the largest remixlet files, URL-encoded.
const maxManagerForm = 2 << 20

// managerTokenLabel is what the per-install secret signs to make the form token.
const managerTokenLabel = "remixproxy manager form token v1"

// Config is what the manager needs.
type Config struct {
	// Store holds the remixlets, their versions, approvals, logs, chats and traces. If nil,
	// the manager shows that there is no store and changes nothing.
	Store *store.Store
	// DataDir holds providers.json (the agent's settings, edited on the Settings page) and
	// the site data of rmx.storage.
	DataDir string
	// ModelURL is proxy.Config's: Settings shows that it is offered ahead of its providers.
	ModelURL string
	// Secret is the per-install secret; the form token is an HMAC under it. Required.
	Secret []byte
	// Logger receives one line per refusal and store error. If nil, slog.Default().
	Logger *slog.Logger
	// Activator applies the person's changes to the open pages; nil without a Store.
	Activator *remixlet.Activator
	// Runs gives each remixlet's last run for its row; nil without a Store.
	Runs *remixlet.Runner
	// Chats are told of a change of the agent's settings, forget every chat on "delete all
	// chats", and hold the in-memory traces served as traces.json. Required.
	Chats *chat.Hub
	// IsOwnHost reports whether a Host header names the proxy's listen address, where the
	// manager is also served (as http://HOST:PORT). Required.
	IsOwnHost func(host string) bool
}

// Manager serves the manager web UI. Use New.
type Manager struct {
	cfg       Config
	log       *slog.Logger
	secret    []byte
	activator *remixlet.Activator
	remixlets *remixlet.Runner
	chats     *chat.Hub
	isOwnHost func(host string) bool
	handler   http.Handler
}

// New makes the manager.
func New(cfg Config) *Manager {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Manager{cfg: cfg, log: cfg.Logger, secret: cfg.Secret, activator: cfg.Activator, remixlets: cfg.Runs,
		chats: cfg.Chats, isOwnHost: cfg.IsOwnHost}
	s.handler = s.managerHandler()
	return s
}

// ServeHTTP serves the manager's paths (IsPath); the caller routes only those here.
func (s *Manager) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// IsPath reports whether path is served by the manager.
func IsPath(path string) bool {
	return path == "/manager" || strings.HasPrefix(path, "/manager/")
}

// Token is the per-install form token the manager's forms carry (managerToken).
func (s *Manager) Token() string { return s.managerToken() }

// managerHandler routes the manager's pages. Every response gets managerHeaders.
func (s *Manager) managerHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /manager", s.managerList)
	mux.HandleFunc("GET /manager/{$}", s.managerList)
	mux.HandleFunc("GET /manager/new", s.managerNew)
	mux.HandleFunc("GET /manager/data", s.managerData)
	mux.HandleFunc("GET /manager/r/{id}", s.managerRemixlet)
	mux.HandleFunc("GET /manager/r/{id}/edit", s.managerEdit)
	mux.HandleFunc("GET /manager/r/{id}/history", s.managerHistory)
	mux.HandleFunc("GET /manager/r/{id}/log", s.managerLog)
	mux.HandleFunc("GET /manager/r/{id}/delete", s.managerDeleteConfirm)
	mux.HandleFunc("GET /manager/r/{id}/restore/{vid}", s.managerRestoreConfirm)
	mux.HandleFunc("GET /manager/approval/{aid}", s.managerApproval)
	mux.HandleFunc("GET /manager/arm.js", managerArmScript)

	post := func(pattern string, h func(http.ResponseWriter, *http.Request, *store.Store)) {
		mux.HandleFunc("POST "+pattern, func(w http.ResponseWriter, r *http.Request) {
			if !s.checkManagerPost(w, r) {
				return
			}
			st := s.cfg.Store
			if st == nil {
				s.managerFail(w, http.StatusServiceUnavailable, "No store", "This proxy runs without a remixlet store.", "/manager")
				return
			}
			h(w, r, st)
			s.activator.StoreChanged() // a change may switch network rules on or off (remixlet/netrules.go)
		})
	}
	post("/manager/save", s.managerSave)
	post("/manager/approval/{aid}", s.managerDecide)
	post("/manager/r/{id}/switch", s.managerSwitch)
	post("/manager/r/{id}/archive", s.managerArchive)
	post("/manager/r/{id}/delete", s.managerDelete)
	post("/manager/r/{id}/restore/{vid}", s.managerRestore)
	post("/manager/r/{id}/data/delete", s.managerDeleteData)
	post("/manager/sites/pause", s.managerPauseSite)
	post("/manager/sites/resume", s.managerResumeSite)
	s.registerSettings(mux, post)
	post("/manager/r/{id}/schedule/cancel", s.managerCancelSchedule)
	s.registerTraces(mux, post) // the Traces pages and the recorder's setting (traces.go)

	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		managerHeaders(w.Header())
		mux.ServeHTTP(w, r)
	})
}

// managerHeaders are set on every manager response, refusals and redirects included.
func managerHeaders(h http.Header) {
	h.Set("Content-Security-Policy", managerCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", managerReferrerPolicy)
	h.Set("Cache-Control", "no-store")
	httpx.NoSniff(h) // each page sets its type with httpx.SetType (writeManager)
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// managerArmScript serves the script every manager page loads: its buttons take a click only
// once the window has had the focus for a moment and the pointer moved since (no page can make
// a click it started land on them: double-click-jacking; panel/static/manager_arm.js).
func managerArmScript(w http.ResponseWriter, r *http.Request) {
	b, err := fs.ReadFile(panel.Files(), "manager_arm.js")
	if err != nil {
		http.Error(w, "remixproxy: the manager's script is missing from this build", http.StatusInternalServerError)
		return
	}
	httpx.SetType(w.Header(), "text/javascript; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

// managerToken is the per-install form token: HMAC-SHA256(secret, managerTokenLabel). It is
// stable across restarts (the secret is in the data dir), so an open manager tab keeps working,
// and no web page can compute it.
func (s *Manager) managerToken() string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(managerTokenLabel))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// managerOrigin is the origin the manager is served from for r: https://remix.proxy or
// http://remix.proxy on the magic host, http://HOST:PORT on the listen address. ok is false for
// any other host.
func (s *Manager) managerOrigin(r *http.Request) (string, bool) {
	host := r.Host
	if host == "" && r.URL != nil {
		host = r.URL.Host
	}
	hostname := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		hostname = h
	}
	if httpx.IsMagicHost(hostname) {
		if r.TLS != nil {
			return "https://" + httpx.MagicHost, true
		}
		return "http://" + httpx.MagicHost, true
	}
	if s.isOwnHost(host) {
		return "http://" + strings.ToLower(host), true
	}
	return "", false
}

// checkManagerPost refuses a state-changing request that does not come from the manager's own
// pages: a missing or foreign Origin, or a missing or wrong form token. It writes the 403 itself.
func (s *Manager) checkManagerPost(w http.ResponseWriter, r *http.Request) bool {
	refuse := func(why string) bool {
		s.log.Warn("manager: refused a request", "path", r.URL.Path, "why", why)
		http.Error(w, "remixproxy: refused: "+why, http.StatusForbidden)
		return false
	}
	want, ok := s.managerOrigin(r)
	if !ok {
		return refuse("the Host does not name the manager")
	}
	origins := r.Header.Values("Origin")
	if len(origins) != 1 || !strings.EqualFold(origins[0], want) {
		return refuse("this request does not come from the manager's own page (Origin)")
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxManagerForm)
	if err := r.ParseForm(); err != nil {
		return refuse("unreadable form")
	}
	got := r.PostForm.Get("csrf")
	if !hmac.Equal([]byte(got), []byte(s.managerToken())) {
		return refuse("the form token is missing or wrong; reload the manager and try again")
	}
	return true
}

// managerFlashes are the fixed messages a redirect may ask the next page to show (?m=KEY).
var managerFlashes = map[string]string{
	"saved":        "Saved and applied.",
	"declined":     "Not allowed. The version is saved but not active; the previous version, if any, keeps running.",
	"allowed":      "Allowed and applied.",
	"on":           "Switched on.",
	"off":          "Switched off. Open tabs on its sites reload.",
	"archived":     "Archived. It no longer runs.",
	"unarchived":   "Unarchived.",
	"deleted":      "Deleted, with its versions, permissions, log and data.",
	"restored":     "Restored and applied.",
	"paused":       "Site paused. Its open tabs reload.",
	"resumed":      "Site resumed.",
	"datagone":     "Its stored data was deleted.",
	"settings":     "Settings saved.",
	"schedulegone": "Schedule cancelled.",
	"chatsgone":    "Every chat was deleted.",
	"tracesgone":   "Every trace was deleted.",
}

func (s *Manager) base(r *http.Request) panel.ManagerBase {
	return panel.ManagerBase{Token: s.managerToken(), Flash: managerFlashes[r.URL.Query().Get("m")], NoStore: s.cfg.Store == nil}
}

// writeManager renders a page into a buffer and writes it with status.
func writeManager(w http.ResponseWriter, status int, render func(*bytes.Buffer) error) {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		http.Error(w, "remixproxy: rendering the manager: "+err.Error(), http.StatusInternalServerError)
		return
	}
	httpx.SetType(w.Header(), "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func (s *Manager) managerFail(w http.ResponseWriter, status int, title, msg, back string) {
	writeManager(w, status, func(b *bytes.Buffer) error {
		return panel.RenderManagerMessage(b, panel.ManagerMessage{ManagerBase: panel.ManagerBase{Token: s.managerToken()},
			Title: title, Message: msg, Back: back})
	})
}

// managerError answers a store error: 404 for what does not exist, 500 otherwise.
func (s *Manager) managerError(w http.ResponseWriter, err error) {
	if errors.Is(err, store.ErrNotFound) {
		s.managerFail(w, http.StatusNotFound, "Not found", "There is no such remixlet, version or request.", "/manager")
		return
	}
	s.log.Error("manager", "err", err)
	s.managerFail(w, http.StatusInternalServerError, "Something went wrong", err.Error(), "/manager")
}

func seeOther(w http.ResponseWriter, path, flash string) {
	if flash != "" {
		path += "?m=" + flash
	}
	w.Header().Set("Location", path)
	w.WriteHeader(http.StatusSeeOther)
}

// remixletFromPath reads the {id} path value, which must be a remixlet ID (never a name).
func (s *Manager) remixletFromPath(ctx context.Context, st *store.Store, r *http.Request) (store.Remixlet, error) {
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "rx_") {
		return store.Remixlet{}, store.ErrNotFound
	}
	return st.Remixlet(ctx, id)
}

func sitesText(m *sandbox.Manifest) string {
	if m == nil {
		return ""
	}
	sites := m.Sites()
	if sites.Every {
		return "every site you visit"
	}
	hosts := make([]string, len(sites.Hosts))
	for i, h := range sites.Hosts {
		hosts[i] = sandbox.SiteText(h) // "*.com" covers every .com site (red-team pass 5b)
	}
	return strings.Join(hosts, ", ")
}

func permissionViews(m *sandbox.Manifest) []panel.PermissionView {
	if m == nil {
		return nil
	}
	var out []panel.PermissionView
	for _, p := range m.Permissions {
		out = append(out, panel.PermissionView{Name: p.Name, Text: sandbox.PermissionText(p.Name)})
	}
	return out
}

func stateOf(r store.Remixlet) string {
	switch {
	case r.Archived:
		return "archived"
	case !r.Enabled:
		return "off"
	}
	return "on"
}

func logLines(es []store.LogEntry) []panel.LogLine {
	out := make([]panel.LogLine, 0, len(es))
	for _, e := range es {
		out = append(out, panel.LogLine{Time: e.Time, Level: e.Level, Message: e.Message})
	}
	return out
}

// fileOrder is the order files are shown in.
var fileOrder = []string{sandbox.ManifestFile, sandbox.ScriptFile, sandbox.StyleFile, sandbox.RulesFile}

func fileViews(f store.Files) []panel.FileView {
	var out []panel.FileView
	for _, name := range fileOrder {
		if c, ok := f[name]; ok {
			out = append(out, panel.FileView{Name: name, Content: string(c)})
		}
	}
	return out
}

func (s *Manager) row(ctx context.Context, st *store.Store, r store.Remixlet) (panel.ManagerRow, error) {
	v, m, err := remixlet.ActiveManifest(ctx, st, r.ID)
	if err != nil {
		return panel.ManagerRow{}, err
	}
	row := panel.ManagerRow{ID: r.ID, Name: r.Name, State: stateOf(r), Sites: sitesText(m),
		Permissions: permissionViews(m), ActiveVersion: v.Number}
	if m != nil {
		row.RunAt = m.RunAt.Describe()
	}
	es, err := st.Log(ctx, r.ID, 50)
	if err != nil {
		return panel.ManagerRow{}, err
	}
	for _, e := range es {
		if e.Level != "error" {
			continue
		}
		row.ErrorCount++
		if len(row.Errors) < 3 {
			row.Errors = append(row.Errors, panel.LogLine{Time: e.Time, Level: e.Level, Message: e.Message})
		}
	}
	// The last run: the store's record, or the runner's newer one not yet written (runs are
	// written in batches, remixlet/logs.go).
	run, ok, err := st.LastRun(ctx, r.ID)
	if err != nil {
		return panel.ManagerRow{}, err
	}
	if s.remixlets != nil {
		if mem, ok2 := s.remixlets.LastRun(r.ID); ok2 && (!ok || mem.At.After(run.At)) {
			run, ok = mem, true
		}
	}
	if ok {
		row.LastRun, row.LastRunSite = run.At.UTC(), run.Site
	}
	return row, nil
}

// --- GET pages ---

func (s *Manager) managerList(w http.ResponseWriter, r *http.Request) {
	p := panel.ManagerList{ManagerBase: s.base(r)}
	if st := s.cfg.Store; st != nil {
		ctx := r.Context()
		rs, err := st.ListRemixlets(ctx)
		if err != nil {
			s.managerError(w, err)
			return
		}
		for _, rx := range rs {
			row, err := s.row(ctx, st, rx)
			if err != nil {
				s.managerError(w, err)
				return
			}
			p.Remixlets = append(p.Remixlets, row)
		}
		if p.Paused, err = st.PausedSites(ctx); err != nil {
			s.managerError(w, err)
			return
		}
	}
	writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerList(b, p) })
}

// withRemixlet runs a GET page that needs the store and the {id} remixlet.
func (s *Manager) withRemixlet(w http.ResponseWriter, r *http.Request, f func(st *store.Store, rx store.Remixlet)) {
	st := s.cfg.Store
	if st == nil {
		s.managerFail(w, http.StatusNotFound, "No store", "This proxy runs without a remixlet store.", "/manager")
		return
	}
	rx, err := s.remixletFromPath(r.Context(), st, r)
	if err != nil {
		s.managerError(w, err)
		return
	}
	f(st, rx)
}

func (s *Manager) managerRemixlet(w http.ResponseWriter, r *http.Request) {
	s.withRemixlet(w, r, func(st *store.Store, rx store.Remixlet) {
		ctx := r.Context()
		row, err := s.row(ctx, st, rx)
		if err != nil {
			s.managerError(w, err)
			return
		}
		v, _, err := remixlet.ActiveManifest(ctx, st, rx.ID)
		if err != nil {
			s.managerError(w, err)
			return
		}
		es, err := st.Log(ctx, rx.ID, 20)
		if err != nil {
			s.managerError(w, err)
			return
		}
		p := panel.ManagerRemixlet{ManagerBase: s.base(r), ManagerRow: row, Enabled: rx.Enabled, Archived: rx.Archived,
			Files: fileViews(v.Files), Log: logLines(es)}
		p.Rules, p.RulesNote = ruleViews(v.Files) // the network rules as a table (netrules/)
		if p.Schedules, p.QueuedMessages, err = scheduleViews(ctx, st, rx.ID); err != nil {
			s.managerError(w, err)
			return
		}
		writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerRemixlet(b, p) })
	})
}

func (s *Manager) managerHistory(w http.ResponseWriter, r *http.Request) {
	s.withRemixlet(w, r, func(st *store.Store, rx store.Remixlet) {
		vs, err := st.Versions(r.Context(), rx.ID)
		if err != nil {
			s.managerError(w, err)
			return
		}
		p := panel.ManagerHistory{ManagerBase: s.base(r), ID: rx.ID, Name: rx.Name}
		var prev store.Files
		for _, v := range vs {
			vv := panel.VersionView{ID: v.ID, Number: v.Number, Author: string(v.Author), Note: v.Note,
				CreatedAt: v.CreatedAt, Active: v.ID == rx.ActiveVersionID, Files: fileViews(v.Files)}
			vv.Diffs = fileDiffs(prev, v.Files) // restore.go
			prev = v.Files
			p.Versions = append(p.Versions, vv)
		}
		slices.Reverse(p.Versions)
		writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerHistory(b, p) })
	})
}

// versionFromPath reads {vid}, which must be a version of rx.
func versionFromPath(ctx context.Context, st *store.Store, r *http.Request, rx store.Remixlet) (store.Version, error) {
	vid, err := strconv.ParseInt(r.PathValue("vid"), 10, 64)
	if err != nil {
		return store.Version{}, store.ErrNotFound
	}
	v, err := st.Version(ctx, vid)
	if err != nil {
		return store.Version{}, err
	}
	if v.RemixletID != rx.ID {
		return store.Version{}, store.ErrNotFound
	}
	return v, nil
}

func (s *Manager) managerLog(w http.ResponseWriter, r *http.Request) {
	s.withRemixlet(w, r, func(st *store.Store, rx store.Remixlet) {
		es, err := st.Log(r.Context(), rx.ID, 0)
		if err != nil {
			s.managerError(w, err)
			return
		}
		p := panel.ManagerLog{ManagerBase: s.base(r), ID: rx.ID, Name: rx.Name, Entries: logLines(es)}
		writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerLog(b, p) })
	})
}

func (s *Manager) managerDeleteConfirm(w http.ResponseWriter, r *http.Request) {
	s.withRemixlet(w, r, func(st *store.Store, rx store.Remixlet) {
		p := panel.ManagerDelete{ManagerBase: s.base(r), ID: rx.ID, Name: rx.Name}
		writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerDelete(b, p) })
	})
}

// newManifest is the starting manifest of the New remixlet form.
const newManifest = `{
  "name": "My remixlet",
  "description": "",
  "api": 1,
  "matches": ["https://example.com/*"],
  "permissions": []
}
`

func (s *Manager) managerNew(w http.ResponseWriter, r *http.Request) {
	p := panel.ManagerEdit{ManagerBase: s.base(r), Manifest: newManifest}
	writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerEdit(b, p) })
}

func (s *Manager) managerEdit(w http.ResponseWriter, r *http.Request) {
	s.withRemixlet(w, r, func(st *store.Store, rx store.Remixlet) {
		ctx := r.Context()
		// Start from the active version, or the newest saved one when none is active.
		v, ok, err := st.Active(ctx, rx.ID)
		if err == nil && !ok {
			var vs []store.Version
			if vs, err = st.Versions(ctx, rx.ID); err == nil && len(vs) > 0 {
				v = vs[len(vs)-1]
			}
		}
		if err != nil {
			s.managerError(w, err)
			return
		}
		p := panel.ManagerEdit{ManagerBase: s.base(r), ID: rx.ID, Name: rx.Name,
			Manifest: string(v.Files[sandbox.ManifestFile]), Script: string(v.Files[sandbox.ScriptFile]),
			Style: string(v.Files[sandbox.StyleFile]), Rules: string(v.Files[sandbox.RulesFile])}
		writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerEdit(b, p) })
	})
}

func (s *Manager) managerApproval(w http.ResponseWriter, r *http.Request) {
	st := s.cfg.Store
	if st == nil {
		s.managerFail(w, http.StatusNotFound, "No store", "This proxy runs without a remixlet store.", "/manager")
		return
	}
	ctx := r.Context()
	a, err := st.Approval(ctx, r.PathValue("aid"))
	if err != nil {
		s.managerError(w, err)
		return
	}
	if s.leftToChat(w, a) { // chatapproval.go
		return
	}
	rx, err := st.Remixlet(ctx, a.RemixletID)
	if err != nil {
		s.managerError(w, err)
		return
	}
	v, err := st.Version(ctx, a.VersionID)
	if err != nil {
		s.managerError(w, err)
		return
	}
	p := panel.ManagerApproval{ManagerBase: s.base(r), ApprovalID: a.ID, RemixletID: rx.ID, Name: rx.Name,
		Number: v.Number, ExpiresAt: a.ExpiresAt, State: string(a.State)}
	if a.State == store.ApprovalPending && a.Expired(time.Now()) {
		p.State = "expired"
	}
	m, probs := sandbox.ParseManifest(v.Files[sandbox.ManifestFile])
	if len(probs) > 0 {
		p.State = "not possible: its manifest does not pass the checks"
	} else {
		p.Sites = sitesText(m)
		p.Permissions = permissionViews(m)
		// The store's reason is made by sandbox.NeedsApproval in fixed words (hosts and
		// PermissionText), never from the manifest's reasons.
		for c := range strings.SplitSeq(a.Reason, "; ") {
			if c != "" {
				p.Changes = append(p.Changes, c)
			}
		}
	}
	writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerApproval(b, p) })
}

func (s *Manager) managerData(w http.ResponseWriter, r *http.Request) {
	p := panel.ManagerData{ManagerBase: s.base(r), DataDir: s.cfg.DataDir, DBSize: -1}
	if s.cfg.DataDir != "" {
		var total int64
		found := false
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if fi, err := os.Stat(filepath.Join(s.cfg.DataDir, "remixproxy.db"+suffix)); err == nil {
				total += fi.Size()
				found = true
			}
		}
		if found {
			p.DBSize = total
		}
	}
	if st := s.cfg.Store; st != nil {
		ctx := r.Context()
		rs, err := st.ListRemixlets(ctx)
		if err != nil {
			s.managerError(w, err)
			return
		}
		p.Count = len(rs)
		for _, rx := range rs {
			row := panel.DataRow{ID: rx.ID, Name: rx.Name}
			vs, err := st.Versions(ctx, rx.ID)
			if err != nil {
				s.managerError(w, err)
				return
			}
			row.Versions = len(vs)
			keys, err := st.StorageKeys(ctx, rx.ID)
			if err != nil {
				s.managerError(w, err)
				return
			}
			row.StorageKeys = len(keys)
			if row.StorageUsed, row.StorageLimit, err = st.StorageUsage(ctx, rx.ID); err != nil {
				s.managerError(w, err)
				return
			}
			es, err := st.Log(ctx, rx.ID, 0)
			if err != nil {
				s.managerError(w, err)
				return
			}
			row.LogLines = len(es)
			p.Remixlets = append(p.Remixlets, row)
		}
		paused, err := st.PausedSites(ctx)
		if err != nil {
			s.managerError(w, err)
			return
		}
		p.Paused = len(paused)
	}
	writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerData(b, p) })
}

// --- POST actions (each behind checkManagerPost) ---

// managerSave creates a remixlet (form field id empty) or saves a new version of one, with the
// same checks and activation as the CLI: CheckFiles, SaveVersion, Activate, and on
// ErrApprovalRequired a pending approval and the approval page.
func (s *Manager) managerSave(w http.ResponseWriter, r *http.Request, st *store.Store) {
	ctx := r.Context()
	form := panel.ManagerEdit{ManagerBase: panel.ManagerBase{Token: s.managerToken()},
		ID:       r.PostForm.Get("id"),
		Manifest: r.PostForm.Get("manifest"), Script: r.PostForm.Get("script"), Style: r.PostForm.Get("style"),
		Rules: r.PostForm.Get("rules"), Note: r.PostForm.Get("note")}
	var rx store.Remixlet
	if form.ID != "" {
		var err error
		if !strings.HasPrefix(form.ID, "rx_") {
			err = store.ErrNotFound
		} else {
			rx, err = st.Remixlet(ctx, form.ID)
		}
		if err != nil {
			s.managerError(w, err)
			return
		}
		form.Name = rx.Name
	}
	refuse := func(probs ...panel.ProblemView) {
		form.Problems = probs
		writeManager(w, http.StatusUnprocessableEntity, func(b *bytes.Buffer) error { return panel.RenderManagerEdit(b, form) })
	}

	files := store.Files{sandbox.ManifestFile: []byte(form.Manifest)}
	if strings.TrimSpace(form.Script) != "" {
		files[sandbox.ScriptFile] = []byte(form.Script)
	}
	if strings.TrimSpace(form.Style) != "" {
		files[sandbox.StyleFile] = []byte(form.Style)
	}
	if strings.TrimSpace(form.Rules) != "" {
		files[sandbox.RulesFile] = []byte(form.Rules)
	}
	m, probs := sandbox.CheckFiles(files)
	if len(probs) > 0 {
		var views []panel.ProblemView
		for _, p := range probs {
			views = append(views, problemView(p))
		}
		refuse(views...)
		return
	}
	if form.ID == "" {
		var err error
		rx, err = st.CreateRemixlet(ctx, m.Name)
		switch {
		case errors.Is(err, store.ErrDuplicateName):
			refuse(panel.ProblemView{Where: "manifest.json: name", Message: fmt.Sprintf("a remixlet named %q already exists", m.Name),
				Fix: "choose another name, or open that remixlet and choose Edit"})
			return
		case errors.Is(err, store.ErrInvalid):
			refuse(panel.ProblemView{Where: "manifest.json: name", Message: err.Error(), Fix: "choose another name"})
			return
		case err != nil:
			s.managerError(w, err)
			return
		}
	}
	v, err := st.SaveVersion(ctx, rx.ID, files, store.AuthorPerson, form.Note)
	if err != nil {
		s.managerError(w, err)
		return
	}
	s.activate(w, r, st, rx, v, m, "saved")
}

// activate activates v, or asks for the person's approval when it needs one.
func (s *Manager) activate(w http.ResponseWriter, r *http.Request, st *store.Store, rx store.Remixlet, v store.Version, m *sandbox.Manifest, flash string) {
	ctx := r.Context()
	_, old, _ := remixlet.ActiveManifest(ctx, st, rx.ID)
	err := st.Activate(ctx, v.ID)
	if errors.Is(err, store.ErrApprovalRequired) {
		a, err := st.RequestApproval(ctx, v.ID, "")
		if err != nil {
			s.managerError(w, err)
			return
		}
		seeOther(w, "/manager/approval/"+a.ID, "")
		return
	}
	if err != nil {
		s.managerError(w, err)
		return
	}
	s.activator.Applied(ctx, "", old, m)
	seeOther(w, "/manager/r/"+rx.ID, flash)
}

func problemView(p sandbox.Problem) panel.ProblemView {
	where := p.File
	if p.Line > 0 {
		where += ":" + strconv.Itoa(p.Line)
		if p.Column > 0 {
			where += ":" + strconv.Itoa(p.Column)
		}
	}
	if p.Field != "" {
		where += ": " + p.Field
	}
	return panel.ProblemView{Where: where, Message: p.Message, Fix: p.Fix}
}

// managerDecide is the person's click on "Allow and apply" (decision=allow) or "Don't allow".
func (s *Manager) managerDecide(w http.ResponseWriter, r *http.Request, st *store.Store) {
	ctx := r.Context()
	a, err := st.Approval(ctx, r.PathValue("aid"))
	if err != nil {
		s.managerError(w, err)
		return
	}
	if s.leftToChat(w, a) { // chatapproval.go
		return
	}
	switch r.PostForm.Get("decision") {
	case "allow":
		_, old, _ := remixlet.ActiveManifest(ctx, st, a.RemixletID)
		if err := st.Approve(ctx, a.ID); err != nil {
			s.approvalFailed(w, a, err)
			return
		}
		if err := st.ActivateApproved(ctx, a.ID); err != nil {
			s.approvalFailed(w, a, err)
			return
		}
		_, m, _ := remixlet.ActiveManifest(ctx, st, a.RemixletID)
		s.activator.Applied(ctx, "", old, m)
		seeOther(w, "/manager/r/"+a.RemixletID, "allowed")
	case "deny":
		if err := st.Decline(ctx, a.ID); err != nil {
			s.approvalFailed(w, a, err)
			return
		}
		seeOther(w, "/manager/r/"+a.RemixletID, "declined")
	default:
		s.managerFail(w, http.StatusBadRequest, "No decision", "Choose Allow and apply or Don't allow.", "/manager/approval/"+a.ID)
	}
}

func (s *Manager) approvalFailed(w http.ResponseWriter, a store.Approval, err error) {
	msg := "This request can no longer be used."
	switch {
	case errors.Is(err, store.ErrApprovalExpired):
		msg = "This request expired. Save the remixlet again to be asked again."
	case errors.Is(err, store.ErrApprovalUsed):
		msg = "This request was already used."
	case errors.Is(err, store.ErrApprovalDeclined):
		msg = "This request was declined."
	case errors.Is(err, store.ErrDigestMismatch):
		msg = "The version changed after you were asked."
	case errors.Is(err, store.ErrBaseChanged):
		msg = "Another version became active after you were asked, so this is no longer the change you were shown. Save the remixlet again to be asked again."
	default:
		s.managerError(w, err)
		return
	}
	s.managerFail(w, http.StatusConflict, "Not applied", msg, "/manager/r/"+a.RemixletID)
}

// withPostRemixlet reads the {id} remixlet of a POST and its active manifest.
func (s *Manager) withPostRemixlet(w http.ResponseWriter, r *http.Request, st *store.Store, f func(rx store.Remixlet, m *sandbox.Manifest)) {
	rx, err := s.remixletFromPath(r.Context(), st, r)
	if err != nil {
		s.managerError(w, err)
		return
	}
	_, m, err := remixlet.ActiveManifest(r.Context(), st, rx.ID)
	if err != nil {
		s.managerError(w, err)
		return
	}
	f(rx, m)
}

func (s *Manager) managerSwitch(w http.ResponseWriter, r *http.Request, st *store.Store) {
	s.withPostRemixlet(w, r, st, func(rx store.Remixlet, m *sandbox.Manifest) {
		on := r.PostForm.Get("on") == "1"
		s.standingChanged(w, r, m, st.SetEnabled(r.Context(), rx.ID, on), "/manager/r/"+rx.ID, map[bool]string{true: "on", false: "off"}[on])
	})
}

func (s *Manager) managerArchive(w http.ResponseWriter, r *http.Request, st *store.Store) {
	s.withPostRemixlet(w, r, st, func(rx store.Remixlet, m *sandbox.Manifest) {
		archived := r.PostForm.Get("archived") == "1"
		s.standingChanged(w, r, m, st.SetArchived(r.Context(), rx.ID, archived), "/manager/r/"+rx.ID, map[bool]string{true: "archived", false: "unarchived"}[archived])
	})
}

func (s *Manager) managerDelete(w http.ResponseWriter, r *http.Request, st *store.Store) {
	s.withPostRemixlet(w, r, st, func(rx store.Remixlet, m *sandbox.Manifest) {
		s.standingChanged(w, r, m, st.DeleteRemixlet(r.Context(), rx.ID), "/manager", "deleted")
	})
}

// standingChanged ends a change of a remixlet's standing (switched, archived, deleted) whose
// store write returned err: on an error, the error page; else the activator hears of it (so
// pages running the remixlet match again) and the person is sent to where with notice.
func (s *Manager) standingChanged(w http.ResponseWriter, r *http.Request, m *sandbox.Manifest, err error, where, notice string) {
	if err != nil {
		s.managerError(w, err)
		return
	}
	s.activator.Applied(r.Context(), "", m, nil)
	seeOther(w, where, notice)
}

func (s *Manager) managerDeleteData(w http.ResponseWriter, r *http.Request, st *store.Store) {
	s.withPostRemixlet(w, r, st, func(rx store.Remixlet, _ *sandbox.Manifest) {
		ctx := r.Context()
		keys, err := st.StorageKeys(ctx, rx.ID)
		if err != nil {
			s.managerError(w, err)
			return
		}
		for _, k := range keys {
			if err := st.StorageDelete(ctx, rx.ID, k); err != nil {
				s.managerError(w, err)
				return
			}
		}
		seeOther(w, "/manager/data", "datagone")
	})
}

func (s *Manager) managerPauseSite(w http.ResponseWriter, r *http.Request, st *store.Store) {
	host, err := store.NormalizeHost(r.PostForm.Get("host"))
	if err == nil {
		err = st.PauseSite(r.Context(), host)
	}
	if errors.Is(err, store.ErrInvalid) {
		s.managerFail(w, http.StatusBadRequest, "Not a host name", "Write a bare host name such as news.example.com.", "/manager")
		return
	}
	if err != nil {
		s.managerError(w, err)
		return
	}
	s.activator.SitePaused(r.Context(), host)
	seeOther(w, "/manager", "paused")
}

func (s *Manager) managerResumeSite(w http.ResponseWriter, r *http.Request, st *store.Store) {
	if err := st.ResumeSite(r.Context(), r.PostForm.Get("host")); err != nil {
		if errors.Is(err, store.ErrInvalid) {
			s.managerFail(w, http.StatusBadRequest, "Not a host name", "Write a bare host name such as news.example.com.", "/manager")
			return
		}
		s.managerError(w, err)
		return
	}
	seeOther(w, "/manager", "resumed")
}
