package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptrace"
	"testing"
)

// The upstream protocol follows the browser's: HTTP/2 from the browser goes out over HTTP/2
// when the site offers it, HTTP/1.1 over HTTP/1.1; Close closes the idle connections of both.
func TestUpstreamProtocolFollowsBrowser(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, r.Proto)
	}))
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	for _, h2 := range []bool{false, true} {
		f.client = f.newClient(h2)
		resp, body := f.get("https://" + siteHost + "/")
		want := "HTTP/1.1"
		if h2 {
			want = "HTTP/2.0"
		}
		if resp.Proto != want || string(body) != want {
			t.Errorf("browser spoke %s, the site saw %s; want %s on both sides", resp.Proto, body, want)
		}
	}

	// Both upstream connections are idle now; closing idle connections closes both.
	var idle int
	trace := func(h2 bool) bool {
		ch := make(chan bool, 1)
		req, _ := http.NewRequest("GET", "https://"+siteHost+"/", nil)
		if h2 {
			req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/2.0", 2, 0
		}
		req = req.WithContext(withGotConn(req.Context(), ch))
		resp, err := f.srv.upstream.RoundTrip(req)
		if err != nil {
			t.Fatalf("upstream round trip: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return <-ch
	}
	for _, h2 := range []bool{false, true} {
		if trace(h2) {
			idle++
		}
	}
	if idle != 2 {
		t.Fatalf("%d of 2 upstream requests reused an idle connection before CloseIdleConnections, want both", idle)
	}
	f.srv.upstream.CloseIdleConnections()
	for _, h2 := range []bool{false, true} {
		if trace(h2) {
			t.Errorf("HTTP/2 %v: a connection survived CloseIdleConnections", h2)
		}
	}
}

// withGotConn reports on ch whether the request's connection was reused.
func withGotConn(ctx context.Context, ch chan bool) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			select {
			case ch <- info.Reused:
			default:
			}
		},
	})
}
