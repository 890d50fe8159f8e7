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

	"github.com/remixproxy/remixproxy/internal/weburl"
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
// address is refused. The properties behavior and -moz-binding are refused. The same checks apply
// everywhere, custom property values included (they are substituted later).
//
// Field contents (a password above all) are never a selector's business: a rule whose selector
// (or @scope prelude) tests the value attribute — [value], [*|value], [v\61lue], inside :has()
// or :is() too — or a pseudo-class that depends on what is typed into a field (checkedFieldState:
// :placeholder-shown, :valid, :invalid, :user-valid, :user-invalid, :in-range, :out-of-range,
// :autofill, :blank) is refused whole, whatever it declares: a width it sets could be read back
// with dom.style or dom.rect without any request. The property field-sizing is refused too (it
// makes a field's size follow its text, so a password's length would show in the layout), and
// so are -webkit-text-security and all: a page masks PINs in text fields with the first, and
// either could unmask one (the page agent reads a masked field back empty, as a password).
//
// Cost: a rule whose subject is every element or a bare element type (*, div, :hover, & on such
// a rule …, see subjectBroad) may not start animations (animation and animation-name only as none
// or a CSS-wide keyword) nor make them endless (animation-iteration-count: infinite or var()), so
// a sheet cannot keep every element of a large page animating. Nesting is bounded at
// maxStyleDepth; deeper rules are refused, not let through.
//
// A stylesheet must end at the top level: a sheet that ends inside a comment, a string, a url(,
// an unclosed block ({, ( or [) or with a cut-off escape (a final backslash) would swallow
// whatever text came after it, so it is refused whole (clean is nil). So is a statement or rule
// left unfinished at its end.
//
// Also refused: bytes that are not UTF-8, an unterminated string, a malformed url(, and the text
// "</style" (so the sheet can be inlined in a <style> element).
//
// What is refused is left out of clean: a declaration, a whole rule when its selector or
// prelude is refused, or a whole at-rule. The rest is kept byte for byte, except that CR, CRLF
// and FF become LF and NUL becomes U+FFFD, as browsers read them, and a space is put where a
// removed part could otherwise let its neighbours join into one token or a comment.
func CheckStylesheet(css []byte, allowedHosts func(host string) bool) (clean []byte, problems []StyleProblem) {
	clean, _, problems = CheckStylesheetAddresses(css, allowedHosts)
	return clean, problems
}

// CheckStylesheetAddresses is CheckStylesheet that also returns every address a url() of the
// clean sheet names, as written (absolute http(s), fragment included), so that the proxy can
// hold them in its redirect guard: an allowed host that redirects (a site's open redirect)
// would otherwise carry whatever the sheet put into the address to anywhere. An address of a
// part that was refused after its url() passed may be among them; one the clean sheet loads is
// never missing.
func CheckStylesheetAddresses(css []byte, allowedHosts func(host string) bool) (clean []byte, addrs []string, problems []StyleProblem) {
	if !utf8.Valid(css) {
		return nil, nil, []StyleProblem{{Line: 1, Column: 1, Reason: "the stylesheet is not valid UTF-8; save it as UTF-8"}}
	}
	src := preprocessCSS(css)
	c := &styleChecker{src: src, allowed: allowedHosts}
	if !c.tokenize() {
		return nil, nil, []StyleProblem{{Line: 1, Column: 1, Reason: "the stylesheet could not be read"}}
	}
	c.matchBlocks()
	c.broad = true // declarations outside any rule (in @scope, @page) count as broad
	c.list(0, false)
	out := c.out.Bytes()
	if at, reason := c.unfinished(); reason != "" {
		// The sheet does not end at the top level: refused whole, so nothing it swallows can
		// come after it (DESIGN invariant 9).
		c.probs = append(c.probs, c.problem(at, reason))
		return nil, nil, c.probs
	}
	if bytesContainFold(out, "</style") {
		// Unreachable while every item is checked for it; kept as a last guard.
		return nil, nil, append(c.probs, StyleProblem{Line: 1, Column: 1, Reason: `the stylesheet contains "</style"`})
	}
	return out, c.addrs, c.probs
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
	// open are the tokens that open a block never closed, outermost first.
	open  []int
	depth int // nesting of rule blocks being checked
	// broad says the rule being checked has a broad subject (subjectBroad); keyframes counts
	// the @keyframes blocks being checked (their items are keyframes, not rules).
	broad     bool
	keyframes int
	// lineStarts are the offsets at which lines start, computed on the first problem.
	lineStarts []int
	out        bytes.Buffer
	probs      []StyleProblem
	addrs      []string // the addresses of the url()s that passed (CheckStylesheetAddresses)
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
		c.open = append(c.open, o.at)
	}
}

