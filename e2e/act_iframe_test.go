package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// Same-origin iframes in page reading and actions (issue 6): the proxy injects only top-level
// documents, so the page agent of the top page reads a same-origin frame through
// contentDocument and acts in it with its own captured functions. A cross-origin frame is one
// outline line and nothing is read from it.

const framePassword = "hunter2-in-the-frame"

const frameOuterPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>Frames</title>
<style>body { margin: 8px; font: 14px/1.3 sans-serif; } iframe { display: block; width: 600px; height: 260px; border: 3px solid #888; padding: 5px; }</style></head>
<body>
<h1>Account</h1>
<iframe id="inner" title="Sign-in frame" src="/inner"></iframe>
<iframe id="ads" title="Partner offers" src="https://other.test/widget?token=abc123"></iframe>
<p>Below the frames</p>
<div id="host"></div>
<script>
// A same-origin frame inside an open shadow root, as web components render them.
const sr = document.getElementById('host').attachShadow({mode: 'open'});
const sf = document.createElement('iframe');
sf.title = 'Shadow frame';
sf.style.cssText = 'width: 300px; height: 50px; border: 0';
sf.srcdoc = "<body style='margin:0'><button id='sb' type='button'>Shadow frame button</button></body>";
sr.append(sf);
document.body.dataset.pageScript = 'ran';
</script>
</body></html>`

// frameInnerPage is hostile to whoever reads it from outside: its script replaces the frame's
// own built-ins that a reader might call (the page agent must use the top window's), and it
// shows the password field's value in its text (the scrub must catch it).
const frameInnerPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>Inner</title></head>
<body style="margin: 4px">
<form id="signin" action="/signed" method="post">
<label for="email">Email</label> <input id="email" name="email">
<label for="pw">Password</label> <input id="pw" type="password" name="pw">
<button id="go" type="submit">Sign in</button>
</form>
<p id="echo">nobody</p>
<p id="leak"></p>
<iframe id="nested" title="Nested frame" style="width: 300px; height: 60px; border: 2px solid #000; padding: 3px" srcdoc="<body style='margin:0'><p style='margin:20px 0 0 30px'><button id='nb' type='button'>Nested button</button></p></body>"></iframe>
<div style="height: 600px"></div>
<button id="deep" type="button">Deep button</button>
<script>
const pw = document.getElementById('pw');
pw.value = '` + framePassword + `';
document.getElementById('leak').textContent = 'typed ' + pw.value;
document.getElementById('email').addEventListener('input', (e) => { document.getElementById('echo').textContent = 'typing ' + e.target.value; });
document.getElementById('signin').addEventListener('submit', (e) => { e.preventDefault(); document.body.dataset.signedIn = new FormData(e.target).get('email');
  setTimeout(() => { document.getElementById('echo').textContent = 'welcome back'; }, 200); });
document.getElementById('deep').addEventListener('click', () => { document.body.dataset.deep = 'clicked'; });
// Replace what a reader from outside might call on this frame's objects.
Element.prototype.getAttribute = function () { return 'FRAME-LIE'; };
Element.prototype.getBoundingClientRect = function () { throw new Error('frame trap'); };
Node.prototype.contains = function () { return true; };
Document.prototype.querySelectorAll = function () { throw new Error('frame trap'); };
Object.defineProperty(Node.prototype, 'firstChild', {get() { return null; }});
Array.prototype.push = function () { throw new Error('frame trap'); };
JSON.stringify = function () { return '"FRAME-LIE"'; };
document.body.dataset.ready = 'yes';
</script>
</body></html>`

const otherSiteSecret = "OTHER-SITE-CONTENT-7731"

func TestActIframe(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { htmlPage(w, frameOuterPage) })
	mux.HandleFunc("/inner", func(w http.ResponseWriter, r *http.Request) { htmlPage(w, frameInnerPage) })
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{
		"frame.test": mux,
		"other.test": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			htmlPage(w, `<!doctype html><html><head><meta charset="utf-8"><title>Offers</title></head><body><p>`+otherSiteSecret+
				`</p><button>Buy now</button><input type="password" value="other-site-password"></body></html>`)
		}),
	})

	tab.Navigate("https://frame.test/")
	tab.WaitConnected()
	tab.WaitFor(5*time.Second, "the page's script", pageScriptRan)
	tab.WaitFor(5*time.Second, "the frame's script", `(() => { const d = document.getElementById('inner').contentDocument; return d && d.body && d.body.dataset.ready === 'yes'; })()`)
	inner := func(expr string) string {
		return e2etest.Eval[string](tab, `(() => { const d = document.getElementById('inner').contentDocument; return String(`+expr+`); })()`)
	}
	c := &toolCaller{t: t, srv: p.Server, session: sessionFor(t, p, "https://frame.test/")}

	// capture_page's text includes the same-origin frame's, under its title, and never the
	// password the frame shows in its own text; the other site's frame is not read.
	text := fmt.Sprint(c.ok("capture_page", `{}`)["text"])
	if !strings.Contains(text, `[frame "Sign-in frame"]`) || !strings.Contains(text, "Sign in") {
		t.Errorf("capture_page text does not include the frame's:\n%s", text)
	}
	if strings.Contains(text, framePassword) {
		t.Errorf("capture_page text holds the frame's password:\n%s", text)
	}

	// wait_for_stable sees changes inside the frame (the top page does not change here).
	e2etest.Eval[bool](tab, `(() => { const d = document.getElementById('inner').contentDocument;
		let n = 0; const id = setInterval(() => { d.getElementById('echo').textContent = 'tick ' + (++n); if (n >= 10) clearInterval(id); }, 30);
		return true; })()`)
	if st := c.ok("wait_for_stable", `{"ms": 200}`); fmt.Sprint(st["mutations"]) == "0" {
		t.Errorf("wait_for_stable saw no change while the frame changed: %v", st)
	}

	outline := fmt.Sprint(c.ok("outline", `{}`)["outline"])
	t.Logf("outline:\n%s", outline)
	for _, want := range []string{
		`iframe "Sign-in frame" [e`,
		`textbox "Email"`,
		`textbox "Password" [password]`,
		`button "Sign in"`,
		`iframe "Partner offers" (other site, not readable) -> https://other.test/` + "\u2026",
		"Below the frames",
	} {
		if !strings.Contains(outline, want) {
			t.Errorf("the outline has no %q", want)
		}
	}
	if strings.Contains(outline, `"Deep button"`) {
		t.Errorf("the default outline shows a button scrolled out of its frame:\n%s", outline)
	}
	if !strings.Contains(outline, "typed [redacted]") {
		t.Errorf("the frame's text showing its password was not scrubbed:\n%s", outline)
	}
	// The frame's content is indented under its line.
	frameLine := lineWith(outline, `iframe "Sign-in frame"`)
	emailLine := lineWith(outline, `textbox "Email"`)
	if indentOfLine(emailLine) <= indentOfLine(frameLine) {
		t.Errorf("the frame's fields are not under the frame's line:\n%s\n%s", frameLine, emailLine)
	}
	ref := func(part string) string { return refOf(t, outline, part) }

	t.Run("a frame in a frame", func(t *testing.T) {
		tab.WaitFor(5*time.Second, "the nested frame", `(() => { const d = document.getElementById('inner').contentDocument.getElementById('nested').contentDocument; return !!(d && d.getElementById('nb')); })()`)
		e2etest.Eval[bool](tab, `(() => { const d = document.getElementById('inner').contentDocument.getElementById('nested').contentDocument;
			d.getElementById('nb').addEventListener('click', () => { d.body.dataset.nested = 'clicked'; }); return true; })()`)
		o := fmt.Sprint(c.ok("outline", `{}`)["outline"])
		nested := lineWith(o, `iframe "Nested frame"`)
		button := lineWith(o, `button "Nested button"`)
		if nested == "" || button == "" || indentOfLine(button) <= indentOfLine(nested) || indentOfLine(nested) <= indentOfLine(frameLine) {
			t.Fatalf("the nested frame's button is not under it:\n%s", o)
		}
		c.ok("click", `{"ref":"`+refOf(t, o, `button "Nested button"`)+`"}`)
		if got := inner(`d.getElementById('nested').contentDocument.body.dataset.nested || ''`); got != "clicked" {
			t.Errorf("the nested frame's button was not clicked: %q", got)
		}
	})

	t.Run("a frame in a shadow root", func(t *testing.T) {
		frame := `document.getElementById('host').shadowRoot.querySelector('iframe').contentDocument`
		tab.WaitFor(5*time.Second, "the shadow root's frame", `(() => { const d = `+frame+`; return !!(d && d.getElementById('sb')); })()`)
		e2etest.Eval[bool](tab, `(() => { const d = `+frame+`; d.getElementById('sb').addEventListener('click', () => { d.body.dataset.clicked = 'yes'; }); return true; })()`)
		o := fmt.Sprint(c.ok("outline", `{"filter":"all"}`)["outline"])
		c.ok("click", `{"ref":"`+refOf(t, o, `button "Shadow frame button"`)+`"}`)
		if got := e2etest.Eval[string](tab, frame+`.body.dataset.clicked || ''`); got != "yes" {
			t.Errorf("the button in the shadow root's frame was not clicked: %q", got)
		}
	})

	t.Run("type and click in the frame", func(t *testing.T) {
		v := c.ok("type", `{"ref":"`+ref(`textbox "Email"`)+`","text":"ann@example.com"}`)
		if v["verified"] != true {
			t.Errorf("type = %v", v)
		}
		if got := inner(`d.getElementById('echo').textContent`); got != "typing ann@example.com" {
			t.Errorf("the frame's input handler saw %q", got)
		}
		c.refused("type", `{"ref":"`+ref(`textbox "Password"`)+`","text":"x"}`, "is a password field")
		v = c.ok("click", `{"ref":"`+ref(`button "Sign in"`)+`"}`)
		if got := inner(`d.body.dataset.signedIn || ''`); got != "ann@example.com" {
			t.Errorf("after the click the frame's form submitted %q (click = %v)", got, v)
		}
		// The submission loads only the frame, not the page.
		if v["mayLeave"] != false || v["frameMayLoad"] != true {
			t.Errorf("click = %v, want mayLeave false and frameMayLoad true", v)
		}
		// wait_for sees the frame's text.
		if v := c.ok("wait_for", `{"text":"welcome back","timeoutMs":3000}`); v["found"] != true {
			t.Errorf("wait_for the frame's text = %v", v)
		}
		// A text click finds the frame's button too.
		c.ok("click", `{"text":"Sign in"}`)
	})

	t.Run("a button scrolled out of its frame is scrolled into view and clicked", func(t *testing.T) {
		all := fmt.Sprint(c.ok("outline", `{"filter":"all","budget":20000}`)["outline"])
		c.ok("click", `{"ref":"`+refOf(t, all, `button "Deep button"`)+`"}`)
		if got := inner(`d.body.dataset.deep || ''`); got != "clicked" {
			t.Errorf("the deep button was not clicked: %q", got)
		}
	})

	t.Run("an element over the frame blocks a click inside it", func(t *testing.T) {
		e2etest.Eval[bool](tab, `(() => { const f = document.getElementById('inner'); const r = f.getBoundingClientRect();
			const o = document.createElement('div'); o.id = 'cover'; o.textContent = 'Cookie banner';
			o.style.cssText = 'position:fixed;left:0;top:0;width:100vw;height:' + (r.bottom + 400) + 'px;background:#fff;z-index:9';
			document.body.append(o); return true; })()`)
		defer e2etest.Eval[bool](tab, `(document.getElementById('cover').remove(), true)`)
		c.refused("click", `{"ref":"`+ref(`button "Sign in"`)+`"}`, "another element is on top")
	})

	t.Run("find and query reach the frame", func(t *testing.T) {
		f := c.ok("find", `{"text":"email"}`)
		if !strings.Contains(fmt.Sprint(f["outline"]), `textbox "Email"`) {
			t.Errorf("find email = %v", f)
		}
		q := c.ok("query", `{"selector":"#email"}`)
		if q["total"] != float64(1) {
			t.Errorf("query #email = %v", q)
		}
		c.refused("query", `{"selector":"input[value^=h]"}`, "refused while the page has a password field")
	})

	// Nothing of the password or the other site ever left the page.
	for _, s := range c.seen {
		for _, secret := range []string{framePassword, otherSiteSecret, "other-site-password", "Buy now", "token=abc123", "FRAME-LIE"} {
			if strings.Contains(s, secret) {
				t.Errorf("an answer carries %q: %s", secret, head(s, 400))
			}
		}
	}
}

func lineWith(outline, part string) string {
	for _, l := range strings.Split(outline, "\n") {
		if strings.Contains(l, part) {
			return l
		}
	}
	return ""
}

func indentOfLine(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
