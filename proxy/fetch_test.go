package proxy

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/fetch"
	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
)

// The client that sends requests as the person (fetch/), in the whole proxy: the browser's
// traffic through the pipeline fills its cookie view, and its own requests never enter the
// pipeline (so no network rule acts on them). rmx.fetch's own checks are tested in
// remixlet/rmx_fetch_test.go.

// fetchWorld is a proxy in front of a shop (www sets the session cookie), its API, a second
// approved API host, and a witness nobody may reach.
type fetchWorld struct {
	f       *fixture
	witness atomic.Int64
}

func newFetchWorld(t *testing.T) *fetchWorld {
	t.Helper()
	w := &fetchWorld{}
	mux := http.NewServeMux()
	mux.HandleFunc("www.example.com/", func(rw http.ResponseWriter, r *http.Request) {
		http.SetCookie(rw, &http.Cookie{Name: "sid", Value: "s3cret", Domain: "example.com", Path: "/", Secure: true, HttpOnly: true})
		htmlHandler(plainPage)(rw, r)
	})
	testsite.AddFetchAPI(mux, fetch.MaxResponseBody+1, &w.witness)
	resolve, roots := tlsSite(t, "example.com", mux)
	addr := resolve["example.com:443"]
	resolve = map[string]string{}
	for _, h := range []string{"www", "api", "api2", "witness"} {
		resolve[h+".example.com:443"] = addr
	}
	w.f = newFixture(t, fixtureOpts{resolve: resolve, roots: roots, onlyResolved: true})
	return w
}

// fetch sends a request with the proxy's client to one of the two API hosts, as rmx.fetch
// does with its fetch: hosts.
func (w *fetchWorld) fetch(t *testing.T, rawURL string, o fetch.Options) (fetch.Result, error) {
	t.Helper()
	res, err := w.f.srv.fetch.Fetch(context.Background(), []string{"api.example.com", "api2.example.com"}, rawURL, o)
	if err != nil {
		return fetch.Result{}, err
	}
	return *res, nil
}

func TestFetchSignedInAsThePerson(t *testing.T) {
	w := newFetchWorld(t)
	// The person's browser loads the shop, which sets the session cookie for example.com.
	resp, _ := w.f.get("https://www.example.com/")
	if len(resp.Header.Values("Set-Cookie")) != 1 {
		t.Fatalf("the site's Set-Cookie did not reach the browser untouched: %v", resp.Header)
	}

	before := w.f.srv.counts.requests.Load()
	body := `{"a":1}`
	res, err := w.fetch(t, "https://API.example.com./echo", fetch.Options{As: "json", Method: "post", Body: &body,
		Headers: map[string]string{"X-Test": "yes", "Content-Type": "application/json"}})
	if err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if after := w.f.srv.counts.requests.Load(); after != before {
		t.Errorf("the fetch went through the browser pipeline (%d requests counted): netrules would act on it", after-before)
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
		t.Errorf("Set-Cookie is in the result: %v", res.Headers)
	}
	// A fetch's own Set-Cookie is not the browser's: the view does not take it.
	res, _ = w.fetch(t, "https://api.example.com/echo", fetch.Options{As: "json"})
	json.Unmarshal(res.JSON, &got)
	if got["cookie"] != "sid=s3cret" {
		t.Errorf("second fetch sent cookies %q", got["cookie"])
	}

	t.Run("same-origin redirect keeps Authorization", func(t *testing.T) {
		res, err := w.fetch(t, "https://api.example.com/same", fetch.Options{As: "json", Headers: map[string]string{"Authorization": "Bearer t0ken"}})
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(res.JSON, &got)
		if got["authorization"] != "Bearer t0ken" || !res.Redirected || res.URL != "https://api.example.com/echo" {
			t.Errorf("after a same-origin redirect: %v, %+v", got, res)
		}
	})
	t.Run("cross-origin redirect drops Authorization", func(t *testing.T) {
		b := "b"
		res, err := w.fetch(t, "https://api.example.com/cross", fetch.Options{As: "json", Method: "POST", Body: &b, Headers: map[string]string{"Authorization": "Bearer t0ken"}})
		if err != nil {
			t.Fatal(err)
		}
		json.Unmarshal(res.JSON, &got)
		if got["authorization"] != "" || got["host"] != "api2.example.com" || got["cookie"] != "sid=s3cret" || got["method"] != "POST" || got["body"] != "b" {
			t.Errorf("after a cross-origin 307: %v", got)
		}
	})
	t.Run("as text and bytes", func(t *testing.T) {
		res, err := w.fetch(t, "https://api.example.com/bytes", fetch.Options{As: "bytes"})
		if err != nil || res.Bytes == nil || *res.Bytes != "AAEC/w==" {
			t.Errorf("bytes: %+v, %v", res, err)
		}
		res, err = w.fetch(t, "https://api.example.com/echo", fetch.Options{})
		if err != nil || res.Text == nil || !strings.Contains(*res.Text, `"cookie":"sid=s3cret"`) {
			t.Errorf("text: %+v, %v", res, err)
		}
	})
}
