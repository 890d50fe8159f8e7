package rewrite

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
)

const testTag = `<script data-remixproxy="T1" nonce="n">boot()</script>`

// charsetLabel finds the label of the first charset declaration in a test document.
var charsetLabel = regexp.MustCompile(`charset=["']?([A-Za-z0-9_-]+)`)

// copiedCharset matches the copy of a charset declaration the injector may put in front of the tag.
var copiedCharset = regexp.MustCompile(`<meta charset="[A-Za-z0-9._:-]+">` + regexp.QuoteMeta(testTag))

// removeInsertion takes out what the injector inserted: the tag, or the tag with a copy of a
// charset declaration in front of it when that is what makes the rest equal input. It returns
// the rest and how many tags it saw.
func removeInsertion(got, input string) (string, int) {
	n := strings.Count(got, testTag)
	rest := strings.Replace(got, testTag, "", 1)
	if rest == input {
		return rest, n
	}
	if loc := copiedCharset.FindStringIndex(got); loc != nil {
		return got[:loc[0]] + got[loc[1]:], n
	}
	return rest, n
}

// readAll drains an injector, failing the test on an error.
func readAll(t *testing.T, in *Injector) string {
	t.Helper()
	out, err := io.ReadAll(in)
	if err != nil {
		t.Fatalf("reading injector: got error %v, want none", err)
	}
	return string(out)
}

// readers wraps src the ways a network body can arrive.
var readers = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"one-byte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"data-err", iotest.DataErrReader},
	{"one-byte-data-err", func(r io.Reader) io.Reader { return iotest.DataErrReader(iotest.OneByteReader(r)) }},
}

// pad returns an HTML comment that is n bytes long.
func pad(n int) string {
	return "<!--" + strings.Repeat("x", n-7) + "-->"
}

