package remixlet

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/fetch"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
	"github.com/remixproxy/remixproxy/sandbox"
)

// fetchWorld is rmx.fetch's client in front of a shop (www sets the session cookie), its API, a
// second approved API host, and a witness nobody may reach; plus a remixlet host holding the
// given permissions on the shop's pages. The pipeline's part (the browser's traffic filling the
// cookie view, fetches never entering the pipeline) is tested with the whole proxy
// (proxy/fetch_test.go).
type fetchWorld struct {
	net     *fetch.Client
	witness atomic.Int64
	h       *remixletHost
	rx      testRemixlet
}

func newFetchWorld(t *testing.T, permissions string) *fetchWorld {
	t.Helper()
	w := &fetchWorld{}
	mux := http.NewServeMux()
	testsite.AddFetchAPI(mux, fetch.MaxResponseBody+1, &w.witness)
	ts := httptest.NewTLSServer(mux) // its certificate names example.com and its subdomains
	t.Cleanup(ts.Close)
	roots := x509.NewCertPool()
	roots.AddCert(ts.Certificate())
	var d net.Dialer
	w.net = fetch.New(fetch.Config{OnlyResolved: true, Roots: roots,
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, ts.Listener.Addr().String()) // every *.example.com:443
		}})
	t.Cleanup(w.net.Close)
	st := openTestStore(t)
	w.rx = addTestRemixlet(t, st, "fetcher", `"https://www.example.com/*"`, permissions, rxTestScript)
	r := newRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.standingTTL = 0
	r.net = w.net
	t.Cleanup(r.Close)
	fp := &fakePage{url: "https://www.example.com/"}
	fp.run = r.newPageRun(fp.conn())
	w.h = fp.run.newHost(w.rx.id, w.rx.versionID, w.rx.manifest)
	return w
}

// browse is the person's browser loading the shop, as the pipeline's tap shows it to the
// cookie view: the shop sets the session cookie for example.com.
func (w *fetchWorld) browse() {
	u, _ := url.Parse("https://www.example.com/")
	w.net.Observe(&http.Response{Request: &http.Request{Method: "GET", URL: u, Header: http.Header{}},
		Header: http.Header{"Set-Cookie": {"sid=s3cret; Domain=example.com; Path=/; Secure; HttpOnly"}}})
}

// fetch calls rmx.fetch through the Host, as the sandbox would.
func (w *fetchWorld) fetch(t *testing.T, args string) (fetch.Result, error) {
	t.Helper()
	raw, err := w.h.Call(context.Background(), "rmx", "fetch", json.RawMessage(args))
	var res fetch.Result
	if err == nil {
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatalf("result %s: %v", raw, err)
		}
	}
	return res, err
}

func TestRMXFetchSignedInAsThePerson(t *testing.T) {
	w := newFetchWorld(t, `{"name": "fetch:api.example.com", "reason": "cart"}`)
	w.browse()
	res, err := w.fetch(t, `["https://API.example.com./echo", {"as": "json", "method": "post", "body": "{\"a\":1}", "headers": {"X-Test": "yes", "Content-Type": "application/json"}}]`)
	if err != nil {
		t.Fatalf("rmx.fetch: %v", err)
	}
	var got map[string]string
	json.Unmarshal(res.JSON, &got)
	if got["cookie"] != "sid=s3cret" || got["host"] != "api.example.com" || got["method"] != "POST" || got["body"] != `{"a":1}` || got["x"] != "yes" {
		t.Errorf("the API saw %v", got)
	}
	if _, ok := res.Headers["set-cookie"]; ok {
		t.Errorf("Set-Cookie reached the remixlet: %v", res.Headers)
	}
}

