package rewrite

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html"
)

// defaultMaxPrefix is the number of bytes an Injector holds back at most while it looks for the
// insertion point, when Options.MaxPrefix is not set: far more than any real page's head
// needs before its first script or body element.
const defaultMaxPrefix = 256 << 10

// charsetWindow is how far into a document a browser's pre-scan looks for <meta charset>.
// A <meta charset> that starts inside it keeps the bootstrap after it; once the tokens pass
// it, the injector stops waiting for one.
const charsetWindow = 1024

// errPrefixCap is what the recorder hands the tokenizer when the held bytes reach the cap.
var errPrefixCap = errors.New("prefix cap reached")

// Options says what to insert and how.
type Options struct {
	// Tag is the complete bytes to insert, e.g.
	// `<script data-remixproxy="TOKEN" nonce="N">…</script>`. ASCII, so that a <meta charset>
	// keeps its meaning whatever the document's encoding.
	Tag []byte
	// MetaCSP, if non-nil, is called with the (unescaped) content attribute of each
	// <meta http-equiv="Content-Security-Policy" content=…> found before the document's body
	// starts (case-insensitive http-equiv, surrounding whitespace ignored). When it returns a
	// different string, that meta tag is re-serialized with the new content (attribute names
	// lower-cased, values double-quoted with & and " escaped, attributes kept in order);
	// otherwise the tag's bytes pass unchanged. Report-only metas are not passed (browsers
	// ignore them anyway), nor are metas inside a <template>. If nil, CSP metas pass unchanged
	// and the injector stops tokenizing right after the insertion point.
	//
	// When MetaCSP is set, the policies of CSP metas that come before the insertion point (which
	// happens when they come before the <meta charset> the tag follows) are also checked against
	// Tag as they will reach the browser, since they are in force when the tag runs: a policy that
	// still blocks the tag (e.g. 'strict-dynamic' makes a host-source for an external tag inert)
	// moves the insertion point in front of those metas, like the metas after it, and a policy
	// that allows no script at all ('none') makes the document pass through byte for byte
	// unchanged, not injected, as BlocksInjection does for header policies.
	MetaCSP func(content string) string
	// CharsetKnown says the response header (or a BOM) already fixes the document's encoding,
	// so a <meta charset> cannot change it and the injector need not look for one. When false
	// and a script or body content comes before any <meta charset>, the injector keeps looking
	// through the pre-scan window; a declaration found there is copied, as <meta charset="X">,
	// in front of the tag, because the tag would push the original out of the window.
	CharsetKnown bool
	// EscapesInert says the response header fixes an encoding in which the byte ESC (0x1B) is
	// an ordinary character: any the browser knows but ISO-2022-JP. Otherwise an ESC before the
	// insertion point may have switched a stateful decoder (ISO-2022-JP, declared by a <meta
	// charset> or guessed by the browser) out of ASCII, and the browser reads the bytes before
	// the insertion point, and the tag itself, as other characters than the tokenizer did: a
	// comment the tokenizer saw closed is still open, an attribute value still runs, and the tag
	// lands inside it, as text the page can read. Such a document passes through byte for byte
	// unchanged, not injected. A UTF-8 byte order mark makes escapes inert too.
	EscapesInert bool
	// MaxPrefix caps the bytes held back while looking for the insertion point, and the bytes
	// of any single token while the rest of the head is tokenized for MetaCSP. If zero or
	// negative, 256 KiB. When the cap is hit before a decision, the document
	// passes through byte-for-byte unchanged, not injected; when it is hit after, the rest of
	// the document passes through untouched.
	MaxPrefix int
}

