package proxy

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/store"
)

// TestManagerShowsAndCancelsSchedules: a remixlet's schedules are listed on its page with their
// fixed action, and Cancel removes one; a cross-site form cannot.
func TestManagerShowsAndCancelsSchedules(t *testing.T) {
	f := newManagerFixture(t)
	rx := f.seed("reminders", "schedule")
	ctx := context.Background()
	for _, sc := range []store.Schedule{
		{RemixletID: rx.ID, Name: "hourly", Every: time.Hour, Next: time.Now().Add(time.Hour), Action: []byte(`{"notify":{"title":"Stretch"}}`)},
		{RemixletID: rx.ID, Name: "once", Next: time.Now().Add(24 * time.Hour), Action: []byte(`{"message":{"n":1}}`)},
	} {
		if err := f.st.PutSchedule(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	page := f.page(managerURL + "/r/" + rx.ID)
	for _, want := range []string{"Schedules", "hourly", "every 1 hour", "Stretch", "once, at"} {
		if !strings.Contains(page, want) {
			t.Errorf("the remixlet's page lacks %q", want)
		}
	}
	resp, _ := f.post(managerURL+"/r/"+rx.ID+"/schedule/cancel", "https://evil.test", url.Values{"name": {"hourly"}}, true)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site cancel: %s, want 403", resp.Status)
	}
	resp, _ = f.post(managerURL+"/r/"+rx.ID+"/schedule/cancel", managerOriginHTTPS, url.Values{"name": {"hourly"}}, true)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("cancel: %s", resp.Status)
	}
	scs, _ := f.st.Schedules(ctx, rx.ID)
	if len(scs) != 1 || scs[0].Name != "once" {
		t.Errorf("schedules after cancel = %+v", scs)
	}
}
