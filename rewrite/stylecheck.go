package rewrite

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/css"
)

// A StyleProblem is one part of a remixlet's stylesheet that CheckStylesheet left out, with the
// 1-based line and column of the token that decided it and the reason.
type StyleProblem struct {
	Line, Column int
	Reason       string
}

// Error formats the problem as "line:col: reason".
func (p StyleProblem) Error() string { return fmt.Sprintf("%d:%d: %s", p.Line, p.Column, p.Reason) }

// Stylesheet checks. A remixlet's style.css is inserted into pages by the proxy, so anything it
// loads is a request the page makes, and a rule keyed on page content (input[value^="a"]) even
// chooses which address is requested. CheckStylesheet reads the sheet with the CSS Syntax
// tokenizer rules a browser uses — comments separate tokens, escapes are decoded before a name is
// compared — and keeps only what its allow-lists accept.
//
// At-rules allowed (by their decoded name): @media, @supports, @keyframes (also -webkit-,
// -moz-, -o-), @layer, @container, @scope, @starting-style, @page and @property. @charset is
// dropped silently (it means nothing inside a page). Every other at-rule is refused, in
// particular @import and @namespace (they load), @font-face (its src loads fonts; refused
// whole rather than checked), @font-feature-values, @counter-style and @document.
//
// Functions allowed (by their decoded name, after a -webkit-/-moz-/-ms-/-o- prefix) are those in
// allowedStyleFunctions: math, var/env, colours, gradients, transforms, easing, filters, shapes,
// grid helpers, counters and the selector functions. Everything else is refused, among them
// image-set(), image(), element(), cross-fade(), paint(), src(), attr() (it can turn page text
// into an address), expression() and any escaped spelling of url(.
//
// url() is allowed only with a full https:// or http:// address, without user name or escapes
// in its host, whose host passes allowedHosts; data:, relative, scheme-relative and every other
// address is refused. Inside a rule whose selector tests an element's value attribute no url()
// is allowed at all. The properties behavior and -moz-binding are refused. The same checks apply
// everywhere, custom property values included (they are substituted later).
//
// Also refused: bytes that are not UTF-8, an unterminated string, a malformed url(, and the text
// "</style" (so the sheet can be inlined in a <style> element).
//
// What is refused is left out of clean: a declaration, a whole rule when its selector or
// prelude is refused, or a whole at-rule. The rest is kept byte for byte, except that CR, CRLF
// and FF become LF and NUL becomes U+FFFD, as browsers read them, and a space is put where a
// removed part could otherwise let its neighbours join into one token or a comment.
func CheckStylesheet(css []byte, allowedHosts func(host string) bool) (clean []byte, problems []StyleProblem) {
	if !utf8.Valid(css) {
		return nil, []StyleProblem{{Line: 1, Column: 1, Reason: "the stylesheet is not valid UTF-8; save it as UTF-8"}}
	}
	src := preprocessCSS(css)
	c := &styleChecker{src: src, allowed: allowedHosts}
	if !c.tokenize() {
		return nil, []StyleProblem{{Line: 1, Column: 1, Reason: "the stylesheet could not be read"}}
	}
	c.matchBlocks()
	c.list(0, false, false)
	out := c.out.Bytes()
	if bytesContainFold(out, "</style") {
		// Unreachable while every item is checked for it; kept as a last guard.
		return nil, append(c.probs, StyleProblem{Line: 1, Column: 1, Reason: `the stylesheet contains "</style"`})
	}
	return out, c.probs
}

// preprocessCSS replaces CR, CRLF and FF with LF and NUL with U+FFFD, as the CSS Syntax spec's
// input preprocessing does. It returns a fresh slice with room for one more byte (the lexer
// appends a NUL).
func preprocessCSS(b []byte) []byte {
	out := make([]byte, 0, len(b)+1)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			out = append(out, '\n')
		case '\f':
			out = append(out, '\n')
		case 0:
			out = append(out, "\uFFFD"...)
		default:
			out = append(out, c)
		}
	}
	return out
}

// maxStyleDepth bounds how deeply rules may nest (real sheets stay in single digits).
const maxStyleDepth = 32

type styleToken struct {
	tt  css.TokenType
	raw []byte
	off int
}

