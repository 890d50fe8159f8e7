package page

import (
	"encoding/json"
	"testing"
)

// TestToolCallsGone: when a page goes, every call waiting on it fails with gone and none stays
// registered for the closed session.
func TestToolCallsGone(t *testing.T) {
	tc := toolCalls{pending: map[string]map[uint64]chan toolAnswer{}}
	var chans []chan toolAnswer
	for i := 0; i < 3; i++ {
		_, ch, err := tc.add("s1")
		if err != nil {
			t.Fatal(err)
		}
		chans = append(chans, ch)
	}
	_, other, _ := tc.add("s2")
	tc.gone("s1")
	for i, ch := range chans {
		select {
		case a := <-ch:
			if !a.gone {
				t.Errorf("call %d: got %+v, want gone", i, a)
			}
		default:
			t.Errorf("call %d: got no answer, want gone", i)
		}
	}
	if n := len(tc.pending["s1"]); n != 0 {
		t.Errorf("%d calls still registered for the closed session, want 0", n)
	}
	select {
	case a := <-other:
		t.Errorf("another page's call got %+v, want it still waiting", a)
	default:
	}
}

// TestSameOriginURL: navigate's and open_page's address is read against the page as the
// browser reads it, allowed or refused in that reading, and handed to the page agent in it.
func TestSameOriginURL(t *testing.T) {
	sess := Info{URL: "https://example.com/dir/start", Origin: "https://example.com"}
	for _, tt := range []struct {
		raw, want string // want "" when refused
	}{
		{"/a", "https://example.com/a"},
		{"../b?q=1#f", "https://example.com/b?q=1#f"},
		{"/a/../%2e%2e/c", "https://example.com/c"},
		{`\a\b`, "https://example.com/a/b"},
		{"/re\tdi\nrect", "https://example.com/redirect"},
		{"HTTPS://EXAMPLE.COM:443/x", "https://example.com/x"},
		{"https://\uff45xample.com/x", "https://example.com/x"},
		{"https://example\u3002com/x", "https://example.com/x"},
		{"https:x", "https://example.com/dir/x"}, // no "//", same scheme: a path
		{"https://example.com\\@witness.test/", "https://example.com/@witness.test/"},
		{"https://witness.test\\@example.com/", ""},
		{"https://example.com@witness.test/", ""},
		{"https://user@example.com/", ""},
		{"//witness.test/x", ""},
		{`/\witness.test/x`, ""},
		{`\\witness.test\x`, ""},
		{"https:///witness.test", ""},
		{"http:witness.test", ""},
		{"https://example.com\u3002witness.test/", ""},
		{"https://\uff57itness.test/", ""},
		{"https://www.example.com/", ""}, // same site, another origin
		{"http://example.com/", ""},
		{"https://example.com:8443/", ""},
		{"https://0x7f.1/", ""},
		{"javascript:alert(1)", ""},
		{"https://exa mple.com/", ""},
	} {
		t.Run(tt.raw, func(t *testing.T) {
			raw, _ := json.Marshal(tt.raw)
			args := map[string]json.RawMessage{"url": raw}
			u, err := sameOriginURL(sess, args, "navigate", "goes only to pages of this site")
			switch {
			case tt.want == "" && err == nil:
				t.Errorf("sameOriginURL(%q) = %q, want a refusal", tt.raw, u.Href())
			case tt.want != "" && err != nil:
				t.Errorf("sameOriginURL(%q): %v, want %q", tt.raw, err, tt.want)
			case tt.want != "" && u.Href() != tt.want:
				t.Errorf("sameOriginURL(%q) = %q, want %q", tt.raw, u.Href(), tt.want)
			}
		})
	}
	// The page agent is handed the address as read; open_page's without its fragment.
	args := map[string]json.RawMessage{"url": json.RawMessage(`"/a/../b\t#top"`)}
	out, err := checkNavigate(sess, args)
	if err != nil || string(out["url"]) != `"https://example.com/b#top"` {
		t.Errorf("checkNavigate: %s, %v", out["url"], err)
	}
	args = map[string]json.RawMessage{"url": json.RawMessage(`"/a/../b\t#top"`)}
	out, err = checkFetchPage(sess, args)
	if err != nil || string(out["url"]) != `"https://example.com/b"` {
		t.Errorf("checkFetchPage: %s, %v", out["url"], err)
	}
}