func TestInjectInsertionPoint(t *testing.T) {
	// In marked, "|" is where the tag must go; the input is marked without it. A case with no
	// "|" must come out unchanged and not injected.
	tests := []struct {
		name   string
		marked string
	}{
		{"doctype html head", `<!DOCTYPE html><html><head>|<title>x</title></head><body></body></html>`},
		{"comment before doctype", `<!-- c --><!DOCTYPE html><html><head>|</head>`},
		{"comment between html and head", "<!DOCTYPE html><html>\n<!-- c -->\n<head>|\n<title>x</title>"},
		{"utf-8 bom stays first", "\xEF\xBB\xBF<!DOCTYPE html><head>|<title>x</title>"},
		{"utf-8 bom then text", "\xEF\xBB\xBF|hello"},
		{"utf-8 bom only", "\xEF\xBB\xBF|"},
		{"meta charset", `<!DOCTYPE html><html><head><meta charset="utf-8">|<title>x</title><script src=a.js></script>`},
		{"meta charset after title link base", `<head><title>x</title><link rel=stylesheet href=a.css><base href="/"><meta charset=utf-8>|<script></script>`},
		{"meta charset after style", `<head><style>p{}</style><meta charset=utf-8>|<script></script>`},
		// A declaration after a script stays in the pre-scan window only as a copy in front of the tag (^).
		{"meta charset after script", `<head>^<script>1</script><meta charset=utf-8>`},
		{"meta charset after body content", `<head>^<p>x<meta charset=utf-8>`},
		{"http-equiv charset after script", `<head>^<script>1</script><meta http-equiv=Content-Type content="text/html; charset=Shift_JIS">`},
		{"hostile charset label not copied", `<head>|<script>1</script><meta charset="x&quot;><script>">`},
		{"meta charset after script past the window", `<head>|<script>` + strings.Repeat("a", 1100) + `</script><meta charset=utf-8>`},
		{"meta charset before head", `<html><meta charset=utf-8>|<head><title>x</title>`},
		{"meta charset self-closing uppercase", `<HEAD><META CHARSET="UTF-8"/>|<TITLE>x</TITLE>`},
		{"meta charset empty value is not one", `<head>|<meta charset=""><script></script>`},
		{"first meta charset wins", `<head><meta charset=utf-8>|<meta charset=latin1><script></script>`},
		{"http-equiv content-type", `<head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">|<title>x</title>`},
		{"http-equiv content-type quoted charset", `<head><meta http-equiv=content-type content='text/html;charset = "utf-8"'>|<script></script>`},
		{"http-equiv content-type without charset", `<head>|<meta http-equiv=content-type content="text/html"><script></script>`},
		{"meta charset starting inside 1024 bytes", "<head>" + pad(1000) + "<meta charset=utf-8>|<script></script>"},
		{"meta charset past 1024 bytes", "<head>|" + pad(1100) + "<meta charset=utf-8><script></script>"},
		{"meta charset past 1024 in title", "<head>|<title>" + strings.Repeat("t", 1100) + "</title><meta charset=utf-8>"},
		{"head past 1024 bytes", pad(1100) + "\n<html><head>|<title>x</title><meta charset=utf-8>"},
		{"html past 1024 then head", pad(1100) + "<html>\n<head>|<title>x</title>"},
		{"element past 1024 bytes without head", pad(1100) + "|<p>x"},
		{"missing head", `<!DOCTYPE html><html>|<title>x</title><body>`},
		{"missing head with whitespace", "<!DOCTYPE html><html>|\n  <title>x</title><body>"},
		{"missing html", `<!DOCTYPE html><head>|<title>x</title>`},
		{"missing html and head", `<!DOCTYPE html>|<title>x</title><p>hi`},
		{"head with attributes", `<html lang=en><head profile="a>b" data-x='>'>|<title>x</title>`},
		{"attribute containing >", `<html><head><meta name="x" content="a>b<script>"><meta charset=utf-8>|<script></script>`},
		{"script first", `|<script>alert(1)</script><p>x`},
		{"script first after doctype", `<!DOCTYPE html>|<script>alert(1)</script>`},
		{"script with data attribute not ours", `<head>|<script data-remixproxyx="1"></script>`},
		{"body first", `<!DOCTYPE html><html>|<body><p>x`},
		{"body attributes", `<!DOCTYPE html>|<body onload="go()"><p>x`},
		{"text first", `|hello <b>world</b>`},
		{"whitespace then text", "| \nx"}, // one text token: the tag goes before it
		{"frameset", `<html><head>|</head><frameset><frame src=a></frameset>`},
		{"end head first", `<html>|</head><title>x</title>`},
		{"ignored end tag before head", `<html></p><head>|<title>x</title>`},
		{"br end tag", `<html>|</br>`},
		{"uppercase tags", `<!DOCTYPE HTML><HTML><HEAD><META CHARSET=UTF-8>|<TITLE>x</TITLE><SCRIPT>s()</SCRIPT>`},
		{"mixed case head", `<Html><HeAd>|<Script>s()</Script>`},
		{"head inside comment", `<!DOCTYPE html><!-- <head> <meta charset=utf-8> --><html><head>|<script></script>`},
		{"head inside script", `|<script>var s = "<head><meta charset=utf-8>";</script><head>`},
		{"meta in script in head", `<head>|<script>document.write("<meta charset=utf-8>")</script>`},
		{"script data escaped comment", `<head>^<script><!--<script></script>--></script><meta charset=utf-8>`},
		{"head inside title", `<head>|<title><head><meta charset=utf-8></title><script></script>`},
		{"meta charset inside noscript", `<head>|<noscript><meta charset=utf-8></noscript><script></script>`},
		{"noscript in head passes", `<head><noscript><link rel=stylesheet href=n.css></noscript><meta charset=utf-8>|<script></script>`},
		// The byte-based pre-scan sees this meta too (it skips "<!" only to the next '>').
		{"cdata in svg", `<!DOCTYPE html><html><head>^</head><body><svg><![CDATA[<head><meta charset=utf-8>]]></svg>`},
		{"svg first", `|<svg><script>x()</script></svg>`},
		{"math first", `<!DOCTYPE html>|<math><mi>x</mi></math>`},
		{"template in head passes", `<head><template><script>a()</script><div></div></template><meta charset=utf-8>|<script></script>`},
		{"template with svg cdata", `<head>|<template><svg><![CDATA[</template>]]></svg></template><meta charset=utf-8>`},
		{"template without head", `<!DOCTYPE html><template><p>x</p></template><meta charset=utf-8>|`},
		{"processing instruction", `<?xml version="1.0"?><!DOCTYPE html><html><head>|<title>x</title>`},
		{"doctype only", `<!DOCTYPE html>|`},
		{"comments and whitespace only", "<!-- a -->\n<!-- b -->\n|"},
		{"whitespace only", " \n\t|"},
		{"unterminated comment", `<!DOCTYPE html>|<!-- never closed`},
		{"unterminated comment after dashes", `|<!-- x --`},
		{"unterminated doctype", `|<!DOCTYPE html`},
		{"unfinished tag at end", `<!DOCTYPE html>|<htm`},
		{"unfinished meta at end", `<head>|<meta charset=utf-8`},
		{"html only", `<html>|`},
		{"head only", `<html><head>|`},
		{"empty", ``},
		{"utf-16 be bom", "\xFE\xFF\x00<\x00h\x00e\x00a\x00d\x00>"},
		{"utf-16 le bom", "\xFF\xFE<\x00h\x00e\x00a\x00d\x00>\x00"},
		// JSON served as text/html is left alone (no "|"): there is no document to add to.
		{"json object", `{"a": "<head>"}`},
		{"json array after whitespace", " \n\t[1, 2, {\"b\": \"<script>\"}]"},
		{"json after bom", "\xEF\xBB\xBF{\"a\":1}"},
		{"json after whitespace within the sniff window", strings.Repeat(" ", 400) + `{"a":1}`},
		{"json past the sniff window is text", "|" + strings.Repeat(" ", jsonSniffLimit+10) + `{"a":1}`},
		{"brace in text is text", `|x {"a":1}`},
	}
	for _, tc := range tests {
		input := strings.NewReplacer("|", "", "^", "").Replace(tc.marked)
		want := tc.marked
		if m := charsetLabel.FindStringSubmatch(tc.marked); m != nil {
			want = strings.Replace(want, "^", `<meta charset="`+m[1]+`">`+testTag, 1)
		}
		want = strings.Replace(want, "|", testTag, 1)
		wantInjected := strings.ContainsAny(tc.marked, "|^")
		for _, r := range readers {
			t.Run(tc.name+"/"+r.name, func(t *testing.T) {
				in := NewInjector(r.wrap(strings.NewReader(input)), Options{Tag: []byte(testTag)})
				got := readAll(t, in)
				if got != want {
					t.Errorf("output:\ngot  %q\nwant %q", got, want)
				}
				if in.Injected() != wantInjected {
					t.Errorf("Injected() = %v, want %v", in.Injected(), wantInjected)
				}
			})
		}
	}
}

