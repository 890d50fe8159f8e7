package panel

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// walkNodes calls fn for every node, with its depth (1 for the top level).
func walkNodes(nodes []Node, depth int, fn func(n Node, depth int)) {
	for _, n := range nodes {
		fn(n, depth)
		walkNodes(n.C, depth+1, fn)
	}
}

// nodesText returns the text the panel would show, with each link's destination after it in
// braces: "text{https://host/}".
func nodesText(nodes []Node) string {
	var b strings.Builder
	var walk func([]Node)
	walk = func(nodes []Node) {
		for _, n := range nodes {
			b.WriteString(n.Text)
			walk(n.C)
			if n.T == "a" {
				b.WriteString("{" + n.Href + "}")
			}
		}
	}
	walk(nodes)
	return b.String()
}

// checkSafe fails the test if any node breaks the rules of Node.
func checkSafe(t *testing.T, src string, nodes []Node) {
	t.Helper()
	walkNodes(nodes, 1, func(n Node, depth int) {
		if depth > MaxMarkdownDepth+1 {
			t.Errorf("%q: node at depth %d", src, depth)
		}
		if n.T == "" {
			if n.Href != "" || len(n.C) > 0 {
				t.Errorf("%q: text node with href or children: %+v", src, n)
			}
			return
		}
		if !slices.Contains(MarkdownTags, n.T) {
			t.Errorf("%q: tag %q is not allowed", src, n.T)
		}
		if n.Text != "" {
			t.Errorf("%q: element %s with text %q", src, n.T, n.Text)
		}
		if n.T == "a" {
			u, err := url.Parse(n.Href)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
				t.Errorf("%q: link to %q", src, n.Href)
			}
		} else if n.Href != "" {
			t.Errorf("%q: %s has href %q", src, n.T, n.Href)
		}
	})
}

