package rewrite

import (
	"bytes"
	"strings"
	"testing"
)

func styleHosts(host string) bool {
	// The numeric and punycode spellings stand for sites a remixlet might name in its matches;
	// the browser reads them as other hosts, so their url()s are refused all the same.
	return host == "cdn.example.com" || host == "example.com" || host == "0x7f.1" || host == "127.1" || host == "xn--zz.example.com"
}

// benignCSS is real-world style CSS that must pass unchanged.
const benignCSS = `/* Remixlet: tidy the feed */
@charset-free;
:root { --accent: #0a7; --gap: calc(1rem + 2px); --shadow: 0 1px 2px rgb(0 0 0 / 20%); }
.promoted, [data-ad], [data-testid="ad"], [aria-label^="Sponsored"], a[href*="utm_"], article:has(> .sponsored) { display: none !important; }
.feed > li:not(:first-child):nth-child(2n+1) { margin-block: var(--gap, 8px); }
.card {
  background: linear-gradient(to right, hsl(210 40% 96%), oklch(70% 0.1 200)) , url(https://cdn.example.com/bg.png) no-repeat;
  background-image: url("https://example.com/img/a.svg");
  color: color-mix(in srgb, var(--accent) 60%, white);
  transition: transform 200ms cubic-bezier(.2, .8, .2, 1), opacity .2s steps(4, end);
  transform: translate(-50%, 0) rotate(3deg) scale(1.02);
  filter: drop-shadow(0 0 2px rgba(0,0,0,.3)) grayscale(20%);
  clip-path: polygon(0 0, 100% 0, 100% 80%, 0 100%);
  grid-template-columns: repeat(auto-fill, minmax(200px, 1fr));
  width: clamp(200px, 50vw, min(800px, 100%));
  content: "→ read more";
  -webkit-line-clamp: 3;
  & .title { font-weight: 600; }
  &:hover { box-shadow: var(--shadow); }
}
ol.steps li::before { content: counter(step) ". "; counter-increment: step; }
@media (max-width: 600px) and (prefers-color-scheme: dark) {
  .sidebar { display: none; }
  @supports (display: grid) and selector(:has(a)) { .feed { display: grid; } }
}
@keyframes pulse { from { opacity: 1 } 50% { opacity: .5 } to { opacity: 1 } }
@-webkit-keyframes pulse { 0% { opacity: 1 } 100% { opacity: 0 } }
@layer base, remix;
@layer remix { .x { color: red } }
@container card (min-width: 400px) { .title { font-size: 1.2em } }
@property --angle { syntax: '<angle>'; inherits: false; initial-value: 0deg; }
@page { margin: 1cm }
.spin { animation: pulse 2s linear infinite; rotate: calc(var(--angle) * 2); }
`

func TestCheckStylesheetBenignUnchanged(t *testing.T) {
	// "@charset-free;" is an unknown at-rule: take it out so the rest is pure benign CSS.
	css := strings.Replace(benignCSS, "@charset-free;\n", "", 1)
	clean, probs := CheckStylesheet([]byte(css), styleHosts)
	if len(probs) > 0 {
		t.Fatalf("benign CSS got problems: %v", probs)
	}
	if string(clean) != css {
		t.Fatalf("benign CSS changed:\n got %q\nwant %q", clean, css)
	}
}