func TestInjectStaleBootstrap(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{
			"stale after head",
			`<!DOCTYPE html><html><head><script data-remixproxy="OLD">old()</script><title>x</title>`,
			`<!DOCTYPE html><html><head>` + testTag + `<title>x</title>`,
		},
		{
			"stale after meta charset",
			`<head><meta charset=utf-8><script data-remixproxy="OLD">old()</script><script>page()</script>`,
			`<head><meta charset=utf-8>` + testTag + `<script>page()</script>`,
		},
		{
			"stale after meta charset and whitespace",
			"<head><meta charset=utf-8>\n<script data-remixproxy>old()</script>\n<title>x</title>",
			"<head><meta charset=utf-8>" + testTag + "\n\n<title>x</title>",
		},
		{
			"stale before meta charset",
			`<head><script data-remixproxy="OLD"></script><meta charset=utf-8><title>x</title>`,
			`<head><meta charset=utf-8>` + testTag + `<title>x</title>`,
		},
		{
			"stale right after head past 1024 bytes",
			pad(1100) + `<html><head><script data-remixproxy="OLD">old()</script><title>x</title>`,
			pad(1100) + `<html><head>` + testTag + `<title>x</title>`,
		},
		{
			"stale first in document",
			`<script data-remixproxy=1>old()</script><!DOCTYPE html><html><head><title>x</title>`,
			`<!DOCTYPE html><html><head>` + testTag + `<title>x</title>`,
		},
		{
			"stale uppercase",
			`<HEAD><SCRIPT DATA-REMIXPROXY="OLD" NONCE="x">old("</head>")</SCRIPT><TITLE>x</TITLE>`,
			`<HEAD>` + testTag + `<TITLE>x</TITLE>`,
		},
		{
			"stale unterminated at end",
			`<head><script data-remixproxy>old(`,
			`<head>` + testTag,
		},
		{
			"page script after stale is kept",
			`<head><script data-remixproxy>old()</script><script>page()</script>`,
			`<head>` + testTag + `<script>page()</script>`,
		},
		{
			"stale deep in the head is a page script",
			`<head><meta charset=utf-8><title>x</title><script data-remixproxy>old()</script>`,
			`<head><meta charset=utf-8>` + testTag + `<title>x</title><script data-remixproxy>old()</script>`,
		},
	}
	for _, tc := range tests {
		for _, metaCSP := range []bool{false, true} {
			name := tc.name
			if metaCSP {
				name += "/with MetaCSP"
			}
			t.Run(name, func(t *testing.T) {
				opt := Options{Tag: []byte(testTag)}
				if metaCSP {
					opt.MetaCSP = func(s string) string { return s }
				}
				got := readAll(t, NewInjector(iotest.OneByteReader(strings.NewReader(tc.input)), opt))
				if got != tc.want {
					t.Errorf("output:\ngot  %q\nwant %q", got, tc.want)
				}
			})
		}
	}
}

