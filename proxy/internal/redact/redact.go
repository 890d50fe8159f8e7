package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	xhtml "golang.org/x/net/html"
)

// Kinds of secret, as the markers name them.
const (
	KindPassword = "password"
	KindCookie   = "cookie"
	KindAuth     = "authorization"
	KindKey      = "key"
)

const (
	markerOpen     = "[redacted: "
	minPasswordLen = 4    // characters
	minTokenLen    = 8    // characters of a cookie value, header credential or key
	minLongToken   = 20   // a cookie value this long counts even if it looks like words
	maxSecretLen   = 4096 // bytes of one known value; a longer one is kept to its start
	maxCutPrefix   = 1024 // the longest cut prefix looked for
	maxJSONDepth   = 4    // JSON inside JSON strings, decoded this deep
	maxEmbedded    = 8    // JSON values looked for at line starts of a text that is not JSON
)

// minCutPrefix is how many first characters of a value at a cut are redacted, by kind:
// passwords are short, so fewer of their characters show.
var minCutPrefix = map[string]int{KindPassword: 3, KindCookie: 4, KindAuth: 4, KindKey: 4}

// markers are the texts that replace a secret, by kind.
var markers = map[string]string{
	KindPassword: markerOpen + KindPassword + "]", KindCookie: markerOpen + KindCookie + "]",
	KindAuth: markerOpen + KindAuth + "]", KindKey: markerOpen + KindKey + "]",
	KindCard: markerOpen + KindCard + "]",
}

func marker(kind string) string { return markers[kind] }

// isMarker reports whether s is exactly one of the redaction markers.
func isMarker(s string) bool {
	if len(s) <= len(markerOpen) || !strings.HasPrefix(s, markerOpen) {
		return false
	}
	_, ok := markers[s[len(markerOpen):len(s)-1]]
	return ok && s[len(s)-1] == ']'
}

// Secret is one known value, of a kind (KindPassword, KindCookie, KindAuth, KindKey).
type Secret struct {
	Value, Kind string
}

// Accept reports whether value is long and specific enough to be removed wherever it
// appears (see the bounds above).
func Accept(value, kind string) bool {
	if strings.TrimSpace(value) == "" || strings.Contains(value, markerOpen) {
		return false
	}
	n := utf8.RuneCountInString(value)
	switch kind {
	case KindPassword:
		return n >= minPasswordLen
	case KindCookie:
		return n >= minTokenLen && (n >= minLongToken || tokenLike(value))
	}
	return n >= minTokenLen
}

// tokenLike reports whether v has a digit or a sign other than - _ . , or a space: a value made
// of words alone ("accepted", "light-theme") is not taken for a secret.
func tokenLike(v string) bool {
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '-', r == '_', r == '.', r == ',', r == ' ':
		default:
			return true
		}
	}
	return false
}

// variant is one spelling of a known value.
type variant struct {
	text, kind string
}

// Redactor is a compiled set of known values; the zero Redactor (or nil) knows none but still
// removes secrets by structure. It is immutable and safe for concurrent use.
//
// Matching: every spelling is at least four bytes long, so a text is scanned once, position by
// position, through a bit set of the spellings' first two bytes and then a table of their first
// three (BenchmarkRedactToolResult; strings.Replacer took 300 ms to build for 100 cookies'
// spellings, and the set changes with every cookie the proxy sees).
type Redactor struct {
	variants []variant            // longest first, for Secret
	prefixes map[string][]variant // by their first three bytes, longest first
	pairs    []uint64             // bit set of the spellings' first two bytes
	maxLen   int                  // the longest spelling
}