func TestCheckStylesheetRefuses(t *testing.T) {
	tests := []struct {
		name string
		css  string
		keep string // a part of the sheet that must survive, if any
	}{
		{"plain url to other host", `a{background:url(https://evil.test/x.png)}`, "a{"},
		{"quoted url to other host", `a{background:url("https://evil.test/x")}`, ""},
		{"uppercase URL", `a{background:URL(https://evil.test/x)}`, ""},
		{"hex-escaped url", `a{color:red;background:\75rl(https://evil.test/x)}`, "color:red"},
		{"long hex escape", `a{background:\000075rl(https://evil.test/x)}`, ""},
		{"hex escape with space", `a{background:\75 rl(https://evil.test/x)}`, ""},
		{"escaped letter", `a{background:u\rl(https://evil.test/x)}`, ""},
		{"escaped url to allowed host", `a{background:u\rl(https://cdn.example.com/x)}`, ""},
		{"comment splits url", `a{background:u/**/rl(https://evil.test/x)}`, ""},
		{"escaped host in url", `a{background:url(https://\65vil.test/x)}`, ""},
		{"userinfo trick", `a{background:url(https://cdn.example.com@evil.test/x)}`, ""},
		{"backslash trick", `a{background:url("https://cdn.example.com\\@evil.test/x")}`, ""},
		{"uppercase host", `a{background:url(https://EVIL.test/x)}`, ""},
		{"percent host", `a{background:url(https://%65vil.test/x)}`, ""},
		{"data url", `a{background:url(data:image/png;base64,AAAA)}`, ""},
		{"relative url", `a{background:url(/img/x.png)}`, ""},
		{"numeric IPv4 host", `a{background:url(https://0x7f.1/x)}`, ""},
		{"short IPv4 host", `a{background:url(https://127.1/x)}`, ""},
		{"bad punycode host", `a{background:url(https://xn--zz.example.com/x)}`, ""},
		{"scheme-relative url", `a{background:url(//evil.test/x)}`, ""},
		{"javascript url", `a{background:url(javascript:alert(1))}`, ""},
		{"import", `@import url(https://evil.test/x.css); b{color:blue}`, "b{color:blue}"},
		{"import string", `@import "https://evil.test/x.css";`, ""},
		{"import uppercase", `@IMPORT "https://evil.test/x.css";`, ""},
		{"import escaped", `@\69mport "https://evil.test/x.css"; b{color:blue}`, "b{color:blue}"},
		{"import after comment", `a{color:red}/**/@import 'x';*{}`, "*{}"},
		{"import nested in media", `@media screen{@import "https://evil.test/x.css"; a{color:red}}`, "a{color:red}"},
		{"font-face", `@font-face{font-family:x;src:url(https://cdn.example.com/f.woff)} p{margin:0}`, "p{margin:0}"},
		{"font-face escaped", `@\66ont-face{font-family:x;src:url(https://evil.test/f.woff)}`, ""},
		{"namespace", `@namespace svg url(http://www.w3.org/2000/svg);`, ""},
		{"document", `@-moz-document url-prefix(){a{color:red}}`, ""},
		{"image-set", `a{background:image-set("x.png" 1x)}`, ""},
		{"webkit image-set", `a{background:-webkit-image-set(url(https://evil.test/x) 1x)}`, ""},
		{"escaped image-set", `a{background:im\61ge-set("https://evil.test/x" 1x)}`, ""},
		{"src function", `a{background:src("https://evil.test/x")}`, ""},
		{"image function", `a{background:image("https://evil.test/x")}`, ""},
		{"element function", `a{background:element(#b)}`, ""},
		{"moz element", `a{background:-moz-element(#b)}`, ""},
		{"expression", `a{width:expression(alert(1))}`, ""},
		{"cross-fade", `a{background:cross-fade(url(https://evil.test/a), red 50%)}`, ""},
		{"paint", `a{background:paint(worklet)}`, ""},
		{"attr", `a::after{content:attr(data-x url)}`, ""},
		{"moz-binding", `a{-moz-binding:url(https://cdn.example.com/x.xml#b)}`, ""},
		{"behavior", `a{behavior:url(x.htc)}`, ""},
		{"escaped behavior", `a{beh\61vior:url(x.htc)}`, ""},
		{"custom property url", `a{--x: url(https://evil.test/x); background: var(--x)}`, "var(--x)"},
		{"custom property unknown function", `a{--x: image-set("https://evil.test/x" 1x); color: red}`, "color: red"},
		{"custom property block", `a{--x: { b: url(https://evil.test/x) }; color: red}`, "color: red"},
		{"value selector with allowed url", `input[value^="a"]{background:url(https://cdn.example.com/a)}`, ""},
		{"value selector in has", `form:has(input[value$="z"]) .x{background:url(https://cdn.example.com/a)}`, ""},
		{"close style tag in comment", `/* </style><script>alert(1)</script> */ a{color:red}`, "a{color:red}"},
		{"close style tag in string", `a{content:"</STYLE><script>alert(1)</script>"}`, ""},
		{"unterminated string", "a{content:\"abc\n;color:red}", ""},
		{"bad url", `a{background:url(https://cdn.example.com/a b)}`, ""},
		{"url in selector", `a:not(url(https://evil.test/)){color:red}`, ""},
		{"url in media prelude", `@media url(https://evil.test/){a{color:red}}`, ""},
		{"unknown at-rule", `@font-feature-values Font One { @styleset { nice-style: 12; } }`, ""},
		{"nul in url", "a{background:url(https://cdn.example.com\x00@evil.test/)}", ""},
		{"invalid utf-8", "a{content:\"\xff\"}", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clean, probs := CheckStylesheet([]byte(tt.css), styleHosts)
			if len(probs) == 0 {
				t.Fatalf("no problem reported; clean = %q", clean)
			}
			for _, p := range probs {
				if p.Line < 1 || p.Column < 1 || p.Reason == "" {
					t.Errorf("problem without position or reason: %+v", p)
				}
			}
			low := strings.ToLower(string(clean))
			for _, bad := range []string{"evil.test", "@import", "image-set", "</style", "url(data", "@font-face", "binding", "behavior", "expression"} {
				if strings.Contains(low, bad) {
					t.Errorf("clean output %q still contains %q", clean, bad)
				}
			}
			if tt.keep != "" && !strings.Contains(string(clean), tt.keep) {
				t.Errorf("clean output %q lost %q", clean, tt.keep)
			}
			if again, probs := CheckStylesheet(clean, styleHosts); len(probs) > 0 || !bytes.Equal(again, clean) {
				t.Errorf("re-checking clean output: got %q %v, want it unchanged with no problems", again, probs)
			}
		})
	}
}