func TestInjectMaxPrefix(t *testing.T) {
	tests := []struct {
		name         string
		input        string
		maxPrefix    int
		metaCSP      bool
		want         string // "" means the input unchanged
		wantInjected bool
	}{
		{
			name:      "long comments before html",
			input:     "<!DOCTYPE html>" + pad(200) + "<html><head><title>x</title>",
			maxPrefix: 100,
		},
		{
			name:      "long title before decision keeps stale and csp meta",
			input:     `<head><script data-remixproxy>old()</script><meta http-equiv=content-security-policy content="script-src 'self'"><title>` + strings.Repeat("t", 300) + `</title>`,
			maxPrefix: 200,
			metaCSP:   true,
		},
		{
			name:      "default cap",
			input:     "<!DOCTYPE html>" + pad(defaultMaxPrefix+10) + "<html><head><title>x</title>",
			maxPrefix: 0,
		},
		{
			name:         "decision before cap",
			input:        "<head><meta charset=utf-8>" + strings.Repeat("<p>x</p>", 100),
			maxPrefix:    64,
			want:         "<head><meta charset=utf-8>" + testTag + strings.Repeat("<p>x</p>", 100),
			wantInjected: true,
		},
		{
			name: "cap hit in head phase passes the rest untouched",
			input: `<head><meta charset=utf-8><script>` + strings.Repeat("s", 500) + `</script>` +
				`<meta http-equiv=content-security-policy content="script-src 'self'">`,
			maxPrefix: 200,
			metaCSP:   true,
			want: `<head><meta charset=utf-8>` + testTag + `<script>` + strings.Repeat("s", 500) + `</script>` +
				`<meta http-equiv=content-security-policy content="script-src 'self'">`,
			wantInjected: true,
		},
	}
	for _, tc := range tests {
		for _, r := range readers {
			t.Run(tc.name+"/"+r.name, func(t *testing.T) {
				opt := Options{Tag: []byte(testTag), MaxPrefix: tc.maxPrefix}
				if tc.metaCSP {
					opt.MetaCSP = func(string) string { return "changed" }
				}
				in := NewInjector(r.wrap(strings.NewReader(tc.input)), opt)
				got := readAll(t, in)
				want := tc.want
				if want == "" {
					want = tc.input
				}
				if got != want {
					t.Errorf("output:\ngot  %q\nwant %q", got, want)
				}
				if in.Injected() != tc.wantInjected {
					t.Errorf("Injected() = %v, want %v", in.Injected(), tc.wantInjected)
				}
			})
		}
	}
}

