package remixlet

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/sandbox"
)

// BenchmarkSetHTMLOffOriginAddresses is the send rule's cost on a setHTML that writes many
// addresses off the page's origin: each asks where the remixlet may send (sendhosts.go).
func BenchmarkSetHTMLOffOriginAddresses(b *testing.B) {
	m, _ := sandbox.ParseManifest([]byte(`{"name": "s", "description": "test", "api": 1, "matches": ["https://www.example.com/*", "https://*.img.example.com/*", "https://example-cdn.com/*"], "permissions": [{"name": "fetch:api.partner.test", "reason": "prices"}]}`))
	page, _ := url.Parse("https://www.example.com/list")
	var html strings.Builder
	for i := 0; i < 500; i++ {
		html.WriteString(`<a href="https://x.img.example.com/p">a</a><a href="https://elsewhere.test/q">b</a>`)
	}
	args, _ := json.Marshal([]any{map[string]int{"$h": 1}, html.String()})
	for b.Loop() {
		if _, err := checkDOMCall(domPolicy{page: page, manifest: m}, "setHTML", args); err != nil {
			b.Fatal(err)
		}
	}
}
