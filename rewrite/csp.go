package rewrite

import (
	"bytes"
	"net/url"
	"sort"
	"strings"

	"golang.org/x/net/html"
)

// CSPNeeds is what the bootstrap needs from a page's policies.
type CSPNeeds struct {
	// ScriptHash is the hash-source of an inline bootstrap's text, with quotes: 'sha256-…'
	// (see ScriptHash).
	ScriptHash string
	// ScriptSrc lists the sources an external bootstrap (<script src>) loads from, e.g.
	// "https://remix.proxy". Set either ScriptHash or ScriptSrc; with neither, script
	// directives are left alone.
	ScriptSrc []string
	// Nonce is the nonce the bootstrap tag carries, "" when none.
	Nonce string
	// Connect lists the sources the page agent connects to, e.g. "https://remix.proxy",
	// "wss://remix.proxy".
	Connect []string
	// Frame lists the sources for the panel iframe, e.g. "https://remix.proxy".
	Frame []string
}

// PageNonce returns a nonce from the enforced header policies' script directive that every
// policy using nonces shares, or "" if there is none (then the hash is used). headerValues are
// the values of the Content-Security-Policy header fields (each possibly several
// comma-separated policies). Only nonces that match the CSP base64-value grammar are returned,
// so the result is safe to put in an HTML attribute.
func PageNonce(headerValues []string) string {
	var common []string
	seen := false
	for _, v := range headerValues {
		for _, p := range parsedPolicies(v) {
			d := p.effective("script-src-elem", "script-src", "default-src")
			if d == nil {
				continue
			}
			var nonces []string
			for _, tok := range d.tokens {
				if n, ok := nonceValue(v[tok.start:tok.end]); ok {
					nonces = append(nonces, n)
				}
			}
			if len(nonces) == 0 {
				continue
			}
			if !seen {
				common, seen = nonces, true
				continue
			}
			kept := common[:0:0]
			for _, c := range common {
				for _, n := range nonces {
					if c == n {
						kept = append(kept, c)
						break
					}
				}
			}
			common = kept
		}
	}
	if len(common) == 0 {
		return ""
	}
	return common[0]
}

// BlocksInjection reports whether some enforced policy forbids the bootstrap whatever we add
// without loosening the page: the effective script directive for a <script> element is 'none'
// (or has no sources at all, which means the same), or a `sandbox` directive lacks
// allow-scripts.
func BlocksInjection(headerValues []string) bool {
	for _, v := range headerValues {
		for _, p := range parsedPolicies(v) {
			if d := p.effective("script-src-elem", "script-src", "default-src"); d != nil && d.matchesNothing(v) {
				return true
			}
			if d := p.find("sandbox"); d != nil && !d.has(v, "allow-scripts") {
				return true
			}
		}
	}
	return false
}

// ExternalAllowed reports whether an external bootstrap (<script src> from the proxy's own
// origin, carrying nonce when not empty) can be allowed by every enforced policy in
// headerValues by adding a host-source: true unless a policy's script directive has
// 'strict-dynamic' (which makes host-sources inert) and not the nonce. When false, the
// bootstrap is inlined and allowed by its hash.
func ExternalAllowed(headerValues []string, nonce string) bool {
	for _, v := range headerValues {
		for _, p := range parsedPolicies(v) {
			d := p.effective("script-src-elem", "script-src", "default-src")
			if d == nil || !d.has(v, "'strict-dynamic'") {
				continue
			}
			if nonce == "" || !d.has(v, "'nonce-"+nonce+"'") {
				return false
			}
		}
	}
	return true
}