// unfinished says where and why the sheet does not end at the top level, or "" when it does:
// it ends inside a comment, a string or a url(, with a backslash, or inside a block. Such a
// sheet would swallow whatever text a browser read after it.
func (c *styleChecker) unfinished() (int, string) {
	n := len(c.toks)
	if n == 0 {
		return 0, ""
	}
	last := c.toks[n-1]
	switch {
	case last.tt == css.CommentToken && (len(last.raw) < 4 || !bytes.HasSuffix(last.raw, []byte("*/"))):
		return n - 1, "the stylesheet ends inside a comment that starts here; close it with */"
	case last.tt == css.StringToken && !closedString(last.raw):
		return n - 1, "the stylesheet ends inside a string that starts here; close the string"
	case (last.tt == css.URLToken || last.tt == css.BadURLToken) && !closedURL(last.raw):
		return n - 1, "the stylesheet ends inside a url( that starts here; close it with )"
	case c.src[len(c.src)-1] == '\\':
		return n - 1, "the stylesheet ends with a backslash (a cut-off escape); remove it"
	case len(c.open) > 0:
		return c.open[0], fmt.Sprintf("the stylesheet ends inside the block %s opened here; close it with %s", c.toks[c.open[0]].raw, closerText(c.toks[c.open[0]].tt))
	}
	return 0, ""
}

func closerText(tt css.TokenType) string {
	switch closer(tt) {
	case css.RightBraceToken:
		return "}"
	case css.RightBracketToken:
		return "]"
	}
	return ")"
}

// closedString reports whether a string token's raw text ends with its own, unescaped quote.
func closedString(raw []byte) bool {
	if len(raw) < 2 {
		return false
	}
	q := raw[0]
	for i := 1; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			i++
		case q:
			return i == len(raw)-1
		}
	}
	return false
}

// closedURL reports whether a url( token's raw text ends with an unescaped ) outside quotes.
func closedURL(raw []byte) bool {
	i := bytes.IndexByte(raw, '(')
	if i < 0 {
		return false
	}
	var quote byte
	for i++; i < len(raw); i++ {
		switch b := raw[i]; {
		case b == '\\':
			i++
		case quote != 0:
			if b == quote {
				quote = 0
			}
		case b == '"' || b == '\'':
			quote = b
		case b == ')':
			return i == len(raw)-1
		}
	}
	return false
}

// emit copies tokens [i, j) to the output.
func (c *styleChecker) emit(i, j int) {
	for ; i < j; i++ {
		c.out.Write(c.toks[i].raw)
	}
}

// drop records a problem at token at and leaves a separator where the removed part was.
func (c *styleChecker) drop(at int, reason string) {
	c.probs = append(c.probs, c.problem(at, reason))
	c.separate()
}

// problem is a StyleProblem at token at.
func (c *styleChecker) problem(at int, reason string) StyleProblem {
	line, col := 1, 1
	if at < len(c.toks) {
		line, col = c.position(c.toks[at].off)
	}
	return StyleProblem{Line: line, Column: col, Reason: reason}
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
func (c *styleChecker) list(i int, nested bool) int {
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
			i = c.atRule(i, nested)
			continue
		}
		i = c.item(i, nested)
	}
	return i
}

// item checks a declaration or a qualified (style) rule starting at token i.
func (c *styleChecker) item(i int, nested bool) int {
	start := i
	// Only a declaration may hold a {} block in its value (custom properties do).
	custom := nested && isCustomPropertyName(c.toks[i])
	for i < len(c.toks) {
		tt := c.toks[i].tt
		switch {
		case tt == css.SemicolonToken && nested:
			return c.declaration(start, i+1)
		case tt == css.RightBraceToken && nested:
			return c.declaration(start, i)
		case tt == css.LeftBraceToken && !custom:
			return c.rule(start, i)
		case closer(tt) != css.ErrorToken:
			i = c.skipBlock(i)
		default:
			i++
		}
	}
	if nested {
		return c.declaration(start, i)
	}
	// A prelude with no block at the end of the sheet is no rule; the browser drops it.
	c.drop(start, "unfinished rule at the end of the stylesheet")
	return i
}

