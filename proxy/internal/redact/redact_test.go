package redact

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// The redactor's text work (redact.go): each secret kind, each spelling, the bounds, and the
// secrets found by structure.

const (
	tPassword = `pa"ss<w>rd&9` // quotes and HTML specials: every escaping differs
	tCookie   = "sess-4f9a2c7e1b"
	tAuth     = "tok.eyJhbGciOi.sig42"
	tKey      = "sk-test-0123456789abcdef"
)

func testSecrets() *Redactor {
	return New([]Secret{
		{tPassword, KindPassword}, {tCookie, KindCookie}, {tAuth, KindAuth}, {tKey, KindKey},
	})
}

func goJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// unicodeJSON spells every character of s as a \u escape inside a JSON string.
func unicodeJSON(s string) string {
	var b strings.Builder
	b.WriteString(`"`)
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	b.WriteString(`"`)
	return b.String()
}

func TestRedactKnownValues(t *testing.T) {
	r := testSecrets()
	inner := func(s string) string { j := goJSON(s); return j[1 : len(j)-1] }
	tests := []struct {
		name, in, want string
	}{
		{"password raw", "Password: " + tPassword + ".", "Password: [redacted: password]."},
		{"cookie raw", "sid is " + tCookie, "sid is [redacted: cookie]"},
		{"authorization raw", "token " + tAuth + " here", "token [redacted: authorization] here"},
		{"provider key raw", "key=" + tKey, "key=[redacted: key]"},
		{"JSON, Go escapes", `{"v":` + goJSON(tPassword) + `}`, `{"v":"[redacted: password]"}`},
		{"JSON, JavaScript escapes", `{"v":"pa\"ss<w>rd&9"}`, `{"v":"[redacted: password]"}`},
		{"JSON, every character a \\u escape", `{"v":` + unicodeJSON(tPassword) + `}`, `{"v":"[redacted: password]"}`},
		{"JSON in a JSON string", `{"body":` + goJSON(`{"p":`+goJSON(tPassword)+`}`) + `}`, `{"body":"{\"p\":\"[redacted: password]\"}"}`},
		{"JSON escapes in plain text", "body: " + inner(inner(tPassword)), "body: [redacted: password]"},
		{"HTML escapes", "<p>pa&quot;ss&lt;w&gt;rd&amp;9</p>", "<p>[redacted: password]</p>"},
		{"HTML escapes, Go style", "<p>pa&#34;ss&lt;w&gt;rd&amp;9</p>", "<p>[redacted: password]</p>"},
		{"URL query encoding", "/x?p=" + url.QueryEscape(tPassword), "/x?p=[redacted: password]"},
		{"encodeURIComponent", "/x?p=pa%22ss%3Cw%3Erd%269", "/x?p=[redacted: password]"},
		{"URL path encoding", "/x/" + url.PathEscape(tPassword), "/x/[redacted: password]"},
		{"base64", "b64:" + base64.RawStdEncoding.EncodeToString([]byte(tKey)), "b64:[redacted: key]"},
		{"base64 URL alphabet", "b64:" + base64.RawURLEncoding.EncodeToString([]byte(tPassword)), "b64:[redacted: password]"},
		{"several", tCookie + "," + tKey, "[redacted: cookie],[redacted: key]"},
		{"nothing secret", "just text", "just text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactBounds(t *testing.T) {
	tests := []struct {
		name  string
		value string
		kind  string
		want  bool
	}{
		{"password of 4", "abcd", KindPassword, true},
		{"password of 3", "abc", KindPassword, false},
		{"cookie word", "accepted", KindCookie, false},
		{"cookie words with dashes", "light-theme-enabled", KindCookie, false},
		{"cookie true", "true", KindCookie, false},
		{"cookie token", "a1b2c3d4", KindCookie, true},
		{"cookie long word", "abcdefghijklmnopqrstu", KindCookie, true},
		{"cookie of 7", "a1b2c3d", KindCookie, false},
		{"key of 8", "sk-12345", KindKey, true},
		{"authorization of 7", "abc1234", KindAuth, false},
		{"blank password", "      ", KindPassword, false},
		{"a marker", "[redacted: key]", KindPassword, false},
	}
	for _, tt := range tests {
		if got := Accept(tt.value, tt.kind); got != tt.want {
			t.Errorf("%s: acceptSecret(%q, %s) = %v, want %v", tt.name, tt.value, tt.kind, got, tt.want)
		}
	}
}

func TestRedactPasswordInputsByStructure(t *testing.T) {
	var r *Redactor // no known values: structure alone
	tests := []struct {
		name, in, want string
	}{
		{"quoted", `<form><input type="password" name="pw" value="unknown-1"></form>`,
			`<form><input type="password" name="pw" value="[redacted: password]"></form>`},
		{"upper case, unquoted", `<INPUT TYPE=PASSWORD VALUE=unknown-2>`, `<input type="PASSWORD" value="[redacted: password]">`},
		{"autocomplete", `<input autocomplete="current-password" value='unknown-3'/>`,
			`<input autocomplete="current-password" value="[redacted: password]">`},
		{"a text input keeps its value", `<input type="text" value="ada">`, `<input type="text" value="ada">`},
		{"no value", `<input type="password" name="pw">`, `<input type="password" name="pw">`},
		{"in a script string", `<script>var f = '<input type="password" value="unknown-4">';</script>`,
			`<script>var f = '<input type="password" value="[redacted: password]">';</script>`},
		{"cut off at the end", `<p>x</p><input type="password" value="unknown-5`, `<p>x</p><input type="password" value="[redacted: password]">`},
		{"JSON-escaped in a text", `body: {"html": "<input type=\"password\" value=\"two words\">"}`,
			`body: {"html": "<input type=\"password\" value=\"[redacted: password]\">"}`},
		{"JSON with Go's escapes", `{"html":"\u003cinput type=\"password\" value=\"unknown-6\"\u003e"}`,
			`{"html":"<input type=\"password\" value=\"[redacted: password]\">"}`},
		{"not an input", `<inputs type="password" value="x">`, `<inputs type="password" value="x">`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactHeadersByStructure(t *testing.T) {
	var r *Redactor
	tests := []struct {
		name, in, want string
	}{
		{"authorization line", "GET /\nAuthorization: Bearer abc.def.ghi\nAccept: */*",
			"GET /\nAuthorization: Bearer [redacted: authorization]\nAccept: */*"},
		{"authorization, one token", "authorization: dXNlcjpwYXNzd29yZA==", "authorization: [redacted: authorization]"},
		{"proxy-authorization", "Proxy-Authorization: Basic dXNlcjpw", "Proxy-Authorization: Basic [redacted: authorization]"},
		{"cookie line", "Cookie: a=b1; theme=dark", "Cookie: a=[redacted: cookie]; theme=[redacted: cookie]"},
		{"set-cookie line", "Set-Cookie: sid=x9; Path=/; HttpOnly", "Set-Cookie: sid=[redacted: cookie]; Path=/; HttpOnly"},
		{"JSON key", `{"headers":{"Authorization":"Bearer abcdefgh"}}`, `{"headers":{"Authorization":"Bearer [redacted: authorization]"}}`},
		{"JSON key, array", `{"set-cookie":["a=1; Path=/","b=2"]}`, `{"set-cookie":["a=[redacted: cookie]; Path=/","b=[redacted: cookie]"]}`},
		{"JSON in a text", `x {"cookie": "s=abc"} y`, `x {"cookie": "s=[redacted: cookie]"} y`},
		{"document.cookie", `<script>document.cookie = "sid=abc; theme=dark";</script>`,
			`<script>document.cookie = "sid=[redacted: cookie]; theme=[redacted: cookie]";</script>`},
		{"prose authorization", "Authorization: required for this endpoint", "Authorization: required for this endpoint"},
		{"prose cookie", "Cookie: we use them to remember you", "Cookie: we use them to remember you"},
		{"a JSON null", `{"authorization": null}`, `{"authorization": null}`},
		{"a word containing cookie", "cookieConsent=yes", "cookieConsent=yes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRedactAddressParams: credential parameters in addresses and form bodies, and the password
// of an address's user-info, lose their values, as the JSON keys of the same names do; other
// parameters, ports and prose stay.
func TestRedactAddressParams(t *testing.T) {
	var r *Redactor
	tests := []struct {
		name, in, want string
	}{
		{"OAuth fragment", "https://app.test/cb#access_token=ya29.a0Af&token_type=Bearer&expires_in=3599",
			"https://app.test/cb#access_token=[redacted: authorization]&token_type=Bearer&expires_in=3599"},
		{"query", "/export?format=csv&access_token=ya29.Q", "/export?format=csv&access_token=[redacted: authorization]"},
		{"refresh token", "/renew?refresh_token=1//0gX", "/renew?refresh_token=[redacted: authorization]"},
		{"id token, upper case", "#ID_TOKEN=eyJhbGciOi.x.y", "#ID_TOKEN=[redacted: authorization]"},
		{"client secret", "?client_id=a&client-secret=s3cr3t", "?client_id=a&client-secret=[redacted: authorization]"},
		{"password in a query", "/login?user=ada&password=hunter22", "/login?user=ada&password=[redacted: password]"},
		{"form body", "user=ada&new_password=hunter22&pwd=x9", "user=ada&new_password=[redacted: password]&pwd=[redacted: password]"},
		{"HTML-escaped ampersand", `<a href="/x?a=1&amp;access_token=abc">`, `<a href="/x?a=1&amp;access_token=[redacted: authorization]">`},
		{"ends at a quote", `{"url":"/x?access_token=abc","n":1}`, `{"url":"/x?access_token=[redacted: authorization]","n":1}`},
		{"in an outline", `link "Export" href=/export?access_token=ya29.Q&format=csv`, `link "Export" href=/export?access_token=[redacted: authorization]&format=csv`},
		{"other parameters", "/cb?code=4/0AX4&state=xyz&token_type=Bearer", "/cb?code=4/0AX4&state=xyz&token_type=Bearer"},
		{"a name that only ends like one", "/x?csrf_access_token=abc", "/x?csrf_access_token=abc"},
		{"prose", "set your password = something strong", "set your password = something strong"},
		{"empty value", "/x?access_token=&a=1", "/x?access_token=&a=1"},
		{"user-info token", "git clone https://x-access-token:ghs_abc123@github.com/o/r.git",
			"git clone https://x-access-token:[redacted: authorization]@github.com/o/r.git"},
		{"user-info in a link", `<a href="ftp://admin:hunter22@files.test/">`, `<a href="ftp://admin:[redacted: authorization]@files.test/">`},
		{"user-info, no user", "https://:p4ss@h.test/", "https://:[redacted: authorization]@h.test/"},
		{"a port is no password", "https://h.test:8443/a@b and mail ada@h.test", "https://h.test:8443/a@b and mail ada@h.test"},
		{"user name only", "https://ada@h.test/", "https://ada@h.test/"},
		{"nested, percent-encoded", "/login?redirect_uri=https%3A%2F%2Fapp.test%2Fcb%23access_token%3Dya29.a0%2Bx%26state%3D1&x=2",
			"/login?redirect_uri=https%3A%2F%2Fapp.test%2Fcb%23access_token%3D[redacted: authorization]%26state%3D1&x=2"},
		{"nested query, lower-case hex", "?next=%2Fapi%3fa%3d1%26refresh_token%3dabc%3bq",
			"?next=%2Fapi%3fa%3d1%26refresh_token%3d[redacted: authorization]%3bq"},
		{"nested password", "?continue=%2Flogin%3Fuser%3Dada%26password%3Dhunter22", "?continue=%2Flogin%3Fuser%3Dada%26password%3D[redacted: password]"},
		{"encoded, other parameters", "?r=%2Fcb%3Fcode%3D4%26state%3Dxyz", "?r=%2Fcb%3Fcode%3D4%26state%3Dxyz"},
		{"encoded, a name that only ends like one", "?r=%2Fx%3Fcsrf_access_token%3Dabc", "?r=%2Fx%3Fcsrf_access_token%3Dabc"},
		{"nested twice, percent-encoded twice", "/a?next=%2Flogin%3Fredirect_uri%3Dhttps%253A%252F%252Fapp.test%252Fcb%2523access_token%253Dya29%252Bx%2526state%253D1%26y%3D2&x=3",
			"/a?next=%2Flogin%3Fredirect_uri%3Dhttps%253A%252F%252Fapp.test%252Fcb%2523access_token%253D[redacted: authorization]%2526state%253D1%26y%3D2&x=3"},
		{"twice encoded, lower case", "?n=%252fcb%253fpassword%253dhunter22%253bq", "?n=%252fcb%253fpassword%253d[redacted: password]%253bq"},
		{"a percent sign in a value", "?password=50%25off&x=1", "?password=[redacted: password]&x=1"},
		{"a percent sign at the end", "?password=fifty%25", "?password=[redacted: password]"},
		{"twice encoded, other parameters", "?r=%252Fcb%253Fcode%253D4%2526state%253Dxyz", "?r=%252Fcb%253Fcode%253D4%2526state%253Dxyz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactJSONStructure(t *testing.T) {
	var r *Redactor
	tests := []struct {
		name, in, want string
	}{
		{"password object", `{"name":"pw","type":"password","value":"zz9y"}`, `{"name":"pw","type":"password","value":"[redacted: password]"}`},
		{"value before type", `{"value":"zz9y","type":"PASSWORD"}`, `{"value":"[redacted: password]","type":"PASSWORD"}`},
		{"a text field", `{"type":"text","value":"ada"}`, `{"type":"text","value":"ada"}`},
		{"password key", `{"user":"ada","password":"hunter22"}`, `{"user":"ada","password":"[redacted: password]"}`},
		{"token key", `{"access_token":"abc","expires":3600}`, `{"access_token":"[redacted: authorization]","expires":3600}`},
		{"app state keys", `{"authToken":"a1","session_token":"s1","jwt":"j1","apiKey":"k1","secret-access-key":"x1","privateKey":"p1","accessKeyId":"AKID","theme":"dark"}`,
			`{"authToken":"[redacted: authorization]","session_token":"[redacted: authorization]","jwt":"[redacted: authorization]","apiKey":"[redacted: authorization]","secret-access-key":"[redacted: authorization]","privateKey":"[redacted: authorization]","accessKeyId":"AKID","theme":"dark"}`},
		{"sign-in answer", `{"token":"t1","nextPageToken":"n1","expires":3600}`, `{"token":"[redacted: authorization]","nextPageToken":"n1","expires":3600}`},
		{"order and spacing kept", "{\n  \"b\": 1,\n  \"password\" : \"x\"\n}", "{\n  \"b\": 1,\n  \"password\" : \"[redacted: password]\"\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Redact(tt.in)
			if got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
			if !json.Valid([]byte(got)) {
				t.Errorf("the result is not JSON: %q", got)
			}
		})
	}
}

// TestRedactCutValues: a text cut inside a value keeps none of its first characters, so a cut
// the model chooses cannot reveal a value piece by piece.
func TestRedactCutValues(t *testing.T) {
	r := New([]Secret{{"hunter2!", KindPassword}, {tCookie, KindCookie}})
	tests := []struct {
		name, in, want string
	}{
		{"text ends in a password", "Password: hunte", "Password: [redacted: password]"},
		{"three characters", "Password: hun", "Password: [redacted: password]"},
		{"two characters stay", "Password: hu", "Password: hu"},
		{"before an ellipsis", `"hunt…" and more`, `"[redacted: password]…" and more`},
		{"before a truncation note", "cookie sess-4f9a\n[truncated: 10 more characters]", "cookie [redacted: cookie]\n[truncated: 10 more characters]"},
		{"cookie needs four", "cookie ses", "cookie ses"},
		{"a JSON string ends in one", `{"text":"Password: hunte","truncated":true}`, `{"text":"Password: [redacted: password]","truncated":true}`},
		{"whole value", "hunter2!", "[redacted: password]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestRedactKeepsMarkers: a value that is part of a marker ("password") does not break the
// markers, and redacting twice changes nothing.
func TestRedactKeepsMarkers(t *testing.T) {
	r := New([]Secret{{"password", KindPassword}, {"redacted", KindPassword}})
	in := "my password, then [redacted: cookie] and [redacted: hunter]"
	want := "my [redacted: password], then [redacted: cookie] and [[redacted: password]: hunter]"
	got := r.Redact(in)
	if got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	if again := r.Redact(got); again != got {
		t.Errorf("a second pass changed %q to %q", got, again)
	}
}

func TestRedactorSecret(t *testing.T) {
	r := testSecrets()
	tests := []struct {
		name, in, want string
	}{
		{"in an address", `{"url":"/collect?c=` + tCookie + `"}`, KindCookie},
		{"URL-encoded", `{"url":"/collect?p=` + url.QueryEscape(tPassword) + `"}`, KindPassword},
		{"lower-case percent escapes", `{"url":"/c?p=pa%22ss%3cw%3erd%269"}`, KindPassword},
		{"\\u-escaped in JSON", `{"url":` + unicodeJSON("/c?k="+tKey) + `}`, KindKey},
		{"in a header", `{"headers":{"X-T":"` + tAuth + `"}}`, KindAuth},
		{"none", `{"url":"/collect?c=nothing"}`, ""},
	}
	for _, tt := range tests {
		if got := r.Secret(tt.in); got != tt.want {
			t.Errorf("%s: Secret(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	var none *Redactor
	if got := none.Secret(tCookie); got != "" {
		t.Errorf("a redactor without values found %q", got)
	}
}

func BenchmarkRedactToolResult(b *testing.B) {
	var secrets []Secret
	for i := 0; i < 100; i++ {
		secrets = append(secrets, Secret{fmt.Sprintf("cookie-value-%03d-x9", i), KindCookie})
	}
	page := strings.Repeat(`{"ref":"e12","tag":"div","text":"An ordinary line of page text … with some words","attrs":{"class":"row"}},`, 200)
	in := `{"matches":[` + strings.TrimSuffix(page, ",") + `]}`
	b.Run("compile", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			New(secrets)
		}
	})
	r := New(secrets)
	b.Run("json", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		for i := 0; i < b.N; i++ {
			r.Redact(in)
		}
	})
	text := strings.Repeat("An ordinary line of page text with some words and numbers 12345.\n", 1000)
	b.Run("text", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for i := 0; i < b.N; i++ {
			r.Redact(text)
		}
	})
}

// FuzzRedact: any text, any secret — no panic, the secret does not survive, and a second pass
// changes nothing further.
func FuzzRedact(f *testing.F) {
	f.Add(`{"a":"<input type=password value=x>"}`, "hunter22")
	f.Add("Cookie: a=b; c=d\nAuthorization: Bearer xyz", "xyz-secret")
	f.Add(`[{"type":"password","value":"\u0068unter22"}]`, "hunter22")
	f.Add("<input type=\"password\" value=\"", "abcd")
	f.Add("x…", "[redacted: key]")
	f.Fuzz(func(t *testing.T, text, value string) {
		r := New(nil)
		if Accept(value, KindPassword) {
			r = New([]Secret{{value, KindPassword}})
		}
		out := r.Redact(text)
		if r.known() && strings.Contains(out, value) && !strings.Contains(text, markerOpen) && !strings.Contains(value, "]") {
			// A value can reappear only by joining text around a marker it overlaps.
			t.Errorf("Redact(%q) with secret %q = %q", text, value, out)
		}
	})
}
