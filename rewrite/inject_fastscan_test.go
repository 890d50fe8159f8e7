package rewrite

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// usualHeads are documents of the shape fastScan decides, and near misses it must leave to the
// tokenizer; fast says which fastScan should decide when read whole.
var usualHeads = []struct {
	doc  string
	fast bool
}{
	{"<!doctype html><html><head><meta charset=utf-8><title>small</title></head><body><p>x</p></body></html>", true},
	{"<!DOCTYPE html>\n<html lang=\"en\">\n  <head>\n    <meta charset=\"UTF-8\" />\n    <meta name=\"viewport\" content=\"width=device-width\">\n<title>t</title>", true},
	{"\xEF\xBB\xBF<!doctype html><HTML><HEAD><META CHARSET='utf-8'><script>a()</script>", true},
	{"<html><head><meta name=viewport content=width=device-width><meta charset=utf-8 ><body>x", true},
	{"<meta charset=utf-8/><p>x", true},
	{"<head><meta charset=\"\"><meta charset=utf-8>", false},                                     // an empty charset first
	{"<head><meta http-equiv=content-type content=\"text/html; charset=utf-8\"><title>x", false}, // http-equiv
	{"<head><meta http-equiv=content-security-policy content=\"script-src 'none'\"><meta charset=utf-8>", false},
	{"<head><meta http-equiv=content-security-policy content=\"default-src 'self'\"><meta charset=utf-8><title>x", false},
	{"<!-- c --><html><head><meta charset=utf-8>", false},
	{"<html><head><title>x</title><meta charset=utf-8>", false},
	{"<html><head><script>a()</script><meta charset=utf-8>", false},
	{"<html><head><meta charset=\"utf&#45;8\">", false},
	{"<html><head><meta charset=utf-8 charset=latin1>", true},
	{"<html><head><meta name=\"a\"content=b><meta charset=utf-8>", false},
	{"<html><head><meta\x00 charset=utf-8>", false},
	{"<html><head " + strings.Repeat("x ", 600) + "><meta charset=utf-8>", false}, // past the pre-scan window
	{"<html><head><meta charset=utf-8><script data-remixproxy=\"old\">stale()</script><title>t</title>", true},
	{"<html><head><meta charset=utf-8><meta http-equiv=content-security-policy content=\"script-src 'self'\"></head><body>", true},
	{"<html><head><meta charset=utf-8><noscript><meta http-equiv=content-security-policy content=\"x\"></noscript>", true},
	{"<!doctype html><html><head><meta charset=utf-8>", true},
	{"<!doctype html><html><head><meta charset=utf-8", false},
	{"<html><head><meta charset=utf-8>" + strings.Repeat("<link rel=stylesheet href=/a.css>", 200) + "<body>", true},
}

// injectOutput is the injector's whole output for doc under opt, read from src as feed makes it,
// with the fast scan or the tokenizer alone.
func injectOutput(doc string, opt Options, feed func(io.Reader) io.Reader, slowOnly bool) (string, bool, error) {
	in := NewInjector(feed(strings.NewReader(doc)), opt)
	in.slowOnly = slowOnly
	out, err := io.ReadAll(in)
	return string(out), in.Injected(), err
}

// feeds are the ways a document reaches the injector: whole, one byte at a time, in 7-byte and
// 100-byte pieces, and with its end reported together with its last bytes.
var feeds = map[string]func(io.Reader) io.Reader{
	"whole":     func(r io.Reader) io.Reader { return r },
	"one byte":  iotest.OneByteReader,
	"7 bytes":   func(r io.Reader) io.Reader { return chunkReader{r, 7} },
	"100 bytes": func(r io.Reader) io.Reader { return chunkReader{r, 100} },
	"data+EOF":  iotest.DataErrReader,
}