func isCustomPropertyName(t styleToken) bool {
	return (t.tt == css.CustomPropertyNameToken || t.tt == css.IdentToken) && strings.HasPrefix(decodeCSSName(t.raw), "--")
}

// declaration checks tokens [i, j) as one declaration.
func (c *styleChecker) declaration(i, j int) int {
	name := decodeCSSName(c.toks[i].raw)
	switch prop := stripVendor(strings.ToLower(name)); prop {
	case "behavior", "binding":
		c.drop(i, fmt.Sprintf("the property %s can run code", name))
		return j
	case "field-sizing":
		c.drop(i, fmt.Sprintf("the property %s is refused: it makes a field's size follow its text, so a password's length would show in the layout", name))
		return j
	case "text-security", "all":
		c.drop(i, fmt.Sprintf("the property %s is refused: it could unmask a field the page shows as dots", name))
		return j
	case "animation", "animation-name", "animation-iteration-count":
		if c.broad && c.keyframes == 0 {
			if reason := c.animationCost(prop, i, j); reason != "" {
				c.drop(i, reason)
				return j
			}
		}
	}
	if at, reason := c.checkTokens(i, j); reason != "" {
		c.drop(at, reason)
		return j
	}
	c.emit(i, j)
	return j
}

// rule checks a qualified rule whose prelude is [i, brace) and whose block opens at brace.
func (c *styleChecker) rule(i, brace int) int {
	end := c.skipBlock(brace)
	if at, reason := c.checkTokens(i, brace); reason != "" {
		c.drop(at, reason)
		return end
	}
	if at, reason := c.selectorProblem(i, brace); reason != "" {
		c.drop(at, reason)
		return end
	}
	if c.depth >= maxStyleDepth {
		c.drop(i, fmt.Sprintf("rules nested more than %d deep", maxStyleDepth))
		return end
	}
	broad := c.broad
	if c.keyframes == 0 {
		c.broad = c.subjectBroad(i, brace)
	}
	c.emit(i, brace+1)
	c.depth++
	close := c.list(brace+1, true)
	c.depth--
	c.broad = broad
	c.emit(close, end)
	return end
}

// allowedAtRules are the at-rules a stylesheet may use, by decoded lowercase name.
var allowedAtRules = map[string]bool{
	"media": true, "supports": true, "keyframes": true, "-webkit-keyframes": true,
	"-moz-keyframes": true, "-o-keyframes": true, "layer": true, "container": true,
	"scope": true, "starting-style": true, "page": true, "property": true,
}