// adjustCSP, which AdjustCSP answers with (csp_cache.go), returns value (one header value or
// meta content, possibly several comma-separated policies) changed so the bootstrap can run and
// connect. For each policy:
//
//   - Script, external bootstrap (n.ScriptSrc): the effective directive gets the missing
//     n.ScriptSrc sources unless it carries 'nonce-<n.Nonce>'; when default-src is the
//     effective one, a new script-src with all of default-src's sources (its 'unsafe-inline'
//     included, which script-src inherited anyway) plus ours is appended instead.
//   - Script, inline bootstrap (n.ScriptHash): the effective directive (script-src-elem, else
//     script-src, else default-src) gets n.ScriptHash unless it already allows the bootstrap (it carries 'nonce-<n.Nonce>',
//     or the hash, or 'unsafe-inline' with no nonce, hash or 'strict-dynamic' to disable it)
//     or it allows nothing (see BlocksInjection). When default-src is the effective one, a new
//     script-src with default-src's sources plus the hash is appended instead.
//   - Connect: the effective connect-src (else default-src) gets the missing n.Connect sources;
//     a lone 'none' is replaced by them; an inherited default-src is copied into a new
//     connect-src.
//   - Frame: the same with n.Frame for frame-src, else child-src, else default-src (a new
//     frame-src is appended when inherited).
//
// Everything else is kept byte for byte: other directives, their order and spelling, later
// duplicates of a directive (which browsers ignore), and 'unsafe-inline' is never added.
// A value with nothing to change, empty or garbage, is returned unchanged.
func adjustCSP(value string, n CSPNeeds) string {
	var edits []cspEdit
	for _, p := range parsedPolicies(value) {
		var added []string // new directives, appended at the end of the policy
		if d := p.effective("script-src-elem", "script-src", "default-src"); d != nil && !d.matchesNothing(value) {
			switch {
			case n.ScriptHash != "" && !d.allowsBootstrap(value, n):
				if d.name == "default-src" {
					added = append(added, "script-src "+joinSources(d.inheritedSources(value, true), n.ScriptHash))
				} else {
					edits = append(edits, cspEdit{at: d.end, ins: " " + n.ScriptHash})
				}
			case n.ScriptHash == "" && len(n.ScriptSrc) > 0 && !(n.Nonce != "" && d.has(value, "'nonce-"+n.Nonce+"'")):
				if d.name == "default-src" {
					var missing []string
					for _, src := range n.ScriptSrc {
						if !d.has(value, src) {
							missing = append(missing, src)
						}
					}
					if len(missing) > 0 {
						added = append(added, "script-src "+joinSources(d.allSources(value), missing...))
					}
				} else {
					edits, added = adjustSources(value, edits, added, d, d.name, n.ScriptSrc)
				}
			}
		}
		edits, added = adjustSources(value, edits, added, p.effective("connect-src", "default-src"), "connect-src", n.Connect)
		edits, added = adjustSources(value, edits, added, p.effective("frame-src", "child-src", "default-src"), "frame-src", n.Frame)
		if len(added) > 0 {
			sep := "; "
			if p.endsWithSemicolon {
				sep = " "
			}
			edits = append(edits, cspEdit{at: p.end, ins: sep + strings.Join(added, "; ")})
		}
	}
	if len(edits) == 0 {
		return value
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at < edits[j].at })
	var b strings.Builder
	cur := 0
	for _, e := range edits {
		b.WriteString(value[cur:e.at])
		b.WriteString(e.ins)
		cur = e.at + e.del
	}
	b.WriteString(value[cur:])
	return b.String()
}

// adjustSources makes the effective directive d allow the sources want, under the name
// directive: in place when d is that directive, else by appending a new one to added.
func adjustSources(value string, edits []cspEdit, added []string, d *cspDirective, name string, want []string) ([]cspEdit, []string) {
	if d == nil {
		return edits, added // no restriction
	}
	var missing []string
	for _, w := range want {
		if w != "" && !d.has(value, w) && !containsFold(missing, w) {
			missing = append(missing, w)
		}
	}
	if len(missing) == 0 {
		return edits, added
	}
	if d.name != name {
		return edits, append(added, name+" "+joinSources(d.inheritedSources(value, false), missing...))
	}
	if d.loneNone(value) {
		tok := d.tokens[0]
		return append(edits, cspEdit{at: tok.start, del: tok.end - tok.start, ins: strings.Join(missing, " ")}), added
	}
	return append(edits, cspEdit{at: d.end, ins: " " + strings.Join(missing, " ")}), added
}