// New compiles secrets (already accepted, Accept) into a redactor.
func New(secrets []Secret) *Redactor {
	r := &Redactor{prefixes: map[string][]variant{}}
	seen := map[string]bool{}
	for _, s := range secrets {
		v := s.Value
		if len(v) > maxSecretLen {
			v = httpx.Clip(v, maxSecretLen)
		}
		for _, sp := range spellings(v) {
			if seen[sp] || len(sp) < 4 {
				continue
			}
			seen[sp] = true
			r.variants = append(r.variants, variant{sp, s.Kind})
		}
	}
	if len(r.variants) == 0 {
		return r
	}
	// The longest spelling first: where several start at one position, the longest is taken.
	sort.SliceStable(r.variants, func(i, j int) bool { return len(r.variants[i].text) > len(r.variants[j].text) })
	r.pairs = make([]uint64, 1<<16/64)
	for _, v := range r.variants {
		r.prefixes[v.text[:3]] = append(r.prefixes[v.text[:3]], v)
		p := uint16(v.text[0])<<8 | uint16(v.text[1])
		r.pairs[p/64] |= 1 << (p % 64)
		r.maxLen = max(r.maxLen, len(v.text))
	}
	return r
}

// first returns the kind of the first known spelling in s, or "".
func (r *Redactor) first(s string) string {
	for i := 0; i+4 <= len(s); i++ {
		p := uint16(s[i])<<8 | uint16(s[i+1])
		if r.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, v := range r.prefixes[s[i:i+3]] {
			if strings.HasPrefix(s[i:], v.text) {
				return v.kind
			}
		}
	}
	return ""
}

// known reports whether r knows any value.
func (r *Redactor) known() bool { return r != nil && len(r.variants) > 0 }

// replace replaces every known spelling in s by its marker, leftmost first, longest at a
// position.
func (r *Redactor) replace(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i+4 <= len(s); i++ {
		p := uint16(s[i])<<8 | uint16(s[i+1])
		if r.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, v := range r.prefixes[s[i:i+3]] {
			if strings.HasPrefix(s[i:], v.text) {
				b.WriteString(s[last:i])
				b.WriteString(marker(v.kind))
				i += len(v.text) - 1
				last = i + 1
				break
			}
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// spellings are the forms of v that a tool result can carry (see the top of the file).
func spellings(v string) []string {
	out := []string{v}
	add := func(s string) {
		if s != "" {
			out = append(out, s)
		}
	}
	for _, j := range jsonInner(v) {
		add(j)
		for _, j2 := range jsonInner(j) {
			add(j2)
		}
	}
	add(html.EscapeString(v))
	add(htmlQuoted.Replace(v))
	q := url.QueryEscape(v)
	add(q)
	add(strings.ReplaceAll(q, "+", "%20"))
	add(url.PathEscape(v))
	add(uriComponent(v))
	if len(v) >= 6 {
		add(base64.RawStdEncoding.EncodeToString([]byte(v)))
		add(base64.RawURLEncoding.EncodeToString([]byte(v)))
	}
	return out
}

// jsonInner is v as the inside of a JSON string, as Go (HTML-escaped), as JavaScript, and with
// "\/" (PHP).
func jsonInner(v string) []string {
	goStyle, _ := json.Marshal(v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	js := strings.TrimSuffix(b.String(), "\n")
	inner := func(s string) string { return s[1 : len(s)-1] }
	return []string{inner(string(goStyle)), inner(js), strings.ReplaceAll(inner(js), "/", `\/`)}
}

// uriComponent is JavaScript's encodeURIComponent.
func uriComponent(v string) string {
	const keep = "-_.!~*'()"
	var b strings.Builder
	for _, c := range []byte(v) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte(keep, c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[c>>4])
			b.WriteByte("0123456789ABCDEF"[c&15])
		}
	}
	return b.String()
}

// Redact returns s with every secret removed (see the top of the file).
func (r *Redactor) Redact(s string) string {
	return r.redact(s, 0, false)
}

// RedactPage is Redact for what a page shows (a tool's result): its credentials in well-known
// formats (keys.go) and its payment card numbers (cards.go) go too, in the text and in every
// JSON string it holds (decoded, so escapes hide nothing, and each string's end is a cut).
func (r *Redactor) RedactPage(s string) string {
	return r.redact(s, 0, true)
}

// redactShown removes what is found by format in what a page shows.
func redactShown(s string) string {
	return redactCardCuts(redactCards(redactKeys(s)))
}

func (r *Redactor) redact(s string, depth int, page bool) string {
	if s == "" {
		return s
	}
	if depth < maxJSONDepth && looksLikeJSON(s) {
		if out, ok := r.redactJSON(s, depth, page); ok {
			if page {
				out = redactCards(out) // card numbers written as JSON numbers; the strings are done
			}
			return r.redactKnown(out)
		}
	}
	if depth < maxJSONDepth {
		s = r.redactEmbeddedJSON(s, depth, page)
	}
	lower := asciiLower(s)
	if strings.Contains(lower, "<input") {
		s = redactPasswordInputs(s)
	}
	if strings.Contains(lower, "cookie") || strings.Contains(lower, "authorization") {
		s = redactHeaderText(s)
	}
	if strings.Contains(s, "@") && strings.Contains(s, "://") {
		s = redactUserInfo(s)
	}
	if strings.Contains(lower, "token=") || strings.Contains(lower, "secret=") || strings.Contains(lower, "password=") ||
		strings.Contains(lower, "passwd=") || strings.Contains(lower, "passphrase=") || strings.Contains(lower, "pwd=") ||
		strings.Contains(lower, "%3d") || strings.Contains(lower, "%253d") {
		s = redactAddressParams(s)
	}
	if page {
		s = redactShown(s)
	}
	return r.redactKnown(s)
}

// userInfoRE finds the password of an address's user-info (scheme://user:PASSWORD@host): a clone
// address with its access token, a link with Basic credentials. The password stops at a slash,
// white space, an @, a quote, a backslash or an angle bracket.
var userInfoRE = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@"'<>\\]*:([^/\s@"'<>\\]+)@`)

// redactUserInfo removes the passwords of addresses' user-info.
func redactUserInfo(s string) string {
	return userInfoRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := userInfoRE.FindStringSubmatchIndex(m)
		return m[:sub[2]] + marker(KindAuth) + m[sub[3]:]
	})
}

