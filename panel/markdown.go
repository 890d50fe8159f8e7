package panel

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// Node is one node of a chat message as the panel shows it: Markdown (the model's replies, the
// person's messages, the proxy's notices) rendered by the proxy into a tree of safe nodes that
// panel.js builds with createElement and textContent only. There is no HTML anywhere: raw HTML in
// the Markdown becomes text, images become the text "[image: ALT]" (they load nothing and link
// nowhere), and a link keeps only an absolute http(s) destination, which the panel shows next to
// the link text. panel.js checks the tag and the href again.
type Node struct {
	// T is the element: one of MarkdownTags, or "" for a text node.
	T string `json:"t"`
	// Text is a text node's text.
	Text string `json:"x,omitempty"`
	// Href is the destination of an "a" node: an absolute http or https URL.
	Href string `json:"h,omitempty"`
	// C are the children of an element.
	C []Node `json:"c,omitempty"`
}

// MarkdownTags are the elements a Node may be. Headings are shifted by two levels (# is h3), so
// that a reply's headings stay below the panel's own.
var MarkdownTags = []string{
	"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code",
	"em", "strong", "del", "a", "br", "hr", "table", "thead", "tbody", "tr", "th", "td",
}

// Limits of RenderMarkdown.
const (
	// MaxMarkdownInput is how much of the source is parsed; the rest is dropped.
	MaxMarkdownInput = 256 << 10
	// MaxMarkdownText is how many bytes of text the nodes hold in all.
	MaxMarkdownText = 200 << 10
	// MaxMarkdownNodes is how many nodes a result has at most.
	MaxMarkdownNodes = 20000
	// MaxMarkdownDepth is how deep elements nest; deeper structure is flattened to its text.
	MaxMarkdownDepth = 32
	// maxHref is the longest destination kept as a link.
	maxHref = 4096
)

// truncatedMark ends a result that hit one of the limits.
const truncatedMark = "\u2026 (truncated)"

var markdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// RenderMarkdown parses src as Markdown (CommonMark with GitHub's tables, strikethrough, task
// lists and autolinks) and returns it as safe Nodes for the panel (see Node).
func RenderMarkdown(src string) []Node {
	return renderMarkdown(src, nil)
}

// renderMarkdown is RenderMarkdown with a link policy: a non-nil sameSite decides which links stay
// links (see RenderReply).
func renderMarkdown(src string, sameSite func(host string) bool) []Node {
	truncated := false
	if len(src) > MaxMarkdownInput {
		src = src[:MaxMarkdownInput]
		truncated = true
	}
	src = strings.ToValidUTF8(src, "\uFFFD")
	source := []byte(src)
	doc := markdown.Parser().Parse(text.NewReader(source))
	c := &mdConverter{src: source, sameSite: sameSite}
	out := c.children(doc, 0)
	if truncated || c.full {
		out = append(out, Node{T: "p", C: []Node{{Text: truncatedMark}}})
	}
	return out
}

// RenderReply is RenderMarkdown for the model's text in a chat (its replies and done's final
// answer): a link is kept only when sameSite, given the destination's host as the browser reads it
// (weburl: lowercase, ASCII by UTS-46, IPv4 numbers as dotted decimal, no trailing dot), says it is on
// the chat page's site; any other link becomes its text followed by " (another site: HOST)", so
// that the host is shown and nothing the model put in the address is one click from leaving. A
// kept link's address carries that same host. sameSite must judge from the proxy's record of the
// page, never from the model; nil keeps no link.
func RenderReply(src string, sameSite func(host string) bool) []Node {
	if sameSite == nil {
		sameSite = func(string) bool { return false }
	}
	return renderMarkdown(src, sameSite)
}