func joinSources(have []string, add ...string) string {
	return strings.Join(append(append([]string(nil), have...), add...), " ")
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// cspEdit replaces value[at:at+del] with ins.
type cspEdit struct {
	at, del int
	ins     string
}

// cspSpan is a byte range of the parsed header value.
type cspSpan struct{ start, end int }

// cspDirective is the first occurrence of a directive in a policy. Offsets index the whole
// header value the policy was parsed from.
type cspDirective struct {
	name   string    // lower-cased
	tokens []cspSpan // the directive value, split on ASCII whitespace
	end    int       // just after the last token, or after the name when there is none
}

// cspPolicy is one policy of a serialized policy list.
type cspPolicy struct {
	directives        []cspDirective
	end               int  // just after the policy's last non-whitespace byte
	endsWithSemicolon bool // that byte is ';'
}

// parsePolicies splits a header value on commas and parses each policy as the CSP "parse a
// serialized CSP" algorithm does: directives split on ';', whitespace-trimmed, empty or
// non-ASCII ones skipped, names lower-cased, later duplicates ignored.
func parsePolicies(v string) []cspPolicy {
	var policies []cspPolicy
	start := 0
	for start <= len(v) {
		end := strings.IndexByte(v[start:], ',')
		if end < 0 {
			end = len(v)
		} else {
			end += start
		}
		policies = append(policies, parsePolicy(v, start, end))
		start = end + 1
	}
	return policies
}

func parsePolicy(v string, start, end int) cspPolicy {
	var p cspPolicy
	p.end = end
	for p.end > start && isSpaceByte(v[p.end-1]) {
		p.end--
	}
	p.endsWithSemicolon = p.end > start && v[p.end-1] == ';'
	// Names met so far, once there are more than a real policy has: find is a linear scan, and
	// a hostile page's policy of 100 000 distinct unknown directives (a 1 MiB header, a 256 KiB
	// <meta>) made the duplicate check quadratic — seconds of CPU per page, four times over.
	var seen map[string]struct{}
	for ds := start; ds < end; {
		de := strings.IndexByte(v[ds:end], ';')
		if de < 0 {
			de = end
		} else {
			de += ds
		}
		if d, ok := parseDirective(v, ds, de); ok {
			var dup bool
			if seen != nil {
				_, dup = seen[d.name]
			} else {
				dup = p.find(d.name) != nil
			}
			if !dup {
				p.directives = append(p.directives, d)
				if seen != nil {
					seen[d.name] = struct{}{}
				} else if len(p.directives) > maxScannedDirectives {
					seen = make(map[string]struct{}, 2*len(p.directives))
					for _, x := range p.directives {
						seen[x.name] = struct{}{}
					}
				}
			}
		}
		ds = de + 1
	}
	return p
}

// maxScannedDirectives is how many directives a policy may have before parsePolicy checks
// duplicates with a set rather than by find: more than any real policy names (CSP 3 has ~30).
const maxScannedDirectives = 32

func parseDirective(v string, start, end int) (cspDirective, bool) {
	for start < end && isSpaceByte(v[start]) {
		start++
	}
	for end > start && isSpaceByte(v[end-1]) {
		end--
	}
	if start == end {
		return cspDirective{}, false
	}
	for i := start; i < end; i++ {
		if v[i] >= 0x80 {
			return cspDirective{}, false
		}
	}
	i := start
	for i < end && !isSpaceByte(v[i]) {
		i++
	}
	d := cspDirective{name: strings.ToLower(v[start:i]), end: i}
	for i < end {
		for i < end && isSpaceByte(v[i]) {
			i++
		}
		ts := i
		for i < end && !isSpaceByte(v[i]) {
			i++
		}
		if ts < i {
			d.tokens = append(d.tokens, cspSpan{ts, i})
			d.end = i
		}
	}
	return d, true
}

func (p *cspPolicy) find(name string) *cspDirective {
	for i := range p.directives {
		if p.directives[i].name == name {
			return &p.directives[i]
		}
	}
	return nil
}

// effective returns the first of names the policy has: the directive a fetch falls back to.
func (p *cspPolicy) effective(names ...string) *cspDirective {
	for _, n := range names {
		if d := p.find(n); d != nil {
			return d
		}
	}
	return nil
}

// has reports whether the directive lists src (ASCII case-insensitively).
func (d *cspDirective) has(v, src string) bool {
	for _, t := range d.tokens {
		if strings.EqualFold(v[t.start:t.end], src) {
			return true
		}
	}
	return false
}

// loneNone reports whether the directive's value is exactly 'none'.
func (d *cspDirective) loneNone(v string) bool {
	return len(d.tokens) == 1 && strings.EqualFold(v[d.tokens[0].start:d.tokens[0].end], "'none'")
}

// matchesNothing reports whether the directive allows no source at all: 'none' alone, or an
// empty value.
func (d *cspDirective) matchesNothing(v string) bool {
	return len(d.tokens) == 0 || d.loneNone(v)
}

// inheritedSources returns the tokens, as written, that a new directive copied from d (an
// inherited default-src or child-src) needs to keep d's meaning, without ever copying
// 'unsafe-inline':
//
//   - for a new script-src (forScript), every token but 'unsafe-inline', which is inert there:
//     the copy is only made when d does not already allow inline scripts, i.e. when d has a
//     nonce, hash or 'strict-dynamic', or gets our hash, any of which disables it;
//   - for a new connect-src or frame-src, only the tokens that match URLs: keywords for
//     scripts ('unsafe-*', 'strict-dynamic', 'report-sample', nonces, hashes) mean nothing
//     there, and a lone 'none' is dropped so that only our sources remain.
func (d *cspDirective) inheritedSources(v string, forScript bool) []string {
	if !forScript && d.loneNone(v) {
		return nil
	}
	var out []string
	for _, t := range d.tokens {
		tok := v[t.start:t.end]
		if strings.EqualFold(tok, "'unsafe-inline'") {
			continue
		}
		if !forScript && (isScriptKeyword(tok) || isHashSource(tok) || hasPrefixFold(tok, "'nonce-")) {
			continue
		}
		out = append(out, tok)
	}
	return out
}

// allSources is every source of d as written.
func (d *cspDirective) allSources(v string) []string {
	out := make([]string, 0, len(d.tokens))
	for _, t := range d.tokens {
		out = append(out, v[t.start:t.end])
	}
	return out
}

// isScriptKeyword reports whether tok is a keyword-source that only affects scripts or styles.
func isScriptKeyword(tok string) bool {
	for _, k := range []string{"'unsafe-inline'", "'unsafe-eval'", "'wasm-unsafe-eval'", "'unsafe-hashes'", "'strict-dynamic'", "'report-sample'"} {
		if strings.EqualFold(tok, k) {
			return true
		}
	}
	return false
}

// allowsBootstrap reports whether a script directive already lets the bootstrap run.
func (d *cspDirective) allowsBootstrap(v string, n CSPNeeds) bool {
	unsafeInline, disablesInline := false, false
	for _, t := range d.tokens {
		tok := v[t.start:t.end]
		if tok == n.ScriptHash {
			return true
		}
		if nonce, ok := nonceValue(tok); ok {
			if n.Nonce != "" && nonce == n.Nonce {
				return true
			}
			disablesInline = true
			continue
		}
		switch {
		case strings.EqualFold(tok, "'unsafe-inline'"):
			unsafeInline = true
		case strings.EqualFold(tok, "'strict-dynamic'"), isHashSource(tok):
			// Malformed nonce or hash sources are ignored by browsers, so they are not counted:
			// adding our hash next to a working 'unsafe-inline' would break the page's scripts.
			disablesInline = true
		}
	}
	return unsafeInline && !disablesInline
}

// nonceValue returns the base64-value of a well-formed nonce-source 'nonce-…'.
func nonceValue(tok string) (string, bool) {
	if len(tok) < len("'nonce-x'") || !hasPrefixFold(tok, "'nonce-") || tok[len(tok)-1] != '\'' {
		return "", false
	}
	val := tok[len("'nonce-") : len(tok)-1]
	if !isBase64Value(val) {
		return "", false
	}
	return val, true
}

// isHashSource reports whether tok is a well-formed hash-source 'sha256-…' (or 384, 512).
func isHashSource(tok string) bool {
	for _, p := range []string{"'sha256-", "'sha384-", "'sha512-"} {
		if len(tok) > len(p) && hasPrefixFold(tok, p) && tok[len(tok)-1] == '\'' {
			return isBase64Value(tok[len(p) : len(tok)-1])
		}
	}
	return false
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// isBase64Value matches the CSP grammar base64-value = 1*( ALPHA / DIGIT / "+" / "/" / "-" /
// "_" ) *2( "=" ).
func isBase64Value(s string) bool {
	body := strings.TrimRight(s, "=")
	if body == "" || len(s)-len(body) > 2 {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// bootTag is what a policy check needs to know of the tag the injector inserts.
type bootTag struct {
	script bool   // the tag is a <script> element; for anything else no script policy applies
	nonce  string // its nonce attribute, "" when none
	src    string // an external script's address, "" for an inline one
	hash   string // an inline script's hash-source (ScriptHash of its text)
}

// parseBootTag reads the first element of tag: a <script> with its nonce and src attributes
// and, when inline, the hash of its text.
func parseBootTag(tag []byte) bootTag {
	z := html.NewTokenizer(bytes.NewReader(tag))
	if tt := z.Next(); tt != html.StartTagToken {
		return bootTag{}
	}
	name, hasAttr := z.TagName()
	if string(name) != "script" {
		return bootTag{}
	}
	b := bootTag{script: true}
	external := false
	for more := hasAttr; more; {
		var k, v []byte
		k, v, more = z.TagAttr()
		switch string(k) {
		case "nonce":
			b.nonce = string(v)
		case "src":
			b.src, external = string(v), true
		}
	}
	if external {
		if b.src == "" {
			b.src = "about:invalid" // an empty src loads nothing any source matches
		}
		return b
	}
	var text []byte
	if z.Next() == html.TextToken {
		text = z.Raw()
	}
	b.hash = ScriptHash(text)
	return b
}

// tagVerdict is what one CSP meta's policy means for the inserted tag.
type tagVerdict uint8

const (
	tagAllowed   tagVerdict = iota // the policy lets the tag run
	tagBlocked                     // the policy blocks the tag as it is (e.g. 'strict-dynamic' makes our host-source inert)
	tagForbidden                   // the policy lets no script element run at all ('none', or no source)
)

// policyVerdict checks the tag against value (a meta's content, possibly several
// comma-separated policies, as AdjustCSP reads it), the way a browser checks a <script>
// element: the effective script-src-elem, script-src or default-src must allow its nonce, or
// for an inline tag its hash or 'unsafe-inline' (not disabled by a nonce, hash or
// 'strict-dynamic'), or for an external tag its origin (inert with 'strict-dynamic'). A
// source it cannot tell allows the tag counts as blocking: the injector then puts the tag
// before the policy instead. The worst verdict over the policies is returned.
func policyVerdict(value string, b bootTag) tagVerdict {
	if !b.script {
		return tagAllowed
	}
	worst := tagAllowed
	for _, p := range parsedPolicies(value) {
		d := p.effective("script-src-elem", "script-src", "default-src")
		switch {
		case d == nil:
		case d.matchesNothing(value):
			return tagForbidden
		case b.nonce != "" && d.has(value, "'nonce-"+b.nonce+"'"):
		case b.src == "" && d.allowsBootstrap(value, CSPNeeds{ScriptHash: b.hash, Nonce: b.nonce}):
		case b.src != "" && !d.has(value, "'strict-dynamic'") && d.allowsURL(value, b.src):
		default:
			worst = tagBlocked
		}
	}
	return worst
}

// allowsURL reports whether the directive lists a source that surely matches the address
// raw: `*`, its scheme ("https:"), or its origin (with or without a trailing slash). Other
// host-sources (wildcards, paths, host names without a scheme) are not matched: a false
// "no" only moves the tag before the policy.
func (d *cspDirective) allowsURL(v, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return false
	}
	origin := u.Scheme + "://" + u.Host
	for _, t := range d.tokens {
		tok := v[t.start:t.end]
		if tok == "*" && (u.Scheme == "http" || u.Scheme == "https") ||
			strings.EqualFold(tok, u.Scheme+":") || strings.EqualFold(tok, origin) || strings.EqualFold(tok, origin+"/") {
			return true
		}
	}
	return false
}
