package panel

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"github.com/tdewolff/minify/v2"
	"github.com/tdewolff/minify/v2/js"
	"io/fs"
	"unicode/utf16"
	"unicode/utf8"
)

// agentJS is agentSource minified once at start: the page agent is inlined into every page, and
// its documented source is two and a half times the size of what runs. tdewolff/minify is the
// minifier of tdewolff/parse, which the project already uses for CSS; a failure (only an edit to
// a page agent file that the tests would also catch) falls back to the source.
var agentJS = minifyAgent(agentSource)

func minifyAgent(src []byte) []byte {
	var out bytes.Buffer
	if err := js.Minify(minify.New(), &out, bytes.NewReader(src), nil); err != nil {
		return src
	}
	return asciiEscape(out.Bytes())
}

// asciiEscape writes every non-ASCII character as a \uXXXX escape (the minifier turns escapes
// back into UTF-8). The page agent's files are ASCII, so non-ASCII comes only from escapes inside
// string literals, where the escape means the same; the inlined script must stay ASCII whatever
// the page's charset.
func asciiEscape(b []byte) []byte {
	var out bytes.Buffer
	for _, r := range string(b) {
		switch {
		case r < utf8.RuneSelf:
			out.WriteByte(byte(r))
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&out, "\\u%04x", r)
		}
	}
	return out.Bytes()
}

// static holds the files served on https://remix.proxy/. The list is an allow-list on purpose:
// a file added to panel/static is not served until it is named here (a test checks that nothing
// is left out). The page agent's files are in panel/pageagent, never served.
//
//go:embed static/panel.html static/panel.js static/panel.css static/confirm.html static/confirm.js static/manager_arm.js
var static embed.FS

// files is static rooted at static/.
var files = mustSub(static, "static")

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		panic("panel: " + err.Error()) // only a typo in the directory name above gets here
	}
	return sub
}

// Bootstrap returns the page-agent script (panel/pageagent, see pageagent.go) that the rewriter inlines as
// the first script in <head>:
//
//	<script data-remixproxy="TOKEN" nonce="...">BOOTSTRAP</script>
//
// The text is constant, ASCII only, and contains neither "</script" nor "<!--", so it can be
// inlined without escaping and never moves a <meta charset> out of the first 1024 bytes by more
// than its own length. Each call returns a fresh copy that the caller may keep or modify.
//
// The script reads TOKEN, removes its own element and keeps the token in a closure, but a page
// can still learn a token it can fetch: inject (with a token) only into responses to top-level
// navigations (Sec-Fetch-Dest: document), never into what a page script fetches, and accept
// each token on AgentSocketPath once, from the page's own Origin.
func Bootstrap() []byte {
	return bytes.Clone(agentJS)
}

// BootstrapHash returns the CSP source expression for the inlined Bootstrap text,
// "'sha256-BASE64'", for policies that allow scripts by hash. It matches only when the script
// element's content is exactly Bootstrap().
func BootstrapHash() string {
	sum := sha256.Sum256(agentJS)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// Files returns the static files the proxy serves on https://remix.proxy/:
//
//	panel.html  served at /panel (the panel iframe)
//	panel.js    served at /panel.js
//	panel.css   served at /panel.css
//
// All three need a CSP that allows same-origin scripts, styles and connections to remix.proxy
// and nothing inline: "default-src 'self'; connect-src 'self' wss://remix.proxy ws://remix.proxy".
// The panel page may be framed only by the origin its address names (FrameOriginParam,
// proxy/panelorigin.go). The page agent is not among them (see Bootstrap). The certificate, status
// and error pages are self-contained and rendered by RenderCert, RenderStatus and RenderError.
func Files() fs.FS {
	return files
}
