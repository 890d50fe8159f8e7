package redact

import (
	"encoding/base64"
	"encoding/json"
	"hash/crc32"
	"regexp"
	"sort"
	"strings"
)

// Credentials in well-known formats on a page: a "token created" page (GitHub, GitLab, npm,
// PyPI, Hugging Face), a payment dashboard's secret keys (Stripe), a CI log or an .env file in a
// code viewer (AWS, Slack, OpenAI, Anthropic, Google, SendGrid, Twilio, Shopify, DigitalOcean,
// Telegram bots), a private key block, a JSON Web Token. The page is the site's, but text planted
// in it can steer an obeying model to type what it read into a form or a reply, so these are
// removed from what a page shows (Redactor.RedactPage), like card numbers (cards.go); the
// person's own messages keep theirs.
//
// High confidence only: each format is its distinctive prefix, then its alphabet and its length,
// and a checksum where the format has one (GitHub's and npm's tokens end with the base62 CRC32
// of their random part). A JWT counts when its header decodes to JSON naming an "alg" and its
// payload to a JSON object with one of the claims a credential carries (exp, iat, nbf, sub,
// jti): signed data that is not a credential stays (news sites sign their comment widgets'
// article data this way, some with an "iss"). The AWS secret key has no prefix of its own, so
// it is found by the name it is written under (aws_secret_access_key=…, AWS_SESSION_TOKEN: …),
// whose name stays. A key base64-encoded on its own is found too (see encodedKeyAt).
//
// gitleaks' rule list (config/gitleaks.toml) is the reference for the formats; gitleaks itself is
// not used: as a library it brings some seventy modules (archive readers, a CLI, a config system,
// a WebAssembly runtime), and its generic rules (a "key"-like word then an entropic string)
// would redact ordinary text: on the text and attributes of the shared corpus of 130 real pages
// its default rules (v8.30.1) make 58 generic-api-key findings (random-looking identifiers of
// widgets and assets) and 6 JWT findings (article data), where this rule makes one, a Maps
// browser key (TestRedactKeysCorpus).
//
// A key must stand as a word of its own: before it the start of the text, a byte that is not a
// letter, digit or underscore, or an escape (%3D and %253D, \n, \t, \r; otherStart); after it,
// anything but a letter, digit or underscore. The formats' alphabets need no escaping in HTML,
// JSON or a URL, except the AWS secret's / and + and the Telegram token's colon, which are read
// escaped too. The sites that show a person's keys write them plainly; a page script that
// wanted to hide one from this rule has it already.
//
// A cut key: where a text (or a JSON string) ends, or stops at "…" or "[truncated", the first
// characters of a key in one of these formats are redacted too when they are at least half of
// its shortest body (and minCutKeyBody), so a tool whose cut the model chooses (capture_page's
// maxChars) cannot show a key all but its last characters; what may show of a cut key is less
// than half of it (at least 64 bits left unknown in every format here but the AWS key id,
// which is not a secret alone). Not every short piece: every JSON string's end counts as a
// cut, and a class name "hf_home" at one is not a key.

// minCutKeyBody is the fewest characters after a format's prefix that make a cut key.
const minCutKeyBody = 4

// cutKeyBody is how many characters after the prefix make a cut key of a format whose body
// has at least min.
func cutKeyBody(min int) int { return max(minCutKeyBody, min/2) }