func TestCheckStylesheetPositions(t *testing.T) {
	css := "a { color: red }\n\nb {\n  background: url(https://evil.test/x);\n}\n"
	_, probs := CheckStylesheet([]byte(css), styleHosts)
	if len(probs) != 1 {
		t.Fatalf("got %d problems %v, want 1", len(probs), probs)
	}
	if got := probs[0]; got.Line != 4 || got.Column != 15 {
		t.Errorf("got %d:%d, want 4:15 (%s)", got.Line, got.Column, got.Reason)
	}
	if !strings.Contains(probs[0].Error(), "4:15: ") || !strings.Contains(probs[0].Reason, "evil.test") {
		t.Errorf("Error() = %q, want position and host", probs[0].Error())
	}
}

func TestCheckStylesheetKeepsStructure(t *testing.T) {
	tests := []struct{ name, css, want string }{
		{"drop last declaration", `a{color:red;background:url(x)}`, `a{color:red;}`},
		{"drop middle declaration", `a{color:red;background:url(x);margin:0}`, `a{color:red;margin:0}`},
		{"drop whole rule by selector", `a:foo(x){color:red}b{color:blue}`, `b{color:blue}`},
		{"charset dropped", `@charset "utf-8";a{color:red}`, `a{color:red}`},
		{"separator keeps comment from forming", `a{color:red}/**/@import "x";*{}`, `a{color:red}/**/ *{}`},
		{"crlf normalised", "a{\r\ncolor:red}", "a{\ncolor:red}"},
		{"nil allowedHosts refuses every url", `a{background:url(https://example.com/x)}`, `a{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hosts := styleHosts
			if strings.HasPrefix(tt.name, "nil") {
				hosts = nil
			}
			clean, _ := CheckStylesheet([]byte(tt.css), hosts)
			if string(clean) != tt.want {
				t.Errorf("got %q, want %q", clean, tt.want)
			}
		})
	}
}

func TestDecodeCSSEscapes(t *testing.T) {
	tests := []struct{ in, want string }{
		{`\75rl`, "url"},
		{`\000075rl`, "url"},
		{`\75 rl`, "url"},
		{`u\rl`, "url"},
		{`\@import`, "@import"},
		{`a\0 b`, "a\uFFFDb"},
		{`\110000`, "\uFFFD"},
		{`\d800`, "\uFFFD"},
	}
	for _, tt := range tests {
		if got := decodeCSSName([]byte(tt.in)); got != tt.want {
			t.Errorf("decodeCSSName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := decodeCSSString([]byte("ab\\\ncd")); got != "abcd" {
		t.Errorf("line continuation: got %q, want %q", got, "abcd")
	}
}

// FuzzCheckStylesheet checks that what CheckStylesheet keeps is stable (re-checking it finds
// nothing and changes nothing) and that an independent, simpler reading of the kept text finds
// no load from a host other than the allowed ones and none of the refused constructs.
func FuzzCheckStylesheet(f *testing.F) {
	f.Add([]byte(benignCSS))
	for _, s := range []string{
		`a{background:\75rl(https://evil.test/x)}`, `@\69mport "https://evil.test/";`,
		`a{background:u\rl(https://evil.test/x)}`, `a{--x:url(https://evil.test)}`,
		`a{background:url(https://cdn.example.com/a.png)}`, `a{color:red}/**/@import 'x';*{}`,
		`@media x{a{b:c;d:image-set(e)}}`, "a{content:\"x\n}", `a{b:c(`, `a{b:"\`,
		`input[value^=a]{background:url(https://cdn.example.com/)}`, "0{00url(", "u+a-url(x)",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, css []byte) {
		clean, _ := CheckStylesheet(css, styleHosts)
		again, probs := CheckStylesheet(clean, styleHosts)
		if len(probs) > 0 {
			t.Fatalf("re-checking clean output %q found problems: %v", clean, probs)
		}
		if !bytes.Equal(again, clean) {
			t.Fatalf("re-checking changed the clean output:\n%q\n%q", clean, again)
		}
		if f := oracleFindings(clean); f != "" {
			t.Fatalf("clean output %q: %s", clean, f)
		}
		// A sheet that passes ends at the top level: whatever text follows it is read on its
		// own, so a load there is still found (what a joined sheet would otherwise hide).
		if _, probs := CheckStylesheet(css, styleHosts); len(probs) == 0 {
			_, probs := CheckStylesheet(append(append([]byte(nil), css...), swallowProbe...), styleHosts)
			if !mentions(probs, "evil.test") {
				t.Fatalf("%q passes, but the load in the text after it was not found: %v", css, probs)
			}
		}
	})
}

// swallowProbe is text put after a sheet that passed: its load must still be found.
const swallowProbe = "\nz{background:url(https://evil.test/after)}"

func mentions(probs []StyleProblem, s string) bool {
	for _, p := range probs {
		if strings.Contains(p.Reason, s) {
			return true
		}
	}
	return false
}

// oracleFindings reads css with a small scanner written apart from the checker: it drops
// comments, decodes escapes outside strings, sets strings aside, and looks for loads and refused
// names in what is left. It returns what it found, or "".
func oracleFindings(css []byte) string {
	if bytes.Contains(bytes.ToLower(css), []byte("</style")) {
		return `contains "</style"`
	}
	src := preprocessCSS(css)
	var code strings.Builder
	var strs []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := bytes.Index(src[i+2:], []byte("*/"))
			if end < 0 {
				i = len(src)
			} else {
				i += end + 4
			}
			code.WriteByte(' ')
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c && src[j] != '\n' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j, len(src))
			strs = append(strs, decodeCSSString(src[i+1:j]))
			code.WriteString("\x01\x02")
			i = min(j+1, len(src))
		case c == '\\':
			j := i + 1
			if j < len(src) && isHex(src[j]) {
				for j < len(src) && j < i+7 && isHex(src[j]) {
					j++
				}
				if j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n') {
					j++
				}
			} else if j < len(src) {
				j++
			}
			code.WriteString(strings.ToLower(decodeCSSName(src[i:j])))
			i = j
		default:
			code.WriteString(strings.ToLower(string(c)))
			i++
		}
	}
	text := code.String()
	for _, bad := range []string{"@import", "@font-face", "@namespace", "image-set(", "src(", "element(", "paint(",
		"cross-fade(", "expression(", "attr(", "binding", "behavior"} {
		if strings.Contains(text, bad) {
			return "contains " + bad
		}
	}
	for rest := text; ; {
		k := strings.Index(rest, "url(")
		if k < 0 {
			break
		}
		if k > 0 && isNameByte(rest[k-1]) {
			// "00url(" or "my-url(" is another token, not url(.
			rest = rest[k+4:]
			continue
		}
		rest = strings.TrimLeft(rest[k+4:], " \t\n")
		var addr string
		if strings.HasPrefix(rest, "\x01") {
			// The string's index is not needed: every string must hold an allowed address, so
			// check all of them that follow a url(.
			end := strings.IndexByte(rest, '\x02')
			n := strings.Count(text[:len(text)-len(rest)], "\x01")
			if end < 0 || n >= len(strs) {
				return "unreadable url string"
			}
			addr = strs[n]
		} else {
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				end = len(rest)
			}
			addr = strings.TrimRight(rest[:end], " \t\n")
		}
		low := strings.ToLower(addr)
		host := ""
		for _, p := range []string{"https://", "http://"} {
			if h, ok := strings.CutPrefix(low, p); ok {
				host, _, _ = strings.Cut(h, "/")
				host, _, _ = strings.Cut(host, "?")
				host, _, _ = strings.Cut(host, "#")
				host, _, _ = strings.Cut(host, ":")
			}
		}
		if host == "" || strings.ContainsAny(addr, "@\\") || !styleHosts(host) {
			return "loads " + addr
		}
	}
	return ""
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c >= 0x80
}

