package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// observeHosts sets the observed hosts directly (a fixture has no store to read them from).
func observeHosts(f *fixture, hosts ...string) {
	set := map[string]bool{}
	for _, h := range hosts {
		set[h] = true
	}
	f.srv.observed.hosts.Store(&observedHosts{set: set, at: time.Now().Add(time.Hour)})
}

func waitObserved(t *testing.T, o *observeRecords, session, pageURL, host string, n int) []ObservedResponse {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rs := o.responses(session, pageURL, host, "", 0)
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
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	observeHosts(f, siteHost)
	o := f.srv.observed
	pageURL := "https://" + siteHost + "/start"
	p := connectToolPage(t, f, pageURL)
	get := func(path string, hdr ...string) []byte {
		t.Helper()
		_, b := f.get("https://"+siteHost+path, append([]string{"Referer", pageURL}, hdr...)...)
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

	rs := waitObserved(t, o, p.session, pageURL, siteHost, 6)
	time.Sleep(100 * time.Millisecond)
	rs = o.responses(p.session, pageURL, siteHost, "", 0)
	byPath := map[string]ObservedResponse{}
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
	if got := o.responses(p.session, pageURL, siteHost, "/api/d", 0); len(got) != 1 {
		t.Errorf("path /api/d: %d responses", len(got))
	}
	if got := o.responses(p.session, pageURL, siteHost, "", time.Now().Add(time.Minute).UnixMilli()); len(got) != 0 {
		t.Errorf("since the future: %d responses", len(got))
	}
	if got := o.responses(p.session, pageURL, "other.example.com", "", 0); len(got) != 0 {
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
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	observeHosts(f, "api.other.test")
	pageURL := "https://" + siteHost + "/start"
	p := connectToolPage(t, f, pageURL)
	f.get("https://"+siteHost+"/api/data", "Referer", pageURL)
	time.Sleep(100 * time.Millisecond)
	if got := f.srv.observed.responses(p.session, pageURL, siteHost, "", 0); len(got) != 0 {
		t.Errorf("recorded %d responses of a host no remixlet observes", len(got))
	}
}

func TestObservedSessionBounds(t *testing.T) {
	var r observedSession
	for range maxObservedPerPage + 20 {
		r.add(ObservedResponse{URL: "https://a.test/", Body: "x"})
	}
	if len(r.list) != maxObservedPerPage {
		t.Errorf("kept %d responses, want %d", len(r.list), maxObservedPerPage)
	}
	for range 10 {
		r.add(ObservedResponse{URL: "https://a.test/", Body: strings.Repeat("y", maxObservedBody)})
	}
	if r.bytes > maxObservedPerPageBytes {
		t.Errorf("kept %d bytes, limit %d", r.bytes, maxObservedPerPageBytes)
	}
}

func TestRMXNetworkResponsesNeedsThePermission(t *testing.T) {
	st := openTestStore(t)
	rx := addTestRemixlet(t, st, "watcher", `"https://shop.test/*"`, `{"name": "network:observe:api.shop.test", "reason": "prices"}`, rxTestScript)
	r := newRemixletRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.standingTTL = 0
	t.Cleanup(r.close)
	fp := &fakePage{url: "https://shop.test/"}
	fp.run = r.newPageRun(fp.conn())
	h := fp.run.newHost(rx.id, rx.versionID, rx.manifest)
	ctx := context.Background()

	for _, args := range []string{`[{"host": "bank.test"}]`, `[{"host": "shop.test"}]`, `[{"host": "evil.api.shop.test"}]`,
		`[{"host": "api.shop.test\u3002bank.test"}]`, `[{"host": "\uff42ank.test"}]`} {
		_, err := h.Call(ctx, "rmx", "network.responses", json.RawMessage(args))
		var ref *httpx.Refusal
		if !errors.As(err, &ref) || !strings.Contains(ref.Why, "needs the network:observe:") {
			t.Errorf("network.responses(%s) = %v; want a refusal", args, err)
		}
	}
	waitLog(t, st, rx.id, "needs the network:observe:bank.test permission")
	// The host is read as the browser reads it: every spelling of the observed host is it.
	for _, args := range []string{`[{"host": "API.shop.test."}]`, `[{"host": "api.shop.test", "path": "/v1", "since": 5}]`,
		`[{"host": "\uff41\uff50\uff49.shop.test"}]`, `[{"host": "api\u3002shop\uff0etest"}]`, `[{"host": "api.%73hop.test"}]`} {
		got, err := h.Call(ctx, "rmx", "network.responses", json.RawMessage(args))
		if err != nil || string(got) != "[]" {
			t.Errorf("network.responses(%s) = %s, %v; want []", args, got, err)
		}
	}
	_, err := h.Call(ctx, "rmx", "network.onResponse", json.RawMessage(`[{"host": "bank.test"}, {"$listener": 3}]`))
	if err == nil || !strings.Contains(err.Error(), "needs the network:observe:bank.test permission") {
		t.Errorf("network.onResponse for another host: %v", err)
	}
	for _, args := range []string{`[{"host": "api.shop.test/x"}]`, `[{"host": "me@api.shop.test"}]`, `[{"host": "api.shop.test:443"}]`} {
		if _, err := h.Call(ctx, "rmx", "network.responses", json.RawMessage(args)); err == nil || !strings.Contains(err.Error(), "not a host") {
			t.Errorf("network.responses(%s) = %v; want a refusal: not a host", args, err)
		}
	}
	if _, err := h.Call(ctx, "rmx", "network.onResponse", json.RawMessage(`[{"host": "api.shop.test"}, 3]`)); err == nil || !strings.Contains(err.Error(), "must be a function") {
		t.Errorf("network.onResponse without a callback: %v", err)
	}
	if _, err := h.Call(ctx, "rmx", "network.onResponse", json.RawMessage(`[{"host": "api.shop.test"}, {"$listener": 3}]`)); err != nil {
		t.Errorf("network.onResponse: %v", err)
	}
	// network:observe allows no loads: it is not a fetch: permission.
	if _, err := h.Call(ctx, "rmx", "fetch", json.RawMessage(`["https://api.shop.test/"]`)); err == nil || !strings.Contains(err.Error(), "needs a fetch:HOST permission") {
		t.Errorf("rmx.fetch with only network:observe: %v", err)
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
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	observeHosts(f, siteHost)
	pageURL := "https://" + siteHost + "/start"
	p := connectToolPage(t, f, pageURL)

	req, _ := http.NewRequest("GET", "https://"+siteHost+"/api/stream", nil)
	req.Header.Set("Referer", pageURL)
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

func TestFitObservedKeepsAnswersWithinTheSandboxLimit(t *testing.T) {
	var rs []ObservedResponse
	for i := range 10 {
		rs = append(rs, ObservedResponse{URL: "https://a.test/" + strings.Repeat("p", i), Body: strings.Repeat("\"é", 20<<10)})
	}
	const limit = 256 << 10
	got := fitObserved(rs, limit)
	b, _ := json.Marshal(got)
	if len(b) > limit || len(got) == 0 || got[len(got)-1].URL != rs[len(rs)-1].URL {
		t.Errorf("fitObserved kept %d responses in %d bytes; want the newest, within %d", len(got), len(b), limit)
	}
	one := fitObserved([]ObservedResponse{{URL: "https://a.test/", Body: strings.Repeat("\"é", 100<<10)}}, limit)
	b, _ = json.Marshal(one)
	if len(b) > limit || len(one) != 1 || !one[0].Truncated || !utf8.ValidString(one[0].Body) || one[0].Body == "" {
		t.Errorf("one large response: %d bytes, truncated %v", len(b), one[0].Truncated)
	}
}