func TestInjectMetaCSP(t *testing.T) {
	needs := CSPNeeds{ScriptHash: ScriptHash([]byte("boot()")), Connect: []string{"wss://remix.proxy"}}
	adjust := func(s string) string { return AdjustCSP(s, needs) }
	h := needs.ScriptHash
	tests := []struct {
		name      string
		input     string
		want      string
		wantCalls []string
	}{
		{
			name:      "before the insertion point",
			input:     `<head><meta http-equiv="Content-Security-Policy" content="script-src 'nonce-a'"><meta charset=utf-8><title>x</title>`,
			want:      `<head><meta http-equiv="Content-Security-Policy" content="script-src 'nonce-a' ` + h + `"><meta charset=utf-8>` + testTag + `<title>x</title>`,
			wantCalls: []string{"script-src 'nonce-a'"},
		},
		{
			name:      "after the insertion point",
			input:     `<head><script>s()</script><META HTTP-EQUIV=content-security-policy CONTENT="default-src 'self'" name=x><body>`,
			want:      `<head>` + testTag + `<script>s()</script><meta http-equiv="content-security-policy" content="default-src 'self'; script-src 'self' ` + h + `; connect-src 'self' wss://remix.proxy" name="x"><body>`,
			wantCalls: []string{"default-src 'self'"},
		},
		{
			name:      "unchanged policy keeps its bytes",
			input:     `<head><meta http-equiv='content-security-policy' content='img-src *'><title>x</title>`,
			want:      `<head>` + testTag + `<meta http-equiv='content-security-policy' content='img-src *'><title>x</title>`,
			wantCalls: []string{"img-src *"},
		},
		{
			name:      "entities unescaped and escaped",
			input:     `<head><meta charset=utf-8><meta http-equiv=" Content-Security-Policy " content="script-src &#39;self&#39; &quot;x&amp;y&quot;">`,
			want:      `<head><meta charset=utf-8>` + testTag + `<meta http-equiv=" Content-Security-Policy " content="script-src 'self' &quot;x&amp;y&quot; ` + h + `">`,
			wantCalls: []string{`script-src 'self' "x&y"`},
		},
		{
			name:      "self-closing",
			input:     `<head><meta http-equiv=content-security-policy content="script-src 'self'"/><title>x</title>`,
			want:      `<head>` + testTag + `<meta http-equiv="content-security-policy" content="script-src 'self' ` + h + `" /><title>x</title>`,
			wantCalls: []string{"script-src 'self'"},
		},
		{
			name:  "report-only not passed",
			input: `<head><meta http-equiv=content-security-policy-report-only content="script-src 'none'"><title>x</title>`,
			want:  `<head>` + testTag + `<meta http-equiv=content-security-policy-report-only content="script-src 'none'"><title>x</title>`,
		},
		{
			name:  "in body not passed",
			input: `<head></head><body><meta http-equiv=content-security-policy content="script-src 'self'">`,
			want:  `<head>` + testTag + `</head><body><meta http-equiv=content-security-policy content="script-src 'self'">`,
		},
		{
			name:  "in template not passed",
			input: `<head><template><meta http-equiv=content-security-policy content="script-src 'self'"></template><title>x</title>`,
			want:  `<head>` + testTag + `<template><meta http-equiv=content-security-policy content="script-src 'self'"></template><title>x</title>`,
		},
		{
			name:  "without content not passed",
			input: `<head><meta http-equiv=content-security-policy><title>x</title>`,
			want:  `<head>` + testTag + `<meta http-equiv=content-security-policy><title>x</title>`,
		},
	}
	for _, tc := range tests {
		for _, r := range readers {
			t.Run(tc.name+"/"+r.name, func(t *testing.T) {
				var calls []string
				opt := Options{Tag: []byte(testTag), MetaCSP: func(s string) string {
					calls = append(calls, s)
					return adjust(s)
				}}
				got := readAll(t, NewInjector(r.wrap(strings.NewReader(tc.input)), opt))
				if got != tc.want {
					t.Errorf("output:\ngot  %q\nwant %q", got, tc.want)
				}
				if strings.Join(calls, "\n") != strings.Join(tc.wantCalls, "\n") {
					t.Errorf("MetaCSP calls: got %q, want %q", calls, tc.wantCalls)
				}
			})
		}
	}
}