// addressParamRE finds a parameter of an address or form body (after ?, &, # or ;, or at the
// start) named like a password key or an OAuth token (access_token, refresh_token, id_token,
// client_secret; in any case, with - or _), and its value up to the next separator; a value
// inside a JSON or HTML string stops at a quote, backslash or angle bracket too. The same once
// percent-encoded, as in an address nested in another's parameter
// (redirect_uri=https%3A%2F%2Fapp%2Fcb%23access_token%3D…): separators %26 %3F %23 %3B, = as
// %3D, and the value stops at an encoded separator; and the same twice encoded (%2526 … %253D),
// as in an address nested in a nested address. (Not the app state names of tokenKeys: key=
// and the like are too common in addresses.)
var addressParamRE = regexp.MustCompile(`(?i)(?:^|[?&#;]|%26|%3f|%23|%3b|%2526|%253f|%2523|%253b)` +
	`((?:access|refresh|id)[-_]?token|client[-_]?secret|(?:current|new|old)?[-_]?password|passwd|pwd|passphrase)` +
	`(?:=|%3d|%253d)` +
	`((?:[^&#;\s"'\\<>%]` + // a plain character
	`|%(?:[014-9a-f][0-9a-f]|2[0-2479a-f]|3[0-9ac-f])` + // an escape, not of a separator nor of %
	`|%25(?:[014-9a-f][0-9a-f]|2[0-2457-9a-f]|3[0-9ac-f]|[0-9a-f](?:[^0-9a-f&#;\s"'\\<>%]|$)|[^0-9a-f&#;\s"'\\<>%]|$)` + // %25: twice encoded, not a separator; or a % alone
	`)+)`)