// keyFormat is one credential format: prefix, then a body of length min..max in its alphabet,
// which check (if any) approves. Every format has a max: a key is looked for at every word
// start, and a page that repeats a prefix ("glpat-glpat-…") would otherwise make each start
// read to the end of the text.
type keyFormat struct {
	id       int // its index in the runs a scan remembers (set at start)
	prefix   string
	alphabet func(c byte) bool
	min, max int
	check    func(body string) bool
	keep     bool // the prefix is an address or a name, and stays
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
func isWord(c byte) bool     { return isAlnum(c) || c == '_' }
func isWordDash(c byte) bool { return isWord(c) || c == '-' }
func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
func isLowerHex(c byte) bool    { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }
func isAlpha(c byte) bool       { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isBase32Upper(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '2' && c <= '7' }
func isSlackBody(c byte) bool   { return isAlnum(c) || c == '-' }
func isGitLab(c byte) bool      { return isWordDash(c) || c == '.' }
func isSendGrid(c byte) bool    { return isWordDash(c) || c == '.' }
func isWebhookPath(c byte) bool { return isAlnum(c) || c == '/' }

// keyFormats, by the first byte of their prefix; within a byte, a prefix comes before any
// shorter prefix of it ("sk-ant-" before "sk-").
var keyFormats = map[byte][]keyFormat{
	'g': {
		{prefix: "github_pat_", alphabet: isWord, min: 82, max: 82, check: func(b string) bool { return b[22] == '_' }},
		{prefix: "ghp_", alphabet: isAlnum, min: 36, max: 36, check: base62CRC},
		{prefix: "gho_", alphabet: isAlnum, min: 36, max: 36, check: base62CRC},
		{prefix: "ghu_", alphabet: isAlnum, min: 36, max: 36, check: base62CRC},
		{prefix: "ghs_", alphabet: isAlnum, min: 36, max: 36, check: base62CRC},
		{prefix: "ghr_", alphabet: isAlnum, min: 36, max: 36, check: base62CRC},
		{prefix: "glpat-", alphabet: isGitLab, min: 20, max: 255},
		{prefix: "glptt-", alphabet: isGitLab, min: 20, max: 255},
		{prefix: "gldt-", alphabet: isGitLab, min: 20, max: 255},
		{prefix: "glrt-", alphabet: isGitLab, min: 20, max: 255},
	},
	'G': {{prefix: "GOCSPX-", alphabet: isWordDash, min: 28, max: 28}}, // Google OAuth client secret
	'n': {{prefix: "npm_", alphabet: isAlnum, min: 36, max: 36, check: base62CRC}},
	'p': {
		{prefix: "pypi-AgEIcHlwaS5vcmc", alphabet: isWordDash, min: 50, max: 1024},        // pypi.org macaroon
		{prefix: "pypi-AgENdGVzdC5weXBpLm9yZw", alphabet: isWordDash, min: 50, max: 1024}, // test.pypi.org
	},
	'h': {
		{prefix: "hooks.slack.com/services/", alphabet: isWebhookPath, min: 20, max: 128, keep: true},
		{prefix: "hf_", alphabet: isAlpha, min: 34, max: 34},
	},
	's': {
		{prefix: "sk-ant-", alphabet: isWordDash, min: 40, max: 255, check: anthropicBody},
		{prefix: "sk-proj-", alphabet: isWordDash, min: 40, max: 255},
		{prefix: "sk-svcacct-", alphabet: isWordDash, min: 40, max: 255},
		{prefix: "sk-admin-", alphabet: isWordDash, min: 40, max: 255},
		{prefix: "sk-", alphabet: isWordDash, min: 40, max: 255, check: func(b string) bool { return strings.Contains(b, "T3BlbkFJ") }},
		{prefix: "sk_live_", alphabet: isAlnum, min: 20, max: 255},
		{prefix: "sk_test_", alphabet: isAlnum, min: 20, max: 255},
		{prefix: "shpat_", alphabet: isHexDigit, min: 32, max: 32},
		{prefix: "shpca_", alphabet: isHexDigit, min: 32, max: 32},
		{prefix: "shppa_", alphabet: isHexDigit, min: 32, max: 32},
		{prefix: "shpss_", alphabet: isHexDigit, min: 32, max: 32},
	},
	'r': {
		{prefix: "rk_live_", alphabet: isAlnum, min: 20, max: 255},
		{prefix: "rk_test_", alphabet: isAlnum, min: 20, max: 255},
	},
	'w': {{prefix: "whsec_", alphabet: isWord, min: 24, max: 64}}, // Stripe webhook secret
	'x': {
		{prefix: "xoxb-", alphabet: isSlackBody, min: 20, max: 255},
		{prefix: "xoxp-", alphabet: isSlackBody, min: 20, max: 255},
		{prefix: "xoxa-", alphabet: isSlackBody, min: 20, max: 255},
		{prefix: "xoxo-", alphabet: isSlackBody, min: 20, max: 255},
		{prefix: "xoxs-", alphabet: isSlackBody, min: 20, max: 255},
		{prefix: "xoxr-", alphabet: isSlackBody, min: 20, max: 255},
		{prefix: "xoxe.xoxp-", alphabet: isSlackBody, min: 20, max: 255},
		{prefix: "xoxe.xoxb-", alphabet: isSlackBody, min: 20, max: 255},
		{prefix: "xoxe-", alphabet: isSlackBody, min: 20, max: 255},
		{prefix: "xapp-", alphabet: isSlackBody, min: 20, max: 255},
	},
	'A': {
		{prefix: "AIza", alphabet: isWordDash, min: 35, max: 35},
		{prefix: "AKIA", alphabet: isBase32Upper, min: 16, max: 16},
		{prefix: "ASIA", alphabet: isBase32Upper, min: 16, max: 16},
		{prefix: "ABIA", alphabet: isBase32Upper, min: 16, max: 16},
		{prefix: "ACCA", alphabet: isBase32Upper, min: 16, max: 16},
	},
	'S': {
		{prefix: "SG.", alphabet: isSendGrid, min: 66, max: 66, check: func(b string) bool { return b[22] == '.' && strings.Count(b, ".") == 1 }},
		{prefix: "SK", alphabet: isHexDigit, min: 32, max: 32}, // Twilio API key
	},
	'd': {
		{prefix: "dop_v1_", alphabet: isLowerHex, min: 64, max: 64},
		{prefix: "doo_v1_", alphabet: isLowerHex, min: 64, max: 64},
		{prefix: "dor_v1_", alphabet: isLowerHex, min: 64, max: 64},
	},
}

// formatsByByte is keyFormats as a table, so that the scan costs an index per byte.
var formatsByByte [256][]keyFormat

// numFormats counts the formats (their ids).
var numFormats int

func init() {
	for c, fs := range keyFormats {
		for i := range fs {
			fs[i].id = numFormats
			numFormats++
		}
		formatsByByte[c] = fs
	}
}

// runs remembers, per format, the last run of its alphabet a scan read whole, so that a prefix
// repeated inside one run ("glpat-glpat-…", every one a word start) does not make each start
// read the run again: the scan stays linear.
type runs struct{ from, end []int }

// runEnd is where the run of f's alphabet that starts at s[start] ends.
func (r *runs) runEnd(f keyFormat, s string, start int) int {
	if r.from == nil {
		r.from, r.end = make([]int, numFormats), make([]int, numFormats)
		for i := range r.from {
			r.from[i] = -1
		}
	}
	if from := r.from[f.id]; from >= 0 && from <= start && start <= r.end[f.id] {
		return r.end[f.id]
	}
	j := start
	for j < len(s) && f.alphabet(s[j]) {
		j++
	}
	r.from[f.id], r.end[f.id] = start, j
	return j
}

// base62CRC checks the last six characters of a GitHub or npm token's body: the CRC32 of the
// thirty before them in base62 (digits, then upper, then lower case letters).
func base62CRC(body string) bool {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	n := crc32.ChecksumIEEE([]byte(body[:30]))
	for i := 35; i >= 30; i-- {
		if body[i] != digits[n%62] {
			return false
		}
		n /= 62
	}
	return true
}

// anthropicBody checks an Anthropic key's body: a kind and a two-digit version
// ("api03-", "admin01-"), then the key.
func anthropicBody(b string) bool {
	i := 0
	for i < len(b) && b[i] >= 'a' && b[i] <= 'z' {
		i++
	}
	return i > 0 && i+3 < len(b) && isDigit(b[i]) && isDigit(b[i+1]) && b[i+2] == '-'
}

// wordByte: letters, digits and the underscore, the bytes a key may not follow.
var wordByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = isWord(byte(c))
	}
	return t
}()