// Injector is a reader that yields a document with the bootstrap tag inserted.
// It is not safe for concurrent use.
type Injector struct {
	opt   Options
	src   io.Reader
	rec   *recorder       // the held bytes; nil once the scratch is back in its pool
	z     *html.Tokenizer // nil once the tokens are no longer read
	phase phase
	s     *scratch // buffers and tokenizer borrowed from scratchPool (inject_pool.go) until the head is behind

	slowOnly bool // tests: the tokenizer's walk alone, without fastScan, to compare the two

	out    []byte // output ready to be read
	outPos int
	err    error // returned by Read in phaseDone, once out is drained

	injected bool

	// Token bookkeeping, in document offsets.
	consumed int64  // end of the last token the tokenizer returned
	edits    []edit // pending changes to the held prefix, in document order

	// Insertion-point search.
	candidate      int64 // best insertion point known so far
	haveCandidate  bool  // <html> or <head> or another token set candidate
	candidateFixed bool  // no later token can move candidate
	lastSafeEnd    int64 // end of the last token known to be complete (EOF insertion point)

	// Parser-ish state shared by the scan and head phases.
	rawText       bool // the next text token is the content of a raw-text element
	templateDepth int  // open <template> elements
	dropping      bool // inside a stale bootstrap that is being dropped
	staleWindow   bool // right after the insertion point, a stale bootstrap may still follow
	headOver      bool

	// Charset look-ahead: the insertion point is known (pendingPos) but a <meta charset> may
	// still follow inside the pre-scan window.
	pending    bool
	pendingPos int64
	sawBody    bool // body content met while looking ahead: the head is over once decided

	// CSP metas met while scanning, which are before the insertion point if a <meta charset>
	// decides it: the worst verdict of their policies on the tag (see Options.MetaCSP).
	boot        *bootTag // Tag as a policy check reads it, parsed at the first CSP meta
	metaVerdict tagVerdict
}

type phase uint8

const (
	phaseStart phase = iota // nothing read yet
	phaseScan               // holding back the prefix, looking for the insertion point
	phaseHead               // tag inserted; tokenizing the rest of the head, token by token
	phaseRaw                // copying src with no per-byte work
	phaseDone               // out drained, then err
)

// edit replaces the document bytes [start, end) of the held prefix with repl.
type edit struct {
	start, end int64
	repl       []byte
}

// NewInjector returns a reader that yields src with opt.Tag inserted at the insertion point:
//
//   - right after the first <meta charset> (or <meta http-equiv=content-type> whose content
//     names a charset) that starts within the document's first 1024 bytes, if it comes before
//     any script and any body content, so our bytes never push it out of the browser's
//     pre-scan window — unless a CSP meta before it would block the tag (Options.MetaCSP):
//     then at the candidate point, with a copy of the declaration in front of the tag when the
//     encoding is not known, or nowhere if that policy allows no script at all;
//   - else at the candidate point: right after <head …>, else right after <html …>, else just
//     before the first token that is neither doctype, comment, whitespace, <html> nor <head>,
//     decided as soon as a script, body content, </head> or the end of input comes, or as soon
//     as the candidate is settled once the tokens are past the first 1024 bytes.
//
// It is never before the doctype. Every other byte of src passes through unchanged, except for
// CSP metas that opt.MetaCSP rewrites and a stale `<script data-remixproxy…>` element from an
// earlier injection met before or right after the insertion point, which is dropped.
//
// An empty src yields nothing and is not injected. A document holding only a doctype, comments
// and whitespace gets the tag at its end (after <html>/<head> if they are there), but before a
// comment or doctype left unterminated at the end of input, which would swallow it. A document
// starting with a UTF-16 byte order mark passes through untouched, not injected, and so does one
// with an ESC byte before the insertion point, unless Options.EscapesInert. A UTF-8 byte order
// mark stays first.
func NewInjector(src io.Reader, opt Options) *Injector {
	if opt.MaxPrefix <= 0 {
		opt.MaxPrefix = defaultMaxPrefix
	}
	return newInjector(src, opt, scratchPool.Get().(*scratch))
}

// newInjector is NewInjector with the scratch it works in.
func newInjector(src io.Reader, opt Options, s *scratch) *Injector {
	s.rec = recorder{src: src, buf: s.rec.buf[:0]}
	return &Injector{opt: opt, src: src, s: s, rec: &s.rec, out: s.out[:0], edits: s.edits[:0]}
}

// Injected reports whether the tag has been inserted so far.
func (in *Injector) Injected() bool { return in.injected }

// Decide reads src until the insertion point is decided, or until the injector has decided to
// let the document through unchanged, so that Injected says which before anything is sent. What
// it read is held for Read, as the search for the insertion point holds it anyway.
func (in *Injector) Decide() {
	for in.phase == phaseStart || in.phase == phaseScan {
		if in.phase == phaseStart {
			in.begin()
		} else {
			in.step()
		}
	}
}

