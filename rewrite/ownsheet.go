package rewrite

import (
	"bytes"
	"strings"

	"github.com/tdewolff/parse/v2/css"
)

// A remixlet's own rules (OPEN-ITEMS 118, secret8). A sheet rule keyed on page state
// (body:has(#wrap.s3) .rx-p3 { display: block }) can put one of several elements of the remixlet
// under the person's pointer by what the page wrote while a password was typed, and the person's
// click, or :hover, tells the remixlet which: no layout read, no load. So the page agent holds
// every remixlet stylesheet twice: as written (the droppable sheet, emptied at the first key of a
// secret on the page, for the rest of the document) and as OwnSheet's copy, kept: each rule with
// every compound selector restricted to the elements remixlets made (attr, which the page agent
// puts on each element of dom.create, dom.clone and dom.setHTML, and which no remixlet may write).
//
// The split, exactly. A complex selector goes into the own copy when each of its compounds is
//   - made of type, universal, class, id and attribute selectors, &, pseudo-elements, and
//     ownPseudoClasses (the element's own state: :hover, :focus, :checked, :empty …);
//     it gets :where([attr]) (no specificity) before its first pseudo-element;
//   - or exactly :root, html or body, which match the same element whatever the page does, and
//     is kept as written;
// and its functional pseudo-classes are :is(), :where() and :has(), whose arguments are split the
// same way (a failing argument fails the whole), or :not() of compounds without combinators or
// functions (it tests the element itself, which is the remixlet's). Combinators: descendant, >,
// + and ~. Everything else — :nth-child() and the other structural pseudo-classes (they count the
// page's siblings), :disabled and the like (a page's fieldset decides them), :lang(), :dir(),
// :target, :scope, :host, the column combinator, a comment inside a selector — leaves the complex
// selector out of the copy. A rule keeps the complex
// selectors that pass; a rule with none, and every @container rule (it queries an ancestor the
// page may size or style), is left out. @scope's selectors are split as a rule's. Declarations,
// @media, @supports, @layer, @starting-style, @keyframes, @property and @page are copied as they
// are (nothing in them tests an element).
//
// Before the first key the two sheets together style the page exactly as the sheet alone: each
// rule of the copy matches a subset of what its original matches, with the same or a lower
// specificity, and comes before it (own sheet, then droppable), so it never wins over it. After
// the drop only the remixlet's own elements keep their rules.
//
// What the copy does not close: an element of the remixlet placed inside a page element still
// takes that element's layout (a strength bar's width), inherited properties and custom
// properties (var()), and counters: the page's own styles can move it under the pointer. That is
// the page's layout read through the person's pointer, which no sheet rule decides.

// ownPseudoClasses are the pseudo-classes (decoded, lowercase) that test only the element's own
// state or the person's input on it. Not :disabled, :enabled, :read-only and :read-write (a page's
// <fieldset disabled> around the element decides them: a sign-in button enabled once the password
// is long enough) nor :default (the page's form decides it).
var ownPseudoClasses = map[string]bool{
	"hover": true, "active": true, "focus": true, "focus-visible": true, "focus-within": true,
	"checked": true, "indeterminate": true, "required": true, "optional": true, "link": true,
	"visited": true, "any-link": true, "empty": true, "open": true, "closed": true,
	"popover-open": true, "modal": true, "fullscreen": true, "defined": true,
}

// legacyPseudoElements are the pseudo-elements CSS 2 wrote with one colon.
var legacyPseudoElements = map[string]bool{"before": true, "after": true, "first-line": true, "first-letter": true}

// maxOwnDepth bounds the nesting of :is(), :where(), :has() and :not() the split follows.
const maxOwnDepth = 16

// OwnSheet returns the own copy of clean, a stylesheet CheckStylesheet (and DropCustomProperties)
// kept, with attr as the attribute of the remixlets' own elements; "" when no rule has a part
// about them. A copy that would grow past four times clean's size and 4 KiB stops taking rules.
func OwnSheet(clean []byte, attr string) []byte {
	w := &ownWriter{c: &styleChecker{src: clean}, mark: ":where([" + attr + "])", limit: 4*len(clean) + 4096}
	if len(clean) == 0 || !w.c.tokenize() {
		return nil
	}
	w.c.matchBlocks()
	if len(w.c.open) > 0 {
		return nil // not a kept sheet
	}
	w.list(0, len(w.c.toks), false)
	if !w.wrote {
		return nil
	}
	return w.out.Bytes()
}

