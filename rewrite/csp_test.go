package rewrite

import (
	"strings"
	"testing"
)

var (
	testHash  = ScriptHash([]byte("boot()"))
	testNeeds = CSPNeeds{
		ScriptHash: testHash,
		Connect:    []string{"https://remix.proxy", "wss://remix.proxy"},
		Frame:      []string{"https://remix.proxy"},
	}
	ours = "https://remix.proxy wss://remix.proxy" // testNeeds.Connect, joined

	// externalNeeds is for a bootstrap loaded with <script src> from remix.proxy.
	externalNeeds = CSPNeeds{
		ScriptSrc: []string{"https://remix.proxy"},
		Connect:   testNeeds.Connect,
		Frame:     testNeeds.Frame,
	}
)

func withNonce(n CSPNeeds, nonce string) CSPNeeds {
	n.Nonce = nonce
	return n
}

// adjustCases are shared by TestAdjustCSP and the property tests.
var adjustCases = []struct {
	name  string
	value string
	needs CSPNeeds
	want  string
}{
	{
		name:  "external: host policy gets our origin",
		value: "script-src 'self'; object-src 'none'",
		needs: externalNeeds,
		want:  "script-src 'self' https://remix.proxy; object-src 'none'",
	},
	{
		name:  "external: unsafe-inline policy keeps working",
		value: "script-src 'self' 'unsafe-inline'",
		needs: externalNeeds,
		want:  "script-src 'self' 'unsafe-inline' https://remix.proxy",
	},
	{
		name:  "external: nonce reused, nothing added",
		value: "script-src 'nonce-abc' 'strict-dynamic'",
		needs: withNonce(externalNeeds, "abc"),
		want:  "script-src 'nonce-abc' 'strict-dynamic'",
	},
	{
		name:  "external: origin already allowed",
		value: "script-src https://remix.proxy",
		needs: externalNeeds,
		want:  "script-src https://remix.proxy",
	},
	{
		name:  "external: script-src-elem is the one that counts",
		value: "script-src 'none'; script-src-elem 'self'",
		needs: externalNeeds,
		want:  "script-src 'none'; script-src-elem 'self' https://remix.proxy",
	},
	{
		name:  "external: default-src only, its unsafe-inline inherited as it was",
		value: "default-src 'self' 'unsafe-inline'",
		needs: externalNeeds,
		want:  "default-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline' https://remix.proxy; connect-src 'self' " + ours + "; frame-src 'self' https://remix.proxy",
	},
	{
		name:  "strict nonce policy with our nonce",
		value: "script-src 'nonce-abc' 'strict-dynamic'; object-src 'none'; base-uri 'none'",
		needs: withNonce(testNeeds, "abc"),
		want:  "script-src 'nonce-abc' 'strict-dynamic'; object-src 'none'; base-uri 'none'",
	},
	{
		name:  "strict nonce policy without our nonce",
		value: "script-src 'nonce-abc' 'strict-dynamic'; object-src 'none'; base-uri 'none'",
		needs: testNeeds,
		want:  "script-src 'nonce-abc' 'strict-dynamic' " + testHash + "; object-src 'none'; base-uri 'none'",
	},
	{
		name:  "strict nonce policy with another nonce",
		value: "script-src 'nonce-abc'",
		needs: withNonce(testNeeds, "xyz"),
		want:  "script-src 'nonce-abc' " + testHash,
	},
	{
		name:  "hash policy",
		value: "script-src 'self' 'sha256-B2yPHKaXnvFWtRChIbabYmUBFZdVfKKXHbWtWidDVF8='",
		needs: testNeeds,
		want:  "script-src 'self' 'sha256-B2yPHKaXnvFWtRChIbabYmUBFZdVfKKXHbWtWidDVF8=' " + testHash,
	},
	{
		name:  "our hash already present",
		value: "script-src " + testHash,
		needs: testNeeds,
		want:  "script-src " + testHash,
	},
	{
		name:  "strict-dynamic with unsafe-inline fallback",
		value: "script-src 'strict-dynamic' 'nonce-abc' 'unsafe-inline' https:",
		needs: testNeeds,
		want:  "script-src 'strict-dynamic' 'nonce-abc' 'unsafe-inline' https: " + testHash,
	},
	{
		name:  "strict-dynamic alone",
		value: "script-src 'strict-dynamic' 'unsafe-inline'",
		needs: testNeeds,
		want:  "script-src 'strict-dynamic' 'unsafe-inline' " + testHash,
	},
	{
		name:  "unsafe-inline only",
		value: "script-src 'self' 'unsafe-inline'",
		needs: testNeeds,
		want:  "script-src 'self' 'unsafe-inline'",
	},
	{
		name:  "unsafe-inline upper case",
		value: "script-src 'UNSAFE-INLINE'",
		needs: testNeeds,
		want:  "script-src 'UNSAFE-INLINE'",
	},
	{
		name:  "unsafe-inline and malformed nonce",
		value: `script-src 'unsafe-inline' 'nonce-a"b'`,
		needs: testNeeds,
		want:  `script-src 'unsafe-inline' 'nonce-a"b'`,
	},
	{
		name:  "unsafe-inline and nonce",
		value: "script-src 'unsafe-inline' 'nonce-abc'",
		needs: testNeeds,
		want:  "script-src 'unsafe-inline' 'nonce-abc' " + testHash,
	},
	{
		name:  "unsafe-inline and our nonce",
		value: "script-src 'unsafe-inline' 'nonce-abc'",
		needs: withNonce(testNeeds, "abc"),
		want:  "script-src 'unsafe-inline' 'nonce-abc'",
	},
	{
		name:  "unsafe-inline and hash",
		value: "script-src 'unsafe-inline' 'sha384-AbC'",
		needs: testNeeds,
		want:  "script-src 'unsafe-inline' 'sha384-AbC' " + testHash,
	},
	{
		name:  "default-src only",
		value: "default-src 'self'",
		needs: testNeeds,
		want:  "default-src 'self'; script-src 'self' " + testHash + "; connect-src 'self' " + ours + "; frame-src 'self' https://remix.proxy",
	},
	{
		name:  "default-src with trailing semicolon",
		value: "default-src 'self' https://cdn.example;  ",
		needs: testNeeds,
		want:  "default-src 'self' https://cdn.example; script-src 'self' https://cdn.example " + testHash + "; connect-src 'self' https://cdn.example " + ours + "; frame-src 'self' https://cdn.example https://remix.proxy  ",
	},
	{
		name:  "default-src unsafe-inline",
		value: "default-src * 'unsafe-inline'",
		needs: testNeeds,
		want:  "default-src * 'unsafe-inline'; connect-src * " + ours + "; frame-src * https://remix.proxy",
	},
	{
		name:  "default-src nonce and unsafe-inline",
		value: "default-src 'self' 'unsafe-inline' 'nonce-abc' 'strict-dynamic' 'sha256-AbC='",
		needs: testNeeds,
		want:  "default-src 'self' 'unsafe-inline' 'nonce-abc' 'strict-dynamic' 'sha256-AbC='; script-src 'self' 'nonce-abc' 'strict-dynamic' 'sha256-AbC=' " + testHash + "; connect-src 'self' " + ours + "; frame-src 'self' https://remix.proxy",
	},
	{
		name:  "default-src unsafe-inline only",
		value: "default-src 'unsafe-inline'",
		needs: testNeeds,
		want:  "default-src 'unsafe-inline'; connect-src " + ours + "; frame-src https://remix.proxy",
	},
	{
		name:  "default-src none",
		value: "default-src 'none'",
		needs: testNeeds,
		want:  "default-src 'none'; connect-src " + ours + "; frame-src https://remix.proxy",
	},
	{
		name:  "none script",
		value: "script-src 'none'; img-src 'self'",
		needs: testNeeds,
		want:  "script-src 'none'; img-src 'self'",
	},
	{
		name:  "empty script-src and connect-src",
		value: "script-src; connect-src",
		needs: testNeeds,
		want:  "script-src; connect-src " + ours,
	},
	{
		name:  "connect-src none",
		value: "connect-src 'none'; script-src 'self'",
		needs: testNeeds,
		want:  "connect-src " + ours + "; script-src 'self' " + testHash,
	},
	{
		name:  "connect-src already allows us",
		value: "connect-src https://REMIX.proxy wss://remix.proxy",
		needs: testNeeds,
		want:  "connect-src https://REMIX.proxy wss://remix.proxy",
	},
	{
		name:  "connect-src partly",
		value: "connect-src 'self' https://remix.proxy",
		needs: testNeeds,
		want:  "connect-src 'self' https://remix.proxy wss://remix.proxy",
	},
	{
		name:  "connect-src star",
		value: "connect-src *",
		needs: testNeeds,
		want:  "connect-src * " + ours,
	},
	{
		name:  "script-src-elem preferred",
		value: "script-src 'self'; script-src-elem 'self' https://cdn.example",
		needs: testNeeds,
		want:  "script-src 'self'; script-src-elem 'self' https://cdn.example " + testHash,
	},
	{
		name:  "child-src inherited for frames",
		value: "child-src 'self'",
		needs: testNeeds,
		want:  "child-src 'self'; frame-src 'self' https://remix.proxy",
	},
	{
		name:  "frame-src none",
		value: "frame-src 'none'",
		needs: testNeeds,
		want:  "frame-src https://remix.proxy",
	},
	{
		name:  "multiple comma-separated policies",
		value: "script-src 'self', connect-src 'none',default-src https:",
		needs: testNeeds,
		want:  "script-src 'self' " + testHash + ", connect-src " + ours + ",default-src https:; script-src https: " + testHash + "; connect-src https: " + ours + "; frame-src https: https://remix.proxy",
	},
	{
		name:  "upper-case directive names",
		value: "SCRIPT-SRC 'self'; Connect-Src 'self'",
		needs: testNeeds,
		want:  "SCRIPT-SRC 'self' " + testHash + "; Connect-Src 'self' " + ours,
	},
	{
		name:  "duplicate directive only first edited",
		value: "script-src 'self'; script-src 'none'",
		needs: testNeeds,
		want:  "script-src 'self' " + testHash + "; script-src 'none'",
	},
	{
		name:  "duplicate default-src first counts",
		value: "default-src 'none'; default-src 'self'",
		needs: testNeeds,
		want:  "default-src 'none'; default-src 'self'; connect-src " + ours + "; frame-src https://remix.proxy",
	},
	{
		name:  "non-ascii directive ignored like a browser does",
		value: "script-src 'self' é; default-src 'self'",
		needs: CSPNeeds{ScriptHash: testHash},
		want:  "script-src 'self' é; default-src 'self'; script-src 'self' " + testHash,
	},
	{
		name:  "whitespace kept",
		value: "  script-src\t'self'  ;  img-src *  ",
		needs: testNeeds,
		want:  "  script-src\t'self' " + testHash + "  ;  img-src *  ",
	},
	{
		name:  "no fetch directive",
		value: "img-src 'self'; frame-ancestors 'none'; upgrade-insecure-requests",
		needs: testNeeds,
		want:  "img-src 'self'; frame-ancestors 'none'; upgrade-insecure-requests",
	},
	{
		name:  "trusted types untouched",
		value: "require-trusted-types-for 'script'; trusted-types default; script-src 'self'",
		needs: testNeeds,
		want:  "require-trusted-types-for 'script'; trusted-types default; script-src 'self' " + testHash,
	},
	{
		name:  "no needs",
		value: "default-src 'self'",
		needs: CSPNeeds{},
		want:  "default-src 'self'",
	},
	{name: "empty", value: "", needs: testNeeds, want: ""},
	{name: "garbage", value: ";;; ,,, \x00 \xff\xfe", needs: testNeeds, want: ";;; ,,, \x00 \xff\xfe"},
	{name: "only commas", value: ",", needs: testNeeds, want: ","},
	{
		name:  "meta content with newlines",
		value: "\n  default-src 'self';\n  script-src 'self' 'nonce-r4nd0m'\n",
		needs: testNeeds,
		want:  "\n  default-src 'self';\n  script-src 'self' 'nonce-r4nd0m' " + testHash + "; connect-src 'self' " + ours + "; frame-src 'self' https://remix.proxy\n",
	},
	{
		name:  "meta content with a comma",
		value: "script-src 'self', img-src *",
		needs: CSPNeeds{ScriptHash: testHash},
		want:  "script-src 'self' " + testHash + ", img-src *",
	},
	{
		name:  "meta content typical",
		value: "default-src 'self'; script-src 'self' https://www.google-analytics.com; style-src 'self' 'unsafe-inline'; connect-src 'self' https://api.example",
		needs: testNeeds,
		want:  "default-src 'self'; script-src 'self' https://www.google-analytics.com " + testHash + "; style-src 'self' 'unsafe-inline'; connect-src 'self' https://api.example " + ours + "; frame-src 'self' https://remix.proxy",
	},
}