type styleChecker struct {
	src     []byte
	toks    []styleToken
	allowed func(string) bool
	// blockEnd[i], for a token that opens a block, is the index after its matching closer.
	blockEnd []int
	depth    int // nesting of rule blocks being checked
	// lineStarts are the offsets at which lines start, computed on the first problem.
	lineStarts []int
	out        bytes.Buffer
	probs      []StyleProblem
}

func (c *styleChecker) tokenize() bool {
	l := css.NewLexer(parse.NewInputBytes(c.src))
	c.toks = make([]styleToken, 0, len(c.src)/4+1)
	off := 0
	for {
		tt, raw := l.Next()
		if tt == css.ErrorToken {
			break
		}
		if len(raw) == 0 {
			return false
		}
		c.toks = append(c.toks, styleToken{tt: tt, raw: raw, off: off})
		off += len(raw)
	}
	// The tokens must cover every byte, or something was read differently than it is kept.
	return off == len(c.src)
}

// closer returns the token that ends the block a token opens, or ErrorToken.
func closer(tt css.TokenType) css.TokenType {
	switch tt {
	case css.LeftBraceToken:
		return css.RightBraceToken
	case css.LeftBracketToken:
		return css.RightBracketToken
	case css.LeftParenthesisToken, css.FunctionToken:
		return css.RightParenthesisToken
	}
	return css.ErrorToken
}

// skipBlock returns the index after the block opened at i, ending at the matching closer or at
// the end of the sheet. Unmatched closers inside are plain tokens, as in a browser.
func (c *styleChecker) skipBlock(i int) int { return c.blockEnd[i] }

// matchBlocks fills blockEnd for every opening token in one pass.
func (c *styleChecker) matchBlocks() {
	c.blockEnd = make([]int, len(c.toks))
	type open struct {
		closer css.TokenType
		at     int
	}
	var stack []open
	for i, t := range c.toks {
		if n := len(stack); n > 0 && t.tt == stack[n-1].closer {
			c.blockEnd[stack[n-1].at] = i + 1
			stack = stack[:n-1]
		} else if cl := closer(t.tt); cl != css.ErrorToken {
			stack = append(stack, open{cl, i})
		}
	}
	for _, o := range stack {
		c.blockEnd[o.at] = len(c.toks)
	}
}

// emit copies tokens [i, j) to the output.
func (c *styleChecker) emit(i, j int) {
	for ; i < j; i++ {
		c.out.Write(c.toks[i].raw)
	}
}

// drop records a problem at token at and leaves a separator where the removed part was.
func (c *styleChecker) drop(at int, reason string) {
	line, col := 1, 1
	if at < len(c.toks) {
		line, col = c.position(c.toks[at].off)
	}
	c.probs = append(c.probs, StyleProblem{Line: line, Column: col, Reason: reason})
	c.separate()
}

func (c *styleChecker) separate() {
	b := c.out.Bytes()
	if len(b) == 0 {
		return
	}
	switch b[len(b)-1] {
	case ' ', '\t', '\n', ';', '{', '}':
		return
	}
	c.out.WriteByte(' ')
}

// list checks the items of a stylesheet (nested false) or of a block (nested true) from token
// i, emits what it keeps, and returns the index of the block's closing brace (or the end).
// inValueRule says a selector around it tests an element's value.
func (c *styleChecker) list(i int, nested, inValueRule bool) int {
	for i < len(c.toks) {
		t := c.toks[i]
		switch t.tt {
		case css.WhitespaceToken, css.SemicolonToken, css.CDOToken, css.CDCToken, css.CommentToken:
			if t.tt == css.CommentToken && bytesContainFold(t.raw, "</style") {
				c.drop(i, `a comment contains "</style"`)
			} else {
				c.emit(i, i+1)
			}
			i++
			continue
		case css.RightBraceToken:
			if nested {
				return i
			}
		case css.AtKeywordToken:
			i = c.atRule(i, inValueRule)
			continue
		}
		i = c.item(i, nested, inValueRule)
	}
	return i
}

// item checks a declaration or a qualified (style) rule starting at token i.
func (c *styleChecker) item(i int, nested, inValueRule bool) int {
	start := i
	// Only a declaration may hold a {} block in its value (custom properties do).
	custom := nested && isCustomPropertyName(c.toks[i])
	for i < len(c.toks) {
		tt := c.toks[i].tt
		switch {
		case tt == css.SemicolonToken && nested:
			return c.declaration(start, i+1, inValueRule)
		case tt == css.RightBraceToken && nested:
			return c.declaration(start, i, inValueRule)
		case tt == css.LeftBraceToken && !custom:
			return c.rule(start, i, inValueRule)
		case closer(tt) != css.ErrorToken:
			i = c.skipBlock(i)
		default:
			i++
		}
	}
	if nested {
		return c.declaration(start, i, inValueRule)
	}
	// A prelude with no block at the end of the sheet is no rule; the browser drops it.
	c.drop(start, "unfinished rule at the end of the stylesheet")
	return i
}