// redactAddressParams removes the values of credential parameters in addresses and form
// bodies: an OAuth callback's #access_token=…, an API's ?access_token=…, a password=… sent in
// a query, as the JSON keys of the same names are (jsonString).
func redactAddressParams(s string) string {
	return addressParamRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := addressParamRE.FindStringSubmatchIndex(m)
		name, value := m[sub[2]:sub[3]], m[sub[4]:sub[5]]
		if isMarker(value) || strings.HasPrefix(value, markerOpen) {
			return m
		}
		kind := KindPassword
		if tokenKeys[keyName(name)] {
			kind = KindAuth
		}
		return m[:sub[4]] + marker(kind) + m[sub[5]:]
	})
}

// Secret returns the kind of the first known value s carries, also JSON-decoded and
// URL-decoded, or "".
func (r *Redactor) Secret(s string) string {
	return r.secret(s, 0)
}

func (r *Redactor) secret(s string, depth int) string {
	if !r.known() || s == "" {
		return ""
	}
	if kind := r.first(s); kind != "" {
		return kind
	}
	if strings.Contains(s, "%") {
		if u, err := url.PathUnescape(s); err == nil && u != s {
			if k := r.secret(u, depth+1); k != "" {
				return k
			}
		}
	}
	if depth < maxJSONDepth && looksLikeJSON(s) && json.Valid([]byte(s)) {
		kind := ""
		walkJSON(s, func(lit, _ string) string {
			if kind == "" {
				kind = r.secret(lit, depth+1)
			}
			return lit
		}, nil)
		return kind
	}
	return ""
}

// redactKnown replaces the known values outside markers, then cut values at the ends.
func (r *Redactor) redactKnown(s string) string {
	if !r.known() {
		return s
	}
	return r.redactCuts(outsideMarkers(s, r.replace))
}

// outsideMarkers applies f to the parts of s between markers.
func outsideMarkers(s string, f func(string) string) string {
	if !strings.Contains(s, markerOpen) {
		return f(s)
	}
	var b strings.Builder
	for rest := s; ; {
		i := strings.Index(rest, markerOpen)
		if i < 0 {
			b.WriteString(f(rest))
			return b.String()
		}
		j := strings.IndexByte(rest[i:], ']')
		if j < 0 || !isMarker(rest[i:i+j+1]) {
			b.WriteString(f(rest[:i+len(markerOpen)]))
			rest = rest[i+len(markerOpen):]
			continue
		}
		b.WriteString(f(rest[:i]))
		b.WriteString(rest[i : i+j+1])
		rest = rest[i+j+1:]
	}
}

// redactCuts removes the first characters of a known value where s ends, or stops at "…" or
// "[truncated" (a cut).
func (r *Redactor) redactCuts(s string) string {
	var ends []int
	for _, mark := range []string{"…", "[truncated"} {
		for off := 0; ; {
			i := strings.Index(s[off:], mark)
			if i < 0 {
				break
			}
			ends = append(ends, off+i)
			off += i + len(mark)
		}
	}
	ends = append(ends, len(s))
	sort.Sort(sort.Reverse(sort.IntSlice(ends)))
	for _, e := range ends {
		// Whitespace between a cut value and the mark is the cutter's.
		end := e
		for end > 0 && (s[end-1] == '\n' || s[end-1] == ' ') && e != len(s) {
			end--
		}
		if k, kind := r.cutAt(s, end); k > 0 {
			s = s[:end-k] + marker(kind) + s[end:]
		}
	}
	return s
}

// cutAt returns the length of the longest first part of a known spelling that s ends with at
// end (a proper part, at least its kind's minimum), and the kind.
func (r *Redactor) cutAt(s string, end int) (int, string) {
	best, kind := 0, ""
	limit := min(end, maxCutPrefix, r.maxLen-1)
	for k := 3; k <= limit; k++ {
		part := s[end-k : end]
		if p := uint16(part[0])<<8 | uint16(part[1]); r.pairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		for _, v := range r.prefixes[part[:3]] {
			if len(v.text) > k && strings.HasPrefix(v.text, part) && k >= minCutPrefix[v.kind] {
				best, kind = k, v.kind
				break
			}
		}
	}
	if best > 0 && strings.Contains(s[end-best:end], markerOpen) {
		return 0, ""
	}
	return best, kind
}