func TestAdjustCSP(t *testing.T) {
	for _, tc := range adjustCases {
		t.Run(tc.name, func(t *testing.T) {
			if got := AdjustCSP(tc.value, tc.needs); got != tc.want {
				t.Errorf("AdjustCSP(%q):\ngot  %q\nwant %q", tc.value, got, tc.want)
			}
		})
	}
}

// TestAdjustCSPProperties checks, over every case, that AdjustCSP only ever adds: no
// 'unsafe-inline' appears, no original source token disappears (but a lone 'none' in
// connect-src or frame-src), directives keep their order and default-src is untouched; that the
// result lets the bootstrap run and connect; and that adjusting twice changes nothing more.
func TestAdjustCSPProperties(t *testing.T) {
	for _, tc := range adjustCases {
		for _, needs := range []CSPNeeds{tc.needs, testNeeds, withNonce(testNeeds, "abc"), externalNeeds, withNonce(externalNeeds, "abc"), {}} {
			t.Run(tc.name, func(t *testing.T) {
				checkAdjustProperties(t, tc.value, needs)
			})
		}
	}
}

func FuzzAdjustCSP(f *testing.F) {
	for _, tc := range adjustCases {
		f.Add(tc.value, "")
		f.Add(tc.value, "abc")
	}
	f.Fuzz(func(t *testing.T, value, nonce string) {
		checkAdjustProperties(t, value, withNonce(testNeeds, nonce))
		checkAdjustProperties(t, value, withNonce(externalNeeds, nonce))
	})
}

