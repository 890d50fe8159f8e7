package remixlet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// openRedirectSheet loads from the page's own site, whose /go redirects anywhere.
const openRedirectSheet = `.a { background: url(https://shop.test/go?to=https://witness.test/sheet#frag) }
.b { border-image: url("https://shop.test/go?to=https://witness.test/second") 1 }
`

// Every way a stylesheet reaches a page holds its url() addresses in the redirect guard: the
// page's open redirect to the witness is refused for a first-frame sheet before the page has a
// session, for one the runner sends on connect, and for a dom.addStyle piece; the page's own
// use of its redirect with another address is left alone. Before the fix every one of them was
// followed (the guard held only the addresses of attributes).
func TestStyleAddressesAreGuarded(t *testing.T) {
	ctx := context.Background()

	t.Run("first frame, before any session", func(t *testing.T) {
		st := openTestStore(t)
		addStyledRemixlet(t, st, "sheet", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte(openRedirectSheet)})
		g := &guardTest{r: newTestRunner(t, st)}
		if sheets := firstSheets(ctx, g.r, "https://shop.test/list"); len(sheets) != 1 {
			t.Fatalf("first-frame sheets: %+v, want the one", sheets)
		}
		if !g.redirect(t, "shop.test", "/go?to=https://witness.test/sheet", "https://witness.test/sheet") {
			t.Errorf("the first-frame sheet's open redirect to the witness was followed")
		}
		if !g.redirect(t, "shop.test", "/go?to=https://witness.test/second", "https://witness.test/second") {
			t.Errorf("the first-frame sheet's second address was not guarded")
		}
		if g.redirect(t, "shop.test", "/go?to=https://witness.test/other", "https://witness.test/other") {
			t.Errorf("an address the sheet does not name was refused")
		}
		// The page's session adopts them, and keeps them after the sheet is accepted.
		connectHolding(g.r, "sess-ff", "https://shop.test/list", map[string]int64{})
		if !g.redirect(t, "shop.test", "/go?to=https://witness.test/sheet", "https://witness.test/sheet") {
			t.Errorf("after the page connected, the sheet's open redirect was followed")
		}
	})

	t.Run("sent on connect", func(t *testing.T) {
		st := openTestStore(t)
		// A refused part keeps the sheet out of the first frame: the runner sends it.
		addStyledRemixlet(t, st, "sheet", `"https://shop.test/*"`, store.Files{sandbox.StyleFile: []byte(openRedirectSheet + styleWithEvil)})
		g := &guardTest{r: newTestRunner(t, st)}
		if sheets := firstSheets(ctx, g.r, "https://shop.test/other"); len(sheets) != 0 {
			t.Fatalf("first-frame sheets: %+v, want none", sheets)
		}
		if g.redirect(t, "shop.test", "/go?to=https://witness.test/sheet", "https://witness.test/sheet") {
			t.Fatalf("refused before any sheet was sent")
		}
		f := connectFakePage(g.r, "sess-1", "https://shop.test/list")
		if len(f.sentStyles()) == 0 {
			t.Fatalf("no stylesheet sent")
		}
		if !g.redirect(t, "shop.test", "/go?to=https://witness.test/sheet", "https://witness.test/sheet") {
			t.Errorf("the sent sheet's open redirect to the witness was followed")
		}
	})

	t.Run("dom.addStyle", func(t *testing.T) {
		m, _ := sandbox.ParseManifest([]byte(`{"name": "g", "description": "test", "api": 1, "matches": ["https://shop.test/*"], "permissions": []}`))
		args, _ := json.Marshal([]string{openRedirectSheet})
		page, _ := url.Parse("https://shop.test/list")
		call, err := checkDOMCall(domPolicy{page: page, manifest: m}, "addStyle", args)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"https://shop.test/go?to=https://witness.test/sheet", "https://shop.test/go?to=https://witness.test/second"}
		if got := call.opAddrs(); len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("addStyle's addresses: got %q, want %q", got, want)
		}
	})
}

// The owners addBeforeSession makes are bounded (every injected document can make one): past
// maxFirstFrameOwners, or for a page address over maxFirstFrameURL, it refuses (the sheet then
// goes on connect); owners that end their grace or are adopted make room again.
func TestFirstFrameGuardIsBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	g := &redirectGuard{now: func() time.Time { return now }}
	addr := []string{"https://shop.test/go?to=x"}
	for i := range maxFirstFrameOwners {
		if err := g.addBeforeSession(fmt.Sprintf("https://shop.test/?q=%d", i), "rx", nil, addr); err != nil {
			t.Fatalf("owner %d: %v", i, err)
		}
	}
	if err := g.addBeforeSession("https://shop.test/?q=one-more", "rx", nil, addr); !errors.Is(err, errFirstFrameFull) {
		t.Fatalf("one owner past the bound: got %v, want errFirstFrameFull", err)
	}
	// The same page again refreshes its owner rather than adding one.
	if err := g.addBeforeSession("https://shop.test/?q=7", "rx", nil, addr); err != nil {
		t.Errorf("a page already held: %v", err)
	}
	// A session that starts on a page adopts its owner, which makes room.
	g.sessionStarted("sess", "https://shop.test/?q=3")
	if err := g.addBeforeSession("https://shop.test/?q=one-more", "rx", nil, addr); err != nil {
		t.Errorf("after an adoption: %v", err)
	}
	if err := g.addBeforeSession("https://shop.test/?q=two-more", "rx", nil, addr); !errors.Is(err, errFirstFrameFull) {
		t.Errorf("full again: got %v", err)
	}
	// Past the grace period all unadopted owners go.
	now = now.Add(redirectGuardGrace + time.Minute)
	if err := g.addBeforeSession("https://shop.test/?q=two-more", "rx", nil, addr); err != nil {
		t.Errorf("after the grace period: %v", err)
	}
	if g.firstFrame != 1 {
		t.Errorf("first-frame owners counted %d, want 1", g.firstFrame)
	}
	long := "https://shop.test/?q=" + strings.Repeat("a", maxFirstFrameURL)
	if err := g.addBeforeSession(long, "rx", nil, addr); !errors.Is(err, errFirstFrameFull) {
		t.Errorf("a page address of %d bytes: got %v, want errFirstFrameFull", len(long), err)
	}
}