func TestInjectSourceError(t *testing.T) {
	errBoom := errors.New("boom")
	tests := []struct {
		name     string
		before   string // bytes src yields before failing
		want     string // output before the error
		injected bool
	}{
		{"before the decision", `<!DOCTYPE html><html><head><title>x`, `<!DOCTYPE html><html><head><title>x`, false},
		{"after the decision", `<head><meta charset=utf-8><p>x</p>`, `<head><meta charset=utf-8>` + testTag + `<p>x</p>`, true},
		{"at the start", ``, ``, false},
	}
	for _, tc := range tests {
		for _, r := range readers {
			t.Run(tc.name+"/"+r.name, func(t *testing.T) {
				src := io.MultiReader(r.wrap(strings.NewReader(tc.before)), iotest.ErrReader(errBoom))
				in := NewInjector(src, Options{Tag: []byte(testTag)})
				got, err := io.ReadAll(in)
				if !errors.Is(err, errBoom) {
					t.Fatalf("error: got %v, want one wrapping %v", err, errBoom)
				}
				if !strings.HasPrefix(err.Error(), "injecting bootstrap: reading document: ") {
					t.Errorf("error text: got %q, want the operation as prefix", err)
				}
				if string(got) != tc.want {
					t.Errorf("output before the error:\ngot  %q\nwant %q", got, tc.want)
				}
				if in.Injected() != tc.injected {
					t.Errorf("Injected() = %v, want %v", in.Injected(), tc.injected)
				}
			})
		}
	}
}

// TestInjectTrickle checks that Read returns what it can decide without waiting for more input.
func TestInjectTrickle(t *testing.T) {
	tests := []struct {
		name         string
		metaCSP      bool
		charsetKnown bool
		chunks       []string // written one at a time
		wants        []string // output available after each chunk (before the next is written)
	}{
		{
			name:   "meta charset then body",
			chunks: []string{"<!DOCTYPE html><html><head><meta charset=utf-8>", "<title>x</title>", "<body>", "<p>event 1</p>", "<p>event 2</p>"},
			wants:  []string{"<!DOCTYPE html><html><head><meta charset=utf-8>" + testTag, "<title>x</title>", "<body>", "<p>event 1</p>", "<p>event 2</p>"},
		},
		{
			name:   "head past the charset window decides at once",
			chunks: []string{pad(1100) + "<html><head>", "<title>x</title><body>", "data"},
			wants:  []string{pad(1100) + "<html><head>" + testTag, "<title>x</title><body>", "data"},
		},
		{
			name:         "head tokens flow with MetaCSP",
			metaCSP:      true,
			charsetKnown: true,
			chunks:       []string{"<head><script>a()</script>", "<link rel=x href=y>", "<body>", "x"},
			wants:        []string{"<head>" + testTag + "<script>a()</script>", "<link rel=x href=y>", "<body>", "x"},
		},
		{
			name:   "charset unknown: a script first waits for the pre-scan window",
			chunks: []string{"<head><script>a()</script>", pad(1100), "<p>x"},
			wants:  []string{"", "<head>" + testTag + "<script>a()</script>" + pad(1100), "<p>x"},
		},
		{
			name:         "charset known: a script first decides at once",
			charsetKnown: true,
			chunks:       []string{"<head><script>a()</script>", "<p>x"},
			wants:        []string{"<head>" + testTag + "<script>a()</script>", "<p>x"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				pr, pw := io.Pipe()
				opt := Options{Tag: []byte(testTag), CharsetKnown: tc.charsetKnown}
				if tc.metaCSP {
					opt.MetaCSP = func(s string) string { return s }
				}
				in := NewInjector(pr, opt)
				reads := make(chan []byte, 100)
				readDone := make(chan error, 1)
				go func() {
					buf := make([]byte, 64<<10)
					for {
						n, err := in.Read(buf)
						reads <- bytes.Clone(buf[:n])
						if err != nil {
							readDone <- err
							return
						}
					}
				}()
				for i, c := range tc.chunks {
					if _, err := pw.Write([]byte(c)); err != nil {
						t.Fatalf("writing chunk %d: %v", i, err)
					}
					// Every goroutine is now blocked: the reader has returned all it could.
					synctest.Wait()
					var g []byte
					for len(reads) > 0 {
						g = append(g, <-reads...)
					}
					if string(g) != tc.wants[i] {
						t.Errorf("after chunk %d: got %q, want %q", i, g, tc.wants[i])
					}
				}
				pw.Close()
				if err := <-readDone; err != io.EOF {
					t.Errorf("final error: got %v, want io.EOF", err)
				}
			})
		})
	}
}

func TestScriptHash(t *testing.T) {
	tests := []struct{ name, script, want string }{
		// echo -n "alert('Hello, world.');" | openssl sha256 -binary | base64 (from the CSP spec).
		{"csp spec example", "alert('Hello, world.');", "'sha256-qznLcsROx4GACP2dm0UCKCzCG+HiZ1guq6ZZDob/Tng='"},
		{"empty", "", "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ScriptHash([]byte(tc.script)); got != tc.want {
				t.Errorf("ScriptHash(%q) = %s, want %s", tc.script, got, tc.want)
			}
		})
	}
}