func checkAdjustProperties(t *testing.T, value string, needs CSPNeeds) {
	t.Helper()
	got := AdjustCSP(value, needs)
	before, after := rawPolicies(value), rawPolicies(got)
	if len(before) != len(after) {
		t.Fatalf("AdjustCSP(%q) = %q: got %d policies, want %d", value, got, len(after), len(before))
	}
	for i := range before {
		if len(after[i]) < len(before[i]) {
			t.Fatalf("AdjustCSP(%q) = %q: policy %d lost directives", value, got, i)
		}
		for j, d := range before[i] {
			a := after[i][j]
			if a[0] != d[0] {
				t.Errorf("AdjustCSP(%q) = %q: directive %d of policy %d: got %q, want %q", value, got, j, i, a[0], d[0])
				continue
			}
			name := strings.ToLower(d[0])
			if (name == "connect-src" || name == "frame-src") && len(d) == 2 && strings.EqualFold(d[1], "'none'") {
				continue
			}
			if name == "default-src" && strings.Join(a, " ") != strings.Join(d, " ") {
				t.Errorf("AdjustCSP(%q) = %q: default-src changed to %q", value, got, a)
			}
			if len(a) < len(d) || strings.Join(a[:len(d)], " ") != strings.Join(d, " ") {
				t.Errorf("AdjustCSP(%q) = %q: directive %q lost sources: got %q", value, got, d, a)
				continue
			}
			for _, src := range a[len(d):] {
				if strings.EqualFold(src, "'unsafe-inline'") {
					t.Errorf("AdjustCSP(%q) = %q: 'unsafe-inline' added to %q", value, got, d[0])
				}
			}
		}
		for _, a := range after[i][len(before[i]):] {
			switch strings.ToLower(a[0]) {
			case "script-src", "connect-src", "frame-src":
			default:
				t.Errorf("AdjustCSP(%q) = %q: added directive %q", value, got, a[0])
			}
			// A new directive may hold 'unsafe-inline' only as a script-src copying a
			// default-src that had it (which script-src inherited anyway).
			if countToken(strings.Join(a, " ")+";", "'unsafe-inline'") > 0 &&
				!(strings.EqualFold(a[0], "script-src") && len(needs.ScriptSrc) > 0 && defaultSrcHasUnsafeInline(before[i])) {
				t.Errorf("AdjustCSP(%q) = %q: new directive %q has 'unsafe-inline'", value, got, a)
			}
		}
	}
	// The result serves the bootstrap, unless the page forbids all scripts (or, for an
	// external bootstrap, uses 'strict-dynamic' without our nonce: ExternalAllowed says so).
	external := len(needs.ScriptSrc) > 0 && needs.ScriptHash == "" && ExternalAllowed([]string{value}, needs.Nonce)
	for _, p := range parsePolicies(got) {
		d := p.effective("script-src-elem", "script-src", "default-src")
		if d != nil && needs.ScriptHash != "" && !d.matchesNothing(got) && !d.allowsBootstrap(got, needs) {
			t.Errorf("AdjustCSP(%q) = %q: script directive %q does not allow the bootstrap", value, got, d.name)
		}
		if d != nil && external && !d.matchesNothing(got) &&
			!(needs.Nonce != "" && d.has(got, "'nonce-"+needs.Nonce+"'")) && !d.has(got, needs.ScriptSrc[0]) {
			t.Errorf("AdjustCSP(%q) = %q: script directive %q does not allow the external bootstrap", value, got, d.name)
		}
		for _, c := range []struct {
			names []string
			want  []string
		}{
			{[]string{"connect-src", "default-src"}, needs.Connect},
			{[]string{"frame-src", "child-src", "default-src"}, needs.Frame},
		} {
			if d := p.effective(c.names...); d != nil {
				for _, w := range c.want {
					if !d.has(got, w) {
						t.Errorf("AdjustCSP(%q) = %q: %s does not allow %s", value, got, d.name, w)
					}
				}
			}
		}
	}
	if again := AdjustCSP(got, needs); again != got {
		t.Errorf("AdjustCSP is not idempotent on %q: got %q then %q", value, got, again)
	}
}