// PlainNodes returns s as paragraphs of text, without interpreting any Markdown: blank lines
// separate paragraphs, single newlines become line breaks. For text whose formatting should
// not be interpreted (e.g. the person's own message, if shown verbatim). The same limits apply.
func PlainNodes(s string) []Node {
	truncated := false
	if len(s) > MaxMarkdownText {
		s = s[:MaxMarkdownText]
		truncated = true
	}
	s = strings.ToValidUTF8(strings.ReplaceAll(s, "\r\n", "\n"), "\uFFFD")
	var out []Node
	nodes := 0
	for _, para := range strings.Split(s, "\n\n") {
		para = strings.Trim(para, "\n")
		if para == "" {
			continue
		}
		p := Node{T: "p"}
		for i, line := range strings.Split(para, "\n") {
			if i > 0 {
				p.C = append(p.C, Node{T: "br"})
			}
			p.C = append(p.C, Node{Text: line})
		}
		nodes += len(p.C) + 1
		if nodes > MaxMarkdownNodes {
			truncated = true
			break
		}
		out = append(out, p)
	}
	if truncated {
		out = append(out, Node{T: "p", C: []Node{{Text: truncatedMark}}})
	}
	return out
}

// mdConverter turns a goldmark AST into Nodes within the limits.
type mdConverter struct {
	src   []byte
	text  int  // bytes of text so far
	nodes int  // nodes so far
	full  bool // a limit was hit: everything after is dropped
	// sameSite, when set, keeps only the links it accepts (RenderReply).
	sameSite func(host string) bool
}

// children converts n's children, merging adjacent text.
func (c *mdConverter) children(n ast.Node, depth int) []Node {
	var out []Node
	for ch := n.FirstChild(); ch != nil && !c.full; ch = ch.NextSibling() {
		for _, x := range c.convert(ch, depth) {
			if x.T == "" && len(out) > 0 && out[len(out)-1].T == "" {
				out[len(out)-1].Text += x.Text
				continue
			}
			out = append(out, x)
		}
	}
	return out
}

// textNode returns a text node for s within the text budget (nil when s is empty or the budget
// is spent).
func (c *mdConverter) textNode(s string) []Node {
	if s == "" || c.full {
		return nil
	}
	if c.text+len(s) > MaxMarkdownText {
		cut := MaxMarkdownText - c.text
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
		c.full = true
		if s == "" {
			return nil
		}
	}
	if !c.count() {
		return nil
	}
	c.text += len(s)
	return []Node{{Text: s}}
}

// count counts one more node and says whether it fits.
func (c *mdConverter) count() bool {
	if c.nodes >= MaxMarkdownNodes {
		c.full = true
		return false
	}
	c.nodes++
	return true
}

// element returns an element with tag t around n's children, or, below MaxMarkdownDepth, n's
// text alone.
func (c *mdConverter) element(t string, n ast.Node, depth int) []Node {
	if depth >= MaxMarkdownDepth {
		return c.textNode(c.plain(n))
	}
	if !c.count() {
		return nil
	}
	return []Node{{T: t, C: c.children(n, depth+1)}}
}

// leaf returns an element with no children.
func (c *mdConverter) leaf(t string) []Node {
	if !c.count() {
		return nil
	}
	return []Node{{T: t}}
}

