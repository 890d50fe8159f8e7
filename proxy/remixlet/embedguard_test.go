package remixlet

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestEmbedGuardRecord(t *testing.T) {
	var g embedGuard
	if g.again("https://shop.test", "https://ads.test/e") {
		t.Fatal("the first request of an embed counted as asked again")
	}
	if !g.again("https://shop.test", "https://ads.test/e") {
		t.Error("the second request of an embed from the same origin did not count as asked again")
	}
	if g.again("https://other.test", "https://ads.test/e") {
		t.Error("another origin's page asking for the same embed counted as asked again")
	}
	g.forget("https://shop.test")
	if g.again("https://shop.test", "https://ads.test/e") {
		t.Error("after a navigation of the origin, its page's embed counted as asked again")
	}
	for i := 0; i < maxEmbedsPer+10; i++ {
		g.again("https://many.test", "https://ads.test/"+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	if n := len(g.seen["https://many.test"]); n != maxEmbedsPer {
		t.Errorf("an origin holds %d addresses, want at most %d", n, maxEmbedsPer)
	}
}

// Without a remixlet's script on the page, the page's embeds are the page's business.
func TestEmbedGuardOnlyWhileAScriptRuns(t *testing.T) {
	g := newGuardTest(t)
	for i := 0; i < 3; i++ {
		req := httptest.NewRequest(http.MethodGet, "https://ads.test/e", nil)
		req.Header.Set("Sec-Fetch-Dest", "embed")
		req.Header.Set("Referer", "https://shop.test/")
		w := httptest.NewRecorder()
		if g.r.guardEmbedRefetch(w, req) {
			t.Fatalf("request %d of a page's embed was refused with no remixlet running", i+1)
		}
	}
}