// defaultSrcHasUnsafeInline reports whether a raw policy's first default-src has 'unsafe-inline'.
func defaultSrcHasUnsafeInline(policy [][]string) bool {
	for _, d := range policy {
		if strings.EqualFold(d[0], "default-src") {
			for _, src := range d[1:] {
				if strings.EqualFold(src, "'unsafe-inline'") {
					return true
				}
			}
			return false
		}
	}
	return false
}

// rawPolicies splits a header value into policies, directives and tokens, keeping every
// non-empty directive (duplicates and non-ASCII ones too).
func rawPolicies(v string) [][][]string {
	var out [][][]string
	for _, p := range strings.Split(v, ",") {
		var dirs [][]string
		for _, d := range strings.Split(p, ";") {
			if f := strings.FieldsFunc(d, func(r rune) bool { return r < 0x80 && isSpaceByte(byte(r)) }); len(f) > 0 {
				dirs = append(dirs, f)
			}
		}
		out = append(out, dirs)
	}
	return out
}

// countToken counts the source tokens of a header value equal to tok, ASCII case-insensitively.
func countToken(v, tok string) int {
	n := 0
	for _, p := range rawPolicies(v) {
		for _, d := range p {
			for _, src := range d[1:] {
				if strings.EqualFold(src, tok) {
					n++
				}
			}
		}
	}
	return n
}

