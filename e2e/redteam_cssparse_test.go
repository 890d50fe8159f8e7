package e2e

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/rewrite"
)

// Red-team pass 5a, the stylesheet checker against Chromium's own CSS parser: the checker reads
// a sheet with the tdewolff tokenizer and keeps what its allow-lists accept; the page agent puts
// what it kept into a constructable stylesheet (replaceSync). Any place where the two read the
// same bytes differently could turn a kept piece into a load. Sheets built at random (a fixed
// seed) from the pieces where tokenizers tend to differ — escapes, comments, strings, quotes,
// unclosed blocks, url( in every spelling, at-rules, CDO/CDC, line breaks, unicode ranges — go
// through rewrite.CheckStylesheet (only granted.test allowed); Chromium parses each clean sheet,
// and nothing in what it made of it may load from anywhere but granted.test: no url() (escapes
// decoded, strings skipped), image-set(), cross-fade(), image(), src(), @import, @font-face or
// @namespace rule, in any rule or custom property.

// cssFuzzPieces are the pieces the sheets are made of.
var cssFuzzPieces = []string{
	"url(", "URL(", `u\rl(`, `\75 rl(`, `ur\6c(`, `url("`, "url('", "url( ", "https://witness.test/f", `https:\2f\2fwitness.test/e`,
	"//witness.test/s", `"`, "'", `\`, "\\\n", "\n", " ", "\t", "\r\n", "\f", "/*", "*/", "{", "}", "(", ")", "[", "]", ";", ":",
	",", "@import ", `@\69mport `, "@media all", "@supports (a:b)", "@font-face", "@namespace x ", "@layer x", "@scope (a)",
	"@property --y", `@charset "x";`, "src:", "background:", "--x:", "var(--x)", "a", ".b", "#c", "!important", "<!--",
	"-->", "image-set(", `\22`, `\27`, `\28`, `\29`, `\5c`, `\"`, "u+", "U+0-7F", "1e3", "+.5", "-", "--", "&", `\0`,
	"\ufffd", "é", "attr(", "src(", "x)", "e", "url(https://granted.test/ok)", ")url(", "}}", "{{", `\{`, `\}`, `\;`,
	"\"\\\n", "url(  'https://witness.test/g' )", "initial-value:", "content:", "cross-fade(", "-webkit-image-set(",
	"image(", "@container (width>0)", "@starting-style", "@page", "@top-left", "light-dark(", "env(x,", ":is(", "::before",
}

// cssFuzzLoads are whole rules that load from the witness, put between random pieces.
var cssFuzzLoads = []string{
	"a{background:url(https://witness.test/z)}", `a{background:url("https://witness.test/z")}`,
	"a{--v:url(https://witness.test/z)}", "@media all{a{background:url(https://witness.test/z)}}",
	"a{b{background:url(https://witness.test/z)}}", `a{background:image-set("https://witness.test/z" 1x)}`,
	"}a{background:url(https://witness.test/z)}", ";a{background:url(https://witness.test/z)}",
	"*/a{background:url(https://witness.test/z)}", `"a{background:url(https://witness.test/z)}`,
	"'a{background:url(https://witness.test/z)}", "\na{background:url(https://witness.test/z)}",
	"-->a{background:url(https://witness.test/z)}", ")a{background:url(https://witness.test/z)}",
}

// cssLoadScan is the page-side check: for each sheet, the list of what in Chromium's reading of
// it would load (empty when nothing).
const cssLoadScan = `(() => {
  const sheets = %s;
  const decode = (s) => s.replace(/\\([0-9a-fA-F]{1,6})[ \t\n]?/g, (m, h) => String.fromCodePoint(Math.min(parseInt(h, 16), 0x10ffff) || 0xfffd)).replace(/\\([\s\S])/g, '$1');
  // flatten returns the text with comments dropped, escapes outside strings decoded and each
  // string replaced by "#k", with the strings' decoded contents.
  const flatten = (t) => {
    let out = '', i = 0;
    const strs = [];
    while (i < t.length) {
      const c = t[i];
      if (c === '"' || c === "'") {
        let j = i + 1;
        while (j < t.length && t[j] !== c) { j += t[j] === '\\' ? 2 : 1; }
        strs.push(decode(t.slice(i + 1, j)));
        out += '"#' + (strs.length - 1) + '"';
        i = j + 1;
        continue;
      }
      if (c === '/' && t[i + 1] === '*') {
        const e = t.indexOf('*/', i + 2);
        i = e < 0 ? t.length : e + 2;
        out += ' ';
        continue;
      }
      if (c === '\\') {
        const m = /^\\([0-9a-fA-F]{1,6}[ \t\n]?|[\s\S])/.exec(t.slice(i));
        out += decode(m ? m[0] : '\\');
        i += m ? m[0].length : 1;
        continue;
      }
      out += c;
      i++;
    }
    return { text: out.toLowerCase(), strs };
  };
  const loads = (text) => {
    const found = [];
    const f = flatten(text);
    for (const fn of ['image-set(', 'cross-fade(', 'image(', 'src(', 'element(', 'paint(']) {
      if (f.text.includes(fn)) found.push(fn);
    }
    // url(: its address must be granted.test's.
    const re = /url\(\s*("#(\d+)"|[^)]*)/g;
    let m;
    while ((m = re.exec(f.text))) {
      const a = m[2] !== undefined ? f.strs[+m[2]].trim() : m[1].trim();
      if (!/^https:\/\/granted\.test\//.test(a)) found.push('url(' + a + ')');
    }
    return found;
  };
  const walk = (rules, found) => {
    for (const r of rules) {
      if (r instanceof CSSImportRule || r instanceof CSSNamespaceRule) found.push(r.constructor.name + ' ' + r.cssText);
      if (r instanceof CSSFontFaceRule) found.push('@font-face ' + r.cssText);
      if (r.style) {
        for (let i = 0; i < r.style.length; i++) {
          const p = r.style[i];
          for (const f of loads(r.style.getPropertyValue(p))) found.push(p + ': ' + f);
        }
      }
      if (r instanceof CSSPropertyRule && r.initialValue) for (const f of loads(r.initialValue)) found.push('@property ' + f);
      if (r.cssRules) walk(r.cssRules, found);
    }
  };
  return JSON.stringify(sheets.map((css) => {
    const s = new CSSStyleSheet();
    try { s.replaceSync(css); } catch (e) { return ['replaceSync threw: ' + e]; }
    const found = [];
    walk(s.cssRules, found);
    return found;
  }));
})()`