func (c *mdConverter) convert(n ast.Node, depth int) []Node {
	switch n := n.(type) {
	case *ast.Document:
		return c.children(n, depth)
	case *ast.Paragraph:
		return c.element("p", n, depth)
	case *ast.TextBlock: // the text of a tight list item
		return c.children(n, depth)
	case *ast.Heading:
		return c.element(headingTag(n.Level), n, depth)
	case *ast.ThematicBreak:
		return c.leaf("hr")
	case *ast.CodeBlock, *ast.FencedCodeBlock:
		return c.pre(string(linesText(n.Lines(), c.src)), depth)
	case *ast.HTMLBlock:
		// Shown as what it is: text.
		b := linesText(n.Lines(), c.src)
		if n.HasClosure() {
			b = append(b, n.ClosureLine.Value(c.src)...)
		}
		return c.pre(string(bytes.TrimRight(b, "\n")), depth)
	case *ast.Blockquote:
		return c.element("blockquote", n, depth)
	case *ast.List:
		if n.IsOrdered() {
			return c.element("ol", n, depth)
		}
		return c.element("ul", n, depth)
	case *ast.ListItem:
		return c.element("li", n, depth)
	case *ast.LinkReferenceDefinition:
		return nil
	case *ast.Text:
		s := string(n.Value(c.src))
		if !n.IsRaw() {
			s = unescape(s)
		}
		out := c.textNode(s)
		if n.HardLineBreak() {
			out = append(out, c.leaf("br")...)
		} else if n.SoftLineBreak() {
			out = append(out, c.textNode("\n")...)
		}
		return out
	case *ast.String:
		s := string(n.Value)
		if !n.IsCode() && !n.IsRaw() {
			s = unescape(s)
		}
		return c.textNode(s)
	case *ast.CodeSpan:
		if depth >= MaxMarkdownDepth || !c.count() {
			return c.textNode(c.plain(n))
		}
		return []Node{{T: "code", C: c.textNode(c.codeText(n))}}
	case *ast.Emphasis:
		if n.Level >= 2 {
			return c.element("strong", n, depth)
		}
		return c.element("em", n, depth)
	case *east.Strikethrough:
		return c.element("del", n, depth)
	case *ast.Link:
		href, ok := safeHref(util.URLEscape(n.Destination, true))
		if !ok {
			return c.children(n, depth) // the text stays, the link goes
		}
		if href, ok = c.onSite(href); !ok {
			return append(c.children(n, depth), c.otherSite(href)...)
		}
		return c.link(href, c.children, n, depth)
	case *ast.AutoLink:
		label := string(n.Label(c.src))
		if n.AutoLinkType != ast.AutoLinkURL {
			return c.textNode(label)
		}
		href, ok := safeHref(util.URLEscape(n.URL(c.src), false))
		if !ok {
			return c.textNode(label)
		}
		if href, ok = c.onSite(href); !ok {
			return append(c.textNode(label), c.otherSite(href)...)
		}
		return c.link(href, func(ast.Node, int) []Node { return c.textNode(label) }, n, depth)
	case *ast.Image:
		// Never a request, never a link: an image's URL can carry what the model read.
		return c.textNode(c.plain(n))
	case *ast.RawHTML:
		return c.textNode(string(n.Segments.Value(c.src)))
	case *east.TaskCheckBox:
		if n.IsChecked {
			return c.textNode("\u2611 ")
		}
		return c.textNode("\u2610 ")
	case *east.Table:
		return c.table(n, depth)
	default:
		// Anything else (an extension's node) is reduced to its content.
		return c.children(n, depth)
	}
}

// onSite applies the link policy to a safe href: without one every link stays (ok true, href
// unchanged). With one, the address is read as the browser reads it (weburl: WHATWG URL,
// IDNA/UTS-46 hosts) and the link stays only if the policy accepts its host (HostKey's form:
// ASCII, no trailing dot, IPv6 in brackets); href is then that reading with that host. When ok
// is false, href is the host to name in place of the link ("" if it has no readable form).
func (c *mdConverter) onSite(href string) (string, bool) {
	if c.sameSite == nil {
		return href, true
	}
	u, err := weburl.Parse(href)
	if err != nil || !u.IsHTTP() || u.HasCredentials() {
		return "", false
	}
	host := u.HostKey()
	if !c.sameSite(host) {
		return host, false
	}
	g, err := u.GoHostKey()
	if err != nil {
		return "", false
	}
	return g.String(), true
}

// otherSite is the text that stands in for a link the policy refused.
func (c *mdConverter) otherSite(host string) []Node {
	if host == "" {
		return c.textNode(" (a link the panel does not open)")
	}
	return c.textNode(" (another site: " + host + ")")
}

// link returns an "a" element for href around the nodes that content makes of n.
func (c *mdConverter) link(href string, content func(ast.Node, int) []Node, n ast.Node, depth int) []Node {
	if depth >= MaxMarkdownDepth || !c.count() {
		return c.textNode(c.plain(n))
	}
	if c.text+len(href) > MaxMarkdownText {
		c.full = true
		return nil
	}
	c.text += len(href)
	return []Node{{T: "a", Href: href, C: content(n, depth+1)}}
}

// pre returns a code block.
func (c *mdConverter) pre(s string, depth int) []Node {
	if depth+1 >= MaxMarkdownDepth {
		return c.textNode(s)
	}
	if !c.count() || !c.count() {
		return nil
	}
	return []Node{{T: "pre", C: []Node{{T: "code", C: c.textNode(s)}}}}
}