func TestPageNonce(t *testing.T) {
	tests := []struct {
		name    string
		headers []string
		want    string
	}{
		{"single nonce", []string{"script-src 'nonce-abc' 'strict-dynamic'"}, "abc"},
		{"shared nonce across policies", []string{"script-src 'nonce-abc' 'nonce-def', default-src 'nonce-def'"}, "def"},
		{"multiple header values", []string{"script-src 'nonce-abc'", "script-src 'nonce-xyz' 'nonce-abc'"}, "abc"},
		{"no shared nonce", []string{"script-src 'nonce-a'", "script-src 'nonce-b'"}, ""},
		{"policy without nonces ignored", []string{"script-src 'nonce-a'", "script-src 'self'"}, "a"},
		{"malformed nonce", []string{`script-src 'nonce-a"><x'`}, ""},
		{"nonce with padding", []string{"script-src 'nonce-YWJj+/_-=='"}, "YWJj+/_-=="},
		{"too much padding", []string{"script-src 'nonce-a==='"}, ""},
		{"script-src-elem wins", []string{"script-src 'nonce-a'; script-src-elem 'nonce-b'"}, "b"},
		{"nonce in default-src", []string{"default-src 'nonce-a'"}, "a"},
		{"nonce in default-src shadowed", []string{"default-src 'nonce-a'; script-src 'self'"}, ""},
		{"upper-case keyword", []string{"script-src 'NONCE-abc='"}, "abc="},
		{"no headers", nil, ""},
		{"empty value", []string{""}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PageNonce(tc.headers); got != tc.want {
				t.Errorf("PageNonce(%q) = %q, want %q", tc.headers, got, tc.want)
			}
		})
	}
}

