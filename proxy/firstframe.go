package proxy

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/panel"
)

// Stylesheets in the first frame: the bootstrap tag carries the checked stylesheets of the
// remixlets that match the page (remixlet.Runner.FirstFrame: the runner's own matching and
// check), in its data-remixproxy-sheets attribute, which the page agent reads (and removes, with
// the tag) before any page script runs and adopts as constructable sheets before the first paint.
// The page cannot change the attribute first: the tag is the first script of the document, and
// it is parsed from the proxy's bytes.

// firstFrame is what the bootstrap tag of a page from pageURL carries for its remixlets: the
// data-remixproxy-sheets attribute's value, "" when no remixlet stylesheet goes into it, and
// whether remixlets run on the page (then the tag's data-remixproxy-now: the page agent
// connects at once, rather than after the page's load).
func (s *Server) firstFrame(ctx context.Context, pageURL *url.URL) (sheets string, run bool) {
	if s.remixlets == nil {
		return "", false
	}
	list, run := s.remixlets.FirstFrame(ctx, pageURL.String())
	return firstSheetsAttr(list), run
}

// firstSheetsAttr writes sheets as the attribute's value: JSON, ASCII only (every other
// character as a \u escape, so the inserted bytes are ASCII whatever the page's charset), with
// the one character that could end a double-quoted attribute written as &quot; (JSON already
// writes <, > and & as \u escapes).
func firstSheetsAttr(sheets []panel.FirstSheet) string {
	if len(sheets) == 0 {
		return ""
	}
	raw, err := json.Marshal(sheets)
	if err != nil {
		return "" // strings and numbers only: cannot fail
	}
	var b strings.Builder
	b.Grow(len(raw) + len(raw)/8)
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < utf8.RuneSelf {
			if c == '"' {
				b.WriteString("&quot;")
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(raw[i:])
		i += n
		if r > 0xFFFF {
			r -= 0x10000
			writeU(&b, 0xD800+(r>>10))
			writeU(&b, 0xDC00+(r&0x3FF))
		} else {
			writeU(&b, r)
		}
	}
	return b.String()
}

// writeU writes the JSON escape \uXXXX of the UTF-16 unit u.
func writeU(b *strings.Builder, u rune) {
	const hex = "0123456789abcdef"
	b.WriteString(`\u`)
	b.WriteByte(hex[(u>>12)&0xF])
	b.WriteByte(hex[(u>>8)&0xF])
	b.WriteByte(hex[(u>>4)&0xF])
	b.WriteByte(hex[u&0xF])
}