// atRule checks the at-rule starting at token i, in a block when nested.
func (c *styleChecker) atRule(i int, nested bool) int {
	start := i
	name := strings.ToLower(decodeCSSName(c.toks[i].raw[1:]))
	// Find the end of the prelude: ';', '{' or the '}' closing the enclosing block (at the top
	// level a '}' is part of the prelude, as in a browser).
	brace := -1
	end := len(c.toks)
	finished := false
	for i++; i < len(c.toks); i++ {
		tt := c.toks[i].tt
		if tt == css.SemicolonToken {
			end = i + 1
			finished = true
			break
		}
		if tt == css.RightBraceToken && nested {
			end = i
			finished = true
			break
		}
		if tt == css.LeftBraceToken {
			brace = i
			end = c.skipBlock(i)
			finished = true
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
	case !finished:
		// A statement the sheet's end cuts off would take in whatever came after it.
		c.drop(start, fmt.Sprintf("unfinished @%s at the end of the stylesheet; end it with ; or a {} block", name))
		return end
	}
	preludeEnd := end
	if brace >= 0 {
		preludeEnd = brace
	}
	if at, reason := c.checkTokens(start+1, preludeEnd); reason != "" {
		c.drop(at, reason)
		return end
	}
	if name == "scope" {
		// @scope's prelude selects elements, like a rule's selector.
		if at, reason := c.selectorProblem(start+1, preludeEnd); reason != "" {
			c.drop(at, reason)
			return end
		}
	}
	if brace < 0 {
		c.emit(start, end)
		return end
	}
	if c.depth >= maxStyleDepth {
		c.drop(start, fmt.Sprintf("rules nested more than %d deep", maxStyleDepth))
		return end
	}
	broad, keyframes := c.broad, c.keyframes
	switch {
	case strings.HasSuffix(name, "keyframes"):
		c.keyframes++
	case name == "scope" || name == "page":
		c.broad = true // bare declarations in them apply to broad or no subjects
	}
	c.emit(start, brace+1)
	c.depth++
	close := c.list(brace+1, true)
	c.depth--
	c.broad, c.keyframes = broad, keyframes
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

// checkedFieldState are the pseudo-classes (by decoded lowercase name without a vendor prefix)
// that depend on what is typed into a field: whether it is empty, matches its pattern or
// length limits, is in range, or was autofilled. A selector with one of them could tell a
// password's content or length apart through a style read back with dom.style or dom.rect.
var checkedFieldState = map[string]bool{
	"placeholder-shown": true, "valid": true, "invalid": true, "user-valid": true,
	"user-invalid": true, "ui-valid": true, "ui-invalid": true, "in-range": true,
	"out-of-range": true, "autofill": true, "blank": true,
	// A custom element's states (:state(empty), :state(short)) are whatever its code says:
	// a form-associated field in a closed shadow root reports its emptiness or validity by them
	// to the light DOM (red-team pass 6c).
	"state": true,
}

// selectorProblem checks the selector tokens [i, j) for tests of field contents: an attribute
// selector on value (any case, any namespace, escaped or not, inside :has() or :is() too) or
// a checkedFieldState pseudo-class. It returns the token that decided and the reason, or "".
func (c *styleChecker) selectorProblem(i, j int) (int, string) {
	for k := i; k < j; k++ {
		switch t := c.toks[k]; t.tt {
		case css.LeftBracketToken:
			if at, name := c.attributeName(k); name != "" || at == k {
				if reason := c.mirrorProblem(k, at, name); reason != "" {
					return at, reason
				}
			}
		case css.ColonToken:
			n := c.nextSignificant(k+1, j)
			if n < j && (c.toks[n].tt == css.IdentToken || c.toks[n].tt == css.FunctionToken || c.toks[n].tt == css.CustomPropertyNameToken) {
				name := strings.ToLower(decodeCSSName(bytes.TrimSuffix(c.toks[n].raw, []byte("("))))
				if checkedFieldState[stripVendor(name)] || strings.HasPrefix(name, "--") { // :--x, the older spelling of :state(x)
					return n, fmt.Sprintf(":%s is refused in a remixlet stylesheet: it tests what is typed into a field (a password's length or content could be read back)", name)
				}
			}
		}
	}
	return 0, ""
}

// nextSignificant returns the index of the first token in [k, j) that is not a comment (j when
// there is none). Comments vanish when a browser reads a selector.
func (c *styleChecker) nextSignificant(k, j int) int {
	for k < j && c.toks[k].tt == css.CommentToken {
		k++
	}
	return k
}

// attributeName returns the decoded name an attribute selector opened at the [ token at tests,
// and the token it is in: [name …], [ns|name …], [*|name …] or [|name …].
func (c *styleChecker) attributeName(open int) (int, string) {
	var seq []int
	for k := open + 1; k < c.blockEnd[open] && len(seq) < 3; k++ {
		if tt := c.toks[k].tt; tt != css.WhitespaceToken && tt != css.CommentToken {
			seq = append(seq, k)
		}
	}
	isBar := func(n int) bool {
		return n < len(seq) && c.toks[seq[n]].tt == css.DelimToken && c.toks[seq[n]].raw[0] == '|'
	}
	at := 0
	switch {
	case isBar(0):
		at = 1
	case isBar(1):
		at = 2
	}
	if at >= len(seq) || c.toks[seq[at]].tt != css.IdentToken {
		return open, ""
	}
	return seq[at], decodeCSSName(c.toks[seq[at]].raw)
}

// subjectBroad reports whether the selector list [i, j) of a rule has a complex selector whose
// subject — its last compound — has no class, id or attribute selector of its own: *, div,
// :hover, :not(.x), an empty prelude, or & in a rule that is itself broad (c.broad, the
// enclosing rule's, at the time of the call). Such a rule applies to every element of a page or
// to a whole kind of them.
func (c *styleChecker) subjectBroad(i, j int) bool {
	specific, seen, next := false, false, false
	for k := i; k < j; k++ {
		t := c.toks[k]
		switch {
		case t.tt == css.CommaToken:
			if !specific {
				return true
			}
			specific, seen, next = false, false, false
			continue
		case t.tt == css.WhitespaceToken || t.tt == css.CommentToken:
			next = next || seen
			continue
		case t.tt == css.ColumnToken || t.tt == css.DelimToken && (t.raw[0] == '>' || t.raw[0] == '+' || t.raw[0] == '~'):
			next = true
			continue
		}
		if next {
			specific, seen, next = false, false, false
		}
		seen = true
		switch t.tt {
		case css.HashToken:
			specific = true
		case css.LeftBracketToken:
			specific = true
			k = c.skipBlock(k) - 1
		case css.FunctionToken, css.LeftParenthesisToken:
			k = c.skipBlock(k) - 1
		case css.DelimToken:
			switch t.raw[0] {
			case '.':
				specific = specific || k+1 < j && c.toks[k+1].tt == css.IdentToken
			case '&':
				specific = specific || !c.broad
			}
		}
	}
	return !specific
}

// cssWideOrNone are the values with which a broad rule may still set animation or
// animation-name: they stop animations or defer to the cascade.
var cssWideOrNone = map[string]bool{"none": true, "initial": true, "inherit": true, "unset": true, "revert": true, "revert-layer": true}

// animationCost checks an animation declaration [i, j) (prop without vendor prefix) in a rule
// with a broad subject: animation and animation-name may only stop animations, and
// animation-iteration-count may not be infinite or come from var().
func (c *styleChecker) animationCost(prop string, i, j int) string {
	var values []styleToken
	colon := false
	for k := i + 1; k < j; k++ {
		t := c.toks[k]
		switch {
		case !colon:
			colon = t.tt == css.ColonToken
			continue
		case t.tt == css.WhitespaceToken || t.tt == css.CommentToken || t.tt == css.SemicolonToken:
			continue
		case t.tt == css.DelimToken && t.raw[0] == '!':
			k = j // !important ends the value
			continue
		}
		values = append(values, t)
	}
	const where = "on a rule whose subject is every element or a bare element type (*, div, :hover …)"
	if prop == "animation-iteration-count" {
		for _, v := range values {
			name := strings.ToLower(decodeCSSName(bytes.TrimSuffix(v.raw, []byte("("))))
			if v.tt == css.IdentToken && name == "infinite" || v.tt == css.FunctionToken {
				return fmt.Sprintf("endless animations are refused %s: give the rule a class, id or attribute selector", where)
			}
		}
		return ""
	}
	if len(values) == 1 && values[0].tt == css.IdentToken && cssWideOrNone[strings.ToLower(decodeCSSName(values[0].raw))] {
		return ""
	}
	return fmt.Sprintf("animations are refused %s (only %s: none); give the rule a class, id or attribute selector", where, prop)
}

// checkTokens checks every token in [i, j) and returns the first refused one with its reason.
func (c *styleChecker) checkTokens(i, j int) (int, string) {
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
	if reason := checkStyleAddress(addr, c.allowed); reason != "" {
		return reason
	}
	c.addrs = append(c.addrs, addr)
	return ""
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
	// The host must be the one the browser reads (DESIGN invariant 9): a name of numbers
	// ("0x7f.1", "127.1") is an IPv4 address to a browser, and punycode must decode.
	if w, err := weburl.Parse(addr); err != nil || strings.Trim(w.HostKey(), "[]") != host {
		read := "nothing"
		if err == nil {
			read = w.HostKey()
		}
		return fmt.Sprintf("url(%q): a browser reads the host %s as %s; write the host as the browser reads it", show, host, read)
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
