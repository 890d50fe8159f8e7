package remixlet

import (
	"net/http/httptest"
	"testing"
)

// Without a store there is no Runner: GuardPageRequests lets every request go and writes
// nothing. (The refusal's answer: refusal_test.go.)
func TestPageRequestsWithoutRunner(t *testing.T) {
	var r *Runner
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "https://shop.test/", nil)
	if r.GuardPageRequests(rec, req) || rec.Body.Len() != 0 || len(rec.Header()) != 0 {
		t.Errorf("a nil Runner answered: %d %q %v", rec.Code, rec.Body, rec.Header())
	}
}