// someFeeds are two of feeds, for the corpus pages; wholeOnly is one, for the thousands of
// html5lib inputs (each short; TestInjectHTML5Lib compares each fed whole and byte by byte).
var (
	someFeeds = map[string]func(io.Reader) io.Reader{"whole": feeds["whole"], "7 bytes": feeds["7 bytes"]}
	wholeOnly = map[string]func(io.Reader) io.Reader{"whole": feeds["whole"]}
)

// fastAndSlowAgree fails where the injector with the fast scan and without it differ for doc.
func fastAndSlowAgree(t *testing.T, doc string, maxPrefix int, feeds map[string]func(io.Reader) io.Reader) {
	t.Helper()
	needs := CSPNeeds{ScriptHash: ScriptHash([]byte("boot()")), Connect: []string{"wss://remix.proxy"}}
	for _, opt := range []Options{
		{Tag: []byte(testTag), MaxPrefix: maxPrefix},
		{Tag: []byte(testTag), MaxPrefix: maxPrefix, CharsetKnown: true, MetaCSP: func(s string) string { return AdjustCSP(s, needs) }},
		{MaxPrefix: maxPrefix, MetaCSP: func(s string) string { return s }},
	} {
		for name, feed := range feeds {
			fast, fastInj, fastErr := injectOutput(doc, opt, feed, false)
			slow, slowInj, slowErr := injectOutput(doc, opt, feed, true)
			if fast != slow || fastInj != slowInj || (fastErr == nil) != (slowErr == nil) {
				t.Fatalf("%s, cap %d, MetaCSP %v, tag %v: with the fast scan %q (injected %v, %v); tokenizer alone %q (injected %v, %v)",
					name, maxPrefix, opt.MetaCSP != nil, len(opt.Tag) > 0, clipTest(fast), fastInj, fastErr, clipTest(slow), slowInj, slowErr)
			}
		}
	}
}

// TestInjectFastScanAgrees: the injector gives the same bytes with the fast scan as with the
// tokenizer alone — for the usual heads, their near misses, the html5lib tests and the corpus
// pages, fed whole, byte by byte and in pieces, under several caps and with or without MetaCSP
// and a tag — and the fast scan does decide the usual heads.
func TestInjectFastScanAgrees(t *testing.T) {
	for i, h := range usualHeads {
		t.Run(fmt.Sprintf("usual-%d", i), func(t *testing.T) {
			for _, maxPrefix := range []int{0, 16, 40, 48, 60, 1 << 10} {
				fastAndSlowAgree(t, h.doc, maxPrefix, feeds)
			}
			in := NewInjector(strings.NewReader(h.doc), Options{Tag: []byte(testTag)})
			in.begin()
			if decided := in.phase == phaseHead; decided != h.fast {
				t.Errorf("decided by the fast scan: %v, want %v (%q)", decided, h.fast, clipTest(h.doc))
			}
		})
	}
	t.Run("html5lib", func(t *testing.T) {
		for _, in := range loadHTML5Lib(t) {
			fastAndSlowAgree(t, in.data, 0, wholeOnly)
			fastAndSlowAgree(t, "<!doctype html><html><head><meta charset=utf-8>"+in.data, 0, wholeOnly)
		}
	})
	for name, page := range corpusPages(t) {
		t.Run(name, func(t *testing.T) {
			// The head decides; the rest of a page is copied as it is either way.
			fastAndSlowAgree(t, string(page[:min(len(page), 32<<10)]), 0, someFeeds)
			fastAndSlowAgree(t, string(page[:min(len(page), 4<<10)]), 0, feeds)
		})
	}
}

// FuzzInjectFastScan: with and without the fast scan the injector gives the same bytes for any
// document, cap and feeding.
func FuzzInjectFastScan(f *testing.F) {
	for _, h := range usualHeads {
		f.Add(h.doc, uint16(0))
		f.Add(h.doc, uint16(50))
	}
	f.Fuzz(func(t *testing.T, doc string, maxPrefix uint16) { fastAndSlowAgree(t, doc, int(maxPrefix), feeds) })
}
