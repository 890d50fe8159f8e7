package rewrite

import (
	"fmt"
	"strings"

	"github.com/tdewolff/parse/v2/css"
)

// Field contents in selectors a remixlet writes (red-team pass 6c). What the person types into a
// field reaches selectors not only through the value attribute and the field-state
// pseudo-classes (selectorProblem) but through the page itself: many sites copy what is typed
// into another attribute, of the field or of an element around it (data-value, data-typed, a
// length in data-len, aria-valuenow of a strength meter), and a selector that compares such an
// attribute's value ([data-value^="h"], [data-len="7"]) is a prefix or length oracle read back
// with a layout read, a load from an allowed host or the match of dom.query. Which attribute a
// page mirrors into cannot be known from the selector, so the rule is by attribute: a selector
// may compare the value of an attribute only if it is one of comparableAttrs, the attributes
// pages use for structure and navigation and not to hold what was typed. Any other attribute
// may still be tested for presence ([data-state]), and read with dom.attr, which the page agent
// blanks when it holds what was typed into a sensitive field (rx_mirrors.js).
//
// data-* values (datasel7, secret8). React, Radix and shadcn sites key everything on
// data-state, data-side, data-orientation; refusing [data-state="open"] on every page broke
// remixlets there. A query's answer is read at one moment, in the page, where the page agent
// knows whether a secret was typed: dom.query, dom.queryAll and dom.waitFor may compare data-*
// values until a secret is typed into a field of the page (or while none holds a value), and are
// refused after, for the rest of the document, with the message below (rx_policy.js
// secretOnPage; waits pending then are ended with it, rx_wait.js). Go cannot know that state, so
// the checks here let data-* comparisons through, in queries and in stylesheets alike. A sheet
// follows the same rule by being dropped (OPEN-ITEMS 120): the page agent holds every remixlet
// sheet as written only until the first key of a secret on the page (or while a sensitive field
// holds a value), and after it only the sheet's own copy (ownsheet.go), whose rules match the
// remixlet's own elements alone, which the page does not write. A rule on a mirror
// ([data-len="7"] .probe) would otherwise key layout, paint and the pointer's target on the
// secret long after any check: a full-page element shown by it takes the person's next click,
// with no layout read and no load (NOTES.datasel7.md). Every other attribute outside
// comparableAttrs (aria-value*, style, custom ones) stays refused everywhere.
//
// The same rule, with the same lists (checked equal by TestFieldSelectorListsMatchThePageAgent),
// runs in the page agent on dom.query, dom.queryAll and dom.waitFor (rx_policy.js
// fieldSelectorProblem), and in Go on stylesheets (selectorProblem) and on those calls
// (CheckFieldSelector, from proxy/remixlet).

// comparableAttrs are the attributes whose values a remixlet's selector may compare: names,
// links, kinds and roles, and the ARIA states other than aria-value* (a strength meter's
// aria-valuenow follows the password). Test ids (data-testid and its spellings) are the one kind
// of data attribute: remixlets for large sites select by them, and sites set them in markup,
// never from typing.
var comparableAttrs = map[string]bool{
	"id": true, "class": true, "href": true, "src": true, "type": true, "rel": true, "role": true,
	"lang": true, "dir": true, "name": true, "for": true, "target": true, "title": true, "alt": true,
	"hreflang": true, "media": true, "method": true, "action": true, "slot": true, "part": true,
	"tabindex": true, "colspan": true, "rowspan": true, "scope": true, "datetime": true,
	"itemprop": true, "itemtype": true, "download": true, "accept": true, "autocomplete": true,
	"inputmode": true, "enterkeyhint": true, "contenteditable": true, "draggable": true,
	"hidden": true, "disabled": true, "checked": true, "selected": true, "open": true,
	"required": true, "readonly": true, "multiple": true, "placeholder": true, "loading": true,
	"data-testid": true, "data-test-id": true, "data-test": true, "data-qa": true, "data-cy": true,
}

// comparableAttr reports whether a selector may compare the value of the attribute name
// (decoded, any case): one of comparableAttrs, or an ARIA attribute other than aria-value*.
func comparableAttr(name string) bool {
	n := strings.ToLower(name)
	if rest, ok := strings.CutPrefix(n, "aria-"); ok {
		return !strings.HasPrefix(rest, "value")
	}
	return comparableAttrs[n]
}

// attributeComparison reports whether the attribute selector opened at the [ token compares a
// value (=, ~=, |=, ^=, $=, *=) rather than testing presence; nameAt is its name's token.
func (c *styleChecker) attributeComparison(open, nameAt int) bool {
	end := c.blockEnd[open]
	for k := nameAt + 1; k < end; k++ {
		switch t := c.toks[k]; t.tt {
		case css.WhitespaceToken, css.CommentToken:
			continue
		case css.RightBracketToken:
			return false
		case css.IncludeMatchToken, css.DashMatchToken, css.PrefixMatchToken, css.SuffixMatchToken, css.SubstringMatchToken:
			return true
		case css.DelimToken:
			return t.raw[0] == '='
		default:
			return true // anything else after the name: not a presence test
		}
	}
	return false
}

// mirrorProblem is selectorProblem's reason for the attribute selector opened at open with its
// name at nameAt, or "".
func (c *styleChecker) mirrorProblem(open, nameAt int, name string) string {
	if strings.EqualFold(name, "value") {
		return "selectors may not test the value attribute (it mirrors what is typed into fields, passwords included); select by class, id or another attribute"
	}
	if name != "" && c.attributeComparison(open, nameAt) && !comparableAttr(name) && !dataAttr(name) {
		return fmt.Sprintf("selectors may not compare the value of attribute %s (pages copy what is typed into fields, passwords included, into such attributes); test its presence ([%s]) or compare id, class, href, role, aria-*, data-testid or data-* (data-* values only until a secret is typed on the page)", name, name)
	}
	if name == "" && nameAt == open {
		return "the attribute selector could not be read"
	}
	return ""
}

// dataAttr reports whether name (decoded, any case) is a data-* attribute.
func dataAttr(name string) bool {
	return len(name) > 5 && strings.EqualFold(name[:5], "data-")
}

// CheckFieldSelector applies the stylesheet's field-contents rule (selectorProblem) to a
// selector a remixlet passes to dom.query, dom.queryAll or dom.waitFor; comparing a data-*
// attribute's value is left to the page agent, which refuses it once a secret was typed on the
// page. It returns nil when the selector tests nothing of what is typed into a field.
func CheckFieldSelector(sel string) error {
	c := &styleChecker{src: []byte(sel)}
	if !c.tokenize() {
		return fmt.Errorf("checking selector: it could not be read")
	}
	c.matchBlocks()
	if len(c.open) > 0 {
		return fmt.Errorf("checking selector: a bracket or parenthesis is not closed")
	}
	for _, t := range c.toks {
		if t.tt == css.CommentToken || t.tt == css.BadStringToken {
			return fmt.Errorf("checking selector: comments and unfinished strings are refused")
		}
		if bytes := t.raw; strings.ContainsRune(string(bytes), '\\') {
			return fmt.Errorf("checking selector: CSS escapes are refused in a selector")
		}
	}
	if _, reason := c.selectorProblem(0, len(c.toks)); reason != "" {
		return fmt.Errorf("checking selector: %s", reason)
	}
	return nil
}