// Read implements io.Reader. Once it has output ready it returns it without reading src again,
// so a document that trickles in flows out as soon as the insertion point is behind it. While
// the head is tokenized, tokens already in hand are gathered into the same Read (up to len(p)),
// so a head does not go out one small token, one write and one flush at a time.
// Errors from src other than io.EOF are returned wrapped.
func (in *Injector) Read(p []byte) (int, error) {
	for {
		if in.outPos < len(in.out) {
			if in.phase == phaseHead && len(in.out)-in.outPos < len(p) && in.nextTokenInHand() {
				in.step()
				continue
			}
			n := copy(p, in.out[in.outPos:])
			in.outPos += n
			if in.outPos == len(in.out) {
				in.out, in.outPos = in.out[:0], 0
			}
			return n, nil
		}
		switch in.phase {
		case phaseStart:
			in.begin()
		case phaseScan, phaseHead:
			in.step()
		case phaseRaw:
			in.releaseScratch()
			n, err := in.src.Read(p)
			if err != nil && err != io.EOF {
				err = readError(err)
			}
			return n, err
		case phaseDone:
			in.releaseScratch()
			return 0, in.err
		}
	}
}

// nextTokenInHand reports whether the tokenizer can very likely return its next token without
// reading src again: src has ended, or the bytes it holds contain the start of a later token
// (a '<' after the first byte ends a text token and, in all but odd markup, a tag). A wrong guess
// only makes Read wait for src as it would have on the next call.
func (in *Injector) nextTokenInHand() bool {
	if in.rec.err != nil {
		return true
	}
	b := in.z.Buffered()
	return len(b) > 1 && bytes.IndexByte(b[1:], '<') >= 0
}

func readError(err error) error {
	return fmt.Errorf("injecting bootstrap: reading document: %w", err)
}

// begin reads the first bytes to look for a byte order mark and starts the tokenizer.
func (in *Injector) begin() {
	in.rec.fill(3)
	b := in.rec.bytes(0, in.rec.end())
	switch {
	case len(b) == 0:
		in.done(in.rec.err)
		return
	case len(b) >= 2 && (b[0] == 0xFE && b[1] == 0xFF || b[0] == 0xFF && b[1] == 0xFE):
		// UTF-16: our ASCII tag would be garbage there, and the tokenizer cannot read it.
		in.passThrough(0)
		return
	case len(b) >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF:
		// The UTF-8 BOM must stay first; tokenize what follows it. It fixes the encoding.
		in.consumed, in.rec.pos, in.lastSafeEnd = 3, 3, 3
		in.opt.EscapesInert = true
	}
	if in.looksLikeJSON() {
		// JSON served as text/html (APIs that get the type wrong, opened in a tab): there is no
		// document to add a script to, and a tag in front would break the data.
		in.passThrough(0)
		return
	}
	in.rec.limit = in.opt.MaxPrefix
	if in.fastScan() { // the usual head, decided without the tokenizer (inject_fastscan.go)
		return
	}
	in.z = in.s.tokenizer()
	in.phase = phaseScan
}

// jsonSniffLimit bounds how far looksLikeJSON reads for the first non-space byte.
const jsonSniffLimit = 512

// looksLikeJSON reports whether the body's first non-whitespace byte (after a BOM) opens a
// JSON object or array. An HTML document cannot start that way with any markup before it.
func (in *Injector) looksLikeJSON() bool {
	from := in.rec.pos
	for n := int(from) + 1; n <= jsonSniffLimit; n++ {
		in.rec.fill(n)
		b := in.rec.bytes(0, in.rec.end())
		for _, c := range b[from:] {
			switch c {
			case ' ', '\t', '\n', '\r', '\f':
				continue
			case '{', '[':
				return true
			default:
				return false
			}
		}
		if in.rec.err != nil || in.rec.len() < n {
			return false
		}
	}
	return false
}

// done ends the stream with err once the output is drained.
func (in *Injector) done(err error) {
	in.phase = phaseDone
	in.z = nil
	switch {
	case err == nil, err == io.EOF:
		in.err = io.EOF
	default:
		in.err = readError(err)
	}
}

// passThrough emits the recorded bytes from document offset from onwards unchanged and hands
// the rest of the stream over to raw copying (or to the pending error).
func (in *Injector) passThrough(from int64) {
	in.out = append(in.out, in.rec.bytes(from, in.rec.end())...)
	in.rec.discard(in.rec.end())
	in.rec.limit = 0
	in.z = nil
	if in.rec.err != nil {
		in.done(in.rec.err)
		return
	}
	in.phase = phaseRaw
}