func isCustomPropertyName(t styleToken) bool {
	return (t.tt == css.CustomPropertyNameToken || t.tt == css.IdentToken) && strings.HasPrefix(decodeCSSName(t.raw), "--")
}

// declaration checks tokens [i, j) as one declaration.
func (c *styleChecker) declaration(i, j int, inValueRule bool) int {
	name := decodeCSSName(c.toks[i].raw)
	switch stripVendor(strings.ToLower(name)) {
	case "behavior", "binding":
		c.drop(i, fmt.Sprintf("the property %s can run code", name))
		return j
	}
	if at, reason := c.checkTokens(i, j, inValueRule); reason != "" {
		c.drop(at, reason)
		return j
	}
	c.emit(i, j)
	return j
}

// rule checks a qualified rule whose prelude is [i, brace) and whose block opens at brace.
func (c *styleChecker) rule(i, brace int, inValueRule bool) int {
	end := c.skipBlock(brace)
	if at, reason := c.checkTokens(i, brace, false); reason != "" {
		c.drop(at, reason)
		return end
	}
	if c.depth >= maxStyleDepth {
		c.drop(i, fmt.Sprintf("rules nested more than %d deep", maxStyleDepth))
		return end
	}
	inValueRule = inValueRule || c.testsValue(i, brace)
	c.emit(i, brace+1)
	c.depth++
	close := c.list(brace+1, true, inValueRule)
	c.depth--
	c.emit(close, end)
	return end
}

// allowedAtRules are the at-rules a stylesheet may use, by decoded lowercase name.
var allowedAtRules = map[string]bool{
	"media": true, "supports": true, "keyframes": true, "-webkit-keyframes": true,
	"-moz-keyframes": true, "-o-keyframes": true, "layer": true, "container": true,
	"scope": true, "starting-style": true, "page": true, "property": true,
}

// atRule checks the at-rule starting at token i.
func (c *styleChecker) atRule(i int, inValueRule bool) int {
	start := i
	name := strings.ToLower(decodeCSSName(c.toks[i].raw[1:]))
	// Find the end of the prelude: ';', '{' or the '}' closing the enclosing block.
	brace := -1
	end := len(c.toks)
	for i++; i < len(c.toks); i++ {
		tt := c.toks[i].tt
		if tt == css.SemicolonToken {
			end = i + 1
			break
		}
		if tt == css.RightBraceToken {
			end = i
			break
		}
		if tt == css.LeftBraceToken {
			brace = i
			end = c.skipBlock(i)
			break
		}
		if closer(tt) != css.ErrorToken {
			i = c.skipBlock(i) - 1
		}
	}
	switch {
	case name == "charset":
		c.separate()
		return end
	case !allowedAtRules[name]:
		c.drop(start, fmt.Sprintf("@%s is not allowed in a remixlet stylesheet (%s)", name, atRuleWhy(name)))
		return end
	}
	preludeEnd := end
	if brace >= 0 {
		preludeEnd = brace
	}
	if at, reason := c.checkTokens(start+1, preludeEnd, inValueRule); reason != "" {
		c.drop(at, reason)
		return end
	}
	if brace < 0 {
		c.emit(start, end)
		return end
	}
	if c.depth >= maxStyleDepth {
		c.drop(start, fmt.Sprintf("rules nested more than %d deep", maxStyleDepth))
		return end
	}
	c.emit(start, brace+1)
	c.depth++
	close := c.list(brace+1, true, inValueRule)
	c.depth--
	c.emit(close, end)
	return end
}

func atRuleWhy(name string) string {
	switch name {
	case "import":
		return "it loads another stylesheet"
	case "font-face":
		return "it loads fonts"
	case "namespace":
		return "it is not needed in an inserted stylesheet"
	}
	return "the allowed at-rules are @media, @supports, @keyframes, @layer, @container, @scope, @starting-style, @page and @property"
}

