package e2e

import (
	"strings"
	"testing"
	"time"
)

// nav7's decision 2 (tenth session): Chromium sends a window.open into a named window that is
// already open without Sec-Fetch-User. On a page the agent loaded, the agent's click on an
// "Open the Witness window" button left the popup named "signin" open on the proxy's refusal
// page; the person's own retry on the same button navigated that window without ?1, and the
// lease held it though the page agent had reported the click's window.open. Now a report of
// exactly that address from the navigation's Referer origin, at most personNavFresh (1 s) old,
// stands in for ?1.

// TestLeaseNamedPopupRetry: the agent's click on the button is held (leaseSigninAgentClicks);
// then the person clicks the same button while that popup is open: the popup goes to the
// provider.
func TestLeaseNamedPopupRetry(t *testing.T) {
	aw := leaseSigninAgentClicks(t, "Open the Witness window")
	time.Sleep(4 * time.Second)
	personClick(t, aw.tab, "#signin-named") // window.open into the open "signin": no ?1
	waitWitness(t, aw, "GET https://witness.test/oauth?client=named")
	if got := aw.witness.requests(); len(got) != 1 || !strings.Contains(got[0], `Referer "https://app.test/`) {
		t.Errorf("the witness got %q, want the person's popup only", got)
	}
}
