package proxy

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/remixlet"
)

// newObserveFixture is a proxy with a store in front of resolve, where an active remixlet holds
// network:observe for each of hosts (its matches are another site's pages: it runs on none of
// the test's). The proxy reads the observed hosts from the store, as it does in use.
func newObserveFixture(t *testing.T, resolve map[string]string, roots *x509.CertPool, hosts ...string) *fixture {
	t.Helper()
	mf := newManagerFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	var perms []string
	for _, h := range hosts {
		perms = append(perms, "network:observe:"+h)
	}
	mf.seed("observer", perms...)
	return mf.fixture
}

func waitObserved(t *testing.T, o *remixlet.Observed, session, pageURL, host string, n int) []remixlet.ObservedResponse {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rs := o.Responses(session, pageURL, host, "", 0)
		if len(rs) >= n || time.Now().After(deadline) {
			return rs
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestObserveRecordsWhatThePageReceives(t *testing.T) {
	h, sent := pageDataSite()
	mux := http.NewServeMux()
	mux.Handle("/", h)
	mux.HandleFunc("/img.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte{0x89, 'P', 'N', 'G'})
	})
	resolve, roots := tlsSite(t, siteHost, mux)
	f := newObserveFixture(t, resolve, roots, siteHost)
	o := f.srv.observed
	pageURL := "https://" + siteHost + "/start"
	p := connectToolPage(t, f, pageURL)
	get := func(path string, hdr ...string) []byte {
		t.Helper()
		_, b := f.get("https://"+siteHost+path, append([]string{"Referer", pageURL, "Sec-Fetch-Dest", "empty"}, hdr...)...)
		return b
	}
	get("/api/data", "Sec-Fetch-Dest", "empty")
	if got := get("/api/big"); !bytes.Equal(got, sent["/api/big"]) {
		t.Errorf("the body changed on its way")
	}
	if got := get("/api/gz", "Accept-Encoding", "gzip"); !bytes.Equal(got, sent["/api/gz"]) {
		t.Errorf("the gzip body changed on its way")
	}
	get("/api/text")
	get("/api/missing")
	get("/img.png", "Sec-Fetch-Dest", "image")
	// Not recorded: navigations, another page's requests, requests without a Referer.
	get("/api/doc", "Sec-Fetch-Mode", "navigate")
	get("/api/other-page", "Referer", "https://"+siteHost+"/another/page")
	f.get("https://" + siteHost + "/api/noref")

	// The six are filed off the streaming path; the three above never are (a navigation and a
	// request without a Referer are passed over as they arrive; another page's is filed under
	// that page), so once the six are in, the set is complete.
	rs := waitObserved(t, o, p.session, pageURL, siteHost, 6)
	byPath := map[string]remixlet.ObservedResponse{}
	for _, r := range rs {
		byPath[strings.TrimPrefix(r.URL, "https://"+siteHost)] = r
	}
	if len(rs) != 6 {
		t.Errorf("recorded %d responses, want 6: %v", len(rs), byPath)
	}
	if r := byPath["/api/data"]; r.Body != `{"path":"/api/data"}` || r.Status != 200 || r.Method != "GET" || r.ContentType != "application/json" || r.Truncated || r.At == 0 {
		t.Errorf("/api/data: %+v", r)
	}
	if r := byPath["/api/missing"]; r.Status != 404 || r.Body != `{"missing":1}` {
		t.Errorf("/api/missing: %+v", r)
	}
	if r := byPath["/api/text"]; r.Body != `{"text":1}` || r.ContentType != "text/plain" {
		t.Errorf("/api/text: %+v", r)
	}
	if r := byPath["/api/gz"]; r.Body != `{"zipped":true}` {
		t.Errorf("/api/gz: %+v", r)
	}
	if r := byPath["/img.png"]; r.Body != "" || !r.Truncated || r.ContentType != "image/png" {
		t.Errorf("/img.png: %+v", r)
	}
	if r := byPath["/api/big"]; len(r.Body) != len(sent["/api/big"]) || r.Truncated {
		t.Errorf("/api/big: %d bytes, truncated %v", len(r.Body), r.Truncated)
	}
	// Filters: path prefix, since, and another host.
	if got := o.Responses(p.session, pageURL, siteHost, "/api/d", 0); len(got) != 1 {
		t.Errorf("path /api/d: %d responses", len(got))
	}
	if got := o.Responses(p.session, pageURL, siteHost, "", time.Now().Add(time.Minute).UnixMilli()); len(got) != 0 {
		t.Errorf("since the future: %d responses", len(got))
	}
	if got := o.Responses(p.session, pageURL, "other.example.com", "", 0); len(got) != 0 {
		t.Errorf("another host: %d responses", len(got))
	}
	b, _ := json.Marshal(rs)
	if strings.Contains(string(b), "secret-cookie-value") {
		t.Errorf("a Set-Cookie header was recorded: %s", b)
	}
}

func TestObserveOnlyObservedHosts(t *testing.T) {
	h, _ := pageDataSite()
	resolve, roots := tlsSite(t, siteHost, h)
	api := "api." + siteHost
	resolve[api+":443"] = resolve[siteHost+":443"]
	f := newObserveFixture(t, resolve, roots, api)
	pageURL := "https://" + siteHost + "/start"
	p := connectToolPage(t, f, pageURL)
	f.get("https://"+siteHost+"/api/data", "Referer", pageURL, "Sec-Fetch-Dest", "empty")
	// The observed host's answer to a no-cors request is opaque to the page: not recorded.
	f.get("https://"+api+"/api/data", "Referer", "https://"+siteHost+"/", "Sec-Fetch-Dest", "empty", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Site", "same-site")
	f.get("https://"+api+"/api/cors", "Sec-Fetch-Dest", "empty", "Referer", "https://"+siteHost+"/", "Sec-Fetch-Mode", "cors", "Sec-Fetch-Site", "same-site",
		"Origin", "https://"+siteHost)
	// The observed host's response the page can read is recorded; the page's own host, observed
	// by no remixlet, was passed over as it went by (the decision is made before the body
	// streams).
	if got := waitObserved(t, f.srv.observed, p.session, pageURL, api, 1); len(got) != 1 || !strings.HasSuffix(got[0].URL, "/api/cors") {
		t.Errorf("recorded %+v of the observed host, want /api/cors alone", got)
	}
	if got := f.srv.observed.Responses(p.session, pageURL, siteHost, "", 0); len(got) != 0 {
		t.Errorf("recorded %d responses of a host no remixlet observes", len(got))
	}
}

func TestObserveDoesNotHoldBackStreams(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/", htmlHandler(plainPage))
	mux.HandleFunc("/api/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(`first,`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		w.Write([]byte(`second`))
	})
	resolve, roots := tlsSite(t, siteHost, mux)
	f := newObserveFixture(t, resolve, roots, siteHost)
	pageURL := "https://" + siteHost + "/start"
	p := connectToolPage(t, f, pageURL)

	req, _ := http.NewRequest("GET", "https://"+siteHost+"/api/stream", nil)
	req.Header.Set("Referer", pageURL)
	req.Header.Set("Sec-Fetch-Dest", "empty")
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len(`first,`))
	done := make(chan error, 1)
	go func() { _, err := io.ReadFull(resp.Body, first); done <- err }()
	select {
	case err := <-done:
		if err != nil || string(first) != `first,` {
			t.Fatalf("first part: %q, %v", first, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first part of a streamed response did not arrive before the rest was sent: observing held it back")
	}
	close(release)
	if rest, _ := io.ReadAll(resp.Body); string(rest) != `second` {
		t.Errorf("rest = %q", rest)
	}
	rs := waitObserved(t, f.srv.observed, p.session, pageURL, siteHost, 1)
	if len(rs) != 1 || rs[0].Body != `first,second` || rs[0].Truncated {
		t.Errorf("recorded %+v", rs)
	}
}

// TestObserveNeverRecordsTheShim: a remixlet observing its own site never reads a service
// worker's script as the browser got it — with the proxy's shim and its relay key, which would
// let the page read page tokens from the relay (swshim.go). The page's own script that follows
// it is recorded as usual.
func TestObserveNeverRecordsTheShim(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/sw.js" || r.URL.Path == "/app.js" {
			w.Header().Set("Content-Type", "text/javascript")
			io.WriteString(w, "self.addEventListener('fetch', () => {});\n")
			return
		}
		htmlHandler(plainPage).ServeHTTP(w, r)
	}))
	f := newObserveFixture(t, resolve, roots, siteHost)
	pageURL := "https://" + siteHost + "/start"
	p := connectToolPage(t, f, pageURL)
	_, body := f.get("https://"+siteHost+"/sw.js", "Referer", pageURL, "Service-Worker", "script", "Sec-Fetch-Dest", "serviceworker",
		"Sec-Fetch-Mode", "same-origin", "Sec-Fetch-Site", "same-origin")
	if !strings.Contains(string(body), f.srv.pages.WorkerKey("https://"+siteHost)) {
		t.Fatalf("the worker's script has no shim with its key (the test proves nothing): %q", httpx.Clip(string(body), 200))
	}
	f.get("https://"+siteHost+"/app.js", "Referer", pageURL, "Sec-Fetch-Dest", "script", "Sec-Fetch-Mode", "no-cors", "Sec-Fetch-Site", "same-origin")
	got := waitObserved(t, f.srv.observed, p.session, pageURL, siteHost, 1)
	if len(got) != 1 || !strings.HasSuffix(got[0].URL, "/app.js") {
		t.Errorf("recorded %+v, want /app.js alone", got)
	}
}