// TestInjectGathersHeadTokens: with the whole document at hand, the head is not handed out one
// token per Read (each Read becomes a write and a flush on the way to the browser).
func TestInjectGathersHeadTokens(t *testing.T) {
	doc := "<!doctype html><html><head><meta charset=utf-8><title>small</title><link rel=x href=y>" +
		"<meta name=a content=b></head><body>" + strings.Repeat("<p>text</p>", 100) + "</body></html>"
	in := NewInjector(strings.NewReader(doc), Options{Tag: []byte("<script>1</script>"), MetaCSP: func(s string) string { return s }})
	buf := make([]byte, 32<<10)
	reads := 0
	var out []byte
	for {
		n, err := in.Read(buf)
		if n > 0 {
			reads++
			out = append(out, buf[:n]...)
		}
		if err != nil {
			break
		}
	}
	if reads > 2 {
		t.Errorf("got %d non-empty reads for a %d-byte document in hand, want at most 2", reads, len(doc))
	}
	if want := strings.Replace(doc, "utf-8>", "utf-8><script>1</script>", 1); string(out) != want {
		t.Errorf("output = %q, want %q", out, want)
	}
}

// TestInjectMetaCSPBeforeInsertionPoint: a CSP meta before the <meta charset> the tag follows is
// in force when the tag runs. Adjusted, it must let the tag run; when it cannot (the tag's
// host-source is inert under 'strict-dynamic'), the tag goes in front of it (^: with a copy of
// the charset declaration, |: without); when it allows no script at all, the page passes
// unchanged, not injected. In marked, "{p}" is the policy as it comes in and "{p'}" as
// AdjustCSP makes it.
func TestInjectMetaCSPBeforeInsertionPoint(t *testing.T) {
	const external = `<script data-remixproxy="T1" src="https://remix.proxy/agent/x.js"></script>`
	const externalNonce = `<script data-remixproxy="T1" src="https://remix.proxy/agent/x.js" nonce="n1"></script>`
	const inline = `<script data-remixproxy="T1">boot()</script>`
	srcNeeds := CSPNeeds{ScriptSrc: []string{"https://remix.proxy"}, Connect: []string{"https://remix.proxy", "wss://remix.proxy"}, Frame: []string{"https://remix.proxy"}}
	nonceNeeds := srcNeeds
	nonceNeeds.Nonce = "n1"
	hashNeeds := CSPNeeds{ScriptHash: ScriptHash([]byte("boot()")), Connect: srcNeeds.Connect, Frame: srcNeeds.Frame}
	const sha = "'sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='"
	meta := func(p string) string { return `<meta http-equiv="Content-Security-Policy" content="` + p + `">` }
	tests := []struct {
		name         string
		tag          string
		needs        CSPNeeds
		charsetKnown bool
		policy       string
		marked       string
	}{
		{"self is adjusted", external, srcNeeds, false, "script-src 'self'",
			`<!doctype html><html><head>` + meta("{p'}") + `<meta charset="utf-8">|<title>x</title>`},
		{"strict-dynamic hash moves the tag", external, srcNeeds, false, "script-src " + sha + " 'strict-dynamic'; object-src 'none'",
			`<!doctype html><html><head>^` + meta("{p'}") + `<meta charset="utf-8"><title>x</title><script>a()</script>`},
		{"strict-dynamic hash, charset known", external, srcNeeds, true, "script-src " + sha + " 'strict-dynamic'",
			`<head>|` + meta("{p'}") + `<meta charset="utf-8"><title>x</title>`},
		{"strict-dynamic with another nonce", externalNonce, nonceNeeds, false, "script-src 'nonce-other' 'strict-dynamic'",
			`<head>^` + meta("{p'}") + `<meta charset=utf-8><title>x</title>`},
		{"strict-dynamic with our nonce", externalNonce, nonceNeeds, false, "script-src 'nonce-n1' 'strict-dynamic'",
			`<head>` + meta("{p}") + `<meta charset=utf-8>|<title>x</title>`},
		{"strict-dynamic, inline tag gets its hash", inline, hashNeeds, false, "script-src " + sha + " 'strict-dynamic'",
			`<head>` + meta("{p'}") + `<meta charset=utf-8>|<title>x</title>`},
		{"no head", external, srcNeeds, false, "script-src 'strict-dynamic' " + sha,
			`^` + meta("{p'}") + `<meta charset=utf-8><title>x</title>`},
		{"html without head", external, srcNeeds, false, "default-src 'self' 'strict-dynamic' " + sha,
			`<!doctype html><html>^` + meta("{p'}") + `<meta http-equiv="Content-Type" content="text/html; charset=utf-8"><title>x</title>`},
		{"after a title", external, srcNeeds, false, "script-src " + sha + " 'strict-dynamic'",
			`<head>^<title>x</title>` + meta("{p'}") + `<meta charset=utf-8><link rel=stylesheet href=a.css>`},
		{"script-src none passes unchanged", external, srcNeeds, false, "script-src 'none'",
			`<!doctype html><html><head>` + meta("{p}") + `<meta charset="utf-8"><title>x</title>`},
		{"default-src none passes unchanged", inline, hashNeeds, false, "default-src 'none'; img-src 'self'",
			`<head>` + meta("{p}") + `<meta charset=utf-8><title>x</title>`},
		{"script-src-elem none passes unchanged", external, srcNeeds, false, "script-src 'self'; script-src-elem 'none'",
			`<head>` + meta("{p}") + `<meta charset=utf-8><title>x</title>`},
		{"empty script-src passes unchanged", external, srcNeeds, true, "script-src",
			`<head>` + meta("{p}") + `<meta charset=utf-8><title>x</title>`},
		{"none in a second policy passes unchanged", external, srcNeeds, false, "img-src *, script-src 'none'",
			`<head>` + meta("{p}") + `<meta charset=utf-8><title>x</title>`},
		{"none on the charset meta itself", external, srcNeeds, false, "script-src 'none'",
			`<head><meta charset=utf-8 http-equiv=Content-Security-Policy content="{p}"><title>x</title>`},
		{"none after the insertion point", external, srcNeeds, false, "script-src 'none'",
			`<head><meta charset=utf-8>|` + meta("{p}") + `<title>x</title>`},
		{"none without a charset meta", external, srcNeeds, false, "script-src 'none'",
			`<head>|` + meta("{p}") + `<title>x</title>`},
		{"none with a script first", external, srcNeeds, false, "script-src 'none'",
			`<head>^<script>a()</script>` + meta("{p}") + `<meta charset=utf-8>`},
		{"report-only none is ignored", external, srcNeeds, false, "script-src 'none'",
			`<head><meta http-equiv=Content-Security-Policy-Report-Only content="{p}"><meta charset=utf-8>|<title>x</title>`},
		{"none in a template is ignored", external, srcNeeds, false, "script-src 'none'",
			`<head><template>` + meta("{p}") + `</template><meta charset=utf-8>|<title>x</title>`},
	}
	for _, tc := range tests {
		adjusted := AdjustCSP(tc.policy, tc.needs)
		marked := strings.NewReplacer("{p}", tc.policy, "{p'}", adjusted).Replace(tc.marked)
		input := strings.NewReplacer("|", "", "^", "", adjusted, tc.policy).Replace(marked)
		want := marked
		if m := charsetLabel.FindStringSubmatch(marked); m != nil {
			want = strings.Replace(want, "^", `<meta charset="`+m[1]+`">`+tc.tag, 1)
		}
		want = strings.Replace(want, "|", tc.tag, 1)
		wantInjected := strings.ContainsAny(tc.marked, "|^")
		if !wantInjected {
			want = input
		}
		for _, r := range readers {
			t.Run(tc.name+"/"+r.name, func(t *testing.T) {
				in := NewInjector(r.wrap(strings.NewReader(input)), Options{
					Tag:          []byte(tc.tag),
					MetaCSP:      func(s string) string { return AdjustCSP(s, tc.needs) },
					CharsetKnown: tc.charsetKnown,
				})
				got := readAll(t, in)
				if got != want {
					t.Errorf("output:\ngot  %q\nwant %q", got, want)
				}
				if in.Injected() != wantInjected {
					t.Errorf("Injected() = %v, want %v", in.Injected(), wantInjected)
				}
			})
		}
	}
}
