package remixlet

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Without a store there is no Runner: GuardPageRequests lets every request go and writes
// nothing. A refusal is a 403 in plain text the browser neither caches nor sniffs.
func TestPageRequestsWithoutRunnerAndTheRefusal(t *testing.T) {
	var r *Runner
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "https://shop.test/", nil)
	if r.GuardPageRequests(rec, req) || rec.Body.Len() != 0 || len(rec.Header()) != 0 {
		t.Errorf("a nil Runner answered: %d %q %v", rec.Code, rec.Body, rec.Header())
	}
	rec = httptest.NewRecorder()
	writeRefusal(rec, "refused\n")
	for k, want := range map[string]string{"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if rec.Code != http.StatusForbidden || rec.Body.String() != "refused\n" {
		t.Errorf("refusal = %d %q, want 403 %q", rec.Code, rec.Body, "refused\n")
	}
}