// table converts a GFM table: the header row in thead (th cells), the others in tbody.
func (c *mdConverter) table(n *east.Table, depth int) []Node {
	if depth+3 >= MaxMarkdownDepth {
		return c.textNode(c.plain(n))
	}
	if !c.count() {
		return nil
	}
	t := Node{T: "table"}
	var body *Node
	for ch := n.FirstChild(); ch != nil && !c.full; ch = ch.NextSibling() {
		cell := "td"
		if ch.Kind() == east.KindTableHeader {
			cell = "th"
		}
		if !c.count() || !c.count() {
			break
		}
		row := Node{T: "tr"}
		for cl := ch.FirstChild(); cl != nil && !c.full; cl = cl.NextSibling() {
			row.C = append(row.C, c.element(cell, cl, depth+3)...)
		}
		if cell == "th" {
			t.C = append(t.C, Node{T: "thead", C: []Node{row}})
			continue
		}
		if body == nil {
			t.C = append(t.C, Node{T: "tbody"})
			body = &t.C[len(t.C)-1]
		}
		body.C = append(body.C, row)
	}
	return []Node{t}
}

// plain returns the text of n and its descendants, as the reader sees it (an image as
// "[image: ALT]").
func (c *mdConverter) plain(n ast.Node) string {
	var b strings.Builder
	c.writePlain(&b, n)
	return b.String()
}

func (c *mdConverter) writePlain(b *strings.Builder, n ast.Node) {
	if b.Len() > MaxMarkdownText {
		return
	}
	switch n := n.(type) {
	case *ast.Text:
		s := string(n.Value(c.src))
		if !n.IsRaw() {
			s = unescape(s)
		}
		b.WriteString(s)
		if n.SoftLineBreak() || n.HardLineBreak() {
			b.WriteByte('\n')
		}
		return
	case *ast.String:
		b.WriteString(string(n.Value))
		return
	case *ast.CodeSpan:
		b.WriteString(c.codeText(n))
		return
	case *ast.AutoLink:
		b.WriteString(string(n.Label(c.src)))
		return
	case *ast.RawHTML:
		b.Write(n.Segments.Value(c.src))
		return
	case *ast.Image:
		b.WriteString("[image: ")
		for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
			c.writePlain(b, ch)
		}
		b.WriteString("]")
		return
	}
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 && n.FirstChild() == nil {
		b.Write(linesText(n.Lines(), c.src))
	}
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		c.writePlain(b, ch)
	}
	if n.Type() == ast.TypeBlock && b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
}

// codeText returns the text of a code span as CommonMark renders it: line endings become
// spaces.
func (c *mdConverter) codeText(n *ast.CodeSpan) string {
	var b strings.Builder
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		switch t := ch.(type) {
		case *ast.Text:
			b.Write(t.Value(c.src))
		case *ast.String:
			b.Write(t.Value)
		}
	}
	return strings.ReplaceAll(b.String(), "\n", " ")
}

// linesText joins a block's lines.
func linesText(lines *text.Segments, src []byte) []byte {
	var b []byte
	for i := range lines.Len() {
		seg := lines.At(i)
		b = append(b, seg.Value(src)...)
	}
	return b
}

// headingTag maps a Markdown heading level to the element, two levels down.
func headingTag(level int) string {
	switch {
	case level <= 1:
		return "h3"
	case level == 2:
		return "h4"
	case level == 3:
		return "h5"
	default:
		return "h6"
	}
}

// unescape resolves backslash escapes and character references in Markdown text.
func unescape(s string) string {
	if !strings.ContainsAny(s, "\\&") {
		return s
	}
	b := util.UnescapePunctuations([]byte(s))
	b = util.ResolveNumericReferences(b)
	b = util.ResolveEntityNames(b)
	return string(b)
}

// safeHref returns dest as a link destination if the browser reads it (weburl) as an absolute
// http or https URL with a host and no user name or password (which could make one host look
// like another); the destination is that reading.
func safeHref(dest []byte) (string, bool) {
	if len(dest) == 0 || len(dest) > maxHref {
		return "", false
	}
	u, err := weburl.Parse(string(dest))
	if err != nil || !u.IsHTTP() || u.HasCredentials() {
		return "", false
	}
	return u.Href(), true
}
