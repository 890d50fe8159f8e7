package remixlet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// The Host of one remixlet's sandbox on one page: every call it makes arrives here and is
// checked in Go before anything happens (DESIGN invariant 3). See the package doc for the flow.

// remixletHost answers one remixlet's calls on one page (sandbox.Host).
type remixletHost struct {
	p         *pageRun
	id        string
	versionID int64
	manifest  *sandbox.Manifest
	stopped   bool // stopped by a navigation out of its matches; guarded by pageRun.mu

	mu         sync.Mutex
	standing   error // cached result of checkStanding
	checked    time.Time
	lastLogged string // the last standing refusal logged
	waits      int    // dom.waitFor calls waiting in the page (waitfor.go)

	// menu is the remixlet's rmx.menu commands on this page (rmx_menu.go).
	menu menuState
}

func (p *pageRun) newHost(id string, versionID int64, m *sandbox.Manifest) *remixletHost {
	return &remixletHost{p: p, id: id, versionID: versionID, manifest: m}
}

// Call implements sandbox.Host. Every call but rmx.log is checked against the store first.
func (h *remixletHost) Call(ctx context.Context, ns, method string, args json.RawMessage) (json.RawMessage, error) {
	res, err := h.call(ctx, ns, method, args)
	var ref *httpx.Refusal
	if errors.As(err, &ref) && h.shouldLog(ref) {
		h.p.r.logf(h.id, "warn", "refused: %s.%s: %s", ns, method, ref.Why)
	}
	return res, err
}

// allowed reports whether the remixlet may act on the page now, logging a refusal for what
// (as a standing refusal, once per reason).
func (h *remixletHost) allowed(ctx context.Context, what string) bool {
	err := h.checkStanding(ctx)
	var ref *httpx.Refusal
	if errors.As(err, &ref) && h.shouldLog(ref) {
		h.p.r.logf(h.id, "warn", "refused: %s: %s", what, ref.Why)
	}
	return err == nil
}

// shouldLog reports whether a refusal goes to the log: every policy refusal does; a refusal for
// the remixlet's standing (paused, page not covered …) only when its reason changes, so a
// paused remixlet's timers do not flood its bounded log.
func (h *remixletHost) shouldLog(ref *httpx.Refusal) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !ref.Standing {
		return true
	}
	if ref.Why == h.lastLogged {
		return false
	}
	h.lastLogged = ref.Why
	return true
}

func (h *remixletHost) call(ctx context.Context, ns, method string, args json.RawMessage) (json.RawMessage, error) {
	if ns == "rmx" && method == "log" {
		var vals []any
		if err := json.Unmarshal(args, &vals); err != nil {
			// The sandbox always sends an array: say so rather than log nothing.
			return nil, &httpx.Refusal{Why: "the arguments are not a JSON array: " + err.Error()}
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(v)
		}
		h.p.r.logf(h.id, "info", "%s", httpx.Clip(strings.Join(parts, " "), 4096))
		return nil, nil
	}
	if err := h.checkStanding(ctx); err != nil {
		return nil, err
	}
	switch ns {
	case "dom":
		pageURL := h.p.pc.url()
		page, _ := url.Parse(pageURL)
		base, _ := weburl.Parse(pageURL)
		call, err := checkDOMCall(domPolicy{page: page, base: base, manifest: h.manifest}, method, args)
		if err != nil {
			return nil, &httpx.Refusal{Why: err.Error()}
		}
		// Every address is guarded before the page agent may write it (redirect.go).
		if err := h.p.r.guard.add(h.p.pc.id, pageURL, h.id, h.manifest, call.addresses); err != nil {
			return nil, &httpx.Refusal{Why: err.Error()}
		}
		// The sites it names, which the page's scripts may be made to reach (namedhosts.go).
		if err := h.p.r.guard.addNamed(h.p.pc.id, pageURL, h.id, h.manifest, namedSites(method, args)); err != nil {
			return nil, &httpx.Refusal{Why: err.Error()}
		}
		if method == "clone" { // the page's own addresses it copies are guarded too (cloneguard.go)
			if err := h.p.r.guard.addClone(h.p.pc.id, pageURL, h.id, h.manifest); err != nil {
				return nil, &httpx.Refusal{Why: err.Error()}
			}
		}
		if call.wait > 0 {
			release, err := h.waitSlot()
			if err != nil {
				return nil, &httpx.Refusal{Why: err.Error()}
			}
			defer release()
		}
		res, err := h.p.relay(ctx, h, method, call)
		if err == nil && method == "setHTML" {
			// The page agent answers with what it left out; each part is a refusal for the log.
			var left []string
			if json.Unmarshal(res, &left) == nil && len(left) > 0 {
				h.p.r.logf(h.id, "warn", "refused: dom.setHTML: left out %s", httpx.Clip(strings.Join(left, "; "), 4096))
			}
		}
		return res, err
	case "rmx":
		return h.rmx(ctx, method, args)
	}
	return nil, &httpx.Refusal{Why: "unknown namespace " + ns}
}

