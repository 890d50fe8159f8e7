package redact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	xhtml "golang.org/x/net/html"
)

// corpusPagesDir is the folder of real-world page captures (../shared/corpus beside the
// repository, see its README): REMIXPROXY_CORPUS's pages when set (scripts/test.sh sets it),
// else from this package in a checkout, or one level further up from a worktree.
func corpusPagesDir() string {
	if dir := os.Getenv("REMIXPROXY_CORPUS"); dir != "" {
		return filepath.Join(dir, "pages")
	}
	for _, up := range []string{"../../../..", "../../../../.."} {
		p := filepath.Join(up, "shared", "corpus", "pages")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.Join("../../../..", "shared", "corpus", "pages")
}

// corpusKeys are the keys the rule finds in the corpus, by page: each a real credential of the
// format (explained), so ordinary text loses nothing.
var corpusKeys = map[string]int{
	// A Google Maps key in the page's settings script, google_public_api_browser_key: a browser
	// key, public by design (Google restricts it to the site's addresses). The format cannot
	// tell it from a server key a cloud console shows; a tool result loses nothing by it.
	"buzzfeed-1.html": 1,
}

// TestRedactKeysCorpus: over every page of the corpus of real pages, as raw HTML (its text,
// attributes, scripts and styles), as one JSON string (as a tool result carries text, the
// string's end a cut) and as a JSON list of its texts and attribute values (each one's end a
// cut), the key rule redacts only what corpusKeys lists.
func TestRedactKeysCorpus(t *testing.T) {
	dir := corpusPagesDir()
	files, _ := filepath.Glob(filepath.Join(dir, "*.html"))
	if len(files) == 0 {
		if os.Getenv("REMIXPROXY_REQUIRE_CORPUS") != "" {
			t.Fatalf("corpus of real pages required (REMIXPROXY_REQUIRE_CORPUS) but not found at %s", dir)
		}
		t.Skipf("corpus of real pages not found at %s (set REMIXPROXY_CORPUS to the shared corpus folder to run this test; make test does)", dir)
	}
	const m = "[redacted: key]"
	r := New(nil)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("reading corpus page: %v", err)
		}
		name := filepath.Base(f)
		page := string(b)
		want := corpusKeys[name]
		raw := redactKeys(page)
		if got := strings.Count(raw, m) - strings.Count(page, m); got != want {
			t.Errorf("%s (raw): %d keys redacted, want %d:%s", name, got, want, redactedContext(page, raw))
		}
		j, _ := json.Marshal(map[string]string{"text": page})
		out := r.RedactPage(string(j))
		if got := strings.Count(out, m); got != want {
			t.Errorf("%s (JSON): %d keys redacted, want %d:%s", name, got, want, redactedContext(string(j), out))
		}
		// Each text and attribute value on its own, as query and outline show them: the end of
		// each is a cut, where the first characters of a key count too (keys.go).
		parts := pageParts(page)
		js, _ := json.Marshal(parts)
		out = r.RedactPage(string(js))
		if got := strings.Count(out, m); got != want {
			t.Errorf("%s (parts): %d keys redacted, want %d:%s", name, got, want, redactedContext(string(js), out))
		}
	}
}

// pageParts are the texts and attribute values of an HTML page, in order, as the page tools
// show them one by one.
func pageParts(page string) []string {
	var out []string
	z := xhtml.NewTokenizer(strings.NewReader(page))
	for {
		switch z.Next() {
		case xhtml.ErrorToken:
			return out
		case xhtml.TextToken:
			if t := strings.TrimSpace(string(z.Text())); t != "" {
				out = append(out, t)
			}
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			for _, a := range z.Token().Attr {
				out = append(out, a.Val)
			}
		}
	}
}

// redactedContext shows where the markers are in out, with their surroundings.
func redactedContext(in, out string) string {
	var b strings.Builder
	for off := 0; ; {
		i := strings.Index(out[off:], "[redacted: key]")
		if i < 0 || b.Len() > 4000 {
			return b.String()
		}
		i += off
		b.WriteString("\n  …" + out[max(0, i-80):min(len(out), i+95)] + "…")
		off = i + 1
	}
}