// token is the current tokenizer token, classified once.
type token struct {
	tt          html.TokenType
	start, end  int64 // document offsets
	name        string
	attrs       []attr // only read for <meta> and <script>
	kind        tokenKind
	charsetMeta bool
	cspContent  int // index in attrs of the content attribute of a CSP meta, or -1
}

type attr struct{ key, val string }

type tokenKind uint8

const (
	kindInert       tokenKind = iota // doctype, comment, whitespace, raw-text content, ignored end tags, template content
	kindHTML                         // <html>
	kindHead                         // <head>
	kindHeadElement                  // title, link, style, base, meta, noscript, template, …
	kindScript                       // <script> (a page script)
	kindStale                        // <script data-remixproxy …> from an earlier injection
	kindBody                         // text or an element that starts the body, or an end tag that ends the head
	kindForeign                      // <svg>/<math> inside a template: CDATA rules the tokenizer does not follow
)

// step reads one token and acts on it.
func (in *Injector) step() {
	tt := in.z.Next()
	if tt == html.ErrorToken {
		in.endOfTokens(in.z.Err())
		return
	}
	start := in.consumed
	in.consumed += int64(len(in.z.Raw()))
	t := in.classify(tt, start, in.consumed)
	if in.phase == phaseScan {
		in.scanToken(&t)
	} else {
		in.headToken(&t)
	}
	in.maybeStopTokenizing()
}

// endOfTokens handles the tokenizer's ErrorToken: end of input, the cap, or a read error.
func (in *Injector) endOfTokens(err error) {
	if err != errPrefixCap && in.rec.err == nil {
		in.rec.err = err // e.g. io.ErrNoProgress from the tokenizer itself
	}
	if in.phase == phaseScan {
		if err != io.EOF {
			// Cap or read error before a decision: the held bytes go out as they came.
			in.edits = in.edits[:0]
			in.passThrough(in.rec.base)
			return
		}
		pos := in.lastSafeEnd
		if in.haveCandidate {
			pos = in.candidate
		}
		if in.decide(pos, in.consumed); in.phase != phaseHead {
			return // let through unchanged (decideWith)
		}
	}
	// Bytes the tokenizer read but did not return as a token (e.g. an unfinished tag at EOF).
	in.passThrough(in.consumed)
}

// maybeStopTokenizing switches to raw copying once nothing more can change.
func (in *Injector) maybeStopTokenizing() {
	if in.phase != phaseHead {
		return
	}
	if in.headOver || (in.opt.MetaCSP == nil && !in.staleWindow && !in.dropping) {
		in.passThrough(in.consumed)
	}
}

// decide inserts the tag at document offset pos and emits the held prefix up to upTo.
func (in *Injector) decide(pos, upTo int64) { in.decideWith(in.opt.Tag, pos, upTo) }

// decideWith is decide with the bytes to insert. Every insertion goes through here, so this
// is where a document whose bytes before pos may not read as the tokenizer read them (an ESC,
// Options.EscapesInert) is let through unchanged instead; the callers then find the injector
// no longer in phaseScan or phaseHead.
func (in *Injector) decideWith(tag []byte, pos, upTo int64) {
	if !in.opt.EscapesInert && bytes.IndexByte(in.rec.bytes(in.rec.base, pos), 0x1B) >= 0 {
		in.edits = in.edits[:0]
		in.passThrough(in.rec.base)
		return
	}
	i := 0
	for i < len(in.edits) && in.edits[i].start < pos {
		i++
	}
	in.edits = append(in.edits, edit{})
	copy(in.edits[i+1:], in.edits[i:])
	in.edits[i] = edit{start: pos, end: pos, repl: tag}
	cur := in.rec.base
	for _, e := range in.edits {
		in.out = append(in.out, in.rec.bytes(cur, e.start)...)
		in.out = append(in.out, e.repl...)
		cur = e.end
	}
	in.out = append(in.out, in.rec.bytes(cur, upTo)...)
	in.rec.discard(upTo)
	in.edits = in.edits[:0]
	in.injected = true
	in.phase = phaseHead
	in.staleWindow = true
	if in.sawBody {
		in.headOver = true
	}
}