func TestRMXFetchRefusals(t *testing.T) {
	w := newFetchWorld(t, `{"name": "fetch:api.example.com", "reason": "cart"}`)
	w.browse()
	tests := []struct {
		name, args, refused string
	}{
		{"unapproved host", `["https://witness.example.com/steal"]`, "witness.example.com is not an approved host"},
		{"approved host redirecting to the witness", `["https://api.example.com/to-witness", {"headers": {"Authorization": "Bearer t0ken"}}]`, "redirect from api.example.com refused: witness.example.com is not an approved host"},
		{"too many redirects", `["https://api.example.com/loop"]`, "more than 5 redirects"},
		{"IP literal", `["https://127.0.0.1/"]`, "127.0.0.1 is not an approved host"},
		{"decimal IP", `["http://2130706433/"]`, "127.0.0.1 is not an approved host"},
		{"fullwidth letters of another host", `["https://\uff57itness.example.com/"]`, "witness.example.com is not an approved host"},
		{"a backslash before the user info", `["https://witness.example.com\\\\@api.example.com/"]`, "witness.example.com is not an approved host"},
		{"Cookie header", `["https://api.example.com/echo", {"headers": {"Cookie": "sid=forged"}}]`, "header Cookie may not be set"},
		{"Host header", `["https://api.example.com/echo", {"headers": {"Host": "witness.example.com"}}]`, "header Host may not be set"},
		{"CRLF in a header value", `["https://api.example.com/echo", {"headers": {"X-A": "a\r\nCookie: sid=forged"}}]`, "the value of header X-A is not valid"},
		{"Proxy-Authorization", `["https://api.example.com/echo", {"headers": {"Proxy-Authorization": "Basic eDp5"}}]`, "may not be set"},
		{"method override", `["https://api.example.com/echo", {"method": "POST", "headers": {"X-HTTP-Method-Override": "DELETE"}}]`, "may not be set"},
		{"the proxy's own host", `["https://remix.proxy/manager/data"]`, "remix.proxy is the proxy's own host"},
		{"the proxy's own host, spelled otherwise", `["https://REMIX.PROXY./manager/data"]`, "remix.proxy is the proxy's own host"},
		{"Sec- header", `["https://api.example.com/echo", {"headers": {"Sec-Fetch-Site": "same-origin"}}]`, "may not be set"},
		{"method", `["https://api.example.com/echo", {"method": "CONNECT"}]`, "method \"CONNECT\" is not allowed"},
		{"GET with a body", `["https://api.example.com/echo", {"body": "x"}]`, "GET requests have no body"},
		{"body too large", `["https://api.example.com/echo", {"method": "POST", "body": "` + strings.Repeat("x", fetch.MaxRequestBody+1) + `"}]`, "more than 1048576"},
		{"response too large", `["https://api.example.com/big"]`, "more than 5242880 bytes"},
		{"response larger than a sandbox answer", `["https://api.example.com/300k"]`, "more than the 262144 bytes a remixlet can receive in one answer"},
		{"not a string", `[42]`, "must be the address"},
		{"bad as", `["https://api.example.com/echo", {"as": "blob"}]`, "as must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := w.fetch(t, tt.args)
			var ref *httpx.Refusal
			if !errors.As(err, &ref) || !strings.Contains(ref.Why, tt.refused) {
				t.Fatalf("rmx.fetch(%.80s) = %v; want a refusal with %q", tt.args, err, tt.refused)
			}
			waitLog(t, w.h.p.r.st, w.rx.id, tt.refused)
		})
	}
	if n := w.witness.Load(); n != 0 {
		t.Errorf("the witness got %d requests", n)
	}
}

func TestRMXFetchNeedsPermissionAndStanding(t *testing.T) {
	w := newFetchWorld(t, `{"name": "network:observe:api.example.com", "reason": "watch"}`)
	if _, err := w.fetch(t, `["https://api.example.com/echo"]`); err == nil || !strings.Contains(err.Error(), "needs a fetch:HOST permission") {
		t.Errorf("without fetch: permission: %v", err)
	}
	w2 := newFetchWorld(t, `{"name": "fetch:api.example.com", "reason": "cart"}`)
	if err := w2.h.p.r.st.SetEnabled(context.Background(), w2.rx.id, false); err != nil {
		t.Fatal(err)
	}
	if _, err := w2.fetch(t, `["https://api.example.com/echo"]`); err == nil || !strings.Contains(err.Error(), "paused") {
		t.Errorf("paused remixlet: %v", err)
	}
	waitLog(t, w2.h.p.r.st, w2.rx.id, "the remixlet is paused")
}