// repairSheet closes what a random sheet leaves open (a comment, string, url(, block, escape or
// rule), as the checker's refusal says, so that the checker keeps most of it rather than
// refusing it whole: the test is about the sheets it keeps.
func repairSheet(css string, allowed func(string) bool) string {
	for range 40 {
		clean, problems := rewrite.CheckStylesheet([]byte(css), allowed)
		if clean != nil || len(problems) == 0 {
			return css
		}
		why := problems[len(problems)-1].Reason
		switch {
		case strings.Contains(why, "inside a comment"):
			css += "*/"
		case strings.Contains(why, "inside a string"):
			if strings.HasSuffix(css, `"`) {
				css = css[:len(css)-1] + "'"
			} else {
				css += `"`
			}
		case strings.Contains(why, "inside a url("):
			css += ")"
		case strings.Contains(why, "backslash"):
			css += "x"
		case strings.Contains(why, "close it with "):
			css += why[strings.LastIndex(why, " ")+1:]
		case strings.Contains(why, "unfinished"):
			css += "{}"
		default:
			return css
		}
	}
	return css
}

func TestRedteamStylesheetCheckerAgainstChromium(t *testing.T) {
	_, _, tab := e2etest.StartProxied(t, map[string]http.Handler{"parse.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, "<!doctype html><title>parse</title><p>parse</p>")
	})})
	tab.Navigate("https://parse.test/")
	allowed := func(h string) bool { return h == "granted.test" }
	rng := rand.New(rand.NewPCG(5, 0xa))
	const total, batch = 30000, 3000
	seen := map[string]bool{}
	var inputs, cleans []string
	kept := 0
	for range total {
		var b strings.Builder
		pieces := func(n int) {
			for range n {
				b.WriteString(cssFuzzPieces[rng.IntN(len(cssFuzzPieces))])
			}
		}
		pieces(1 + rng.IntN(12))
		if rng.IntN(2) == 0 {
			// A load between random pieces: a tokenizer that reads the pieces before it as
			// opening a string or comment the other reads as closed keeps it as text.
			b.WriteString(cssFuzzLoads[rng.IntN(len(cssFuzzLoads))])
		}
		pieces(rng.IntN(12))
		in := repairSheet(b.String(), allowed)
		clean, _ := rewrite.CheckStylesheet([]byte(in), allowed)
		if len(clean) == 0 || seen[string(clean)] {
			continue
		}
		seen[string(clean)] = true
		inputs, cleans = append(inputs, in), append(cleans, string(clean))
		if strings.Contains(strings.ToLower(string(clean)), "witness") {
			kept++
		}
	}
	// The control: the same scan finds the loads of sheets the checker never saw.
	controls := []string{`a{background:url(https://witness.test/x)}`, `a{--x:u\72l(https://witness.test/y)}`, `a{background:image-set("x" 1x)}`}
	var problems []string
	for start := 0; start < len(cleans)+len(controls); start += batch {
		part := append([]string(nil), cleans[start:min(start+batch, len(cleans))]...)
		if start == 0 {
			part = append(controls, part...)
		}
		j, _ := json.Marshal(part)
		var found [][]string
		if err := json.Unmarshal([]byte(e2etest.EvalWithin[string](tab, 2*time.Minute, fmt.Sprintf(cssLoadScan, j))), &found); err != nil {
			t.Fatal(err)
		}
		if start == 0 {
			for i := range controls {
				if len(found[i]) == 0 {
					t.Fatalf("the scan found no load in the control %q: it proves nothing", controls[i])
				}
			}
			found = found[len(controls):]
		}
		for i, f := range found {
			if len(f) > 0 {
				k := start + i
				problems = append(problems, fmt.Sprintf("input %q\n    clean %q\n    Chromium reads: %s", inputs[k], cleans[k], strings.Join(f, "; ")))
			}
		}
		if start+batch >= len(cleans) {
			break
		}
	}
	// The control on the inputs: unchecked, many of the same sheets load in Chromium.
	j, _ := json.Marshal(inputs[:min(batch, len(inputs))])
	var raw [][]string
	if err := json.Unmarshal([]byte(e2etest.EvalWithin[string](tab, 2*time.Minute, fmt.Sprintf(cssLoadScan, j))), &raw); err != nil {
		t.Fatal(err)
	}
	loading := 0
	for _, f := range raw {
		if len(f) > 0 {
			loading++
		}
	}
	t.Logf("unchecked, %d of the first %d inputs load in Chromium", loading, len(raw))
	if loading == 0 {
		t.Errorf("no unchecked input loads in Chromium: the corpus proves nothing")
	}
	t.Logf("%d random sheets, %d distinct clean ones checked in Chromium (%d of them still mention the witness in a string or selector)", total, len(cleans), kept)
	if len(problems) > 0 {
		t.Errorf("%d clean sheets load in Chromium:\n  %s", len(problems), strings.Join(problems[:min(len(problems), 20)], "\n  "))
	}
}