func TestCheckStylesheetDeepNesting(t *testing.T) {
	deep := strings.Repeat("a{", 100000) + strings.Repeat("}", 100000)
	clean, probs := CheckStylesheet([]byte(deep), styleHosts)
	if len(probs) != 1 || !strings.Contains(probs[0].Reason, "nested") {
		t.Fatalf("got %v, want one nesting problem", probs)
	}
	if n := strings.Count(string(clean), "{"); n != maxStyleDepth {
		t.Errorf("kept %d levels, want %d", n, maxStyleDepth)
	}
}

func BenchmarkCheckStylesheet(b *testing.B) {
	css := []byte(strings.Repeat(benignCSS, 50))
	b.SetBytes(int64(len(css)))
	for b.Loop() {
		CheckStylesheet(css, styleHosts)
	}
}

// TestCheckStylesheetMustEndAtTopLevel: a sheet (a style.css, or one dom.addStyle piece) that
// ends inside a comment, string, url(, block or escape would swallow the text a browser reads
// after it, hiding that text's loads from a check of the pieces one by one. It is refused whole.
func TestCheckStylesheetMustEndAtTopLevel(t *testing.T) {
	tests := []struct {
		name, css, reason string
		line, col         int
	}{
		{"open comment", "a{color:red}\n/*", "inside a comment", 2, 1},
		{"open comment with text", "a{color:red} /* x", "inside a comment", 1, 14},
		{"comment of three bytes", "a{} /*/", "inside a comment", 1, 5},
		{"open double-quoted string", `a{content:"abc`, "inside a string", 1, 11},
		{"open single-quoted string", `a{content:'abc`, "inside a string", 1, 11},
		{"string ending in an escaped quote", `a{content:"abc\"`, "inside a string", 1, 11},
		{"string ending in a backslash", `a{content:"abc\`, "inside a string", 1, 11},
		{"open url", `a{background:url(https://cdn.example.com/x`, "inside a url(", 1, 14},
		{"url ending in an escaped paren", `a{background:url(https://cdn.example.com/x\)`, "inside a url(", 1, 14},
		{"trailing backslash", `a{} \`, "backslash", 1, 5},
		{"open rule block", `a{color:red`, "inside the block {", 1, 2},
		{"open media block", "@media screen {\n a{color:red}", "inside the block {", 1, 15},
		{"open function", `a{width:calc(1px`, "inside the block {", 1, 2},
		{"open bracket", `a[title{}`, "inside the block [", 1, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clean, probs := CheckStylesheet([]byte(tt.css), styleHosts)
			if clean != nil {
				t.Errorf("clean = %q, want nil (the sheet refused whole)", clean)
			}
			if !mentions(probs, tt.reason) {
				t.Fatalf("problems %v, want one saying %q", probs, tt.reason)
			}
			last := probs[len(probs)-1]
			if last.Line != tt.line || last.Column != tt.col {
				t.Errorf("got %d:%d, want %d:%d (%s)", last.Line, last.Column, tt.line, tt.col, last.Reason)
			}
			// Joined with the next piece, the piece's open construct swallows the probe; refusing
			// the piece is what keeps the probe's load from a browser.
			if _, probs := CheckStylesheet([]byte(tt.css+swallowProbe), styleHosts); mentions(probs, "evil.test") && strings.HasPrefix(tt.name, "open comment") {
				t.Errorf("the probe after %q was seen by the checker: the case does not swallow it", tt.css)
			}
		})
	}
	// Ends that are at the top level pass.
	for _, css := range []string{"a{}", "a{} /* x */", "a{content:\"x\"}\n", "a{background:url(https://cdn.example.com/x)}", "@layer a, b;", "a{}\n<!--", "a{} \\ b{}"} {
		if strings.HasSuffix(css, "b{}") {
			// "\ b{}": an escaped space starts an identifier; the sheet still ends at the top level.
			if _, probs := CheckStylesheet([]byte(css), styleHosts); mentions(probs, "ends") {
				t.Errorf("%q: got %v, want no end-of-sheet problem", css, probs)
			}
			continue
		}
		if clean, probs := CheckStylesheet([]byte(css), styleHosts); len(probs) != 0 || string(clean) != css {
			t.Errorf("%q: got %q %v, want it unchanged", css, clean, probs)
		}
	}
}

func TestCheckStylesheetUnfinishedStatement(t *testing.T) {
	for _, css := range []string{"a{} @layer x", "a{} @media screen", "a{} b, c"} {
		clean, probs := CheckStylesheet([]byte(css), styleHosts)
		if !mentions(probs, "unfinished") {
			t.Errorf("%q: problems %v, want an unfinished statement", css, probs)
		}
		if string(clean) != "a{} " {
			t.Errorf("%q: clean %q, want %q", css, clean, "a{} ")
		}
	}
}

// TestCheckStylesheetFieldContents: no selector may test what is typed into a field, whatever
// the rule declares (a width read back with dom.style tells a password apart without any
// request), and field-sizing is refused; so are -webkit-text-security and all, which could unmask
// a field the page shows as dots.
func TestCheckStylesheetFieldContents(t *testing.T) {
	tests := []struct{ name, css, reason string }{
		{"value prefix", `input[value^="h"]{width:11px}`, "value attribute"},
		{"value uppercase", `input[VALUE^="h"]{width:11px}`, "value attribute"},
		{"value any namespace", `input[*|value^="h"]{width:11px}`, "value attribute"},
		{"value no namespace", `input[|value^="h"]{width:11px}`, "value attribute"},
		{"value named namespace", `input[svg|value^="h"]{width:11px}`, "value attribute"},
		{"value escaped", `input[v\61lue^="h"]{width:11px}`, "value attribute"},
		{"value escaped letter", `input[va\lue^="h"]{width:11px}`, "value attribute"},
		{"value spaced", `input[ value ]{width:11px}`, "value attribute"},
		{"value after comment", `input[/**/value]{width:11px}`, "value attribute"},
		{"value in has", `form:has(input[value$="z"]) .x{width:11px}`, "value attribute"},
		{"value in is", `:is(input[value]){width:11px}`, "value attribute"},
		{"value in not", `input:not([value=""]){width:11px}`, "value attribute"},
		{"value nested", `.a{& input[value^=h]{width:11px}}`, "value attribute"},
		{"value in list", `.a, input[value^=h]{width:11px}`, "value attribute"},
		{"value in media", `@media screen{input[value^=h]{width:11px}}`, "value attribute"},
		{"value in scope", `@scope (input[value^=h]){:scope{width:11px}}`, "value attribute"},
		{"placeholder-shown", `input:placeholder-shown{width:11px}`, ":placeholder-shown"},
		{"placeholder-shown escaped", `input:pl\61 ceholder-shown{width:11px}`, ":placeholder-shown"},
		{"invalid", `input:invalid{width:11px}`, ":invalid"},
		{"invalid after comment", `input:/**/invalid{width:11px}`, ":invalid"},
		{"valid", `input:valid{width:11px}`, ":valid"},
		{"user-invalid", `input:user-invalid{width:11px}`, ":user-invalid"},
		{"moz ui-invalid", `input:-moz-ui-invalid{width:11px}`, ":-moz-ui-invalid"},
		{"in-range", `input:in-range{width:11px}`, ":in-range"},
		{"out-of-range", `input:out-of-range{width:11px}`, ":out-of-range"},
		{"autofill", `input:autofill{width:11px}`, ":autofill"},
		{"webkit autofill", `input:-webkit-autofill{width:11px}`, ":-webkit-autofill"},
		{"blank", `input:blank{width:11px}`, ":blank"},
		{"state in has", `form:has(:invalid){width:11px}`, ":invalid"},
		{"state after part", `x-login::part(pw):placeholder-shown{width:11px}`, ":placeholder-shown"},
		{"field-sizing", `input{field-sizing:content;width:11px}`, "field-sizing"},
		{"field-sizing prefixed", `input{-webkit-field-sizing:content}`, "field-sizing"},
		{"field-sizing escaped", `input{f\69 eld-sizing:content}`, "field-sizing"},
		{"text-security unmasks", `#pin{-webkit-text-security:none;width:11px}`, "text-security"},
		{"text-security unprefixed", `#pin{text-security:none}`, "text-security"},
		{"text-security escaped", `#pin{-webkit-text-s\65 curity:none}`, "text-security"},
		{"all resets the mask", `#pin{all:unset;width:11px}`, "property all"},
		{"all escaped", `#pin{\61 ll:revert}`, "property all"},
		// A page's own copy of what is typed (red-team pass 6c), in attributes outside comparableAttrs and
		// data-* (data-* values are kept, in the sheet the page agent drops at the first key of a secret).
		{"mirror prefix", `#pw[x-value^="h"]{width:11px}`, "compare the value of attribute x-value"},
		{"mirror suffix", `[x-typed$=a]{width:11px}`, "attribute x-typed"},
		{"mirror substring", `[x-typed*=a]{width:11px}`, "attribute x-typed"},
		{"mirror exact length", `#pwlen[x-len="7"]{width:11px}`, "attribute x-len"},
		{"mirror word", `[x-x~=a]{width:11px}`, "attribute x-x"},
		{"mirror dash", `[x-x|=a]{width:11px}`, "attribute x-x"},
		{"mirror case flag", `[x-x="a" i]{width:11px}`, "attribute x-x"},
		{"mirror namespaced", `[*|x-x^=a]{width:11px}`, "attribute x-x"},
		{"mirror escaped name", `[\78-x^=a]{width:11px}`, "attribute x-x"},
		{"mirror spaced", `[ x-x ^= a ]{width:11px}`, "attribute x-x"},
		{"mirror commented", `[x-x/**/^=a]{width:11px}`, "attribute x-x"},
		{"mirror in has", `form:has([x-typed^=h]) #user{width:11px}`, "attribute x-typed"},
		{"mirror in is", `#user:is(form:has(#card[x-v^="4"]) *){width:11px}`, "attribute x-v"},
		{"strength meter", `[aria-valuenow="3"]{width:11px}`, "attribute aria-valuenow"},
		{"inline style mirror", `[style*="width: 70%"]{width:11px}`, "attribute style"},
		{"custom state", `x-pin:state(empty){width:11px}`, ":state"},
		{"custom state legacy", `x-pin:--empty{width:11px}`, ":--empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clean, probs := CheckStylesheet([]byte(tt.css+"\np{color:red}"), styleHosts)
			if !mentions(probs, tt.reason) {
				t.Fatalf("problems %v, want one mentioning %q", probs, tt.reason)
			}
			if strings.Contains(string(clean), "11px") && !strings.Contains(tt.reason, "field-sizing") && !strings.Contains(tt.reason, "property") && !strings.Contains(tt.reason, "security") ||
				strings.Contains(string(clean), "field-sizing") || strings.Contains(string(clean), "security") || strings.Contains(string(clean), "unset") {
				t.Errorf("clean %q kept the refused part", clean)
			}
			if !strings.Contains(string(clean), "p{color:red}") {
				t.Errorf("clean %q lost the next rule", clean)
			}
		})
	}
	for _, css := range []string{`[data-x]{width:1px}`, `[data-value]{width:1px}`, `[data-testid="x"]{width:1px}`, `#pwlen[data-len="7"]{width:1px}`,
		`a[href^="https://"]{color:red}`, `[class*="ad-"]{display:none}`, `[aria-expanded=true]{color:red}`, `[ data-x ]{width:1px}`, `.value{width:1px}`,
		`input[type=password]{width:1px}`, `input::placeholder{color:red}`, `input:focus{outline:0}`,
		`a:hover{color:red}`, `@media (orientation:landscape){a{color:red}}`, `a{content:"[value]"}`} {
		if clean, probs := CheckStylesheet([]byte(css), styleHosts); len(probs) != 0 || string(clean) != css {
			t.Errorf("%q: got %q %v, want it unchanged", css, clean, probs)
		}
	}
}

// TestCheckStylesheetAnimationCost: rules that apply to every element or a bare element type
// may not start animations nor make them endless.
func TestCheckStylesheetAnimationCost(t *testing.T) {
	refused := []string{
		`*{animation:spin 1s linear infinite}`,
		`*{-webkit-animation:spin 1s}`,
		`div{animation:spin 1s}`,
		`:hover{animation-name:spin}`,
		`*{animation-iteration-count:infinite}`,
		`*{animation-iteration-count:var(--n)}`,
		`*{animation:var(--a)}`,
		`.a, *{animation:spin 1s}`,
		`.a *{animation:spin 1s}`,
		`.a > :not(.b){animation:spin 1s}`,
		`.a{& *{animation:spin 1s infinite}}`,
		`*{&{animation:spin 1s}}`,
		`.a{:hover{animation:spin 1s}}`,
		`@media screen{*{animation:spin 1s}}`,
		`{animation:spin 1s}`,
	}
	for _, css := range refused {
		clean, probs := CheckStylesheet([]byte(css), styleHosts)
		if !mentions(probs, "animations are refused") && !mentions(probs, "endless animations") {
			t.Errorf("%q: problems %v, want the animation refused", css, probs)
		}
		if strings.Contains(string(clean), "spin") || strings.Contains(string(clean), "iteration") {
			t.Errorf("%q: clean %q kept the animation", css, clean)
		}
	}
	allowed := []string{
		`*{animation:none !important;transition:none !important}`,
		`*,*::before{animation-name:unset}`,
		`*{animation-iteration-count:1}`,
		`.spin{animation:spin 1s linear infinite}`,
		`#a{animation:spin 1s}`,
		`[data-x]{animation:spin 1s}`,
		`div.card:hover{animation:spin 1s}`,
		`.a{&{animation:spin 1s infinite}}`,
		`.a{&:hover{animation:spin 1s}}`,
		`.a{.b &{animation:spin 1s}}`,
		`@keyframes spin{from{opacity:0}to{opacity:1}}`,
		`@media screen{.a{animation:spin 1s}}`,
	}
	for _, css := range allowed {
		if clean, probs := CheckStylesheet([]byte(css), styleHosts); len(probs) != 0 || string(clean) != css {
			t.Errorf("%q: got %q %v, want it unchanged", css, clean, probs)
		}
	}
}

// CheckStylesheetAddresses names every address the clean sheet loads (for the redirect guard),
// decoded as the browser reads it, and none that was refused.
func TestCheckStylesheetAddresses(t *testing.T) {
	css := `.a { background: url(https://own.test/a?x=1#f) }
.b { background: url("https://own.test/\62") }
@media all { .c { border-image: url('https://own.test/c') 1 } }
.d { background: url(https://evil.test/d) }
`
	clean, addrs, problems := CheckStylesheetAddresses([]byte(css), func(h string) bool { return h == "own.test" })
	if len(problems) != 1 || clean == nil {
		t.Fatalf("problems %v, clean %q: want the evil.test one refused and the rest kept", problems, clean)
	}
	want := []string{"https://own.test/a?x=1#f", "https://own.test/b", "https://own.test/c"}
	if strings.Join(addrs, " ") != strings.Join(want, " ") {
		t.Errorf("addresses: got %q, want %q", addrs, want)
	}
}
