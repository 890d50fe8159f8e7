package proxy

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/page"
)

func pageDataSite() (http.Handler, map[string][]byte) {
	big := `{"items":"` + strings.Repeat("x", 40<<10) + `"}`
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(`{"zipped":true}`))
	zw.Close()
	sent := map[string][]byte{"/api/big": []byte(big), "/api/gz": gz.Bytes()}
	mux := http.NewServeMux()
	mux.Handle("/", htmlHandler(plainPage))
	for _, p := range []string{"/api/early", "/api/data", "/api/other-page", "/api/origin-only", "/api/doc", "/api/noref"} {
		mux.Handle(p, jsonHandler(`{"path":"`+p+`"}`))
	}
	mux.HandleFunc("/api/cors", func(w http.ResponseWriter, r *http.Request) { // allows the asking origin
		w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
		jsonHandler(`{"path":"/api/cors"}`).ServeHTTP(w, r)
	})
	mux.HandleFunc("/api/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write([]byte(big))
	})
	mux.HandleFunc("/api/gz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(gz.Bytes())
	})
	mux.HandleFunc("/api/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(`{"text":1}`))
	})
	mux.HandleFunc("/api/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"missing":1}`))
	})
	return mux, sent
}

// waitResponses polls the session's record until it has n responses.
func waitResponses(t *testing.T, s *Server, session string, n int) []page.RecordedResponse {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rs := s.pages.Responses(session)
		if len(rs) >= n || time.Now().After(deadline) {
			return rs
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestPageResponsesRecorded(t *testing.T) {
	h, sent := pageDataSite()
	resolve, roots := tlsSite(t, siteHost, h)
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	pageURL := "https://" + siteHost + "/start"
	fetch := func(path string, hdr ...string) []byte {
		t.Helper()
		_, b := f.get("https://"+siteHost+path, append([]string{"Sec-Fetch-Dest", "empty", "Referer", pageURL}, hdr...)...)
		return b
	}

	// The page's first fetch finishes before its agent connects: it waits for the session.
	fetch("/api/early")
	time.Sleep(100 * time.Millisecond) // recording finishes off the streaming path
	p := connectToolPage(t, f, pageURL)

	fetch("/api/data")
	if got := fetch("/api/big"); !bytes.Equal(got, sent["/api/big"]) {
		t.Errorf("the big body changed on its way: %d bytes, want %d", len(got), len(sent["/api/big"]))
	}
	if got := fetch("/api/gz", "Accept-Encoding", "gzip"); !bytes.Equal(got, sent["/api/gz"]) {
		t.Errorf("the gzip body changed on its way")
	}
	// Not recorded: not JSON, not 2xx, not a fetch, no Referer, another page's Referer.
	fetch("/api/text")
	fetch("/api/missing")
	f.get("https://"+siteHost+"/api/doc", "Sec-Fetch-Dest", "document", "Referer", pageURL)
	f.get("https://"+siteHost+"/api/noref", "Sec-Fetch-Dest", "empty")
	fetch("/api/other-page", "Referer", "https://"+siteHost+"/another/page")
	// An origin-only Referer (a cross-origin fetch under the default policy) goes by origin.
	fetch("/api/origin-only", "Referer", "https://"+siteHost+"/")

	rs := waitResponses(t, f.srv, p.session, 5)
	time.Sleep(200 * time.Millisecond)
	rs = f.srv.pages.Responses(p.session)
	byPath := map[string]page.RecordedResponse{}
	for _, r := range rs {
		byPath[strings.TrimPrefix(r.URL, "https://"+siteHost)] = r
	}
	var paths []string
	for _, r := range rs {
		paths = append(paths, strings.TrimPrefix(r.URL, "https://"+siteHost))
	}
	// Each is filed when its body ends, off the streaming path: the order may vary.
	slices.Sort(paths)
	want := []string{"/api/big", "/api/data", "/api/early", "/api/gz", "/api/origin-only"}
	if fmt.Sprint(paths) != fmt.Sprint(want) {
		t.Errorf("recorded %q, want %q", paths, want)
	}
	if r := byPath["/api/data"]; r.Method != "GET" || r.Status != 200 || r.ContentType != "application/json" || r.Body != `{"path":"/api/data"}` || r.Truncated {
		t.Errorf("/api/data recorded as %+v", r)
	}
	if r := byPath["/api/big"]; len(r.Body) != 32<<10+len("…") /* the page package's maxRecordedBody, then the cut mark */ || !r.Truncated || !strings.HasPrefix(r.Body, `{"items":"xxx`) || !strings.HasSuffix(r.Body, "x…") {
		t.Errorf("/api/big recorded with %d bytes, truncated %v", len(r.Body), r.Truncated)
	}
	if r := byPath["/api/gz"]; r.Body != `{"zipped":true}` || r.ContentType != "application/problem+json" || r.Truncated {
		t.Errorf("/api/gz recorded as %+v", r)
	}
	b, _ := json.Marshal(rs)
	if strings.Contains(string(b), "secret-cookie-value") || strings.Contains(strings.ToLower(string(b)), "set-cookie") {
		t.Errorf("a Set-Cookie header was recorded: %s", b)
	}

	// The record goes with the session.
	p.c.Close(1000, "pagehide")
	deadline := time.Now().Add(5 * time.Second)
	for len(f.srv.pages.Responses(p.session)) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the closed session's responses are still kept")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A JSON response that streams is passed on as it comes: recording holds nothing back.
func TestPageResponsesDoNotHoldBackStreams(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/", htmlHandler(plainPage))
	mux.HandleFunc("/api/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"first":`))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
		}
		w.Write([]byte(`1}`))
	})
	resolve, roots := tlsSite(t, siteHost, mux)
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots})
	pageURL := "https://" + siteHost + "/start"
	p := connectToolPage(t, f, pageURL)

	req, _ := http.NewRequest("GET", "https://"+siteHost+"/api/stream", nil)
	req.Header.Set("Sec-Fetch-Dest", "empty")
	req.Header.Set("Referer", pageURL)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len(`{"first":`))
	done := make(chan error, 1)
	go func() { _, err := io.ReadFull(resp.Body, first); done <- err }()
	select {
	case err := <-done:
		if err != nil || string(first) != `{"first":` {
			t.Fatalf("first part: %q, %v", first, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the first part of a streamed JSON response did not arrive before the rest was sent: the proxy held it back")
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	if string(rest) != `1}` {
		t.Errorf("rest = %q", rest)
	}
	rs := waitResponses(t, f.srv, p.session, 1)
	if len(rs) != 1 || rs[0].Body != `{"first":1}` || rs[0].Truncated {
		t.Errorf("recorded %+v", rs)
	}
}
