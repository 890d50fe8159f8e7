package panel

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
)

// agentJS is the page agent. It is embedded on its own, not in static, so that Files never
// serves it: it only ever reaches a browser inlined by the rewriter.
//
//go:embed static/agent.js
var agentJS []byte

// static holds the files served on https://remix.proxy/. The list is an allow-list on purpose:
// a file added to panel/static is not served until it is named here (a test checks that nothing
// but agent.js is left out).
//
//go:embed static/panel.html static/panel.js static/panel.css
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

// Bootstrap returns the page-agent script (panel/static/agent.js) that the rewriter inlines as
// the first script in <head>:
//
//	<script data-remixproxy="TOKEN" nonce="...">BOOTSTRAP</script>
//
// The text is constant, ASCII only, and contains neither "</script" nor "<!--", so it can be
// inlined without escaping and never moves a <meta charset> out of the first 1024 bytes by more
// than its own length. Each call returns a fresh copy that the caller may keep or modify.
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
//	panel.html  served at /panel (the panel iframe), all three under PanelCSP
//	panel.js    served at /panel.js
//	panel.css   served at /panel.css
//
// The page agent is not among them (see Bootstrap). The certificate, status and error pages are
// self-contained and rendered by RenderCert, RenderStatus and RenderError.
func Files() fs.FS {
	return files
}