// scanToken handles a token before the insertion point is known. Nothing is emitted; changes
// are recorded as edits over the held bytes.
func (in *Injector) scanToken(t *token) {
	if in.dropping {
		in.dropToken(t)
		return
	}
	if in.pending {
		in.lookAheadToken(t)
		return
	}
	if t.start >= charsetWindow && in.candidateFixed {
		// No <meta charset> inside the pre-scan window: the candidate stands.
		in.decide(in.candidate, t.start)
		in.headToken(t)
		return
	}
	switch t.kind {
	case kindInert:
		if complete(t.tt, in.rec.bytes(t.start, t.end)) {
			in.lastSafeEnd = t.end
		}
	case kindHTML:
		if !in.candidateFixed {
			in.candidate, in.haveCandidate = t.end, true
		}
		in.lastSafeEnd = t.end
	case kindHead:
		if !in.candidateFixed {
			in.candidate, in.haveCandidate, in.candidateFixed = t.end, true, true
		}
		in.lastSafeEnd = t.end
	case kindHeadElement:
		in.fixCandidate(t.start)
		in.lastSafeEnd = t.end
		policy, repl := in.rewriteMeta(t)
		if repl != nil {
			in.edits = append(in.edits, edit{start: t.start, end: t.end, repl: repl})
		}
		if t.cspContent >= 0 {
			in.notePolicy(policy)
		}
		if t.charsetMeta && t.start < charsetWindow {
			in.decideAfterCharsetMeta(t)
			return
		}
	case kindStale:
		in.dropping = true
		in.edits = append(in.edits, edit{start: t.start, end: t.end})
		in.lastSafeEnd = t.end
	case kindScript, kindBody, kindForeign:
		in.fixCandidate(t.start)
		if !in.opt.CharsetKnown && t.start < charsetWindow && t.kind != kindForeign {
			// The tag goes at the candidate, but a <meta charset> may still follow within the
			// pre-scan window: hold on until it shows up or the window is passed.
			in.pending, in.pendingPos = true, in.candidate
			in.lookAheadToken(t)
			return
		}
		in.decide(in.candidate, t.start)
		in.headToken(t)
		return
	}
	if t.end >= charsetWindow && in.candidateFixed {
		in.decide(in.candidate, t.end)
	}
}

// lookAheadToken handles a token met while the insertion point is known but a <meta charset>
// may still come: the token is held (CSP metas and stale bootstraps are handled as during the
// scan) until a declaration is found or the pre-scan window is passed.
func (in *Injector) lookAheadToken(t *token) {
	if t.start >= charsetWindow {
		in.pending = false
		in.decide(in.pendingPos, t.start)
		in.headToken(t)
		return
	}
	switch t.kind {
	case kindBody, kindForeign:
		in.sawBody = true
	case kindStale:
		in.dropping = true
		in.edits = append(in.edits, edit{start: t.start, end: t.end})
	case kindHeadElement:
		if in.sawBody {
			// A CSP meta in the body is ignored by browsers; a charset meta still counts for
			// the byte-based pre-scan.
		} else if _, repl := in.rewriteMeta(t); repl != nil {
			in.edits = append(in.edits, edit{start: t.start, end: t.end, repl: repl})
		}
		if t.charsetMeta {
			in.pending = false
			in.decideWith(in.tagWithCharset(t), in.pendingPos, t.end)
			return
		}
	}
	if complete(t.tt, in.rec.bytes(t.start, t.end)) {
		in.lastSafeEnd = t.end
	}
	if t.end >= charsetWindow {
		in.pending = false
		in.decide(in.pendingPos, t.end)
	}
}

// tagWithCharset is the tag with a copy of the charset meta t's declaration in front of it,
// for an insertion point before t that the tag's bytes could push t out of the pre-scan
// window from; the tag alone when the label cannot be copied.
func (in *Injector) tagWithCharset(t *token) []byte {
	if label := metaCharsetLabel(t.attrs); label != "" && len(in.opt.Tag) > 0 {
		return append([]byte(`<meta charset="`+label+`">`), in.opt.Tag...)
	}
	return in.opt.Tag
}

// notePolicy records what the policy of a CSP meta met while scanning means for the tag.
func (in *Injector) notePolicy(policy string) {
	if in.boot == nil {
		b := parseBootTag(in.opt.Tag)
		in.boot = &b
	}
	in.metaVerdict = max(in.metaVerdict, policyVerdict(policy, *in.boot))
}