func TestBlocksInjection(t *testing.T) {
	tests := []struct {
		name    string
		headers []string
		want    bool
	}{
		{"none script", []string{"script-src 'none'"}, true},
		{"none upper case", []string{"script-src 'NONE'"}, true},
		{"default-src none", []string{"default-src 'none'"}, true},
		{"default-src none with script-src", []string{"default-src 'none'; script-src 'self'"}, false},
		{"script-src-elem none", []string{"script-src 'self'; script-src-elem 'none'"}, true},
		{"empty script-src", []string{"script-src"}, true},
		{"none with other sources", []string{"script-src 'none' 'self'"}, false},
		{"sandbox without allow-scripts", []string{"sandbox allow-forms allow-popups"}, true},
		{"sandbox empty", []string{"sandbox"}, true},
		{"sandbox with allow-scripts", []string{"sandbox allow-scripts allow-same-origin"}, false},
		{"one of multiple policies blocks", []string{"script-src 'self', script-src 'none'"}, true},
		{"second header value blocks", []string{"script-src 'self'", "sandbox"}, true},
		{"strict nonce policy", []string{"script-src 'nonce-abc' 'strict-dynamic'"}, false},
		{"duplicate none ignored", []string{"script-src 'self'; script-src 'none'"}, false},
		{"connect-src none does not block", []string{"connect-src 'none'"}, false},
		{"empty", []string{""}, false},
		{"no headers", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := BlocksInjection(tc.headers); got != tc.want {
				t.Errorf("BlocksInjection(%q) = %v, want %v", tc.headers, got, tc.want)
			}
		})
	}
}

func TestExternalAllowed(t *testing.T) {
	cases := []struct {
		name     string
		policies []string
		nonce    string
		want     bool
	}{
		{"no policy", nil, "", true},
		{"host-based", []string{"script-src 'self'"}, "", true},
		{"unsafe-inline", []string{"default-src 'self' 'unsafe-inline'"}, "", true},
		{"strict-dynamic with our nonce", []string{"script-src 'nonce-abc' 'strict-dynamic'"}, "abc", true},
		{"strict-dynamic without a nonce", []string{"script-src 'sha256-AAAA' 'strict-dynamic'"}, "", false},
		{"strict-dynamic with another nonce", []string{"script-src 'nonce-abc' 'strict-dynamic'"}, "xyz", false},
		{"second policy strict", []string{"script-src 'self', script-src 'strict-dynamic' 'sha256-AAAA'"}, "", false},
		{"strict-dynamic in default-src", []string{"default-src 'strict-dynamic' 'nonce-q'"}, "q", true},
		{"script-src-elem decides", []string{"script-src 'strict-dynamic'; script-src-elem 'self'"}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ExternalAllowed(c.policies, c.nonce); got != c.want {
				t.Errorf("ExternalAllowed(%q, %q) = %v, want %v", c.policies, c.nonce, got, c.want)
			}
		})
	}
}

