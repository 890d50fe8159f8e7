package remixlet

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkNamedHostsUnrelatedRequest is the common case on every proxied request once any
// remixlet named any site: a cross-site subresource of the page to a site nobody named.
func BenchmarkNamedHostsUnrelatedRequest(b *testing.B) {
	g := &Runner{}
	for s := 0; s < 20; s++ {
		sites := make([]string, 50)
		for i := range sites {
			sites[i] = fmt.Sprintf("named%d-%d.test", s, i)
		}
		if err := g.guard.addNamed(fmt.Sprintf("s%d", s), fmt.Sprintf("https://shop%d.test/p", s), "rx", nil, sites); err != nil {
			b.Fatal(err)
		}
	}
	req := httptest.NewRequest(http.MethodGet, "https://static.cdn-provider.example.com/assets/app.js?v=123", nil)
	req.RequestURI = req.URL.RequestURI()
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	req.Header.Set("Sec-Fetch-Dest", "script")
	req.Header.Set("Referer", "https://shop3.test/")
	w := httptest.NewRecorder()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if g.guardNamedHosts(w, req) {
			b.Fatal("an unrelated request was refused")
		}
	}
}

// The fast path: a request to a site nobody named costs no Referer parse, no public-suffix
// lookup and no lock (before the fix: 97 allocations a request with 20 owners), and the set it
// reads follows the owners: a site leaves it when its last owner is swept.
func TestNamedHostsFastPath(t *testing.T) {
	g := newGuardTest(t)
	if err := g.r.guard.addNamed("s1", "https://shop.test/p", g.id, g.m, []string{"witness.test", "example.com"}); err != nil {
		t.Fatal(err)
	}
	unrelated := httptest.NewRequest(http.MethodGet, "https://static.cdn.test/app.js", nil)
	unrelated.RequestURI = unrelated.URL.RequestURI()
	unrelated.Header.Set("Sec-Fetch-Site", "cross-site")
	unrelated.Header.Set("Referer", "https://shop.test/")
	w := httptest.NewRecorder()
	if n := testing.AllocsPerRun(100, func() { g.r.guardNamedHosts(w, unrelated) }); n > 1 {
		t.Errorf("a request to a site nobody named allocates %v times, want at most 1", n)
	}
	for _, tt := range []struct {
		host string
		want bool
	}{
		{"witness.test", true}, {"a.b.witness.test", true}, {"WITNESS.TEST:443", true}, {"witness.test.", true},
		{"static.example.com", true}, {"notwitness.test", false}, {"cdn.test", false}, {"[::1]:443", true},
	} {
		r := httptest.NewRequest(http.MethodGet, "https://x.invalid/", nil)
		r.Host = tt.host
		if got := g.r.guard.mayBeNamed(r); got != tt.want {
			t.Errorf("mayBeNamed(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
	g.r.guard.sessionEnded("s1", "https://shop.test/p")
	g.r.guard.mu.Lock()
	g.r.guard.now = func() time.Time { return time.Now().Add(redirectGuardGrace + time.Minute) }
	g.r.guard.sweepLocked(true)
	g.r.guard.mu.Unlock()
	if p := g.r.guard.namedSet.Load(); p == nil || len(*p) != 0 || g.r.guard.named.Load() != 0 {
		t.Errorf("after the owner was swept the named set is %v (count %d), want empty", p, g.r.guard.named.Load())
	}
}