// decideAfterCharsetMeta decides at the charset meta t, which starts in the pre-scan window
// with no script or body content before it. Every CSP meta scanned so far comes before that
// insertion point, so its policy is in force when the tag runs: if one blocks the tag, the tag
// goes at the candidate point instead, in front of all of them (with a copy of the charset
// declaration unless the encoding is known); if one allows no script at all, nothing is
// inserted and the held bytes go out unchanged, edits included.
func (in *Injector) decideAfterCharsetMeta(t *token) {
	switch in.metaVerdict {
	case tagForbidden:
		in.edits = in.edits[:0]
		in.passThrough(in.rec.base)
	case tagBlocked:
		tag := in.opt.Tag
		if !in.opt.CharsetKnown {
			tag = in.tagWithCharset(t)
		}
		in.decideWith(tag, in.candidate, t.end)
	default:
		in.decide(t.end, t.end)
	}
}

// metaCharsetLabel is the encoding label a charset meta declares, if it is a plain label that
// can be copied into markup as it is.
func metaCharsetLabel(attrs []attr) string {
	label, ok := attrValue(attrs, "charset")
	if !ok {
		content, _ := attrValue(attrs, "content")
		label = charsetFromContent(content)
	}
	label = strings.Trim(label, " \t\n\f\r")
	if label == "" || len(label) > 40 {
		return ""
	}
	for i := 0; i < len(label); i++ {
		c := label[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return ""
		}
	}
	return label
}

// fixCandidate settles the candidate when a token other than doctype, comment, whitespace,
// <html> or <head> comes: it stays just after <html> if that was seen, else it is pos, the
// start of that token.
func (in *Injector) fixCandidate(pos int64) {
	if !in.candidateFixed {
		if !in.haveCandidate {
			in.candidate, in.haveCandidate = pos, true
		}
		in.candidateFixed = true
	}
}

// dropToken drops the text and end tag of a stale bootstrap.
func (in *Injector) dropToken(t *token) {
	if in.phase == phaseScan {
		in.edits = append(in.edits, edit{start: t.start, end: t.end})
		in.lastSafeEnd = t.end
	} else {
		in.rec.discard(t.end)
	}
	if t.tt == html.EndTagToken {
		// In script data the tokenizer only ends the text at </script>.
		in.dropping = false
		in.staleWindow = false
	}
}

// headToken handles a token after the insertion point: it is emitted (or rewritten, or
// dropped) right away.
func (in *Injector) headToken(t *token) {
	if in.phase != phaseHead {
		return // the decision let the document through unchanged (decideWith)
	}
	if in.dropping {
		in.dropToken(t)
		return
	}
	if in.staleWindow && t.kind != kindInert {
		in.staleWindow = false
		if t.kind == kindStale {
			in.dropping = true
			in.rec.discard(t.end)
			return
		}
	}
	switch t.kind {
	case kindBody, kindForeign:
		in.headOver = true
	case kindHeadElement:
		if _, repl := in.rewriteMeta(t); repl != nil {
			in.out = append(in.out, repl...)
			in.rec.discard(t.end)
			return
		}
	}
	in.out = append(in.out, in.rec.bytes(t.start, t.end)...)
	in.rec.discard(t.end)
}

// rawTextElements are the start tags after which the x/net tokenizer reads raw text up to the
// matching end tag (as a browser with scripting enabled does).
var rawTextElements = map[string]bool{
	"iframe": true, "noembed": true, "noframes": true, "noscript": true, "plaintext": true,
	"script": true, "style": true, "textarea": true, "title": true, "xmp": true,
}

// headElements may appear before or in <head> without starting the body.
var headElements = map[string]bool{
	"base": true, "basefont": true, "bgsound": true, "link": true, "meta": true,
	"noframes": true, "noscript": true, "style": true, "template": true, "title": true,
}