// checkStanding refuses every call of a remixlet that is gone, switched off, archived or
// replaced by another version, on a page its matches do not cover, or on a paused site. The
// store's answer is reused for standingTTL; the page check runs every time.
func (h *remixletHost) checkStanding(ctx context.Context) error {
	u, err := url.Parse(h.p.pc.url())
	if err != nil || !h.manifest.MatchesURL(u) {
		return &httpx.Refusal{Why: "this page is not covered by the remixlet's matches", Standing: true}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if ttl := h.p.r.standingTTL; ttl > 0 && !h.checked.IsZero() && time.Since(h.checked) < ttl {
		return h.standing
	}
	prev := h.standing
	h.standing = h.readStanding(ctx, u.Hostname())
	h.checked = time.Now()
	var ref *httpx.Refusal
	if errors.As(h.standing, &ref) && ref.Standing && (prev == nil || prev.Error() != ref.Why) {
		// The remixlet was paused, switched off, deleted or replaced: match the page again,
		// so it is released there (and a new version started).
		h.p.resync()
	}
	return h.standing
}

func (h *remixletHost) readStanding(ctx context.Context, host string) error {
	st := h.p.r.st
	rx, err := st.Remixlet(ctx, h.id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &httpx.Refusal{Why: "the remixlet was deleted", Standing: true}
	case err != nil:
		return fmt.Errorf("checking the remixlet: %w", err)
	case !rx.Enabled:
		return &httpx.Refusal{Why: "the remixlet is paused", Standing: true}
	case rx.Archived:
		return &httpx.Refusal{Why: "the remixlet is archived", Standing: true}
	case rx.ActiveVersionID != h.versionID:
		return &httpx.Refusal{Why: "another version of the remixlet is active now; reload the page to run it", Standing: true}
	}
	paused, err := st.IsSitePaused(ctx, host)
	if err != nil {
		return fmt.Errorf("checking the site: %w", err)
	}
	if paused {
		return &httpx.Refusal{Why: "remixlets are paused on " + host, Standing: true}
	}
	return nil
}

// rmx answers the rmx.* calls that reach the Host (rmx.log is handled before the checks).
func (h *remixletHost) rmx(ctx context.Context, method string, raw json.RawMessage) (json.RawMessage, error) {
	var args []json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, &httpx.Refusal{Why: "arguments are not a JSON array"}
	}
	switch method {
	case "keep":
		return nil, nil // keeps run in the sandbox; the page agent reports mutations once it has run an op
	case "page":
		return json.Marshal(sandbox.PageInfo{URL: h.p.pc.url(), Title: h.p.pc.title()})
	case "storage.get", "storage.set", "storage.remove", "storage.keys":
		if !h.manifest.HasPermission("storage") {
			return nil, &httpx.Refusal{Why: "rmx.storage needs the storage permission in manifest.json"}
		}
		return h.storage(ctx, method, args)
	}
	if svc, ok := rmxServices[method]; ok {
		return svc(ctx, h, args)
	}
	return nil, &httpx.Refusal{Why: "rmx." + method + " is not available"}
}

func (h *remixletHost) storage(ctx context.Context, method string, args []json.RawMessage) (json.RawMessage, error) {
	st := h.p.r.st
	if method == "storage.keys" {
		keys, err := st.StorageKeys(ctx, h.id)
		if err != nil {
			return nil, fmt.Errorf("reading storage keys: %w", err)
		}
		if keys == nil {
			keys = []string{}
		}
		return json.Marshal(keys)
	}
	if len(args) < 1 {
		return nil, &httpx.Refusal{Why: "the key is missing"}
	}
	var key string
	if err := json.Unmarshal(args[0], &key); err != nil {
		return nil, &httpx.Refusal{Why: "the key must be a string"}
	}
	switch method {
	case "storage.get":
		v, ok, err := st.StorageGet(ctx, h.id, key)
		if err != nil {
			return nil, fmt.Errorf("reading storage: %w", err)
		}
		if !ok {
			return json.RawMessage("null"), nil
		}
		return json.RawMessage(v), nil
	case "storage.set":
		v := json.RawMessage("null")
		if len(args) > 1 {
			v = args[1]
		}
		if err := st.StorageSet(ctx, h.id, key, string(v)); err != nil {
			if errors.Is(err, store.ErrQuotaExceeded) || errors.Is(err, store.ErrInvalid) {
				return nil, &httpx.Refusal{Why: err.Error()}
			}
			return nil, fmt.Errorf("writing storage: %w", err)
		}
		h.storageChanged(key, v) // rmx.storage.onChange of its other pages (rmx_storage_events.go)
		return nil, nil
	default: // storage.remove
		if err := st.StorageDelete(ctx, h.id, key); err != nil {
			return nil, fmt.Errorf("writing storage: %w", err)
		}
		h.storageChanged(key, nil)
		return nil, nil
	}
}

var _ sandbox.Host = (*remixletHost)(nil)