// testsValue reports whether the selector tokens [i, j) contain an attribute selector on value
// (any identifier "value" inside [...], which also catches [*|value] and a few harmless cases).
func (c *styleChecker) testsValue(i, j int) bool {
	depth := 0
	for k := i; k < j; k++ {
		switch t := c.toks[k]; t.tt {
		case css.LeftBracketToken:
			depth++
		case css.RightBracketToken:
			depth = max(depth-1, 0)
		case css.IdentToken:
			if depth > 0 && strings.EqualFold(decodeCSSName(t.raw), "value") {
				return true
			}
		}
	}
	return false
}

// checkTokens checks every token in [i, j) and returns the first refused one with its reason.
func (c *styleChecker) checkTokens(i, j int, inValueRule bool) (int, string) {
	for k := i; k < j; k++ {
		t := c.toks[k]
		if bytesContainFold(t.raw, "</style") {
			return k, `contains "</style"`
		}
		if k > i && t.tt == css.DelimToken && t.raw[0] == '/' && c.toks[k-1].tt == css.DelimToken && c.toks[k-1].raw[0] == '<' {
			if k+1 < j && strings.EqualFold(decodeCSSName(c.toks[k+1].raw), "style") {
				return k - 1, `contains "</style"`
			}
		}
		switch t.tt {
		case css.BadStringToken:
			return k, "unterminated string"
		case css.BadURLToken:
			return k, "malformed url(…)"
		case css.AtKeywordToken:
			if name := strings.ToLower(decodeCSSName(t.raw[1:])); !allowedAtRules[name] {
				return k, fmt.Sprintf("@%s is not allowed in a remixlet stylesheet", name)
			}
		case css.FunctionToken:
			if reason := checkFunction(t.raw); reason != "" {
				return k, reason
			}
		case css.URLToken:
			if inValueRule {
				return k, "a rule whose selector tests an element's value may not load anything"
			}
			if reason := c.checkURL(t.raw); reason != "" {
				return k, reason
			}
		}
	}
	return 0, ""
}

// allowedStyleFunctions are the CSS functions a remixlet stylesheet may use, by decoded
// lowercase name without a vendor prefix. None of them loads anything.
var allowedStyleFunctions = map[string]bool{}

func init() {
	for _, group := range []string{
		// math
		"calc min max clamp round mod rem abs sign sin cos tan asin acos atan atan2 pow sqrt hypot log exp calc-size",
		// variables
		"var env",
		// colours
		"rgb rgba hsl hsla hwb lab lch oklab oklch color color-mix light-dark",
		// gradients
		"linear-gradient radial-gradient conic-gradient repeating-linear-gradient repeating-radial-gradient repeating-conic-gradient",
		// transforms
		"matrix matrix3d translate translatex translatey translatez translate3d scale scalex scaley scalez scale3d " +
			"rotate rotatex rotatey rotatez rotate3d skew skewx skewy perspective",
		// easing and timelines
		"cubic-bezier steps linear scroll view",
		// filters
		"blur brightness contrast drop-shadow grayscale hue-rotate invert opacity saturate sepia",
		// shapes
		"inset circle ellipse polygon rect xywh path",
		// grid, counters, anchors
		"minmax repeat fit-content counter counters anchor anchor-size",
		// selectors and at-rule preludes
		"not is where has any matches nth-child nth-last-child nth-of-type nth-last-of-type lang dir host host-context " +
			"part slotted state highlight selector style",
	} {
		for _, f := range strings.Fields(group) {
			allowedStyleFunctions[f] = true
		}
	}
}

func stripVendor(name string) string {
	for _, p := range []string{"-webkit-", "-moz-", "-ms-", "-o-"} {
		if s, ok := strings.CutPrefix(name, p); ok {
			return s
		}
	}
	return name
}

func checkFunction(raw []byte) string {
	name := strings.ToLower(decodeCSSName(bytes.TrimSuffix(raw, []byte("("))))
	switch base := stripVendor(name); {
	case base == "url" || base == "src":
		return fmt.Sprintf("%s( written with escapes is refused; write url(…) plainly with a full https:// address", base)
	case !allowedStyleFunctions[base]:
		return fmt.Sprintf("the function %s() is not on the allow-list (it may load or run something)", name)
	}
	return ""
}

