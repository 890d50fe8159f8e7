package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The static half of the page policy (DESIGN invariant 4): what can be checked on a dom.* call's
// arguments alone runs here, in Go, before the call is relayed to the page agent. The page agent
// repeats these checks and adds the ones that depend on the DOM (password fields, handles).

// domOps are the dom.* operations the page agent implements now. The rest of the API (create,
// insert, clone, click, focus, scrollIntoView, addStyle, setHTML, rect, style) is refused with
// errDOMNotYet until the page agent enforces their part of the policy.
var domOps = map[string]bool{
	"query": true, "queryAll": true, "text": true, "attr": true, "value": true,
	"setText": true, "setAttr": true, "addClass": true, "removeClass": true, "setStyle": true,
	"hide": true, "show": true, "on": true, "remove": true,
}

// domEvents are the event types dom.on accepts.
var domEvents = map[string]bool{
	"click": true, "dblclick": true, "mouseenter": true, "mouseleave": true, "input": true,
	"change": true, "focus": true, "blur": true, "keydown": true, "keyup": true,
}

// refusedAttrs are attributes that load or run something. href and src are refused outright
// for now; they will be allowed on links and images once the address rule is enforced.
var refusedAttrs = map[string]bool{
	"src": true, "href": true, "action": true, "formaction": true, "srcdoc": true, "style": true,
	"xlink:href": true, "srcset": true, "imagesrcset": true, "ping": true, "poster": true,
	"background": true, "data": true, "codebase": true, "archive": true, "lowsrc": true,
	"dynsrc": true, "manifest": true, "http-equiv": true, "is": true, "formtarget": true,
	"target": true, "xmlns": true, "attributionsrc": true,
}

// Size limits on dom.* arguments.
const (
	maxSelectorLen = 1024
	maxAttrNameLen = 128
	maxAttrValue   = 8 << 10
	maxTextLen     = 64 << 10
	maxStyleProps  = 64
	maxStyleValue  = 1024
)

// errDOMNotYet refuses the dom.* calls the page agent does not implement yet.
var errDOMNotYet = errors.New("is not available yet in this remixproxy (available: query, queryAll, text, attr, value, setText, setAttr, addClass, removeClass, setStyle, hide, show, on, remove)")

// checkDOMCall applies the static page policy to one dom.* call. It returns the arguments
// decoded, and the dom.on listener id (0 for other calls).
func checkDOMCall(method string, raw json.RawMessage) (args []json.RawMessage, listener int64, err error) {
	if !domOps[method] {
		return nil, 0, errDOMNotYet
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, 0, errors.New("arguments are not a JSON array")
	}
	want := map[string][2]int{ // min, max arguments
		"query": {1, 2}, "queryAll": {1, 2}, "text": {1, 1}, "attr": {2, 2}, "value": {1, 1},
		"setText": {2, 2}, "setAttr": {3, 3}, "addClass": {2, 2}, "removeClass": {2, 2},
		"setStyle": {2, 2}, "hide": {1, 1}, "show": {1, 1}, "on": {3, 3}, "remove": {1, 1},
	}[method]
	if len(args) < want[0] || len(args) > want[1] {
		return nil, 0, fmt.Errorf("takes %d to %d arguments, got %d", want[0], want[1], len(args))
	}
	switch method {
	case "query", "queryAll":
		sel, err := stringArg(args, 0, "selector", maxSelectorLen)
		if err != nil {
			return nil, 0, err
		}
		if strings.TrimSpace(sel) == "" {
			return nil, 0, errors.New("the selector is empty")
		}
		if len(args) == 2 && string(args[1]) != "null" {
			if err := handleArg(args, 1); err != nil {
				return nil, 0, err
			}
		}
		return args, 0, nil
	}
	if err := handleArg(args, 0); err != nil {
		return nil, 0, err
	}
	switch method {
	case "attr":
		_, err = attrNameArg(args, 1)
	case "setText":
		_, err = stringArg(args, 1, "text", maxTextLen)
	case "setAttr":
		err = checkSetAttr(args)
	case "addClass", "removeClass":
		err = checkClassName(args)
	case "setStyle":
		err = checkSetStyle(args[1])
	case "on":
		listener, err = checkOn(args)
	}
	if err != nil {
		return nil, 0, err
	}
	return args, listener, nil
}

func stringArg(args []json.RawMessage, i int, what string, max int) (string, error) {
	var s string
	if err := json.Unmarshal(args[i], &s); err != nil {
		return "", fmt.Errorf("argument %d (%s) must be a string", i+1, what)
	}
	if len(s) > max {
		return "", fmt.Errorf("argument %d (%s) is %d bytes, more than %d", i+1, what, len(s), max)
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return "", fmt.Errorf("argument %d (%s) is not valid text", i+1, what)
	}
	return s, nil
}

