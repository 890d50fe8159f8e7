package remixlet

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every remixlet guard refuses with the same answer: a 403 in plain text, never cached or
// sniffed, whose body says what was refused and, on its second line, what to do — which
// remixlet (when the guard knows), what it would need, and the manager where its log says
// which address. Each guard is driven to refuse from the outside (a request or an answer).
func TestGuardRefusalsHaveTheSameHeadersAndSayWhatToDo(t *testing.T) {
	const written = "https://shop.test/go?to=https://witness.test/x"
	request := func(g *guardTest, address string, h http.Header) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, address, nil)
		req.RequestURI = req.URL.RequestURI()
		for k, v := range h {
			req.Header[k] = v
		}
		w := httptest.NewRecorder()
		g.r.GuardPageRequests(w, req)
		return w
	}
	recorded := func(resp *http.Response) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
		return w
	}
	tests := []struct {
		name   string
		refuse func(t *testing.T, g *guardTest) *httptest.ResponseRecorder
		todo   []string // what the second line must say
	}{
		{"a site a remixlet named (namedhosts.go)", func(t *testing.T, g *guardTest) *httptest.ResponseRecorder {
			if err := g.r.guard.addNamed("s1", "https://shop.test/list", g.id, g.m, []string{"witness.test"}); err != nil {
				t.Fatal(err)
			}
			return request(g, "https://witness.test/x", http.Header{"Sec-Fetch-Dest": {"image"}, "Sec-Fetch-Site": {"cross-site"}, "Referer": {"https://shop.test/"}})
		}, []string{"fetch: permission"}},
		{"an embed asked again (embedguard.go)", func(t *testing.T, g *guardTest) *httptest.ResponseRecorder {
			g.r.mu.Lock()
			p := g.r.newPageRun(pageConn{id: "s1", url: func() string { return "https://shop.test/" }})
			p.running[g.id] = &runningRemixlet{} // its script runs on the page (no sandbox needed here)
			g.r.pages["s1"] = p
			g.r.mu.Unlock()
			h := http.Header{"Sec-Fetch-Dest": {"embed"}, "Referer": {"https://shop.test/"}}
			request(g, "https://ads.test/e", h)
			return request(g, "https://ads.test/e", h)
		}, []string{"Reload the page"}},
		{"a page an address opened, leaving (clientredirect.go)", func(t *testing.T, g *guardTest) *httptest.ResponseRecorder {
			if err := g.r.guard.add("s1", "https://shop.test/", g.id, g.m, []string{written}); err != nil {
				t.Fatal(err)
			}
			g.openDocument(t, "/go?to=https://witness.test/x", "document", "")
			return request(g, "https://witness.test/x", navHeader("document", "cross-site", "", "https://shop.test/"))
		}, []string{"fetch: permission"}},
		{"more pages opened than the guard holds (clientredirect.go)", func(t *testing.T, g *guardTest) *httptest.ResponseRecorder {
			now := time.Unix(1_000_000, 0)
			g.r.opened.now = func() time.Time { return now }
			var addresses []string
			for i := range maxOpenedPerSession + 1 {
				addresses = append(addresses, fmt.Sprintf("https://shop.test/go?n=%d", i))
			}
			if err := g.r.guard.add("s1", "https://shop.test/", g.id, g.m, addresses); err != nil {
				t.Fatal(err)
			}
			for i := range maxOpenedPerSession {
				g.openDocument(t, fmt.Sprintf("/go?n=%d", i), "document", "")
			}
			u, _ := url.ParseRequestURI(addresses[maxOpenedPerSession])
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/html"}},
				Body: io.NopCloser(strings.NewReader("<p>forwarding</p>")), Request: &http.Request{Method: http.MethodGet, URL: u, Host: "shop.test",
					RequestURI: u.RequestURI(), Header: navHeader("document", "same-origin", "", "")}}
			g.r.NoteOpenedDocument(resp)
			return recorded(resp)
		}, []string{"Close some of the pages"}},
		{"a redirect of an address a remixlet wrote (redirect.go)", func(t *testing.T, g *guardTest) *httptest.ResponseRecorder {
			if err := g.r.guard.add("s1", "https://shop.test/", g.id, g.m, []string{written}); err != nil {
				t.Fatal(err)
			}
			u, _ := url.ParseRequestURI("https://shop.test/go?to=https://witness.test/x")
			resp := &http.Response{StatusCode: http.StatusFound, Header: http.Header{"Location": {"https://witness.test/x"}},
				Body: io.NopCloser(strings.NewReader("")), Request: &http.Request{URL: u, Host: "shop.test", RequestURI: u.RequestURI()}}
			g.r.GuardRedirect(resp)
			return recorded(resp)
		}, []string{"fetch: permission"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuardTest(t)
			w := tt.refuse(t, g)
			if w.Code != http.StatusForbidden {
				t.Fatalf("answered %d, want 403", w.Code)
			}
			for k, want := range map[string]string{"Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"} {
				if got := w.Header().Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			lines := strings.Split(strings.TrimSuffix(w.Body.String(), "\n"), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "remixproxy: ") {
				t.Fatalf("body %q: want what was refused, then what to do", w.Body)
			}
			if strings.Contains(w.Body.String(), `"`+g.m.Name+`"`) || strings.Contains(w.Body.String(), g.id) {
				t.Errorf("body %q names the remixlet: a page reads the refusals of its own origin's requests", w.Body)
			}
			for _, want := range append(tt.todo, managerAddress) {
				if !strings.Contains(lines[1], want) {
					t.Errorf("the second line %q does not say %q", lines[1], want)
				}
			}
		})
	}
}

// A new guard that writes its own 403 would miss refusal.go's headers: every 403 the remixlet
// guards give is written here.
func TestOnlyRefusalWritesAForbidden(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "refusal.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "StatusForbidden") || strings.Contains(string(b), "WriteHeader(403") {
			t.Errorf("%s answers a 403 itself; use writeRefusal or replaceWithRefusal (refusal.go)", f)
		}
	}
}

func TestRefusalBodyNamesNoRemixlet(t *testing.T) {
	got := string(refusalBody("x was refused", "do y"))
	want := "remixproxy: x was refused\nDo y; the logs of the page's remixlets in " + managerAddress + " say which remixlet, which address and why.\n"
	if got != want {
		t.Errorf("refusalBody = %q, want %q", got, want)
	}
}
