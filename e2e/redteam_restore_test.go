package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Red-team pass 6e (OPEN-ITEMS 22): a version the agent wrote, restored from the manager. The
// person wrote "prices" (fetch:api.shop.test, a GET of its prices); an agent steered by a page
// rewrote it to POST orders, and the person declined that card, so the agent's version sits in
// the history, saved but never applied. Restore used to apply it under the person's own rules —
// same sites, same permissions, no card — so code the person had refused ran with one click on
// a page that did not show it. Now a restore of the agent's code that holds permissions or other
// sites shows that code on the restore page, and the armed click there is the Allow for exactly
// what the page showed (the running version it was shown against, and the code's digest).

// TestRedteamRestoreAgentCodeShowsIt: the restore page shows the agent's code and its
// permission; a click there after the running version changed applies nothing; a click on a
// fresh page applies it; a copy of the agent's code (a restore of a restore) is shown the same.
func TestRedteamRestoreAgentCodeShowsIt(t *testing.T) {
	sites := e2etest.StartSites(t)
	p := e2etest.StartProxy(t, sites, e2etest.WithStore())
	st := p.Store
	ctx := context.Background()
	manifest := `{"name": "prices", "description": "Shows prices.", "api": 1, "matches": ["https://shop.test/*"],
		"permissions": [{"name": "fetch:api.shop.test", "reason": "read prices"}]}`
	files := func(script string) store.Files {
		return store.Files{sandbox.ManifestFile: []byte(manifest), sandbox.ScriptFile: []byte(script)}
	}
	const personCode = "await rmx.fetch('https://api.shop.test/prices');"
	const agentCode = "await rmx.fetch('https://api.shop.test/orders', {method: 'POST', body: 'qty=99'});"
	rx := saveAndActivate(t, st, "prices", files(personCode))
	agentV, err := st.SaveVersion(ctx, rx.ID, files(agentCode), store.AuthorAgent, "as the page asked")
	if err != nil {
		t.Fatal(err)
	}
	active := func() string {
		t.Helper()
		v, _, err := st.Active(ctx, rx.ID)
		if err != nil {
			t.Fatal(err)
		}
		return string(v.Files[sandbox.ScriptFile])
	}

	browser := e2etest.Browser(t, e2etest.ThroughProxy(p))
	manager := browser.NewTab(t)
	restorePage := func(vid int64) string {
		t.Helper()
		manager.Navigate(fmt.Sprintf("https://remix.proxy/manager/r/%s/restore/%d", rx.ID, vid))
		return manager.BodyText()
	}
	body := restorePage(agentV.ID)
	for _, want := range []string{agentCode, "Send requests to api.shop.test as you", "The agent wrote this code"} {
		if !strings.Contains(body, want) {
			t.Errorf("the restore page does not show %q:\n%s", want, body)
		}
	}

	// The person's own edit makes another version active while the page is open: the click
	// then applies nothing (the page showed the change from the version that ran before).
	v3, err := st.SaveVersion(ctx, rx.ID, files(personCode+"\nrmx.log('v3');"), store.AuthorPerson, "my edit")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Activate(ctx, v3.ID); err != nil {
		t.Fatal(err)
	}
	managerClick(t, manager, `form[action*="/restore/"] button[type=submit]`)
	manager.WaitFor(managerWait, "the manager's answer", `document.readyState === 'complete' && !location.pathname.endsWith('/restore/`+fmt.Sprint(agentV.ID)+`') || document.title.includes('changed')`)
	if got := active(); got != personCode+"\nrmx.log('v3');" {
		t.Errorf("after a click on a stale restore page, the active code is %q, want the person's edit\nthe manager says: %s", got, manager.BodyText())
	}

	// A fresh page: the click applies the agent's code, shown against what runs now.
	if body := restorePage(agentV.ID); !strings.Contains(body, "rmx.log('v3');") || !strings.Contains(body, agentCode) {
		t.Errorf("the restore page does not show the change from what runs now:\n%s", body)
	}
	managerClick(t, manager, `form[action*="/restore/"] button[type=submit]`)
	manager.WaitFor(managerWait, "the manager's answer", `location.search.includes('m=restored')`)
	if got := active(); got != agentCode {
		t.Fatalf("after the restore the active code is %q, want the agent's\nthe manager says: %s", got, manager.BodyText())
	}

	// The person goes back to their own version, then restores the copy the restore made: it is
	// still the agent's code, and its page shows it.
	if err := st.Activate(ctx, v3.ID); err != nil {
		t.Fatal(err)
	}
	vs, err := st.Versions(ctx, rx.ID)
	if err != nil {
		t.Fatal(err)
	}
	copyV := vs[len(vs)-1]
	if copyV.Author != store.AuthorRestore {
		t.Fatalf("the last version is by %s, want the restore's copy", copyV.Author)
	}
	if body := restorePage(copyV.ID); !strings.Contains(body, agentCode) || !strings.Contains(body, "The agent wrote this code") {
		t.Errorf("the restore page of the agent's restored copy does not show its code as the agent's:\n%s", body)
	}

	// The person's own version restores as before, without the agent's banner.
	v1, err := st.Version(ctx, vs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if body := restorePage(v1.ID); strings.Contains(body, "The agent wrote this code") {
		t.Errorf("the restore page of the person's version says the agent wrote it:\n%s", body)
	}
}