func TestParseBootTag(t *testing.T) {
	tests := []struct {
		tag  string
		want bootTag
	}{
		{`<script data-remixproxy="T" src="https://remix.proxy/agent/x.js" nonce="n1"></script>`,
			bootTag{script: true, nonce: "n1", src: "https://remix.proxy/agent/x.js"}},
		{`<script data-remixproxy="T">boot()</script>`, bootTag{script: true, hash: ScriptHash([]byte("boot()"))}},
		{`<script data-remixproxy="T" nonce="a&amp;b">x &amp; y</script>`, bootTag{script: true, nonce: "a&b", hash: ScriptHash([]byte("x &amp; y"))}},
		{`<script src=""></script>`, bootTag{script: true, src: "about:invalid"}},
		{`<script></script>`, bootTag{script: true, hash: ScriptHash(nil)}},
		{`<meta charset="utf-8"><script>x</script>`, bootTag{}},
		{``, bootTag{}},
	}
	for _, tc := range tests {
		if got := parseBootTag([]byte(tc.tag)); got != tc.want {
			t.Errorf("parseBootTag(%q) = %+v, want %+v", tc.tag, got, tc.want)
		}
	}
}

func TestPolicyVerdict(t *testing.T) {
	external := bootTag{script: true, src: "https://remix.proxy/agent/x.js"}
	externalNonce := bootTag{script: true, src: "https://remix.proxy/agent/x.js", nonce: "n1"}
	inline := bootTag{script: true, hash: ScriptHash([]byte("boot()"))}
	inlineNonce := bootTag{script: true, hash: inline.hash, nonce: "n1"}
	tests := []struct {
		name   string
		policy string
		tag    bootTag
		want   tagVerdict
	}{
		{"no script directive", "img-src 'self'", external, tagAllowed},
		{"empty policy", "", external, tagAllowed},
		{"origin listed", "script-src 'self' https://remix.proxy", external, tagAllowed},
		{"origin with slash, other case", "script-src HTTPS://Remix.Proxy/", external, tagAllowed},
		{"scheme source", "script-src https:", external, tagAllowed},
		{"star", "default-src *", external, tagAllowed},
		{"origin missing", "script-src 'self'", external, tagBlocked},
		{"other scheme", "script-src http://remix.proxy http:", external, tagBlocked},
		{"wildcard host not matched", "script-src https://*.proxy", external, tagBlocked},
		{"strict-dynamic makes the host inert", "script-src https://remix.proxy 'strict-dynamic' 'sha256-AAAA'", external, tagBlocked},
		{"our nonce", "script-src 'nonce-n1' 'strict-dynamic'", externalNonce, tagAllowed},
		{"another nonce", "script-src 'nonce-n2' 'strict-dynamic' https://remix.proxy", externalNonce, tagBlocked},
		{"script-src-elem decides", "script-src 'none'; script-src-elem https://remix.proxy", external, tagAllowed},
		{"default-src falls back", "default-src 'self'", external, tagBlocked},
		{"inline hash", "script-src " + inline.hash + " 'strict-dynamic'", inline, tagAllowed},
		{"inline without the hash", "script-src 'self'", inline, tagBlocked},
		{"inline unsafe-inline", "script-src 'self' 'unsafe-inline'", inline, tagAllowed},
		{"inline unsafe-inline disabled by a hash", "script-src 'unsafe-inline' 'sha256-AAAA'", inline, tagBlocked},
		{"inline our nonce", "script-src 'nonce-n1'", inlineNonce, tagAllowed},
		{"none", "script-src 'none'", external, tagForbidden},
		{"none upper case, default-src", "default-src 'NONE'", inline, tagForbidden},
		{"none beats our nonce elsewhere", "script-src 'nonce-n1', script-src 'none'", externalNonce, tagForbidden},
		{"empty script-src", "script-src", inline, tagForbidden},
		{"none with a source is not none", "script-src 'none' https://remix.proxy", external, tagAllowed},
		{"second policy blocks", "script-src https://remix.proxy, script-src 'self'", external, tagBlocked},
		{"not a script tag", "script-src 'none'", bootTag{}, tagAllowed},
	}
	for _, tc := range tests {
		if got := policyVerdict(tc.policy, tc.tag); got != tc.want {
			t.Errorf("%s: policyVerdict(%q) = %d, want %d", tc.name, tc.policy, got, tc.want)
		}
	}
}