type ownWriter struct {
	c     *styleChecker
	mark  string
	out   bytes.Buffer
	limit int
	wrote bool // a rule went into the copy
}

func (w *ownWriter) emit(i, j int) {
	for ; i < j; i++ {
		w.out.Write(w.c.toks[i].raw)
	}
}

// list copies the items of [i, end) (a sheet, or a block's inside when nested).
func (w *ownWriter) list(i, end int, nested bool) {
	c := w.c
	for i < end {
		switch c.toks[i].tt {
		case css.WhitespaceToken, css.SemicolonToken, css.CDOToken, css.CDCToken, css.CommentToken:
			if w.out.Len() < w.limit {
				w.emit(i, i+1)
			}
			i++
		case css.AtKeywordToken:
			i = w.atRule(i, end, nested)
		default:
			i = w.item(i, end, nested)
		}
	}
}

// item copies a declaration, or a style rule's own part, starting at i (as styleChecker.item
// finds them).
func (w *ownWriter) item(i, end int, nested bool) int {
	c := w.c
	start := i
	custom := nested && isCustomPropertyName(c.toks[i])
	for i < end {
		tt := c.toks[i].tt
		switch {
		case tt == css.SemicolonToken && nested:
			w.emit(start, i+1)
			return i + 1
		case tt == css.LeftBraceToken && !custom:
			return w.rule(start, i)
		case closer(tt) != css.ErrorToken:
			i = c.skipBlock(i)
		default:
			i++
		}
	}
	if nested {
		w.emit(start, end) // the block's last declaration
	}
	return end
}

// rule copies the style rule whose prelude is [i, brace) with its selectors' own part, or
// nothing.
func (w *ownWriter) rule(i, brace int) int {
	end := w.c.skipBlock(brace)
	sel, ok := w.selectorList(i, brace, 0, true)
	if !ok {
		return end
	}
	before := w.out.Len()
	w.out.WriteString(sel)
	w.block(brace, end)
	if w.out.Len() > w.limit {
		w.out.Truncate(before) // past the bound: left out
		return end
	}
	w.wrote = true
	return end
}

// block copies the block opened at brace (ending before end) with its items split.
func (w *ownWriter) block(brace, end int) {
	w.emit(brace, brace+1)
	inner := end
	if inner > brace+1 && w.c.toks[inner-1].tt == css.RightBraceToken {
		inner--
	}
	w.list(brace+1, inner, true)
	w.emit(inner, end)
}

// atRule copies the at-rule starting at i: its inside split, or the whole as it is, or nothing.
func (w *ownWriter) atRule(i, end int, nested bool) int {
	c := w.c
	start := i
	name := strings.ToLower(decodeCSSName(c.toks[i].raw[1:]))
	brace, stop := -1, end
	for i++; i < end; i++ {
		tt := c.toks[i].tt
		if tt == css.SemicolonToken {
			stop = i + 1
			break
		}
		if tt == css.RightBraceToken && nested {
			stop = i
			break
		}
		if tt == css.LeftBraceToken {
			brace, stop = i, c.skipBlock(i)
			break
		}
		if closer(tt) != css.ErrorToken {
			i = c.skipBlock(i) - 1
		}
	}
	switch {
	case brace < 0 || strings.HasSuffix(name, "keyframes") || name == "property" || name == "page":
		w.emit(start, stop)
	case name == "media" || name == "supports" || name == "layer" || name == "starting-style":
		w.emit(start, brace)
		w.block(brace, stop)
	case name == "scope":
		prelude, ok := w.scopePrelude(start+1, brace)
		if !ok {
			return stop
		}
		w.emit(start, start+1)
		w.out.WriteString(prelude)
		w.block(brace, stop)
		w.wrote = true
	}
	// @container and anything else: left out.
	return stop
}