// handleArg checks that args[i] is a handle, {"$h": N} with N a positive integer.
func handleArg(args []json.RawMessage, i int) error {
	var h map[string]any
	d := json.NewDecoder(bytes.NewReader(args[i]))
	d.UseNumber()
	if err := d.Decode(&h); err != nil || len(h) != 1 {
		return fmt.Errorf("argument %d must be an element handle from dom.query or dom.queryAll", i+1)
	}
	num, ok := h["$h"].(json.Number)
	n, err := num.Int64()
	if !ok || err != nil || n <= 0 {
		return fmt.Errorf("argument %d must be an element handle from dom.query or dom.queryAll", i+1)
	}
	return nil
}

func attrNameArg(args []json.RawMessage, i int) (string, error) {
	name, err := stringArg(args, i, "attribute name", maxAttrNameLen)
	if err != nil {
		return "", err
	}
	if name == "" {
		return "", errors.New("the attribute name is empty")
	}
	for _, r := range name {
		if r <= ' ' || r == '"' || r == '\'' || r == '>' || r == '/' || r == '=' || r == 0x7f {
			return "", fmt.Errorf("%q is not an attribute name", name)
		}
	}
	return strings.ToLower(name), nil
}

// refusedAttr says why an attribute may not be written, or "" when it may.
func refusedAttr(name string) string {
	switch {
	case strings.HasPrefix(name, "on"):
		return "event handler attributes (on*) run code"
	case name == "href" || name == "src" || name == "xlink:href":
		return name + " loads an address; address-checked href and src are not available yet"
	case refusedAttrs[name]:
		return name + " loads or runs something"
	case strings.HasPrefix(name, "data-remixlet-"):
		return "attributes starting with data-remixlet- are the remixlets' marks"
	}
	return ""
}

func checkSetAttr(args []json.RawMessage) error {
	name, err := attrNameArg(args, 1)
	if err != nil {
		return err
	}
	if why := refusedAttr(name); why != "" {
		return fmt.Errorf("attribute %s refused: %s", name, why)
	}
	_, err = stringArg(args, 2, "value", maxAttrValue)
	return err
}

func checkClassName(args []json.RawMessage) error {
	c, err := stringArg(args, 1, "class name", maxAttrNameLen)
	if err != nil {
		return err
	}
	if c == "" || strings.ContainsAny(c, " \t\n\r\f") {
		return fmt.Errorf("%q is not one class name", c)
	}
	return nil
}

// refusedStyle says why an inline style value may not be set, or "" when it may. CSS escapes
// and comments are refused outright, so nothing can hide a load behind them.
func refusedStyle(value string) string {
	v := strings.ToLower(value)
	switch {
	case strings.Contains(v, `\`):
		return "CSS escapes (\\) are not allowed in inline styles"
	case strings.Contains(v, "/*"):
		return "CSS comments are not allowed in inline styles"
	}
	for _, bad := range []string{"url(", "@import", "expression(", "image-set(", "image(", "element(", "cross-fade(", "src(", "paint(", "javascript:"} {
		if strings.Contains(v, bad) {
			return "inline styles may not contain " + bad
		}
	}
	for _, r := range v {
		if r < ' ' && r != '\t' {
			return "control characters are not allowed in inline styles"
		}
	}
	return ""
}

// refusedStyleProperty says why an inline style property may not be set, or "".
func refusedStyleProperty(name string) string {
	if name == "" {
		return "the property name is empty"
	}
	for _, r := range name {
		if !(r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Sprintf("%q is not a CSS property name", name)
		}
	}
	switch l := strings.ToLower(name); l {
	case "behavior", "-moz-binding", "binding":
		return name + " runs code"
	}
	return ""
}

func checkSetStyle(raw json.RawMessage) error {
	var styles map[string]json.RawMessage
	if err := json.Unmarshal(raw, &styles); err != nil || styles == nil {
		return errors.New("argument 2 must be an object of CSS property names and values")
	}
	if len(styles) > maxStyleProps {
		return fmt.Errorf("more than %d style properties", maxStyleProps)
	}
	for name, rv := range styles {
		if why := refusedStyleProperty(name); why != "" {
			return fmt.Errorf("style refused: %s", why)
		}
		var v string
		if err := json.Unmarshal(rv, &v); err != nil {
			return fmt.Errorf("style %s: the value must be a string", name)
		}
		if len(v) > maxStyleValue {
			return fmt.Errorf("style %s: the value is longer than %d bytes", name, maxStyleValue)
		}
		if why := refusedStyle(v); why != "" {
			return fmt.Errorf("style %s refused: %s", name, why)
		}
	}
	return nil
}

func checkOn(args []json.RawMessage) (int64, error) {
	typ, err := stringArg(args, 1, "event type", 32)
	if err != nil {
		return 0, err
	}
	if !domEvents[typ] {
		return 0, fmt.Errorf("event %q is not supported (supported: click, dblclick, mouseenter, mouseleave, input, change, focus, blur, keydown, keyup)", typ)
	}
	var l struct {
		Listener int64 `json:"$listener"`
	}
	if err := json.Unmarshal(args[2], &l); err != nil || l.Listener <= 0 {
		return 0, errors.New("argument 3 must be a listener function")
	}
	return l.Listener, nil
}