// otherStart is where else than at its first byte a key may start in the word that starts at
// s[w], or -1: after a percent escape that the word starts with (the %3D of "%3DAIza…", once or
// twice encoded); after a JSON escape (the \n of "\nghp_…"); after "bot" before digits (the
// Telegram Bot API's addresses: /bot123456789:AA…).
func otherStart(s string, w int) int {
	switch {
	case w > 0 && s[w-1] == '%' && w+4 < len(s) && s[w] == '2' && s[w+1] == '5' && isHexDigit(s[w+2]) && isHexDigit(s[w+3]):
		return w + 4
	case w > 0 && s[w-1] == '%' && w+2 < len(s) && isHexDigit(s[w]) && isHexDigit(s[w+1]):
		return w + 2
	case w > 0 && s[w-1] == '\\' && w+1 < len(s) && strings.IndexByte("ntr", s[w]) >= 0:
		return w + 1
	case strings.HasPrefix(s[w:], "bot") && w+3 < len(s) && isDigit(s[w+3]):
		return w + 3
	}
	return -1
}

// atCut reports whether s[j:] starts with a cut: the end, "…" or "[truncated".
func atCut(s string, j int) bool {
	return j == len(s) || strings.HasPrefix(s[j:], "…") || strings.HasPrefix(s[j:], "[truncated")
}