// classify reads the current token's name and the attributes it needs, and updates the
// raw-text and template state.
func (in *Injector) classify(tt html.TokenType, start, end int64) token {
	t := token{tt: tt, start: start, end: end, cspContent: -1}
	wasRaw := in.rawText
	in.rawText = false
	switch tt {
	case html.TextToken:
		if wasRaw || in.templateDepth > 0 || isHTMLSpace(in.rec.bytes(start, end)) {
			return t
		}
		t.kind = kindBody
	case html.StartTagToken, html.SelfClosingTagToken:
		t.name = in.tagName(in.rec.bytes(start, end))
		in.rawText = rawTextElements[t.name]
		if in.templateDepth > 0 {
			switch t.name {
			case "template":
				in.templateDepth++
			case "svg", "math":
				t.kind = kindForeign
			}
			return t
		}
		if t.name == "meta" || t.name == "script" {
			// TagAttr returns a nil key for a tag without attributes: the tokenizer keeps no
			// attribute with an empty name.
			for more := true; more; {
				var k, v []byte
				if k, v, more = in.z.TagAttr(); k == nil && !more {
					break
				}
				t.attrs = append(t.attrs, attr{string(k), string(v)})
			}
		}
		switch {
		case t.name == "html":
			t.kind = kindHTML
		case t.name == "head":
			t.kind = kindHead
		case t.name == "script":
			t.kind = kindScript
			if _, ok := attrValue(t.attrs, "data-remixproxy"); ok {
				t.kind = kindStale
			}
		case t.name == "template":
			in.templateDepth++
			t.kind = kindHeadElement
		case t.name == "meta":
			t.kind = kindHeadElement
			t.charsetMeta = isCharsetMeta(t.attrs)
			if in.opt.MetaCSP != nil {
				t.cspContent = cspMetaContent(t.attrs)
			}
		case headElements[t.name]:
			t.kind = kindHeadElement
		default:
			t.kind = kindBody
		}
	case html.EndTagToken:
		t.name = in.tagName(in.rec.bytes(start, end))
		if in.templateDepth > 0 {
			if t.name == "template" {
				in.templateDepth--
			}
			return t
		}
		switch t.name {
		case "head", "body", "html", "br":
			// These end the head; any other end tag before the body is ignored by the parser.
			t.kind = kindBody
		}
	}
	return t
}

// complete reports whether a comment or doctype token was terminated (rather than cut off by
// the end of input, in which case it swallows anything appended after it).
func complete(tt html.TokenType, raw []byte) bool {
	if tt != html.CommentToken && tt != html.DoctypeToken {
		return true
	}
	if bytes.HasPrefix(raw, []byte("<!--")) {
		s := string(raw)
		return s == "<!-->" || s == "<!--->" ||
			len(s) >= 7 && strings.HasSuffix(s, "-->") || len(s) >= 8 && strings.HasSuffix(s, "--!>")
	}
	return len(raw) > 0 && raw[len(raw)-1] == '>'
}

func isHTMLSpace(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\f', '\r':
		default:
			return false
		}
	}
	return true
}

func attrValue(attrs []attr, key string) (string, bool) {
	for _, a := range attrs {
		if a.key == key {
			return a.val, true
		}
	}
	return "", false
}

// isCharsetMeta reports whether a meta declares a character encoding the way the HTML
// encoding pre-scan reads it: a non-empty charset attribute, or http-equiv=content-type with
// a charset= in its content.
func isCharsetMeta(attrs []attr) bool {
	if v, ok := attrValue(attrs, "charset"); ok {
		return strings.Trim(v, " \t\n\f\r") != ""
	}
	he, ok := attrValue(attrs, "http-equiv")
	if !ok || !strings.EqualFold(strings.Trim(he, " \t\n\f\r"), "content-type") {
		return false
	}
	content, _ := attrValue(attrs, "content")
	return charsetFromContent(content) != ""
}

