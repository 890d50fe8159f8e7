package rewrite

import (
	"fmt"

	"github.com/tdewolff/parse/v2"
	"github.com/tdewolff/parse/v2/css"
)

// Custom properties as text for page scripts (red-team pass 6d, OPEN-ITEMS 29). A custom
// property's value is not a load: `--next: "https://elsewhere/…"` passes CheckStylesheet. But a
// page script reads it as text (getComputedStyle(el).getPropertyValue('--next')) and may load
// it: a theme loader, a lazy loader that takes its image from CSS. So the caller (the remixlet
// policy, which knows the remixlet's hosts and the address rule) judges each custom property's
// value as a page script reads it, and DropCustomProperties takes out the declarations it
// refuses.

// DropCustomProperties returns sheet (a sheet CheckStylesheet kept) without the custom property
// declarations whose value refuse refuses, and a problem for each. refuse gets the value as a
// page script reads it (StyleValueText) and returns why it is refused, or "".
func DropCustomProperties(sheet []byte, refuse func(value string) string) (out []byte, problems []StyleProblem) {
	src := preprocessCSS(sheet)
	c := &styleChecker{src: src}
	if !c.tokenize() {
		return nil, []StyleProblem{{Line: 1, Column: 1, Reason: "the stylesheet could not be read"}}
	}
	out = make([]byte, 0, len(src))
	last := 0
	for i := 0; i < len(c.toks); i++ {
		if !isCustomPropertyName(c.toks[i]) {
			continue
		}
		k := i + 1
		for k < len(c.toks) && c.toks[k].tt == css.WhitespaceToken {
			k++
		}
		if k >= len(c.toks) || c.toks[k].tt != css.ColonToken {
			continue
		}
		end := valueEnd(c.toks, k+1)
		why := refuse(tokensText(c.toks[k+1 : end]))
		if why == "" {
			i = end - 1
			continue
		}
		line, col := c.position(c.toks[i].off)
		problems = append(problems, StyleProblem{Line: line, Column: col,
			Reason: fmt.Sprintf("the custom property %s is refused: %s", decodeCSSName(c.toks[i].raw), why)})
		stop := end
		if stop < len(c.toks) && c.toks[stop].tt == css.SemicolonToken {
			stop++
		}
		out = append(out, src[last:c.toks[i].off]...)
		out = append(out, ' ') // what stood on either side must not join into one token
		if stop < len(c.toks) {
			last = c.toks[stop].off
		} else {
			last = len(src)
		}
		i = stop - 1
	}
	out = append(out, src[last:len(src)]...)
	return out, problems
}

// valueEnd is the index of the token that ends a declaration's value starting at i: the first
// ; or } (or ] or ) with nothing open) outside any block, or the end.
func valueEnd(toks []styleToken, i int) int {
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].tt {
		case css.LeftBraceToken, css.LeftBracketToken, css.LeftParenthesisToken, css.FunctionToken:
			depth++
		case css.RightBraceToken, css.RightBracketToken, css.RightParenthesisToken:
			if depth == 0 {
				return i
			}
			depth--
		case css.SemicolonToken:
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// tokensText is tokens as a page script reads them in a computed value: escapes decoded, a
// string's contents without its quotes, comments left out.
func tokensText(toks []styleToken) string {
	var b []byte
	for _, t := range toks {
		switch t.tt {
		case css.CommentToken:
		case css.StringToken:
			raw := t.raw
			if len(raw) >= 2 && raw[len(raw)-1] == raw[0] {
				raw = raw[1 : len(raw)-1]
			} else if len(raw) >= 1 {
				raw = raw[1:]
			}
			b = append(b, decodeCSSString(raw)...)
		default:
			b = append(b, decodeCSSName(t.raw)...)
		}
	}
	return string(b)
}

// StyleValueText is an inline style value (dom.setStyle's) as a page script reads it: see
// tokensText.
func StyleValueText(v string) string {
	src := preprocessCSS([]byte(v))
	l := css.NewLexer(parse.NewInputBytes(src))
	var toks []styleToken
	for {
		tt, raw := l.Next()
		if tt == css.ErrorToken || len(raw) == 0 {
			break
		}
		toks = append(toks, styleToken{tt: tt, raw: raw})
	}
	return tokensText(toks)
}
