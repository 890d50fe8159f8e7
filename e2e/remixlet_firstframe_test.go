package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Stylesheets in the first frame (issue 14): a CSS remixlet's sheet is in the page before the
// page's first script runs and before the first frame is painted, on a page without a policy
// (the external bootstrap), with a nonce, and with a hash-only 'strict-dynamic' policy (the
// inline bootstrap); a change to the remixlet is reflected on the next load.

// firstFrameProbe is the page's first script (right after the bootstrap tag): it records whether
// the remixlet's sheet is adopted, then samples the <h1> in every animation frame: 0 not parsed
// yet, 1 without the remixlet's outline, 2 with it.
const firstFrameProbe = `window.h1State = () => {
  const h = document.querySelector('h1');
  if (!h) return 0;
  return getComputedStyle(h).outlineColor === window.wantColor ? 2 : 1;
};
window.wantColor = 'rgb(255, 0, 0)';
window.earlySheets = document.adoptedStyleSheets.length;
window.frames = [];
requestAnimationFrame(function sample() {
  frames.push(h1State());
  if (frames.length < 400) requestAnimationFrame(sample);
});`

// firstFrameAtParse runs right after the <h1> is parsed.
const firstFrameAtParse = `document.documentElement.dataset.atParse = h1State();`

// firstFrameSite serves the page in two parts, 250 ms apart, so frames are painted with the
// <h1> before the document ends. policy is the page's CSP with %s for its scripts' sources.
func firstFrameSite(policy string) http.Handler {
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nonce := ""
		if policy != "" {
			nonce = ` nonce="n0nce123"`
			w.Header().Set("Content-Security-Policy", fmt.Sprintf(policy, hash(firstFrameProbe)+" "+hash(firstFrameAtParse)))
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `<!doctype html><html><head><meta charset="utf-8"><title>First frame</title>
<script%s>%s</script></head>
<body><h1>Heading</h1><script%s>%s</script><p>%s</p>`, nonce, firstFrameProbe, nonce, firstFrameAtParse, strings.Repeat("text ", 2000))
		w.(http.Flusher).Flush()
		time.Sleep(250 * time.Millisecond)
		fmt.Fprint(w, `<p>the rest</p></body></html>`)
	})
}

const firstFrameCSS = `h1 { outline: 3px solid rgb(255, 0, 0) }`

func TestRemixletStylesheetInTheFirstFrame(t *testing.T) {
	sites := e2etest.StartSites(t)
	variants := []struct {
		name, host, policy string
	}{
		{"no policy: external bootstrap", "ff-plain.test", ""},
		{"a nonce policy", "ff-nonce.test", "script-src 'nonce-n0nce123'; style-src 'self'"},
		{"a hash-only strict-dynamic policy: inline bootstrap", "ff-hash.test", "script-src %s 'strict-dynamic'; style-src 'self'"},
	}
	matches := make([]string, len(variants))
	for i, v := range variants {
		sites.Handle(v.host, firstFrameSite(v.policy))
		matches[i] = `"https://` + v.host + `/*"`
	}
	p := e2etest.StartProxy(t, sites, e2etest.WithStore())
	st := p.Store
	manifest := []byte(`{"name": "outline headings", "description": "Outlines headings.", "api": 1, "matches": [` + strings.Join(matches, ", ") + `], "permissions": []}`)
	rx := saveUnchecked(t, st, "outline headings", store.Files{sandbox.ManifestFile: manifest, sandbox.StyleFile: []byte(firstFrameCSS)})
	tab := e2etest.Browser(t, e2etest.ThroughProxy(p)).NewTab(t)
	diagnose := func() string {
		return fmt.Sprintf("remixlet log:\n%s\nproxy log tail:\n%s\n%s", remixletLog(t, st, rx.ID), tail(p.Logs(), 2000), tab.Diagnose())
	}

	const loads = 4
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			for i := 0; i < loads; i++ {
				tab.Navigate("https://" + v.host + "/")
				tab.WaitConnected()
				// Two: the remixlet's own copy and its sheet as written (rx_sheets.js).
				if n := e2etest.Eval[int](tab, `earlySheets`); n != 2 {
					t.Errorf("load %d: the page's first script saw %d adopted sheets, want 2\n%s", i, n, diagnose())
				}
				if s := e2etest.Eval[string](tab, `document.documentElement.dataset.atParse`); s != "2" {
					t.Errorf("load %d: the <h1> right after it was parsed had state %s, want 2 (outlined)", i, s)
				}
				if err := waitTrue(tab, 5*time.Second, `frames.length > 20`); err != nil {
					t.Fatalf("load %d: too few frames: %v", i, err)
				}
				if bad := e2etest.Eval[int](tab, `frames.filter((s) => s === 1).length`); bad != 0 {
					t.Errorf("load %d: %d frames with the <h1> and without the remixlet's stylesheet (frames %v)", i, bad,
						e2etest.Eval[[]int](tab, `frames.slice(0, 40)`))
				}
				// After the channel opened, the runner did not add a second copy.
				time.Sleep(200 * time.Millisecond)
				if n := e2etest.Eval[int](tab, `document.adoptedStyleSheets.length`); n != 2 {
					t.Errorf("load %d: %d adopted sheets once connected, want 2", i, n)
				}
				if s := e2etest.Eval[int](tab, `h1State()`); s != 2 {
					t.Errorf("load %d: once connected the <h1> has state %d, want 2", i, s)
				}
			}
		})
	}

	// A new version is in the first frame of the next load; a switched-off remixlet is not.
	ctx := context.Background()
	v, err := st.SaveVersion(ctx, rx.ID, store.Files{sandbox.ManifestFile: manifest,
		sandbox.StyleFile: []byte(`h1 { outline: 3px solid rgb(0, 0, 255) }`)}, store.AuthorPerson, "blue")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Activate(ctx, v.ID); err != nil {
		t.Fatal(err)
	}
	tab.Navigate("https://ff-nonce.test/")
	tab.WaitConnected()
	if c := e2etest.Eval[string](tab, `window.wantColor = 'rgb(0, 0, 255)'; document.documentElement.dataset.atParse + ' ' + earlySheets + ' ' + h1State()`); c != "1 2 2" {
		// atParse was measured against red: 1 means "outlined, but not red".
		t.Errorf("after a new version: atParse, early sheets, state now = %q, want %q", c, "1 2 2")
	}
	if c := e2etest.Eval[string](tab, `getComputedStyle(document.querySelector('h1')).outlineColor`); c != "rgb(0, 0, 255)" {
		t.Errorf("after a new version the outline is %s, want blue", c)
	}
	if err := st.SetEnabled(ctx, rx.ID, false); err != nil {
		t.Fatal(err)
	}
	tab.Navigate("https://ff-nonce.test/")
	tab.WaitConnected()
	time.Sleep(200 * time.Millisecond)
	if c := e2etest.Eval[string](tab, `earlySheets + ' ' + document.adoptedStyleSheets.length + ' ' + getComputedStyle(document.querySelector('h1')).outlineStyle`); c != "0 0 none" {
		t.Errorf("switched off: early sheets, sheets, outline = %q, want %q\n%s", c, "0 0 none", diagnose())
	}
}