// checkURL checks a url(…) token's address.
func (c *styleChecker) checkURL(raw []byte) string {
	open := bytes.IndexByte(raw, '(')
	if name := decodeCSSName(raw[:open]); !strings.EqualFold(name, "url") || bytes.IndexByte(raw[:open], '\\') >= 0 {
		return "url( written with escapes is refused; write url(…) plainly"
	}
	inner := raw[open+1:]
	inner = bytes.TrimSuffix(inner, []byte(")"))
	inner = bytes.Trim(inner, " \t\n")
	var addr string
	if len(inner) > 0 && (inner[0] == '"' || inner[0] == '\'') {
		q := inner[0]
		s := inner[1:]
		if len(s) > 0 && s[len(s)-1] == q {
			s = s[:len(s)-1]
		}
		addr = decodeCSSString(s)
	} else {
		addr = decodeCSSName(inner)
	}
	return checkStyleAddress(addr, c.allowed)
}

// checkStyleAddress allows only a full http(s) address whose host passes allowed.
func checkStyleAddress(addr string, allowed func(string) bool) string {
	show := addr
	if len(show) > 80 {
		show = show[:80] + "…"
	}
	lower := strings.ToLower(addr)
	if !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "http://") {
		switch {
		case strings.HasPrefix(lower, "data:"):
			return fmt.Sprintf("url(%q): data: addresses are refused; use a full https:// address on an allowed host", show)
		default:
			return fmt.Sprintf("url(%q): only full https:// or http:// addresses are allowed (no relative or other addresses)", show)
		}
	}
	if strings.ContainsFunc(addr, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '\\' }) {
		return fmt.Sprintf("url(%q): the address contains a space, control character or backslash", show)
	}
	u, err := url.Parse(addr)
	if err != nil {
		return fmt.Sprintf("url(%q): not a valid address", show)
	}
	if u.User != nil {
		return fmt.Sprintf("url(%q): an address with a user name is refused", show)
	}
	host := u.Hostname()
	if host == "" || strings.HasSuffix(host, ".") || strings.ContainsFunc(host, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == ':')
	}) {
		return fmt.Sprintf("url(%q): the host must be written in lowercase ASCII (punycode for other names)", show)
	}
	if allowed == nil || !allowed(host) {
		return fmt.Sprintf("url(%q): %s is not one of the remixlet's sites or fetch: hosts", show, host)
	}
	return ""
}

// decodeCSSName decodes the escapes in an identifier-like token as a browser does.
func decodeCSSName(b []byte) string { return decodeCSSEscapes(b, false) }

// decodeCSSString decodes the contents of a string token: escapes, and a backslash before a
// newline is a line continuation.
func decodeCSSString(b []byte) string { return decodeCSSEscapes(b, true) }

func decodeCSSEscapes(b []byte, str bool) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	var sb strings.Builder
	for i := 0; i < len(b); {
		if b[i] != '\\' {
			r, n := utf8.DecodeRune(b[i:])
			sb.WriteRune(r)
			i += n
			continue
		}
		i++
		if i >= len(b) {
			if !str {
				sb.WriteRune(utf8.RuneError)
			}
			break
		}
		if b[i] == '\n' {
			if str {
				i++
				continue
			}
			sb.WriteByte('\\')
			continue
		}
		if isHex(b[i]) {
			var cp rune
			n := 0
			for n < 6 && i < len(b) && isHex(b[i]) {
				cp = cp*16 + rune(hexVal(b[i]))
				i++
				n++
			}
			if i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n') {
				i++
			}
			if cp == 0 || cp > utf8.MaxRune || (cp >= 0xD800 && cp <= 0xDFFF) {
				cp = utf8.RuneError
			}
			sb.WriteRune(cp)
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		sb.WriteRune(r)
		i += n
	}
	return sb.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// bytesContainFold reports whether b contains the lowercase ASCII string s, ignoring ASCII case.
func bytesContainFold(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if b[i] == s[0] && asciiEqualFold(b[i:i+len(s)], s) {
			return true
		}
	}
	return false
}

func asciiEqualFold(b []byte, s string) bool {
	for i := range len(s) {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// position returns the 1-based line and column of a byte offset in the checked text.
func (c *styleChecker) position(off int) (int, int) {
	if c.lineStarts == nil {
		c.lineStarts = []int{0}
		for i, b := range c.src {
			if b == '\n' {
				c.lineStarts = append(c.lineStarts, i+1)
			}
		}
	}
	line, _ := slices.BinarySearch(c.lineStarts, off+1)
	start := c.lineStarts[line-1]
	return line, 1 + utf8.RuneCount(c.src[start:off])
}
