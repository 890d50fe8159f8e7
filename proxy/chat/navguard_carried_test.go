package chat

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/testsite"
	"github.com/remixproxy/remixproxy/proxy/page"
)

// TestNavCarriedAddress: through the guard's two sides in a pipeline as the proxy's (the whole
// wiring: e2e's TestRedteamAgentNavigationCarries). An agent navigation on the site whose query
// carries an address of another site is refused without going upstream — the page it names
// could load that address as an image or a frame (OPEN-ITEMS 14) — whatever the action and
// however the address is encoded; an address of the site itself, a query with none, the
// person's own navigation and a frame the agent-loaded page frames by itself go through.
func TestNavCarriedAddress(t *testing.T) {
	cf, g, clk := newLeasePipeline(t)
	page0 := "https://example.com/inbox"
	exfil := "https://witness.test/img?d=4711"
	click := func() *navExpect {
		return g.armAs(navOwner{owner: t}, "click", page0, "https://example.com", nil, nil)
	}
	for _, tt := range []struct {
		name, to string
		hdr      []string
		refused  bool
	}{
		{"the viewer with an address", "https://example.com/viewer?doc=" + exfil, testsite.NavHeaders("same-origin", page0), true},
		{"percent-encoded", "https://example.com/viewer?img=" + url.QueryEscape(exfil), testsite.NavHeaders("same-origin", page0), true},
		{"a host name", "https://example.com/viewer?img=witness.test%2Fi%3Fd%3D4711", testsite.NavHeaders("same-origin", page0), true},
		{"another origin of the site, no Referer", "https://www.example.com/viewer?img=//witness.test/i", testsite.NavHeaders("same-site", ""), true},
		{"a frame the click loads", "https://example.com/viewer?img=" + exfil, frameNav("same-origin", page0), true},
		{"a form the agent's click submits (GET)", "https://example.com/check?url=" + url.QueryEscape(exfil), testsite.NavHeaders("same-origin", page0), true},
		{"an address of the site", "https://example.com/login?next=" + url.QueryEscape("https://www.example.com/account"), testsite.NavHeaders("same-origin", page0), false},
		{"a plain search", "https://example.com/search?q=door+code", testsite.NavHeaders("same-origin", page0), false},
		{"the person's address bar", "https://example.com/viewer?doc=" + exfil, testsite.NavHeaders("none", ""), false},
		{"an address in the path", "https://example.com/viewer/https://witness.test/i/4711", testsite.NavHeaders("same-origin", page0), true},
		{"https:/ in the path", "https://example.com/https:/witness.test/i/4711", testsite.NavHeaders("same-origin", page0), true},
		{"an address percent-encoded in the path", "https://example.com/viewer/" + url.QueryEscape(exfil), testsite.NavHeaders("same-origin", page0), true},
		{"a base64 segment of the path", "https://example.com/b/" + base64.RawURLEncoding.EncodeToString([]byte(exfil)), testsite.NavHeaders("same-origin", page0), true},
		{"a frame the click loads, its path", "https://example.com/viewer/" + url.QueryEscape(exfil), frameNav("same-origin", page0), true},
		{"an address of the site in the path", "https://example.com/go/https://www.example.com/account", testsite.NavHeaders("same-origin", page0), false},
		{"a host-looking path segment", "https://example.com/domain/witness.test/4711", testsite.NavHeaders("same-origin", page0), false},
		{"the person's address bar, the path", "https://example.com/viewer/https://witness.test/i/4711", testsite.NavHeaders("none", ""), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x := click()
			defer x.settle()
			resp, body := cf.get(tt.to, tt.hdr...)
			if tt.refused {
				if resp.StatusCode != http.StatusForbidden || strings.Contains(string(body), "4711") || !strings.Contains(string(body), "carried an address of witness.test") {
					t.Fatalf("status = %d, want 403 saying why, without the data\n%s", resp.StatusCode, body)
				}
				why := x.refusal()
				if !strings.Contains(why, "carried an address of witness.test") || strings.Contains(why, "4711") {
					t.Errorf("refusal = %q", why)
				}
				// The cost named: the person can open it themselves.
				if !strings.Contains(why, "the person can open it themselves") || !strings.Contains(string(body), "the person can open it themselves") {
					t.Errorf("the refusal does not say the person can open it: %q", why)
				}
				if inPath := !strings.Contains(tt.to, "?"); inPath && !strings.Contains(why, "in its path") {
					t.Errorf("the refusal does not say where: %q", why)
				}
				return
			}
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status = %d, want 200\n%s", resp.StatusCode, body)
			}
		})
	}
	clk.skip(navWindow + navAfter)

	// A page the agent loaded (a lease): its own forward carrying an address is held; a frame it
	// frames by itself (an embed naming another site) is its own.
	cf.agentNavigated(clk, t, page0, "https://example.com/article")
	if resp, _ := cf.get("https://example.com/share?u="+url.QueryEscape(exfil), testsite.NavHeaders("same-origin", "https://example.com/article")...); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the leased page's forward carrying an address: %d, want 403", resp.StatusCode)
	}
	if resp, _ := cf.get("https://example.com/embed?url="+url.QueryEscape("https://video.test/v/1"), frameNav("same-origin", "https://example.com/article")...); resp.StatusCode != http.StatusOK {
		t.Errorf("the leased page's own embed: %d, want 200", resp.StatusCode)
	}
}

