package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// Cards that fit (the clickjacking gate of panel.js): a card taller than the panel's log used
// to stay off for good, since the gate wanted the whole card in view. Now its body scrolls
// within a bounded height and it arms when what is in view of it is visible and its buttons
// are wholly in view and uncovered; Allow still only opens the confirmation window.

// notesSite is a shop page and an API that records the POSTs it gets.
type notesSite struct {
	mu    sync.Mutex
	posts []int // body sizes
}

func (s *notesSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api/notes" {
		b, _ := io.ReadAll(r.Body)
		if r.Method == http.MethodPost {
			s.mu.Lock()
			s.posts = append(s.posts, len(b))
			s.mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"saved": %d}`, len(b))
		return
	}
	htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Notes</title></head><body>
<h1>Notes</h1><p>Write notes.</p>
<script>document.body.dataset.pageScript = 'ran';</script></body></html>`)
}

func (s *notesSite) got() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.posts...)
}

// TestTallCardArmsAndIsAllowed: an http_request POST card with a 4 KB body and several
// headers is taller than the panel's log. In a usual window its body is bounded so that the
// whole card fits, and it arms wholly in view; in a short window even the bounded card cannot
// fit, and it arms once its buttons are wholly in view. Each time a page layer over the panel
// keeps it off, Send is allowed in the confirmation window, and the site gets the request once.
func TestTallCardArmsAndIsAllowed(t *testing.T) {
	body := `{"note": "` + strings.Repeat("a long note ", 340) + `"}`
	args, _ := json.Marshal(map[string]any{"method": "POST", "url": "/api/notes", "body": body,
		"headers": map[string]string{"Content-Type": "application/json", "X-Client": "notes-app", "X-Request-Purpose": "save the person's note", "X-Trace": "e2e"}})
	script := `{"turns": [
		{"tool_calls": [{"name": "http_request", "arguments": ` + string(args) + `}]},
		{"text": "Sent once.", "tool_calls": [{"name": "http_request", "arguments": ` + string(args) + `}]},
		{"text": "Sent twice."}
	]}`
	site := &notesSite{}
	aw := newAgentWorld(t, script, map[string]http.Handler{"notes.test": site})
	tab := aw.tab
	pf, f := openActPanel(t, tab, "https://notes.test/")
	// API access on, as the person does it (it grants nothing by itself: each request has a card).
	x, y := pointAt(t, tab, pf, f, "#api-access")
	clickAt(t, tab, x, y)
	pf.waitFor(t, 5*time.Second, "API access on", `document.getElementById('api-access').getAttribute('aria-pressed') === 'true'`)
	chat(t, pf, "save my note, twice")
	card := `.card[data-card=request][data-state=pending]`

	// A usual window: the card would not fit the log as it is; its body is bounded so that it does.
	pf.waitFor(t, 20*time.Second, "the first request card", `!!document.querySelector('`+card+`')`)
	var cardH, logH, fullH float64
	fmt.Sscan(pf.eval(t, `(() => { const c = document.querySelector('`+card+`'); const b = c.querySelector('.card-body');
		return c.offsetHeight + ' ' + document.getElementById('log').clientHeight + ' ' + (c.offsetHeight - b.clientHeight + b.scrollHeight); })()`), &cardH, &logH, &fullH)
	t.Logf("usual window: card %.0f px (%.0f unbounded), log %.0f px", cardH, fullH, logH)
	if fullH <= logH {
		t.Fatalf("the card unbounded is %.0f px high and the log %.0f px: it fits, the test proves nothing", fullH, logH)
	}
	if cardH > logH {
		t.Errorf("the card is %.0f px high, more than the log's %.0f: its body was not bounded to fit", cardH, logH)
	}
	if got := pf.eval(t, `getComputedStyle(document.querySelector('`+card+` .card-body')).overflowY`); got != "auto" {
		t.Errorf("the card's body overflow-y = %q, want auto (it scrolls within a bounded height)", got)
	}
	coveredStaysOff(t, tab, pf, card)
	confirmAllow(t, tab, pf, f, card)
	pf.waitFor(t, 20*time.Second, "the first reply", `document.getElementById('log').innerText.includes('Sent once.')`)

	// A short window, as on a small laptop screen: even bounded, the card cannot fit the log.
	if err := e2etest.Within(cdpTimeout, func() error {
		_, err := chromedp.Call(tab.Context(), emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{Width: 1000, Height: 480, DeviceScaleFactor: 1})
		return err
	}); err != nil {
		t.Fatalf("setting the window size: %v", err)
	}
	pf.waitFor(t, 20*time.Second, "the second request card", `!!document.querySelector('`+card+`')`)
	fmt.Sscan(pf.eval(t, `(() => { const c = document.querySelector('`+card+`');
		return c.offsetHeight + ' ' + document.getElementById('log').clientHeight; })()`), &cardH, &logH)
	t.Logf("short window: card %.0f px, log %.0f px", cardH, logH)
	if cardH <= logH {
		t.Fatalf("the card is %.0f px high and the log %.0f px: it fits, the test proves nothing", cardH, logH)
	}
	coveredStaysOff(t, tab, pf, card)
	confirmAllow(t, tab, pf, f, card)
	pf.waitFor(t, 20*time.Second, "the second reply", `document.getElementById('log').innerText.includes('Sent twice.')`)

	if st := pf.eval(t, `Array.from(document.querySelectorAll('.card[data-card=request]')).map(c => c.getAttribute('data-state')).join(' ')`); st != "allowed allowed" {
		t.Errorf("card states = %q, want allowed allowed", st)
	}
	if got := site.got(); len(got) != 2 || got[0] != len(body) || got[1] != len(body) {
		t.Errorf("the site got POSTs of %v bytes, want two of %d\n%s", got, len(body), aw.diagnose())
	}
	if got := aw.witness.requests(); len(got) != 0 {
		t.Errorf("the witness got requests: %q", got)
	}
}

// coveredStaysOff scrolls the log to its end (where a new card is) while a page layer covers
// the panel, checks that the card stays off and says why, and takes the layer away. The layer
// is in the top layer (a popover), above the panel, and takes the pointer: IntersectionObserver
// v2 sees it. (One that lets clicks through is not seen; the confirmation window is the defence
// against it: TestAgentPermissionCardResistsCovering.)
func coveredStaysOff(t *testing.T, tab *e2etest.Tab, pf *frameEval, card string) {
	t.Helper()
	e2etest.Eval[any](tab, `(() => { const d = document.createElement('div'); d.id = 'cover'; d.popover = 'manual';
		d.style.cssText = 'position:fixed;inset:0;width:100vw;height:100vh;margin:0;border:0;background:rgba(255,255,255,0.5)';
		document.body.appendChild(d); d.showPopover(); return true; })()`)
	pf.eval(t, `(() => { const l = document.getElementById('log'); l.scrollTop = l.scrollHeight; return true; })()`)
	time.Sleep(1500 * time.Millisecond)
	if armed := pf.eval(t, `document.querySelector('`+card+`').getAttribute('data-armed')`); armed == "true" {
		t.Fatal("the card armed while the page covered the panel")
	}
	if note := pf.eval(t, `document.querySelector('`+card+` .card-note').textContent`); !strings.Contains(note, "covered") {
		t.Errorf("note while covered = %q, want the covered note", note)
	}
	e2etest.Eval[any](tab, `document.getElementById('cover').remove(), true`)
}
