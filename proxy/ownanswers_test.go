package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// TestOwnAnswersHeadsOnlyWhatAHandlerLeaves: a redirect or an error gets no-store, nosniff, the
// own pages' policy and no framing; what the handler set stays (a policy with frame-ancestors
// needs no X-Frame-Options); a success and a 304 are left as they are. (Every answer of
// remix.proxy as a page meets it: TestMagicHostSurfaces.)
func TestOwnAnswersHeadsOnlyWhatAHandlerLeaves(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    map[string]string
	}{
		{"http.NotFound", http.NotFound,
			map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Content-Security-Policy": httpx.PageCSP, "X-Frame-Options": "DENY"}},
		{"a redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/b", http.StatusSeeOther) },
			map[string]string{"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"}},
		{"a handler's own error page", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "no-cache")
			w.Header().Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
			w.WriteHeader(http.StatusConflict)
		}, map[string]string{"Cache-Control": "no-cache", "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'", "X-Frame-Options": "", "X-Content-Type-Options": "nosniff"}},
		{"a success", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) },
			map[string]string{"Cache-Control": "", "X-Content-Type-Options": "", "X-Frame-Options": ""}},
		{"not modified", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) },
			map[string]string{"Cache-Control": "", "X-Frame-Options": ""}},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		ownAnswers(tt.handler).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "https://remix.proxy/a", nil))
		for k, want := range tt.want {
			if got := w.Header().Get(k); got != want {
				t.Errorf("%s: %s = %q, want %q", tt.name, k, got, want)
			}
		}
	}
	var unwrapped http.ResponseWriter
	ownAnswers(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		unwrapped = w.(interface{ Unwrap() http.ResponseWriter }).Unwrap()
	})).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "https://remix.proxy/a", nil))
	if _, ok := unwrapped.(*httptest.ResponseRecorder); !ok {
		t.Errorf("Unwrap = %T, want the server's writer (the WebSocket library hijacks through it)", unwrapped)
	}
}
