package remixlet

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/rewrite"
	"github.com/remixproxy/remixproxy/sandbox"
)

// Page scripts as deputies (red-team pass 6d, OPEN-ITEMS 29). A remixlet may write any text into
// the page; a site's own script may turn text into a request: a lazy loader that runs
// decodeURIComponent or atob over its data-src, a router that goes to the path in data-go. An
// address anywhere in an attribute value already follows the address rule (addressesIn); these
// are the shapes of it that the rule reads too, in Go and in the page agent alike
// (encodedAddressesIn in panel/pageagent/rx_addresses.js):
//   - percent-encoded: the value with every %XX of a printable ASCII character decoded, up to
//     three times (https%3A%2F%2F…, %2568…), then searched as a value is;
//   - base64 (standard or URL alphabet, with or without padding): every run of at least 12
//     base64 characters, decoded from each of its first four offsets (a page script may cut a
//     prefix), and every stretch of printable ASCII in what comes out searched as a value is.
// And relative addresses a page script may go to (pathsIn): a value, or a decoded one, that
// starts with one slash, ./, ../ or ? is resolved against the page and its address guarded like
// a written one (redirect.go, clientredirect.go): no refusal (any text may look like a path),
// but the site's forwarding page it reaches is an opened document.
//
// What no rule here can see, and stays: an address a page script assembles from pieces (a host
// in one attribute and a path in another, a host without a scheme that the script completes), an
// address in a text node or in any other encoding the script happens to apply (hex, char
// codes, reversal, a site's own cipher). NOTES.deputy6.md says where the line is.

const (
	maxDecodeRounds = 3
	minBase64Run    = 12
)

// encodedAddressesIn finds the addresses in the percent-decoded and base64-decoded forms of an
// attribute value (see the top of the file), as plainAddressesIn finds them, without those of
// the value as written.
func encodedAddressesIn(value string) []string {
	var out []string
	for _, level := range decodedLevels(value) {
		out = append(out, plainAddressesIn(level)...)
	}
	for _, level := range append([]string{value}, decodedLevels(value)...) {
		for _, text := range base64Texts(level) {
			out = append(out, plainAddressesIn(text)...)
		}
	}
	return out
}

// decodedLevels are value with its printable percent-escapes decoded once, twice … up to
// maxDecodeRounds times, each level that differs from the one before.
func decodedLevels(value string) []string {
	var out []string
	cur := value
	for range maxDecodeRounds {
		next := decodePrintable(cur)
		if next == cur {
			break
		}
		out = append(out, next)
		cur = next
	}
	return out
}

// decodePrintable decodes each %XX escape of a printable ASCII character (0x20 to 0x7e); other
// escapes and lone % stay as written.
func decodePrintable(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			if c := unhexByte(s[i+1])<<4 | unhexByte(s[i+2]); c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhexByte(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// base64Value is the 6-bit value of a base64 character of either alphabet, or -1.
func base64Value(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '+' || c == '-':
		return 62
	case c == '/' || c == '_':
		return 63
	}
	return -1
}

// base64Texts are the stretches of printable ASCII (at least 8 bytes) in the decodings of every
// run of base64 characters of s at least minBase64Run long, from each of the run's first four
// offsets.
func base64Texts(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		if base64Value(s[i]) < 0 {
			i++
			continue
		}
		j := i
		for j < len(s) && base64Value(s[j]) >= 0 {
			j++
		}
		if j-i >= minBase64Run {
			for off := 0; off < 4; off++ {
				out = append(out, printableStretches(decodeBase64Run(s[i+off:j]))...)
			}
		}
		i = j
	}
	return out
}

// decodeBase64Run decodes a run of base64 characters, ignoring a last incomplete group of one
// character, as atob with the padding added would.
func decodeBase64Run(run string) []byte {
	out := make([]byte, 0, len(run)*3/4)
	var acc, bits int
	for i := 0; i < len(run); i++ {
		acc = acc<<6 | base64Value(run[i])
		bits += 6
		if bits >= 8 {
			bits -= 8
			out = append(out, byte(acc>>bits))
			acc &= 1<<bits - 1
		}
	}
	return out
}