// looksLikeJSON reports whether s starts (after spaces) as a JSON object or array.
func looksLikeJSON(s string) bool {
	t := strings.TrimLeft(s, " \t\r\n")
	return t != "" && (t[0] == '{' || t[0] == '[')
}

// redactJSON redacts the string literals of a JSON text (ok is false when s is not JSON).
func (r *Redactor) redactJSON(s string, depth int, page bool) (string, bool) {
	if !json.Valid([]byte(s)) {
		return s, false
	}
	return walkJSON(s, func(lit, key string) string { return r.jsonString(lit, key, depth, page) }, func(v string) bool {
		return v != "" && !isMarker(v)
	}), true
}

// redactEmbeddedJSON redacts JSON values that start a line of a text that is not JSON (an HTTP
// answer's body after its status and headers).
func (r *Redactor) redactEmbeddedJSON(s string, depth int, page bool) string {
	tried := 0
	for off := 0; off < len(s) && tried < maxEmbedded; {
		i := strings.IndexAny(s[off:], "{[")
		if i < 0 {
			break
		}
		i += off
		if i > 0 && s[i-1] != '\n' {
			off = i + 1
			continue
		}
		tried++
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var raw json.RawMessage
		if dec.Decode(&raw) != nil {
			off = i + 1
			continue
		}
		end := i + int(dec.InputOffset())
		out, _ := r.redactJSON(s[i:end], depth, page)
		s = s[:i] + out + s[end:]
		off = i + len(out)
	}
	return s
}

// passwordKeys and tokenKeys name JSON keys whose string values are secret by structure
// (compared in lower case without - and _).
var (
	passwordKeys = map[string]bool{"password": true, "passwd": true, "pwd": true, "passphrase": true,
		"currentpassword": true, "newpassword": true, "oldpassword": true}
	tokenKeys = map[string]bool{"accesstoken": true, "refreshtoken": true, "idtoken": true, "clientsecret": true,
		// What apps name the session's bearer token and the service keys in their own state and
		// sign-in answers ({"token": …}; nextPageToken, csrfToken and the like are other names).
		"token": true, "authtoken": true, "sessiontoken": true, "bearertoken": true, "jwt": true, "apikey": true, "apisecret": true,
		"secretkey": true, "privatekey": true, "secretaccesskey": true}
)

// jsonString redacts one decoded JSON string whose key (or the key of its array) is key.
func (r *Redactor) jsonString(v, key string, depth int, page bool) string {
	k := keyName(key)
	switch {
	case v == "" || isMarker(v):
		return v
	case passwordKeys[k]:
		return marker(KindPassword)
	case tokenKeys[k]:
		return marker(KindAuth)
	case k == "authorization" || k == "proxyauthorization":
		v = redactHeaderValue("authorization", v)
	case k == "cookie":
		v = redactHeaderValue("cookie", v)
	case k == "setcookie":
		v = redactHeaderValue("set-cookie", v)
	}
	return r.redact(v, depth+1, page)
}

// jsonStringValue decodes a JSON string literal.
func jsonStringValue(lit string) (string, bool) {
	if len(lit) >= 2 && strings.IndexByte(lit[1:len(lit)-1], '\\') < 0 && utf8.ValidString(lit) {
		return lit[1 : len(lit)-1], true
	}
	var v string
	if json.Unmarshal([]byte(lit), &v) != nil {
		return "", false
	}
	return v, true
}

