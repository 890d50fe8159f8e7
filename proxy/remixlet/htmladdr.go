package remixlet

import (
	"fmt"
	"strings"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"golang.org/x/net/html"
)

// Finding the addresses in dom.setHTML's HTML (DESIGN invariant 9: HTML is found with the tree
// builder the browser uses, not a bare tokenizer). The page agent parses the string with
// DOMParser as a text/html document, whose scripting is disabled; html.ParseWithOptions with
// scripting disabled builds the same tree, so an element the tree builder moves (an <img> that
// breaks out of <svg><style>, content after a stray </p>, <noscript> read as markup) is found
// where the browser puts it. A bare tokenizer reads <svg><style> as a raw-text style element and
// never sees the <img> inside.

// urlAttrs are the attributes whose value is one address, on any element; listAttrs hold several
// (srcset-like lists, or space-separated lists). Only href on links and src on images can ever be
// written by the page agent; the others are found all the same, so that every address in the
// HTML is checked and guarded whatever the page agent's allow-list becomes.
var (
	urlAttrs = map[string]bool{
		"href": true, "src": true, "action": true, "formaction": true, "poster": true, "data": true,
		"background": true, "cite": true, "longdesc": true, "lowsrc": true, "dynsrc": true,
		"codebase": true, "manifest": true, "profile": true, "usemap": true, "icon": true,
		"itemid": true, "classid": true, "xlink:href": true,
	}
	srcsetAttrs = map[string]bool{"srcset": true, "imagesrcset": true}
	spaceAttrs  = map[string]bool{"ping": true, "archive": true, "itemtype": true, "attributionsrc": true}
)

// findHTMLAddresses parses s as the page agent's inert document does and returns every address
// value in it, as written (not resolved), in document order. It has no count limit: the HTML's
// size (maxHTMLLen) bounds it.
func findHTMLAddresses(s string) ([]string, error) {
	doc, err := html.ParseWithOptions(strings.NewReader(s), html.ParseOptionEnableScripting(false))
	if err != nil {
		return nil, fmt.Errorf("parsing the HTML: %w", err)
	}
	var out []string
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		for _, a := range n.Attr {
			name := strings.ToLower(a.Key)
			if a.Namespace != "" {
				name = a.Namespace + ":" + name
			}
			switch {
			case urlAttrs[name]:
				out = append(out, a.Val)
			case srcsetAttrs[name]:
				out = append(out, srcsetURLs(a.Val)...)
			case spaceAttrs[name]:
				out = append(out, strings.Fields(a.Val)...)
			case name == "content" && n.DataAtom.String() == "meta":
				if u := httpx.RefreshURL(a.Val); u != "" {
					out = append(out, u)
				}
			}
		}
	}
	return out, nil
}

// srcsetURLs are the addresses of a srcset value: each candidate's first token (the browser's
// parse splits on commas that follow whitespace or end a URL; splitting on every comma can only
// find more pieces, never miss an address's start).
func srcsetURLs(v string) []string {
	var out []string
	for _, cand := range strings.Split(v, ",") {
		if f := strings.Fields(cand); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}