// redactKeys replaces the credentials in s (see the top of the file). The scan goes from word
// to word, so it costs little more than a pass over the bytes.
func redactKeys(s string) string {
	if len(s) < 8 {
		return s
	}
	s = redactPEM(s)
	s = redactAWSSecrets(s)
	var b strings.Builder
	var rs runs
	last := 0
	encodedUntil := 0 // the end of the last encoded word read: no start inside it is read again
	for w := 0; w < len(s); {
		for w < len(s) && !wordByte[s[w]] {
			w++
		}
		if w == len(s) {
			break
		}
		at := w
		end, keep, ok := keyAt(s, w, &rs)
		if !ok && (s[w-min(w, 1)] == '%' || s[w-min(w, 1)] == '\\' || s[w] == 'b') {
			if at = otherStart(s, w); at >= 0 {
				end, keep, ok = keyAt(s, at, &rs)
			}
		}
		if !ok && w >= encodedUntil && encodedPrefixes[s[w]] != nil {
			at, keep = w, 0
			end, encodedUntil, ok = encodedKeyAt(s, w)
		}
		if ok {
			b.WriteString(s[last : at+keep])
			b.WriteString(marker(KindKey))
			last, w = end, end
			continue
		}
		if strings.HasPrefix(s[w:], "eyJ") {
			// Signed data that is not a credential: its payload is no token's start.
			for w < len(s) && (isWordDash(s[w]) || s[w] == '.') {
				w++
			}
		}
		for w < len(s) && wordByte[s[w]] {
			w++
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// keyAt reports whether a key of one of the formats starts at s[i], where it ends, and how
// many of its first bytes stay (a format's address or name).
func keyAt(s string, i int, rs *runs) (end, keep int, ok bool) {
	switch c := s[i]; {
	case c == 'e':
		if strings.HasPrefix(s[i:], "eyJ") {
			end, ok = jwtAt(s, i)
		}
		return end, 0, ok
	case isDigit(c):
		end, ok = telegramAt(s, i)
		return end, 0, ok
	}
	for _, f := range formatsByByte[s[i]] {
		if end, ok = f.at(s, i, rs); ok {
			if f.keep {
				keep = len(f.prefix)
			}
			return end, keep, true
		}
	}
	return 0, 0, false
}

// at reports whether the format matches at s[i] (the prefix is there, and i is a key's start),
// and where the key ends.
func (f keyFormat) at(s string, i int, rs *runs) (int, bool) {
	if !strings.HasPrefix(s[i:], f.prefix) {
		return 0, false
	}
	start := i + len(f.prefix)
	j := rs.runEnd(f, s, start)
	// A full stop that ends a sentence is not the key's.
	for j-start > f.min && s[j-1] == '.' {
		j--
	}
	n := j - start
	if j < len(s) && isWord(s[j]) {
		return 0, false // part of a longer word
	}
	if n >= f.min && n <= f.max && (f.check == nil || f.check(s[start:j])) {
		return j, true
	}
	if n < f.min && n >= cutKeyBody(f.min) && atCut(s, j) {
		return j, true // a cut key
	}
	return 0, false
}

// jwtAt finds a JSON Web Token at s[i] ("eyJ…"): three base64url parts, the first two at least
// ten characters, the header JSON naming an "alg" and the payload a JSON object with a
// registered claim; or a cut one (the header's first characters and more at a cut).
func jwtAt(s string, i int) (int, bool) {
	var parts [3]int // ends of the parts
	j := i
	for p := 0; p < 3; p++ {
		for j < len(s) && (isWordDash(s[j])) {
			j++
		}
		parts[p] = j
		if p < 2 {
			if j >= len(s) || s[j] != '.' {
				if atCut(s, j) && j-i >= 3+minCutKeyBody {
					return j, true // a cut token
				}
				return 0, false
			}
			j++
		}
	}
	if j < len(s) && (isWord(s[j]) || s[j] == '.') {
		return 0, false
	}
	header, payload := s[i:parts[0]], s[parts[0]+1:parts[1]]
	if len(header) < 10 || len(payload) < 10 || !strings.HasPrefix(payload, "eyJ") {
		return 0, false
	}
	var h map[string]any
	var claims map[string]json.RawMessage
	if !decodeJWTPart(header, &h) || h["alg"] == nil || !decodeJWTPart(payload, &claims) {
		return 0, false
	}
	for _, k := range []string{"exp", "iat", "nbf", "sub", "jti"} {
		if _, ok := claims[k]; ok {
			return j, true
		}
	}
	return 0, false
}

// decodeJWTPart decodes one base64url part of a JWT as JSON into v.
func decodeJWTPart(p string, v any) bool {
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(p, "="))
	return err == nil && json.Unmarshal(raw, v) == nil
}

// telegramAt finds a Telegram bot token at s[i]: 8 to 10 digits (the bot's id), a colon (or
// %3A), "AA" and 33 more of [A-Za-z0-9_-]. Its start may follow "bot", as in the Bot API's
// addresses (api.telegram.org/bot<token>/getMe).
func telegramAt(s string, i int) (int, bool) {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if n := j - i; n < 8 || n > 10 {
		return 0, false
	}
	switch {
	case strings.HasPrefix(s[j:], ":AA"):
		j += 3
	case len(s) >= j+5 && strings.EqualFold(s[j:j+3], "%3A") && s[j+3:j+5] == "AA":
		j += 5
	default:
		return 0, false
	}
	start := j
	for j < len(s) && isWordDash(s[j]) && j-start <= 33 {
		j++
	}
	n := j - start
	if j < len(s) && isWord(s[j]) {
		return 0, false
	}
	if n == 33 || n >= cutKeyBody(33) && n < 33 && atCut(s, j) {
		return j, true
	}
	return 0, false
}

// pemRE finds the first line of a private key block (PKCS#1, #8, SEC 1, OpenSSH, PGP …).
var pemRE = regexp.MustCompile(`-----BEGIN[ A-Z0-9]{0,40} PRIVATE KEY(?: BLOCK)?-----`)

// pemEndRE finds the last line of a private key block.
var pemEndRE = regexp.MustCompile(`-----END[ A-Z0-9]{0,40} PRIVATE KEY(?: BLOCK)?-----`)

// maxPEMBlock bounds how far a private key block's last line is looked for.
const maxPEMBlock = 64 << 10

// redactPEM replaces private key blocks, from their first line to their last; a block whose last
// line is missing (cut, or shown in part) loses what follows its first line in its alphabet
// (base64, spaces, line breaks, JSON's escaped ones, and the header lines' "Proc-Type: 4,…").
func redactPEM(s string) string {
	spans := pemSpans(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		b.WriteString(marker(KindKey))
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// pemSpans are the private key blocks of s, [start, end) each, in order, as redactPEM reads them.
func pemSpans(s string) [][2]int {
	if !strings.Contains(s, "PRIVATE KEY") {
		return nil
	}
	var spans [][2]int
	// The next last line at or after a block's first, found once for all the first lines
	// before it (-2: not looked for yet; -1: none left).
	nextEnd := -2
	for off := 0; off < len(s); {
		loc := pemRE.FindStringIndex(s[off:])
		if loc == nil {
			break
		}
		start, end := off+loc[0], off+loc[1]
		if nextEnd == -2 || nextEnd >= 0 && nextEnd < end {
			nextEnd = -1
			if e := pemEndRE.FindStringIndex(s[end:]); e != nil {
				nextEnd = end + e[0]
			}
		}
		if nextEnd >= 0 && nextEnd-end <= maxPEMBlock {
			end = nextEnd + len(pemEndRE.FindString(s[nextEnd:]))
		} else {
			end = pemBodyEnd(s, end)
		}
		spans = append(spans, [2]int{start, end})
		off = end
	}
	return spans
}

// awsSecretRE matches, at its start, the names an AWS secret key or session token is written
// under, with what joins them to the value (=, :, quotes, spaces); the value follows.
var awsSecretRE = regexp.MustCompile(`^(?i)(?:aws[-_]?secret[-_]?access[-_]?key|aws[-_]?secret[-_]?key|secret[-_]?access[-_]?key|aws[-_]?session[-_]?token)(?:\\?["'])?[ \t]*[:=]>?[ \t]*(?:\\?["'])?`)

// redactAWSSecrets replaces the values written under an AWS secret's name: at least minTokenLen
// characters of base64 (/ and + also as %2F and %2B), or fewer at a cut. The names are found
// from their "cret" or "ssion" (a regular expression over the whole text cost 50 ns a byte).
func redactAWSSecrets(s string) string {
	var locs [][2]int
	for _, anchor := range []string{"cret", "CRET", "ssion", "SSION"} {
		for off := 0; ; {
			i := strings.Index(s[off:], anchor)
			if i < 0 {
				break
			}
			p := off + i
			off = p + len(anchor)
			// The name starts at its "se", or at the "aws" before: aws_secret, awssecret.
			for _, start := range []int{p - 6, p - 5, p - 2} {
				if start < 0 || start > 0 && isAlnum(s[start-1]) {
					continue
				}
				if m := awsSecretRE.FindStringIndex(s[start:min(len(s), start+64)]); m != nil {
					locs = append(locs, [2]int{start, start + m[1]})
					break
				}
			}
		}
	}
	if locs == nil {
		return s
	}
	sort.Slice(locs, func(i, j int) bool { return locs[i][0] < locs[j][0] })
	var b strings.Builder
	last := 0
	for _, l := range locs {
		v := l[1]
		if v < last {
			continue
		}
		j, n := v, 0
		for j < len(s) {
			switch {
			case isAlnum(s[j]) || s[j] == '/' || s[j] == '+' || s[j] == '=':
				j++
			case s[j] == '%' && j+2 < len(s) && (strings.EqualFold(s[j:j+3], "%2F") || strings.EqualFold(s[j:j+3], "%2B") || strings.EqualFold(s[j:j+3], "%3D")):
				j += 3
			case s[j] == '\\' && j+1 < len(s) && s[j+1] == '/':
				j += 2
			default:
				goto done
			}
			n++
		}
	done:
		if j < len(s) && (s[j] == '_' || s[j] == '-') {
			continue // a placeholder such as YOUR_SECRET_KEY
		}
		if n < minTokenLen && !(n >= minCutKeyBody && atCut(s, j)) {
			continue
		}
		b.WriteString(s[last:v])
		b.WriteString(marker(KindKey))
		last = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// pemBodyEnd is where the body of a private key block that starts at s[i] ends, when its last
// line is missing: base64, spaces, line breaks and header lines ("Proc-Type: 4,ENCRYPTED"),
// line breaks also JSON-escaped (once or more: \n, \\n), but never a backslash without the
// letter it escapes, so a JSON string around the block stays whole.
func pemBodyEnd(s string, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case isAlnum(c) || strings.IndexByte("+/= \t\r\n:,-", c) >= 0:
			i++
		case c == '\\':
			k := i
			for k < len(s) && s[k] == '\\' {
				k++
			}
			if k == len(s) || strings.IndexByte("nrt", s[k]) < 0 {
				return i
			}
			i = k + 1
		default:
			return i
		}
	}
	return i
}

// A key shown base64-encoded: a secret's data in a Kubernetes or Vault view, a kubeconfig's
// client-key-data, a .env file in a config map. A word that starts with the base64 of a
// format's prefix (at least three bytes of it, so the first four characters are the prefix's
// alone) is decoded, and goes whole when its text starts with a key (a private key block
// included); the key's own checks decide. Not a key inside a longer encoded text: only a value
// encoded on its own starts where the prefix's encoding does.

// maxEncodedKey bounds the encoded words decoded (an encoded private key block is about 3 KB).
const maxEncodedKey = 16 << 10

// encodedPrefixes are the base64 spellings of the formats' prefixes' first bytes (a multiple of
// three of them), by their first character.
var encodedPrefixes = func() (t [256][]string) {
	seen := map[string]bool{}
	add := func(p string) {
		n := len(p) / 3 * 3
		if n == 0 {
			return
		}
		e := base64.StdEncoding.EncodeToString([]byte(p[:n]))
		if !seen[e] {
			seen[e] = true
			t[e[0]] = append(t[e[0]], e)
		}
	}
	for _, fs := range keyFormats {
		for _, f := range fs {
			add(f.prefix)
		}
	}
	add("-----BEGIN ")
	return t
}()

// encodedKeyAt reports whether the word at s[i] is a key encoded in base64 (see above), where
// it ends, and how far the encoded text was read.
func encodedKeyAt(s string, i int) (end, read int, ok bool) {
	match := false
	for _, e := range encodedPrefixes[s[i]] {
		if strings.HasPrefix(s[i:], e) {
			match = true
			break
		}
	}
	if !match {
		return 0, i, false
	}
	j := i
	for j < len(s) && j-i <= maxEncodedKey && (isAlnum(s[j]) || strings.IndexByte("+/-_", s[j]) >= 0) {
		j++
	}
	end = j
	for end < len(s) && end-j < 2 && s[end] == '=' {
		end++
	}
	if j-i > maxEncodedKey || end < len(s) && wordByte[s[end]] {
		return 0, j, false
	}
	enc := s[i:j]
	raw, err := base64.RawStdEncoding.DecodeString(enc)
	if err != nil {
		if raw, err = base64.RawURLEncoding.DecodeString(enc); err != nil {
			return 0, j, false
		}
	}
	d := string(raw)
	if strings.HasPrefix(redactKeys(d), markerOpen+KindKey+"]") && !strings.HasPrefix(d, markerOpen) {
		return end, j, true
	}
	return 0, j, false
}