// scopePrelude splits @scope's prelude [i, j): "(<selectors>)" and "to (<selectors>)", each
// part restricted; ok is false when either has no own part.
func (w *ownWriter) scopePrelude(i, j int) (string, bool) {
	c := w.c
	var parts []string
	for k := i; k < j; k++ {
		switch t := c.toks[k]; t.tt {
		case css.WhitespaceToken:
		case css.IdentToken:
			if !strings.EqualFold(decodeCSSName(t.raw), "to") {
				return "", false
			}
			parts = append(parts, "to")
		case css.LeftParenthesisToken:
			e := c.skipBlock(k)
			sel, ok := w.selectorList(k+1, e-1, 1, false)
			if !ok || c.toks[e-1].tt != css.RightParenthesisToken {
				return "", false
			}
			parts = append(parts, "("+sel+")")
			k = e - 1
		default:
			return "", false
		}
	}
	return " " + strings.Join(parts, " ") + " ", true
}

// selectorList splits the selector list [i, j): the complex selectors with an own part, joined
// by commas; with keepSome, those that have none are left out (a rule's list, :is(), :where(),
// :has()), else one such fails the whole (:not(), @scope's).
func (w *ownWriter) selectorList(i, j, depth int, keepSome bool) (string, bool) {
	var parts []string
	for _, r := range w.items(i, j) {
		sel, ok := w.complex(r[0], r[1], depth)
		switch {
		case ok:
			parts = append(parts, sel)
		case !keepSome:
			return "", false
		}
	}
	if len(parts) == 0 {
		return "", false
	}
	return strings.Join(parts, ", "), true
}

// items splits [i, j) at its commas outside blocks: the ranges of a selector list's items.
func (w *ownWriter) items(i, j int) [][2]int {
	c := w.c
	var out [][2]int
	from := i
	for k := i; k <= j; k++ {
		if k < j && c.toks[k].tt != css.CommaToken {
			if closer(c.toks[k].tt) != css.ErrorToken {
				k = c.skipBlock(k) - 1
			}
			continue
		}
		out = append(out, [2]int{from, k})
		from = k + 1
	}
	return out
}

// complex restricts the complex (or relative) selector [i, j): each compound gets the mark.
func (w *ownWriter) complex(i, j, depth int) (string, bool) {
	c := w.c
	var b strings.Builder
	comb := ""     // a combinator read since the last compound
	space := false // whitespace read since the last compound
	compounds := 0
	for k := i; k < j; {
		t := c.toks[k]
		switch {
		case t.tt == css.WhitespaceToken:
			space = true
			k++
			continue
		case combinator(t):
			if comb != "" {
				return "", false
			}
			comb = string(t.raw[:1])
			k++
			continue
		}
		next, part, ok := w.compound(k, j, depth)
		if !ok {
			return "", false
		}
		switch {
		case comb != "":
			if compounds > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(comb + " ")
		case space && compounds > 0:
			b.WriteByte(' ')
		}
		b.WriteString(part)
		compounds++
		comb, space = "", false
		k = next
	}
	if compounds == 0 || comb != "" {
		return "", false
	}
	return b.String(), true
}