// charsetFromContent is the HTML "algorithm for extracting a character encoding from a meta
// element", returning the label (not checked against the encoding list).
func charsetFromContent(s string) string {
	lower := strings.ToLower(s)
	pos := 0
	for {
		i := strings.Index(lower[pos:], "charset")
		if i < 0 {
			return ""
		}
		pos += i + len("charset")
		for pos < len(s) && isSpaceByte(s[pos]) {
			pos++
		}
		if pos < len(s) && s[pos] == '=' {
			break
		}
	}
	pos++
	for pos < len(s) && isSpaceByte(s[pos]) {
		pos++
	}
	if pos >= len(s) {
		return ""
	}
	if q := s[pos]; q == '"' || q == '\'' {
		end := strings.IndexByte(s[pos+1:], q)
		if end < 0 {
			return ""
		}
		return s[pos+1 : pos+1+end]
	}
	end := pos
	for end < len(s) && !isSpaceByte(s[end]) && s[end] != ';' {
		end++
	}
	return s[pos:end]
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// cspMetaContent returns the index of the content attribute of an enforced CSP meta, or -1.
func cspMetaContent(attrs []attr) int {
	he, ok := attrValue(attrs, "http-equiv")
	if !ok || !strings.EqualFold(strings.Trim(he, " \t\n\f\r"), "content-security-policy") {
		return -1
	}
	for i, a := range attrs {
		if a.key == "content" {
			return i
		}
	}
	return -1
}

// rewriteMeta returns the policy of a CSP meta as it goes out, and the re-serialized meta when
// MetaCSP changes the policy, else nil.
func (in *Injector) rewriteMeta(t *token) (string, []byte) {
	if t.cspContent < 0 {
		return "", nil
	}
	old := t.attrs[t.cspContent].val
	repl := in.opt.MetaCSP(old)
	if repl == old {
		return old, nil
	}
	var b []byte
	b = append(b, "<meta"...)
	for i, a := range t.attrs {
		v := a.val
		if i == t.cspContent {
			v = repl
		}
		b = append(b, ' ')
		b = append(b, a.key...)
		b = append(b, `="`...)
		b = appendAttrEscaped(b, v)
		b = append(b, '"')
	}
	if t.tt == html.SelfClosingTagToken {
		b = append(b, " />"...)
	} else {
		b = append(b, '>')
	}
	return repl, b
}

// appendAttrEscaped escapes a value for a double-quoted attribute.
func appendAttrEscaped(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '&':
			b = append(b, "&amp;"...)
		case '"':
			b = append(b, "&quot;"...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// ScriptHash returns the CSP hash-source for an inline script's text: `'sha256-<base64>'`.
// script is the element's text exactly as between <script …> and </script>.
func ScriptHash(script []byte) string {
	sum := sha256.Sum256(script)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// recorder sits between src and the tokenizer. It keeps a copy of every byte it hands out
// until the injector has emitted it, because the tokenizer buffers input internally (the bytes
// it has read but not yet returned as tokens are recorder.bytes(consumed, end())) and rewrites
// its buffer in place (lower-casing names, unescaping attributes), so Raw cannot be trusted
// once a token has been looked at. It also enforces the prefix cap and holds back src errors
// until the bytes before them have been handed out.
type recorder struct {
	src   io.Reader
	buf   []byte // buf[off:] holds the document bytes [base, end())
	off   int
	base  int64
	pos   int64    // next document offset to hand to the tokenizer
	limit int      // cap on the recorded length while tokenizing; 0 means none
	err   error    // error from src, returned once the recorded bytes are handed out
	chunk [16]byte // fill's reads (a local array would escape to the heap through src.Read)
}

func (r *recorder) len() int   { return len(r.buf) - r.off }
func (r *recorder) end() int64 { return r.base + int64(r.len()) }

// bytes returns the recorded document bytes [from, to).
func (r *recorder) bytes(from, to int64) []byte {
	return r.buf[r.off+int(from-r.base) : r.off+int(to-r.base)]
}

// discard forgets the recorded bytes before document offset upTo.
func (r *recorder) discard(upTo int64) {
	r.off += int(upTo - r.base)
	r.base = upTo
	if r.off == len(r.buf) {
		r.buf, r.off = r.buf[:0], 0
	}
}

// record appends b, first moving the live bytes to the front when that makes room.
func (r *recorder) record(b []byte) {
	if r.off > 0 && cap(r.buf)-len(r.buf) < len(b) {
		n := copy(r.buf, r.buf[r.off:])
		r.buf, r.off = r.buf[:n], 0
	}
	r.buf = append(r.buf, b...)
}

// Read hands the tokenizer recorded bytes it has not had yet, then new bytes from src.
func (r *recorder) Read(p []byte) (int, error) {
	if r.pos < r.end() {
		n := copy(p, r.bytes(r.pos, r.end()))
		r.pos += int64(n)
		return n, nil
	}
	if r.err != nil {
		return 0, r.err
	}
	if r.limit > 0 {
		room := r.limit - r.len()
		if room <= 0 {
			return 0, errPrefixCap
		}
		if len(p) > room {
			p = p[:room]
		}
	}
	n, err := r.src.Read(p)
	r.record(p[:n])
	r.pos += int64(n)
	if err != nil {
		r.err = err
		if n == 0 {
			return 0, err
		}
	}
	return n, nil
}

// fill reads from src until n bytes are recorded or src fails. It never reads more than n
// bytes, so the prefix cap holds.
func (r *recorder) fill(n int) {
	chunk := r.chunk[:]
	for empty := 0; r.len() < n && r.err == nil; {
		m, err := r.src.Read(chunk[:min(n-r.len(), len(chunk))])
		r.record(chunk[:m])
		r.err = err
		if m > 0 {
			empty = 0
		} else if empty++; empty >= 100 && err == nil {
			r.err = io.ErrNoProgress
		}
	}
}