// keyName is a JSON key in lower case without - and _.
func keyName(key string) string {
	if len(key) > 40 {
		return ""
	}
	b := make([]byte, 0, len(key))
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c == '-' || c == '_':
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

// htmlQuoted is v with & < > " as HTML entities (&quot;, as browsers write attribute values).
var htmlQuoted = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// attrEscaper writes an attribute value between quotes in a rewritten tag.
var attrEscaper = strings.NewReplacer(`"`, "&quot;", `\`, "&#92;")

// unescapeJSONText undoes the JSON escapes of HTML written inside a JSON string.
var unescapeJSONText = strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\/`, `/`)

// walkJSON rewrites the string literals of a valid JSON text with f (given the decoded text
// and the key it is the value of, or "" for keys and top-level values); every other byte stays
// as it was. If secretValue is not nil, the "value" string of an object whose "type" is
// "password" (or whose "autocomplete" names a password) becomes a password marker when
// secretValue approves its text.
func walkJSON(s string, f func(lit, key string) string, secretValue func(string) bool) string {
	type edit struct {
		start, end int
		repl       string
	}
	type frame struct {
		obj, expectKey bool
		key            string // the last key (an object) or the key the array is under
		password       bool
		valueStart     int // the "value" literal's span, -1 if none
		valueEnd       int
		valueText      string
	}
	var edits []edit
	var stack []frame
	enc := func(v string) string {
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		e.Encode(v)
		return strings.TrimSuffix(b.String(), "\n")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '{', '[':
			key := ""
			if n := len(stack); n > 0 {
				key = stack[n-1].key
			}
			stack = append(stack, frame{obj: c == '{', expectKey: c == '{', key: key, valueStart: -1})
			if c == '{' {
				stack[len(stack)-1].key = ""
			}
		case '}', ']':
			n := len(stack)
			if n == 0 {
				continue
			}
			fr := stack[n-1]
			stack = stack[:n-1]
			if fr.obj && fr.password && fr.valueStart >= 0 && secretValue != nil && secretValue(fr.valueText) {
				m := enc(marker(KindPassword))
				found := false
				for j := range edits {
					if edits[j].start == fr.valueStart {
						edits[j].repl, found = m, true
					}
				}
				if !found {
					edits = append(edits, edit{fr.valueStart, fr.valueEnd, m})
				}
			}
		case ':':
			if n := len(stack); n > 0 && stack[n-1].obj {
				stack[n-1].expectKey = false
			}
		case ',':
			if n := len(stack); n > 0 && stack[n-1].obj {
				stack[n-1].expectKey = true
			}
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			lit := s[i:min(j+1, len(s))]
			v, ok := jsonStringValue(lit)
			if !ok {
				i = j
				continue
			}
			n := len(stack)
			isKey := n > 0 && stack[n-1].obj && stack[n-1].expectKey
			key := ""
			if n > 0 && !isKey {
				key = stack[n-1].key
			}
			if out := f(v, key); out != v {
				edits = append(edits, edit{i, j + 1, enc(out)})
			}
			if isKey {
				stack[n-1].key = v
			} else if n > 0 && stack[n-1].obj {
				fr := &stack[n-1]
				lk := strings.ToLower(fr.key)
				switch {
				case lk == "type" && strings.EqualFold(strings.TrimSpace(v), "password"):
					fr.password = true
				case lk == "autocomplete" && (strings.Contains(strings.ToLower(v), "current-password") || strings.Contains(strings.ToLower(v), "new-password")):
					fr.password = true
				case lk == "value":
					fr.valueStart, fr.valueEnd, fr.valueText = i, j+1, v
				}
			}
			i = j
		}
	}
	if len(edits) == 0 {
		return s
	}
	sort.Slice(edits, func(a, b int) bool { return edits[a].start < edits[b].start })
	var b strings.Builder
	last := 0
	for _, e := range edits {
		b.WriteString(s[last:e.start])
		b.WriteString(e.repl)
		last = e.end
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactPasswordInputs replaces the value attributes of password inputs in any HTML in s.
func redactPasswordInputs(s string) string {
	lower := asciiLower(s)
	var b strings.Builder
	last := 0
	for off := 0; ; {
		i := strings.Index(lower[off:], "<input")
		if i < 0 {
			break
		}
		i += off
		off = i + len("<input")
		tag, n, ok := passwordInputTag(s[i:])
		if !ok {
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(tag)
		last = i + n
		off = last
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// passwordInputTag reads the tag at the start of t; when it is a password input with a value
// (by its type, its autocomplete tokens — passwords, one-time codes, cards — or its names:
// namedSecretInput), it returns the tag rewritten with the value replaced by a marker, and the
// length of the original tag in t.
func passwordInputTag(t string) (string, int, bool) {
	src := t
	escaped := false // JSON-escaped HTML in a text that is not JSON: \" around attribute values
	if gt := strings.IndexByte(t, '>'); strings.Contains(t[:max(gt, 0)], `\"`) || gt < 0 && strings.Contains(t, `\"`) {
		if gt >= 0 {
			src = t[:gt+1]
		}
		src = unescapeJSONText.Replace(src)
		escaped = true
	}
	tok, raw, ok := firstTag(src)
	if !ok || tok.Data != "input" {
		return "", 0, false
	}
	password := false
	named := make(map[string]string, len(tok.Attr))
	for _, a := range tok.Attr {
		raw := strings.Trim(a.Val, " \t\n\\\"'")
		v := strings.ToLower(raw)
		switch a.Key {
		case "type":
			password = password || v == "password"
		case "autocomplete":
			password = password || strings.Contains(v, "current-password") || strings.Contains(v, "new-password") ||
				strings.Contains(v, "one-time-code") || strings.Contains(v, "cc-")
		case "style":
			password = password || maskedByStyle(v)
		}
		named[a.Key] = raw
	}
	if !password && !namedSecretInput(named) {
		return "", 0, false
	}
	changed := false
	for i, a := range tok.Attr {
		// A data- attribute of the field is where pages copy what is typed (data-value; red-team
		// pass 6c): its value goes as the value does.
		if v := strings.Trim(a.Val, " \t\n\\\"'"); (a.Key == "value" || strings.HasPrefix(a.Key, "data-")) && v != "" && !isMarker(v) {
			tok.Attr[i].Val = marker(KindPassword)
			changed = true
		}
	}
	if !changed {
		return "", 0, false
	}
	n := raw
	quote := `"`
	if escaped {
		// The tag's length in t: up to its '>' (or all of t when it has none).
		n = len(t)
		if gt := strings.IndexByte(t, '>'); gt >= 0 {
			n = gt + 1
		}
		quote = `\"`
	}
	var b strings.Builder
	b.WriteString("<input")
	for _, a := range tok.Attr {
		b.WriteString(" ")
		b.WriteString(a.Key)
		b.WriteString("=")
		b.WriteString(quote)
		b.WriteString(attrEscaper.Replace(a.Val))
		b.WriteString(quote)
	}
	b.WriteString(">")
	return b.String(), n, true
}

// firstTag tokenizes the tag at the start of t as a browser does; a tag cut off by the end of
// t is read as if it ended there. raw is its length in t.
func firstTag(t string) (xhtml.Token, int, bool) {
	z := xhtml.NewTokenizer(strings.NewReader(t))
	tt := z.Next()
	raw := len(z.Raw())
	for _, end := range []string{">", `">`, `'>`} {
		if tt != xhtml.ErrorToken {
			break
		}
		z = xhtml.NewTokenizer(strings.NewReader(t + end))
		tt = z.Next()
		raw = min(len(z.Raw()), len(t))
	}
	if tt != xhtml.StartTagToken && tt != xhtml.SelfClosingTagToken {
		return xhtml.Token{}, 0, false
	}
	return z.Token(), raw, true
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay the same.
func asciiLower(s string) string {
	i := 0
	for i < len(s) && !(s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// headerTextRE finds a header name printed with its value: "Authorization: …", "cookie=…",
// `"Set-Cookie": "…"`, `document.cookie = "…"`. Groups: 1 the name, 2 a quote after the name,
// 3 a quote before the value.
var headerTextRE = regexp.MustCompile(`(?i)(?:^|[^a-z0-9_-])(proxy-authorization|authorization|set-cookie|cookie)(\\?["']?)[ \t]*[:=][ \t]*(\\?["'])?`)

// redactHeaderText removes the credentials and cookie values of headers printed in s.
func redactHeaderText(s string) string {
	locs := headerTextRE.FindAllStringSubmatchIndex(s, -1)
	if locs == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range locs {
		vstart := m[1]
		if vstart < last {
			continue
		}
		name := strings.ToLower(s[m[2]:m[3]])
		keyQuoted := m[5] > m[4]
		quote := ""
		if m[6] >= 0 {
			quote = s[m[6]:m[7]]
		}
		if keyQuoted && quote == "" {
			continue // a JSON value that is not a string
		}
		vend := len(s)
		if quote != "" {
			if k := closingQuote(s[vstart:], quote); k >= 0 {
				vend = vstart + k
			}
		} else if k := strings.IndexAny(s[vstart:], "\r\n"); k >= 0 {
			vend = vstart + k
		}
		v := s[vstart:vend]
		out := redactHeaderValue(name, v)
		if out == v {
			continue
		}
		b.WriteString(s[last:vstart])
		b.WriteString(out)
		last = vend
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// closingQuote is the index in s of the quote that ends a value opened with quote (`"`, `'`,
// `\"` or `\'`), or -1.
func closingQuote(s, quote string) int {
	if len(quote) == 2 {
		return strings.Index(s, quote)
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case quote[0]:
			return i
		}
	}
	return -1
}

// authSchemes are the HTTP authentication schemes whose credentials follow a space.
var authSchemes = map[string]bool{"basic": true, "bearer": true, "digest": true, "token": true, "negotiate": true,
	"ntlm": true, "hoba": true, "mutual": true, "oauth": true, "dpop": true, "apikey": true, "key": true,
	"aws4-hmac-sha256": true, "vapid": true, "googlelogin": true}

// redactHeaderValue removes the secret parts of one header value: an Authorization's
// credentials (its scheme stays), a Cookie's values, a Set-Cookie's value (its attributes stay).
func redactHeaderValue(name, v string) string {
	t := strings.TrimSpace(v)
	if t == "" || isMarker(t) {
		return v
	}
	switch name {
	case "authorization", "proxy-authorization":
		if sp := strings.IndexAny(t, " \t"); sp >= 0 {
			if !authSchemes[strings.ToLower(t[:sp])] || isMarker(strings.TrimSpace(t[sp:])) {
				return v // words, not credentials
			}
			return t[:sp] + " " + marker(KindAuth)
		}
		if utf8.RuneCountInString(t) < minTokenLen {
			return v
		}
		return marker(KindAuth)
	case "cookie":
		parts := strings.Split(v, ";")
		changed := false
		for i, p := range parts {
			if eq := strings.IndexByte(p, '='); eq >= 0 {
				if val := strings.TrimSpace(p[eq+1:]); val != "" && !isMarker(val) {
					parts[i] = p[:eq+1] + marker(KindCookie)
					changed = true
				}
			}
		}
		if !changed {
			return v
		}
		return strings.Join(parts, ";")
	case "set-cookie":
		first, rest, _ := strings.Cut(v, ";")
		eq := strings.IndexByte(first, '=')
		if eq < 0 || strings.TrimSpace(first[eq+1:]) == "" || isMarker(strings.TrimSpace(first[eq+1:])) {
			return v
		}
		out := first[:eq+1] + marker(KindCookie)
		if strings.Contains(v, ";") {
			out += ";" + rest
		}
		return out
	}
	return v
}