// compound restricts the compound selector starting at i (ending at whitespace, a combinator, a
// comma or j), returning where it ends.
func (w *ownWriter) compound(i, j, depth int) (int, string, bool) {
	c := w.c
	var b strings.Builder
	k := i
	marked := -1  // where the mark goes: before the first pseudo-element (-1: at the end)
	simple := 0   // simple selectors read
	root := false // the first one is :root, html or body
	for k < j {
		t := c.toks[k]
		if t.tt == css.WhitespaceToken || t.tt == css.CommaToken || combinator(t) {
			break
		}
		start := k
		switch t.tt {
		case css.IdentToken:
			n := strings.ToLower(decodeCSSName(t.raw))
			root = root || simple == 0 && (n == "html" || n == "body")
			k++
		case css.HashToken:
			k++
		case css.DelimToken:
			switch t.raw[0] {
			case '*', '&', '|':
				k++
			case '.':
				if k+1 >= j || c.toks[k+1].tt != css.IdentToken {
					return 0, "", false
				}
				k += 2
			default:
				return 0, "", false
			}
		case css.LeftBracketToken:
			if k = c.skipBlock(k); w.hasComment(start, k) {
				return 0, "", false
			}
		case css.ColonToken:
			if k+1 >= j {
				return 0, "", false
			}
			n := c.toks[k+1]
			name := strings.ToLower(decodeCSSName(bytes.TrimSuffix(n.raw, []byte("("))))
			switch {
			case n.tt == css.ColonToken:
				// A pseudo-element: ::name or ::name(...).
				if k+2 >= j || (c.toks[k+2].tt != css.IdentToken && c.toks[k+2].tt != css.FunctionToken) {
					return 0, "", false
				}
				if marked < 0 {
					marked = b.Len()
				}
				k += 3
				if c.toks[k-1].tt == css.FunctionToken {
					k = c.skipBlock(k - 1)
				}
			case n.tt == css.IdentToken && legacyPseudoElements[name]:
				if marked < 0 {
					marked = b.Len()
				}
				k += 2
			case n.tt == css.IdentToken && name == "root":
				root = root || simple == 0
				k += 2
			case n.tt == css.IdentToken && ownPseudoClasses[name]:
				k += 2
			case n.tt == css.FunctionToken && marked < 0 && (name == "is" || name == "where" || name == "has" || name == "not"):
				e := c.skipBlock(k + 1)
				if depth >= maxOwnDepth || c.toks[e-1].tt != css.RightParenthesisToken {
					return 0, "", false
				}
				var args string
				var ok bool
				if name == "not" {
					args, ok = w.sameElement(k+2, e-1)
				} else {
					args, ok = w.selectorList(k+2, e-1, depth+1, true)
				}
				if !ok {
					return 0, "", false
				}
				b.WriteString(":" + string(n.raw) + args + ")")
				simple++
				k = e
				continue
			default:
				return 0, "", false
			}
		default:
			return 0, "", false
		}
		w.writeTokens(&b, start, k)
		simple++
	}
	s := b.String()
	switch {
	case simple == 0:
		return 0, "", false
	case root && simple == 1:
		return k, s, true // the same element whatever the page does
	case marked >= 0:
		return k, s[:marked] + w.mark + s[marked:], true
	}
	return k, s + w.mark, true
}

// combinator reports whether t is the combinator >, + or ~.
func combinator(t styleToken) bool {
	return t.tt == css.DelimToken && (t.raw[0] == '>' || t.raw[0] == '+' || t.raw[0] == '~')
}

// hasComment reports whether a comment is among the tokens [i, j).
func (w *ownWriter) hasComment(i, j int) bool {
	for ; i < j; i++ {
		if w.c.toks[i].tt == css.CommentToken {
			return true
		}
	}
	return false
}

// sameElement checks :not()'s argument [i, j): a list of compounds of simple selectors about the
// element itself (no combinator, no function, no pseudo-element), written back as they are.
func (w *ownWriter) sameElement(i, j int) (string, bool) {
	c := w.c
	var parts []string
	for _, r := range w.items(i, j) {
		s, e := r[0], r[1]
		for s < e && c.toks[s].tt == css.WhitespaceToken {
			s++
		}
		for e > s && c.toks[e-1].tt == css.WhitespaceToken {
			e--
		}
		if s == e {
			return "", false
		}
		for m := s; m < e; m++ {
			switch t := c.toks[m]; t.tt {
			case css.IdentToken, css.HashToken:
			case css.DelimToken:
				if t.raw[0] != '.' && t.raw[0] != '*' && t.raw[0] != '|' {
					return "", false
				}
			case css.LeftBracketToken:
				if m = c.skipBlock(m) - 1; w.hasComment(s, m+1) {
					return "", false
				}
			case css.ColonToken:
				if m+1 >= e || c.toks[m+1].tt != css.IdentToken || !ownPseudoClasses[strings.ToLower(decodeCSSName(c.toks[m+1].raw))] {
					return "", false
				}
				m++
			default:
				return "", false // whitespace (a combinator), a function, a comment
			}
		}
		var b strings.Builder
		w.writeTokens(&b, s, e)
		parts = append(parts, b.String())
	}
	return strings.Join(parts, ", "), true
}

func (w *ownWriter) writeTokens(b *strings.Builder, i, j int) {
	for ; i < j; i++ {
		b.Write(w.c.toks[i].raw)
	}
}