// TestNavCarriedFragment: navigate's fragment never reaches the proxy, so it is checked before
// the page agent is asked; the query is left to the navigation guard.
func TestNavCarriedFragment(t *testing.T) {
	sess := page.Info{URL: "https://example.com/inbox", Origin: "https://example.com"}
	for _, tt := range []struct {
		to      string
		refused bool
	}{
		{"/viewer#img=https://witness.test/i?d=4711", true},
		{"/viewer#" + url.QueryEscape("doc=witness.test/i"), true},
		{"/viewer#section-2", false},
		{"/viewer#next=https://www.example.com/a", false},
		{"/viewer?doc=https://witness.test/i", false}, // the query: GuardNavigation's
		{"https://witness.test/#x", false},            // navigate refuses it itself
	} {
		args, _ := json.Marshal(map[string]string{"url": tt.to})
		err := checkCarriedFragment(sess, args)
		if (err != nil) != tt.refused {
			t.Errorf("%s: err = %v, want refused %v", tt.to, err, tt.refused)
		}
		if err != nil && (!strings.Contains(err.Error(), "witness.test") || strings.Contains(err.Error(), "4711")) {
			t.Errorf("%s: message %q", tt.to, err)
		}
	}
}

// TestNavCarriedLinkFragment: a link the agent clicks whose fragment carries an address of
// another site is refused before the click (the proxy never sees a fragment, and the page's
// script may load what it names): the proxy asks the page agent what the click would follow
// (the probe, with the switch on too). An address with a scheme (or scheme-relative) is refused
// whatever the page; a host-looking one ("#setup.py", "#witness.test/i?d=4711") only when it
// holds a value the agent typed, set or selected in this chat, other than the site's name alone
// (typedIn): without one the link is the page's own text, which the model did not choose.
func TestNavCarriedLinkFragment(t *testing.T) {
	b64 := base64.RawURLEncoding.EncodeToString([]byte("witness.test/i?d=4711"))
	for _, tt := range []struct {
		name, link string
		on         bool
		typed      []string // tool calls before the click: "tool text" ("type+": clear false)
		refused    bool
	}{
		{"a fragment carrying an address", "https://shop.test/viewer#img=https://witness.test/i?d=4711", false, nil, true},
		{"the switch on", "https://shop.test/viewer#img=https://witness.test/i?d=4711", true, nil, true},
		{"an address alone", "https://shop.test/viewer#https://witness.test/i?d=4711", true, nil, true},
		{"an address, percent-encoded", "https://shop.test/viewer#img=" + url.QueryEscape("https://witness.test/i?d=4711"), true, nil, true},
		{"an address, base64", "https://shop.test/viewer#img=" + base64.RawURLEncoding.EncodeToString([]byte("https://witness.test/i?d=4711")), true, nil, true},
		{"a same-document link, scheme-relative", "https://shop.test/a#img=//witness.test/i", true, nil, true},
		// Host-looking: refused only with what the agent typed in it. (nav8 refused these
		// without: in-page anchors on real top-level domains could not be clicked.)
		{"a host field, percent-encoded, typed", "https://shop.test/a#" + url.QueryEscape("doc=witness.test/i?d=4711"), true, []string{"set_field witness.test/i?d=4711"}, true},
		{"a host field, percent-encoded, not typed", "https://shop.test/a#" + url.QueryEscape("doc=witness.test/i?d=4711"), true, nil, false},
		{"a host-looking address, typed", "https://shop.test/a#witness.test/i?d=4711", false, []string{"set_field witness.test/i?d=4711"}, true},
		{"a host-looking address, not typed", "https://shop.test/a#witness.test/i?d=4711", false, nil, false},
		{"a host-looking address, the code typed", "https://shop.test/a#witness.test/i?d=4711", true, []string{"type 4711"}, true},
		{"a host-looking address, typed in capitals", "https://shop.test/a#witness.test/i?d=4711", true, []string{"type WITNESS.TEST/I?D=4711"}, true},
		{"a host-looking address, selected", "https://shop.test/a#img=witness.test/i?d=4711", true, []string{"select witness.test/i?d=4711"}, true},
		{"a host-looking address, base64, typed", "https://shop.test/a#img=" + b64, true, []string{"set_field witness.test/i?d=4711"}, true},
		{"a host-looking address, typed a few characters at a time", "https://shop.test/a#witness.test/i?d=4711", true, []string{"type wit", "type+ nes", "type+ s.t", "type+ est", "type+ /i?", "type+ d=4", "type+ 711"}, true},
		{"a host-looking address, other text typed", "https://shop.test/a#witness.test/i?d=4711", true, []string{"set_field 4712", "type abc"}, false},
		{"a host-looking address, a short value typed", "https://shop.test/a#witness.test/i?d=471", true, []string{"type 471"}, false},
		{"an anchor on a real top-level domain", "https://shop.test/doc#setup.py", true, nil, false},
		{"an anchor, its name typed (a search)", "https://shop.test/doc#setup.py", true, []string{"set_field setup", "set_field setup.py", "type SETUP.PY"}, false},
		{"an anchor", "https://shop.test/doc#section-2", true, []string{"type section-2"}, false},
		{"an address of the site", "https://shop.test/a#next=https://www.shop.test/b", true, nil, false},
		{"an address of the site, typed", "https://shop.test/a#next=www.shop.test/b", true, []string{"type www.shop.test/b"}, false},
		{"no fragment", "https://shop.test/viewer?doc=https://witness.test/i", true, nil, false}, // the query: GuardNavigation's
		{"no link", "", true, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			acted := 0
			facts := map[string]any{"how": "click", "tag": "a", "name": "preview", "link": tt.link, "key": "k-link"}
			form, value := formPageAnswers(facts, &acted), ""
			answer := func(tool string, args map[string]any) (string, error) {
				if tool != "type" && tool != "set_field" {
					return form(tool, args)
				}
				if args["clear"] != false {
					value = ""
				}
				value += args["text"].(string)
				acted++
				b, _ := json.Marshal(map[string]any{"typed": "textbox", "value": value})
				return string(b), nil
			}
			page := &gatePage{fakeActPage: fakeActPage{addr: "https://shop.test/a", answer: answer}, on: tt.on, decide: func(submitFacts) (bool, error) { return true, nil }}
			st := newActState(time.Now)
			for _, call := range tt.typed {
				tool, text, _ := strings.Cut(call, " ")
				field := map[string]string{"set_field": "text", "type": "text", "type+": "text", "select": "option"}[tool]
				a := map[string]any{"ref": "e2", field: text}
				if tool == "type+" {
					tool, a["clear"] = "type", false
				}
				args, _ := json.Marshal(a)
				if _, err := st.run(context.Background(), page, tool, args); err != nil {
					t.Fatalf("%s: %v", call, err)
				}
			}
			typed := acted
			_, err := st.run(context.Background(), page, "click", json.RawMessage(`{"ref":"e1"}`))
			if tt.refused {
				if err == nil || !strings.Contains(err.Error(), "fragment carries an address of another site (witness.test)") || strings.Contains(err.Error(), "4711") ||
					!strings.Contains(err.Error(), "the person can open it themselves") || acted != typed {
					t.Errorf("run = %v, acted %d; want refused before the click, naming the site and the cost", err, acted-typed)
				}
				return
			}
			if err != nil || acted != typed+1 {
				t.Errorf("run = %v, acted %d; want clicked", err, acted-typed)
			}
			if calls := strings.Join(page.calls, "\n"); !strings.Contains(calls, `"probe":true`) {
				t.Errorf("the link was not checked: %q", page.calls)
			}
		})
	}
}

