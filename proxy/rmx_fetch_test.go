package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/fetch"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// fetchWorld is a proxy in front of a shop (www sets the session cookie), its API, a second
// approved API host, and a witness nobody may reach; plus a remixlet host holding the given
// permissions on the shop's pages.
type fetchWorld struct {
	f       *fixture
	witness atomic.Int64
	h       *remixletHost
	rx      testRemixlet
}

func newFetchWorld(t *testing.T, permissions string) *fetchWorld {
	t.Helper()
	w := &fetchWorld{}
	mux := http.NewServeMux()
	mux.HandleFunc("www.example.com/", func(rw http.ResponseWriter, r *http.Request) {
		http.SetCookie(rw, &http.Cookie{Name: "sid", Value: "s3cret", Domain: "example.com", Path: "/", Secure: true, HttpOnly: true})
		htmlHandler(plainPage)(rw, r)
	})
	echo := func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.Header().Set("Set-Cookie", "fromfetch=1")
		body, _ := io.ReadAll(r.Body)
		json.NewEncoder(rw).Encode(map[string]string{
			"host": r.Host, "method": r.Method, "cookie": r.Header.Get("Cookie"),
			"authorization": r.Header.Get("Authorization"), "body": string(body), "x": r.Header.Get("X-Test"),
		})
	}
	mux.HandleFunc("api.example.com/echo", echo)
	mux.HandleFunc("api2.example.com/echo", echo)
	mux.HandleFunc("api.example.com/same", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "/echo", http.StatusFound)
	})
	mux.HandleFunc("api.example.com/cross", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "https://api2.example.com/echo", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("api.example.com/to-witness", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "https://witness.example.com/steal", http.StatusFound)
	})
	mux.HandleFunc("api.example.com/loop", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("api.example.com/big", func(rw http.ResponseWriter, r *http.Request) {
		rw.Write([]byte(strings.Repeat("x", fetch.MaxResponseBody+1)))
	})
	mux.HandleFunc("api.example.com/300k", func(rw http.ResponseWriter, r *http.Request) {
		rw.Write([]byte(strings.Repeat("x", 300<<10)))
	})
	mux.HandleFunc("api.example.com/bytes", func(rw http.ResponseWriter, r *http.Request) {
		rw.Write([]byte{0, 1, 2, 255})
	})
	mux.HandleFunc("witness.example.com/", func(rw http.ResponseWriter, r *http.Request) {
		w.witness.Add(1)
	})
	resolve, roots := tlsSite(t, "example.com", mux)
	addr := resolve["example.com:443"]
	resolve = map[string]string{}
	for _, h := range []string{"www", "api", "api2", "witness"} {
		resolve[h+".example.com:443"] = addr
	}
	w.f = newFixture(t, fixtureOpts{resolve: resolve, roots: roots, onlyResolved: true})
	st := openTestStore(t)
	w.rx = addTestRemixlet(t, st, "fetcher", `"https://www.example.com/*"`, permissions, rxTestScript)
	r := newRemixletRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.standingTTL = 0
	r.net = w.f.srv.fetch
	t.Cleanup(r.close)
	fp := &fakePage{url: "https://www.example.com/"}
	fp.run = r.newPageRun(fp.conn())
	w.h = fp.run.newHost(w.rx.id, w.rx.versionID, w.rx.manifest)
	return w
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
	w := newFetchWorld(t, `{"name": "fetch:api.example.com", "reason": "cart"}, {"name": "fetch:api2.example.com", "reason": "cart"}`)
	// The person's browser loads the shop, which sets the session cookie for example.com.
	resp, _ := w.f.get("https://www.example.com/")
	if len(resp.Header.Values("Set-Cookie")) != 1 {
		t.Fatalf("the site's Set-Cookie did not reach the browser untouched: %v", resp.Header)
	}

	before := w.f.srv.counts.requests.Load()
	res, err := w.fetch(t, `["https://API.example.com./echo", {"as": "json", "method": "post", "body": "{\"a\":1}", "headers": {"X-Test": "yes", "Content-Type": "application/json"}}]`)
	if err != nil {
		t.Fatalf("rmx.fetch: %v", err)
	}
	if after := w.f.srv.counts.requests.Load(); after != before {
		t.Errorf("rmx.fetch went through the browser pipeline (%d requests counted): netrules would act on it", after-before)
	}
	var got map[string]string
	json.Unmarshal(res.JSON, &got)
	if got["cookie"] != "sid=s3cret" || got["host"] != "api.example.com" || got["method"] != "POST" || got["body"] != `{"a":1}` || got["x"] != "yes" {
		t.Errorf("the API saw %v", got)
	}
	if res.Status != 200 || !res.OK || res.URL != "https://api.example.com/echo" || res.Headers["content-type"] != "application/json" {
		t.Errorf("result %+v", res)
	}
	if _, ok := res.Headers["set-cookie"]; ok {
		t.Errorf("Set-Cookie reached the remixlet: %v", res.Headers)
	}
	// A fetch's own Set-Cookie is not the browser's: the view does not take it.
	res, _ = w.fetch(t, `["https://api.example.com/echo", {"as": "json"}]`)
	json.Unmarshal(res.JSON, &got)
	if got["cookie"] != "sid=s3cret" {
		t.Errorf("second fetch sent cookies %q", got["cookie"])
	}

	t.Run("same-origin redirect keeps Authorization", func(t *testing.T) {
		res, err := w.fetch(t, `["https://api.example.com/same", {"as": "json", "headers": {"Authorization": "Bearer t0ken"}}]`)
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(res.JSON, &got)
		if got["authorization"] != "Bearer t0ken" || !res.Redirected || res.URL != "https://api.example.com/echo" {
			t.Errorf("after a same-origin redirect: %v, %+v", got, res)
		}
	})
	t.Run("cross-origin redirect drops Authorization", func(t *testing.T) {
		res, err := w.fetch(t, `["https://api.example.com/cross", {"as": "json", "method": "POST", "body": "b", "headers": {"Authorization": "Bearer t0ken"}}]`)
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(res.JSON, &got)
		if got["authorization"] != "" || got["host"] != "api2.example.com" || got["cookie"] != "sid=s3cret" || got["method"] != "POST" || got["body"] != "b" {
			t.Errorf("after a cross-origin 307: %v", got)
		}
	})
	t.Run("as text and bytes", func(t *testing.T) {
		res, err := w.fetch(t, `["https://api.example.com/bytes", {"as": "bytes"}]`)
		if err != nil || res.Bytes == nil || *res.Bytes != "AAEC/w==" {
			t.Errorf("bytes: %+v, %v", res, err)
		}
		res, err = w.fetch(t, `["https://api.example.com/echo"]`)
		if err != nil || res.Text == nil || !strings.Contains(*res.Text, `"cookie":"sid=s3cret"`) {
			t.Errorf("text: %+v, %v", res, err)
		}
	})
}

func TestRMXFetchRefusals(t *testing.T) {
	w := newFetchWorld(t, `{"name": "fetch:api.example.com", "reason": "cart"}`)
	w.f.get("https://www.example.com/")
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