// printableStretches are the runs of printable ASCII (0x20 to 0x7e) in b of at least 8 bytes.
func printableStretches(b []byte) []string {
	var out []string
	start := -1
	for i := 0; i <= len(b); i++ {
		if i < len(b) && b[i] >= 0x20 && b[i] < 0x7f {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 8 {
			out = append(out, string(b[start:i]))
		}
		start = -1
	}
	return out
}

// pathsIn are the relative addresses an attribute value holds as a router would read it: the
// value, and each of its percent-decoded levels, trimmed, when it starts with one slash (not
// two), ./, ../ or ?.
func pathsIn(value string) []string {
	var out []string
	for _, level := range append([]string{value}, decodedLevels(value)...) {
		v := strings.TrimSpace(level)
		switch {
		case strings.HasPrefix(v, "//"), strings.HasPrefix(v, `/\`):
		case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"), strings.HasPrefix(v, "?"):
			out = append(out, v)
		}
	}
	return out
}

// guardPaths resolves the relative addresses of an attribute value against the page and adds
// them to the call's guarded addresses (never refusing the value for them, unless the guard
// cannot hold them).
func (pol domPolicy) guardPaths(call *domCall, value string) error {
	paths := pathsIn(value)
	if len(paths) == 0 {
		return nil
	}
	base := pol.pageBase()
	if base == nil {
		return nil
	}
	for _, p := range paths {
		u, err := weburl.Resolve(base, p)
		if err != nil || !u.IsHTTP() || !weburl.SameOrigin(u, base) {
			continue
		}
		if err := call.addAddress(u.Request()); err != nil {
			return fmt.Errorf("its value holds the path %s, which the redirect guard cannot hold: %w", p, err)
		}
	}
	return nil
}

// textRefusal judges a text a page script may take an address from — a custom property's
// value, as rewrite.DropCustomProperties and checkStyleTexts hand it — with the rule of an
// attribute value (checkAttrValue): every address in it, in any shape addressesIn reads, on the
// page's origin or the remixlet's own sites or fetch: hosts, and its paths guarded. It returns
// why it is refused, or "".
func (pol domPolicy) textRefusal(call *domCall) func(string) string {
	return func(v string) string {
		for _, a := range addressesIn(v) {
			resolved, err := pol.allowAddress(call, a)
			if err != nil {
				return fmt.Sprintf("it holds the address %s: %v", a, err)
			}
			if !pol.imageAllowed(resolved) {
				return fmt.Sprintf("it holds the address %s, which is not on the page's origin or one of the remixlet's sites or fetch: hosts (a page script may load it)", resolved)
			}
		}
		if err := pol.guardPaths(call, v); err != nil {
			return err.Error()
		}
		return ""
	}
}

// checkStyleTexts applies textRefusal to the custom properties of dom.setStyle's styles
// (checkSetStyle has checked the rest).
func (pol domPolicy) checkStyleTexts(call *domCall, raw json.RawMessage) error {
	var styles map[string]string
	if err := json.Unmarshal(raw, &styles); err != nil {
		return errors.New("argument 2 must be an object of CSS property names and values")
	}
	refuse := pol.textRefusal(call)
	for name, v := range styles {
		if !strings.HasPrefix(name, "--") {
			continue
		}
		if why := refuse(rewrite.StyleValueText(v)); why != "" {
			return fmt.Errorf("style %s refused: %s", name, why)
		}
	}
	return nil
}

// styleSheetTextRefusal is textRefusal for a remixlet's style.css, which is checked once per
// version and page site: an address in a custom property must be on one of the remixlet's
// sites within pageSite or a fetch: host (mayLoadOn; the page's origin is one of its sites).
// Its paths are not guarded (they are the same on every page; a sheet's url()s are,
// styleguard.go).
func styleSheetTextRefusal(m *sandbox.Manifest, pageSite string) func(string) string {
	base, _ := weburl.Parse("https://style.invalid/")
	return func(v string) string {
		for _, a := range addressesIn(v) {
			u, err := weburl.Resolve(base, a)
			if err != nil || !u.IsHTTP() || u.HasCredentials() {
				return fmt.Sprintf("it holds the address %s, which is not a full http(s) address", a)
			}
			if !mayLoadOn(m, pageSite, u.HostKey()) {
				return fmt.Sprintf("it holds the address %s, which is not on this page's site among the remixlet's sites, nor a fetch: host (a page script may load it)", u.Href())
			}
		}
		return ""
	}
}