func TestRenderMarkdown(t *testing.T) {
	tests := []struct {
		name string
		src  string
		// text is what nodesText must return (when not empty); contains and absent are
		// substrings of the JSON encoding that must and must not be there.
		text     string
		contains []string
		absent   []string
	}{
		{name: "paragraph", src: "Hello *there* **you** ~~old~~ `x<y>`",
			text:     "Hello there you old x<y>",
			contains: []string{`{"t":"em","c":[{"t":"","x":"there"}]}`, `"t":"strong"`, `"t":"del"`, `{"t":"code","c":[{"t":"","x":"x\u003cy\u003e"}]}`}},
		{name: "raw script block", src: "<script>alert(1)</script>\n\nafter",
			text: "<script>alert(1)</script>after", contains: []string{`"t":"pre"`}, absent: []string{`"t":"script"`}},
		{name: "inline raw html", src: "a <img src=x onerror=alert(1)> b <b>bold</b>",
			text: "a <img src=x onerror=alert(1)> b <b>bold</b>", absent: []string{`"t":"img"`, `"t":"b"`}},
		{name: "javascript link", src: "[click](javascript:alert(document.cookie))",
			text: "click", absent: []string{"javascript", `"t":"a"`}},
		{name: "javascript link, mixed case and entities", src: "[x](JaVaScRiPt&#58;alert(1)) [y](java\tscript:alert(1)) [z](&#x6A;avascript:alert(1))",
			absent: []string{`"t":"a"`, `"h":`}},
		{name: "data link", src: "[d](data:text/html;base64,PHNjcmlwdD4=)", text: "d", absent: []string{"data:", `"t":"a"`}},
		{name: "vbscript and file links", src: "[a](vbscript:msgbox) [b](file:///etc/passwd) [c](//evil.test/x) [d](/relative)",
			text: "a b c d", absent: []string{`"t":"a"`}},
		{name: "userinfo link", src: "[bank](https://bank.test@evil.test/)", text: "bank", absent: []string{`"t":"a"`}},
		{name: "http link", src: "see [the docs](https://docs.test/a?b=1#c \"title\")",
			text: "see the docs{https://docs.test/a?b=1#c}", absent: []string{"title"}},
		{name: "reference link", src: "[ref][r] and [bad][j]\n\n[r]: https://ref.test/x\n[j]: javascript:alert(1)",
			text: "ref{https://ref.test/x} and bad", absent: []string{"javascript"}},
		{name: "autolinks", src: "<https://auto.test/p> <javascript:alert(1)> <me@mail.test> www.www.test https://bare.test/q",
			text:   "https://auto.test/p{https://auto.test/p} javascript:alert(1) me@mail.test www.www.test{http://www.www.test/} https://bare.test/q{https://bare.test/q}",
			absent: []string{"mailto", `"h":"javascript`}},
		{name: "image with secret", src: "![chart](https://witness.test/c.png?secret=hunter2) and ![x][i]\n\n[i]: https://witness.test/r?secret=hunter3",
			text: "[image: chart] and [image: x]", absent: []string{"witness", "secret", "hunter", `"t":"img"`, `"t":"a"`}},
		{name: "image inside link", src: "[![logo](https://witness.test/i?secret=s1)](https://site.test/)",
			text: "[image: logo]{https://site.test/}", absent: []string{"witness", "secret"}},
		{name: "link inside image alt", src: "![see [x](https://witness.test/?secret=s2)](https://witness.test/img?secret=s3)",
			absent: []string{"witness", "secret=", `"t":"a"`}},
		{name: "nested emphasis", src: "***a*** *b **c _d_ c** b*",
			text: "a b c d c b", contains: []string{`"t":"em"`, `"t":"strong"`}},
		{name: "headings shift", src: "# one\n## two\n### three\n###### six",
			contains: []string{`"t":"h3"`, `"t":"h4"`, `"t":"h5"`, `"t":"h6"`}, absent: []string{`"t":"h1"`, `"t":"h2"`}},
		{name: "lists and quote", src: "- a\n- b\n\n1. x\n2. y\n\n> quoted\n\n---",
			contains: []string{`"t":"ul"`, `"t":"ol"`, `"t":"li"`, `"t":"blockquote"`, `"t":"hr"`}},
		{name: "fenced code keeps html as text", src: "```html\n<script>x()</script>\n```",
			text: "<script>x()</script>\n", contains: []string{`"t":"pre"`}},
		{name: "table", src: "| a | b |\n|---|---|\n| <i>1</i> | [l](javascript:x) |",
			text: "ab<i>1</i>l", contains: []string{`"t":"table"`, `"t":"thead"`, `"t":"tbody"`, `"t":"th"`, `"t":"td"`}, absent: []string{"javascript"}},
		{name: "hard break", src: "a  \nb", contains: []string{`"t":"br"`}},
		{name: "escapes and entities", src: `\*not em\* &amp; &lt;b&gt; &#65;`, text: "*not em* & <b> A"},
		{name: "task list", src: "- [x] done\n- [ ] todo", text: "\u2611 done\u2610 todo"},
		{name: "link text keeps markup only from the allow-list", src: "[**bold** <u>u</u>](https://ok.test/)",
			text: "bold <u>u</u>{https://ok.test/}", contains: []string{`"t":"strong"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes := RenderMarkdown(tt.src)
			checkSafe(t, tt.src, nodes)
			b, err := json.Marshal(nodes)
			if err != nil {
				t.Fatal(err)
			}
			js := string(b)
			if tt.text != "" {
				if got := strings.ReplaceAll(nodesText(nodes), "\n", ""); got != strings.ReplaceAll(tt.text, "\n", "") {
					t.Errorf("text = %q, want %q\n%s", got, tt.text, js)
				}
			}
			for _, s := range tt.contains {
				if !strings.Contains(js, s) {
					t.Errorf("JSON lacks %s\n%s", s, js)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(js, s) {
					t.Errorf("JSON contains %s\n%s", s, js)
				}
			}
		})
	}
}

func TestRenderMarkdownLimits(t *testing.T) {
	t.Run("depth", func(t *testing.T) {
		src := strings.Repeat("> ", 200) + "deep"
		nodes := RenderMarkdown(src)
		checkSafe(t, "deep quotes", nodes)
		if !strings.Contains(nodesText(nodes), "deep") {
			t.Errorf("the text of deep nesting is lost: %q", nodesText(nodes))
		}
		list := ""
		for i := range 100 {
			list += strings.Repeat("  ", i) + "- item\n"
		}
		checkSafe(t, "deep list", RenderMarkdown(list))
	})
	t.Run("text", func(t *testing.T) {
		src := strings.Repeat("word ", 100000) // 500 KB
		nodes := RenderMarkdown(src)
		checkSafe(t, "long", nodes)
		text := nodesText(nodes)
		if len(text) > MaxMarkdownText+100 {
			t.Errorf("%d bytes of text, want at most %d", len(text), MaxMarkdownText)
		}
		if !strings.HasSuffix(text, truncatedMark) {
			t.Errorf("a truncated result does not say so: ...%q", text[len(text)-40:])
		}
	})
	t.Run("nodes", func(t *testing.T) {
		src := strings.Repeat("*a* ", 60000)
		nodes := RenderMarkdown(src)
		count := 0
		walkNodes(nodes, 1, func(Node, int) { count++ })
		if count > MaxMarkdownNodes+10 {
			t.Errorf("%d nodes, want at most %d", count, MaxMarkdownNodes)
		}
	})
	t.Run("invalid UTF-8", func(t *testing.T) {
		nodes := RenderMarkdown("a\xff\xfeb")
		if got := nodesText(nodes); got != "a\uFFFDb" {
			t.Errorf("text = %q", got)
		}
	})
	t.Run("empty", func(t *testing.T) {
		if nodes := RenderMarkdown(""); len(nodes) != 0 {
			t.Errorf("RenderMarkdown(\"\") = %+v", nodes)
		}
	})
}

func TestPlainNodes(t *testing.T) {
	nodes := PlainNodes("**not bold** <b>x</b>\nline 2\r\n\r\n[l](https://a.test/)")
	checkSafe(t, "plain", nodes)
	b, _ := json.Marshal(nodes)
	want := `[{"t":"p","c":[{"t":"","x":"**not bold** \u003cb\u003ex\u003c/b\u003e"},{"t":"br"},{"t":"","x":"line 2"}]},{"t":"p","c":[{"t":"","x":"[l](https://a.test/)"}]}]`
	if string(b) != want {
		t.Errorf("PlainNodes = %s\nwant %s", b, want)
	}
}

// TestRenderReplyLinks: in the model's replies only links the policy accepts (the chat page's
// site) stay links, with the host as the browser reads it; any other becomes its text with the
// host, and nothing of its address but the host.
func TestRenderReplyLinks(t *testing.T) {
	onShop := func(h string) bool { return h == "shop.test" || strings.HasSuffix(h, ".shop.test") }
	tests := []struct {
		name, src string
		sameSite  func(string) bool
		want      string // nodesText
	}{
		{"same site", "[cart](https://www.shop.test/cart?x=1)", onShop, "cart{https://www.shop.test/cart?x=1}"},
		{"apex of the site", "[home](https://shop.test/)", onShop, "home{https://shop.test/}"},
		{"other site", "[report](https://witness.test/c?d=secret)", onShop, "report (another site: witness.test)"},
		{"other site that ends like it", "[x](https://evilshop.test/)", onShop, "x (another site: evilshop.test)"},
		{"site as a subdomain of another", "[x](https://shop.test.witness.test/)", onShop, "x (another site: shop.test.witness.test)"},
		{"autolink to another site", "see <https://witness.test/c?d=1>", onShop, "see https://witness.test/c?d=1 (another site: witness.test)"},
		{"bare autolink to another site", "see https://witness.test/x now", onShop, "see https://witness.test/x (another site: witness.test) now"},
		{"autolink on the site", "<https://shop.test/a>", onShop, "https://shop.test/a{https://shop.test/a}"},
		{"upper case", "[x](https://WITNESS.TEST/)", onShop, "x (another site: witness.test)"},
		{"full-width letters fold as the browser folds them", "[x](https://\uff57itness.test/)", onShop, "x (another site: witness.test)"},
		{"full-width spelling of the site", "[x](https://\uff53hop.test/a)", onShop, "x{https://shop.test/a}"},
		{"trailing dot", "[x](https://shop.test./a)", onShop, "x{https://shop.test/a}"},
		{"port kept", "[x](https://shop.test:8443/a)", onShop, "x{https://shop.test:8443/a}"},
		{"user name", "[x](https://shop.test@witness.test/)", onShop, "x"},
		{"ideographic full stop of the site", "[x](https://shop\u3002test/a)", onShop, "x{https://shop.test/a}"},
		{"another site behind a full stop", "[x](https://shop.test\u3002witness.test/)", onShop, "x (another site: shop.test.witness.test)"},
		{"default port", "[x](https://shop.test:443/a)", onShop, "x{https://shop.test/a}"},
		{"dot segments", "[x](https://shop.test/a/../%2e%2e/b)", onShop, "x{https://shop.test/b}"},
		{"percent-encoded host", "[x](https://%73hop.test/a)", onShop, "x{https://shop.test/a}"},
		{"numeric IPv4", "[x](http://0x7f.1/a)", onShop, "x (another site: 127.0.0.1)"},
		{"escaped user info", "[x](https://witness.test\\@shop.test/)", onShop, "x"},
		{"no slashes", "[x](https:witness.test/)", onShop, "x (another site: witness.test)"},
		{"no policy keeps no link", "[x](https://shop.test/)", nil, "x (another site: shop.test)"},
		{"image stays text", "![alt](https://shop.test/i.png)", onShop, "[image: alt]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes := RenderReply(tt.src, tt.sameSite)
			checkSafe(t, tt.src, nodes)
			if got := nodesText(nodes); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	// Without a policy (the proxy's own notices) links stay as before.
	if got := nodesText(RenderMarkdown("[x](https://witness.test/)")); got != "x{https://witness.test/}" {
		t.Errorf("RenderMarkdown: got %q, want the link kept", got)
	}
}