// TestNavCarriedLinkProbeUnanswered: a page that does not answer the probe before a click (with
// the chat's switch on or off) is not clicked, and the model is told nothing was done: "the page did not answer
// in time" alone does not say whether the click happened.
func TestNavCarriedLinkProbeUnanswered(t *testing.T) {
	for _, on := range []bool{false, true} {
		acted := 0
		answers := formPageAnswers(map[string]any{"how": "click", "tag": "a", "name": "preview", "link": "https://shop.test/a", "key": "k"}, &acted)
		page := &gatePage{fakeActPage: fakeActPage{addr: "https://shop.test/a", answer: func(tool string, args map[string]any) (string, error) {
			if args["probe"] == true {
				return "", fmt.Errorf("%s: the page did not answer in time", tool)
			}
			return answers(tool, args)
		}}, on: on, decide: func(submitFacts) (bool, error) { return true, nil }}
		_, err := newActState(time.Now).run(context.Background(), page, "click", json.RawMessage(`{"ref":"e1"}`))
		if err == nil || acted != 0 || !strings.Contains(err.Error(), "did not answer in time") || !strings.Contains(err.Error(), "nothing was done") {
			t.Errorf("switch on %v: run = %v, acted %d; want not clicked, the page's silence and \"nothing was clicked\" said", on, err, acted)
		}
	}
}
