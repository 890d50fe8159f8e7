package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// The small rmx services in real Chromium: the clipboard (with and without a user gesture), a
// notification toast that shows HTML as text, a remixlet command chosen in the panel with a real click,
// and a scheduled message delivered on the next page load.

// servicesSite is a page with a button and a status line.
func servicesSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		htmlPage(w, `<!doctype html>
<html><head><meta charset="utf-8"><title>Services</title></head>
<body><h1>Services</h1><button id="copy" style="font-size: 24px; padding: 20px">Copy</button>
<p id="status">idle</p></body></html>`)
	})
}

// servicesWorld is a proxy with a store, the site svc.test and a browser tab.
type servicesWorld struct {
	p   *e2etest.Proxy
	st  *store.Store
	tab *e2etest.Tab
	rx  store.Remixlet
}

func newServicesWorld(t *testing.T, perms []string, script string) *servicesWorld {
	t.Helper()
	_, p, tab := e2etest.StartProxied(t, map[string]http.Handler{"svc.test": servicesSite()}, e2etest.WithStore())
	var ps []string
	for _, perm := range perms {
		ps = append(ps, fmt.Sprintf(`{"name": %q, "reason": "test"}`, perm))
	}
	rx := saveAndActivate(t, p.Store, "services", store.Files{
		sandbox.ManifestFile: []byte(`{"name": "services", "description": "Uses the small services.", "api": 1,
			"matches": ["https://svc.test/*"], "permissions": [` + strings.Join(ps, ", ") + `]}`),
		sandbox.ScriptFile: []byte(script),
	})
	return &servicesWorld{p: p, st: p.Store, tab: tab, rx: rx}
}

func (w *servicesWorld) diagnose(t *testing.T) string {
	return fmt.Sprintf("remixlet log:\n%s\nproxy log tail:\n%s\n%s", remixletLog(t, w.st, w.rx.ID), tail(w.p.Logs(), 3000), w.tab.Diagnose())
}

// waitLogLine waits until the remixlet's log has a line containing want.
func (w *servicesWorld) waitLogLine(t *testing.T, d time.Duration, want string) {
	t.Helper()
	for deadline := time.Now().Add(d); !strings.Contains(remixletLog(t, w.st, w.rx.ID), want); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the remixlet's log has no %q after %v\n%s", want, d, w.diagnose(t))
		}
	}
}

// waitToast waits up to 5 s for the first toast in the page agent's tray.
func (w *servicesWorld) waitToast(t *testing.T) *cdp.Node {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if e2etest.Eval[bool](w.tab, `!!document.querySelector('[data-remixproxy-tray]')`) {
			if ts := findNodes(trayNode(t, w.tab), func(n *cdp.Node) bool { return hasClass(n, "toast") }); len(ts) > 0 {
				return ts[0]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no toast shown\n%s", w.diagnose(t))
		}
	}
}

// toastText is what a toast shows: generated content (content: attr(data-text)) of its spans,
// never a text node.
func toastText(toast *cdp.Node) string {
	var shown strings.Builder
	for _, n := range findNodes(toast, func(n *cdp.Node) bool { return n.NodeName == "SPAN" }) {
		v, _ := attrOf(n, "data-text")
		shown.WriteString(v)
	}
	return shown.String()
}

// trayNode describes the page agent's tray (toasts and the menu) through DevTools, with its
// closed shadow root.
func trayNode(t *testing.T, tab *e2etest.Tab) *cdp.Node {
	t.Helper()
	obj := e2etest.Eval[*runtime.RemoteObject](tab, `document.querySelector('[data-remixproxy-tray]')`)
	if obj == nil || obj.ObjectID == "" {
		t.Fatalf("no tray element\n%s", tab.Diagnose())
	}
	depth, pierce := int64(-1), true
	res := cdpCall(t, tab, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: obj.ObjectID, Depth: &depth, Pierce: &pierce})
	if res.Node == nil || len(res.Node.ShadowRoots) != 1 || res.Node.ShadowRoots[0].ShadowRootType != cdp.ShadowRootTypeClosed {
		t.Fatalf("the tray has no closed shadow root: %+v", res.Node)
	}
	return res.Node
}

func attrOf(n *cdp.Node, name string) (string, bool) {
	for i := 0; i+1 < len(n.Attributes); i += 2 {
		if n.Attributes[i] == name {
			return n.Attributes[i+1], true
		}
	}
	return "", false
}

func hasClass(n *cdp.Node, cls string) bool {
	v, _ := attrOf(n, "class")
	for _, c := range strings.Fields(v) {
		if c == cls {
			return true
		}
	}
	return false
}

// findNodes lists the nodes under n (shadow roots included) that match.
func findNodes(n *cdp.Node, match func(*cdp.Node) bool) []*cdp.Node {
	var out []*cdp.Node
	var walk func(*cdp.Node)
	walk = func(n *cdp.Node) {
		if match(n) {
			out = append(out, n)
		}
		for _, c := range n.ShadowRoots {
			walk(c)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(n)
	return out
}

// nodeText is the text of n's text nodes, in order.
func nodeText(n *cdp.Node) string {
	var b strings.Builder
	for _, c := range findNodes(n, func(c *cdp.Node) bool { return c.NodeType == 3 }) {
		b.WriteString(c.NodeValue)
	}
	return b.String()
}

// nodeCenter is the centre of n's border box in viewport CSS pixels.
func nodeCenter(t *testing.T, tab *e2etest.Tab, n *cdp.Node) (float64, float64) {
	t.Helper()
	box := cdpCall(t, tab, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: n.BackendNodeID})
	q := box.Model.Border
	if len(q) != 8 || box.Model.Width == 0 || box.Model.Height == 0 {
		t.Fatalf("%s has no box on screen: %+v", n.NodeName, box.Model)
	}
	return (q[0] + q[2] + q[4] + q[6]) / 4, (q[1] + q[3] + q[5] + q[7]) / 4
}

const clipboardScript = `const b = await dom.query('#copy');
await dom.on(b, 'click', async () => {
  try { await rmx.clipboard.write('copied <b>text</b>'); rmx.log('CLIP ok'); }
  catch (e) { rmx.log('CLIP refused:', e.message); }
});
try { await rmx.clipboard.write('no gesture'); rmx.log('NOGESTURE written'); }
catch (e) { rmx.log('NOGESTURE refused:', e.message); }
`

func TestRMXClipboardNeedsAUserGesture(t *testing.T) {
	w := newServicesWorld(t, []string{sandbox.PermClipboard}, clipboardScript)
	tab := w.tab
	focused := true
	cdpCall(t, tab, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: focused})
	info := cdpCall(t, tab, target.GetTargetInfo, target.GetTargetInfoParams{})
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		// Granting the permissions shows that the gesture rule is the page agent's own: Chromium
		// would let a focused page write without one. (clipboard-read lets the test read back.)
		cdpCall(t, tab, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted,
			Origin: "https://svc.test", BrowserContextID: info.TargetInfo.BrowserContextID})
	}
	tab.Navigate("https://svc.test/")
	tab.WaitConnected()

	// Without a gesture: refused by the page agent, with the fixed reason.
	w.waitLogLine(t, 10*time.Second, "NOGESTURE refused: rmx.clipboard.write: the clipboard can be written only right after you click or press a key on the page")
	if strings.Contains(remixletLog(t, w.st, w.rx.ID), "NOGESTURE written") {
		t.Fatalf("the clipboard was written without a gesture\n%s", w.diagnose(t))
	}

	// A real click in the page is a gesture: the listener's write succeeds.
	x, y := nodeCenterBySelector(t, tab, "#copy")
	clickAt(t, tab, x, y)
	w.waitLogLine(t, 10*time.Second, "CLIP ")
	if log := remixletLog(t, w.st, w.rx.ID); !strings.Contains(log, "CLIP ok") {
		t.Fatalf("the write after a click was refused\n%s", w.diagnose(t))
	}
	got, err := e2etest.EvalE[string](tab, `navigator.clipboard.readText()`)
	switch {
	case err != nil:
		t.Errorf("reading the clipboard back: %v", err)
	case got != "copied <b>text</b>":
		t.Errorf("the clipboard holds %q, want %q", got, "copied <b>text</b>")
	}
}

// nodeCenterBySelector is the centre of the page element selector.
func nodeCenterBySelector(t *testing.T, tab *e2etest.Tab, selector string) (float64, float64) {
	t.Helper()
	r := e2etest.Eval[map[string]float64](tab, `(() => { const r = document.querySelector('`+selector+`').getBoundingClientRect();
		return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()`)
	return r["x"], r["y"]
}

func TestRMXNotificationToastShowsHTMLAsText(t *testing.T) {
	const title = `<img src="x" onerror="document.title='pwned'">Price <b>dropped</b>`
	w := newServicesWorld(t, []string{sandbox.PermNotifications},
		"await rmx.notify(`"+title+"`, '<script>document.title=1</'+'script>now 12'); rmx.log('NOTIFIED');")
	tab := w.tab
	tab.Navigate("https://svc.test/")
	tab.WaitConnected()
	w.waitLogLine(t, 10*time.Second, "NOTIFIED")

	toast := w.waitToast(t)
	if got, want := toastText(toast), "services"+title+"<script>document.title=1</script>now 12"; got != want {
		t.Errorf("toast text = %q, want %q (source, title and body as text)", got, want)
	}
	if got := nodeText(toast); got != "" {
		t.Errorf("the toast has text nodes %q: window.find reaches those", got)
	}
	if elems := findNodes(toast, func(n *cdp.Node) bool {
		return n.NodeType == 1 && n.NodeName != "DIV" && n.NodeName != "SPAN"
	}); len(elems) > 0 {
		t.Errorf("the toast holds elements made from the text: %v", elems[0].NodeName)
	}
	x, y := nodeCenter(t, tab, toast)
	if x <= 0 || y <= 0 {
		t.Errorf("the toast is not on screen: (%v, %v)", x, y)
	}
	if title := tab.Title(); title != "Services" {
		t.Errorf("document.title = %q: something in the notification ran", title)
	}
	// The page cannot see into the tray, nor find the toast's text by searching for it, nor
	// select it.
	if n := e2etest.Eval[int](tab, `document.querySelector('[data-remixproxy-tray]').shadowRoot === null ? 0 : 1`); n != 0 {
		t.Error("the page can reach the tray's shadow root")
	}
	found := e2etest.Eval[string](tab, `(() => { const out = [];
  for (const w of ['now 12', 'dropped', 'Price']) { getSelection().removeAllRanges(); if (window.find(w)) out.push('find ' + w); }
  getSelection().removeAllRanges(); document.execCommand('selectAll'); const s = getSelection().toString(); getSelection().removeAllRanges();
  if (s.includes('dropped') || s.includes('now 12')) out.push('selection ' + s);
  return out.join('; '); })()`)
	if found != "" {
		t.Errorf("the page reads the toast's text: %s", found)
	}
}

const menuScript = `await rmx.menu.add('expand', 'Expand <all> posts', async (e) => {
  rmx.log('MENU', e.type, e.id);
  await dom.setText(await dom.query('#status'), 'expanded');
});
rmx.log('MENU ADDED');
`

// newMenuWorld is a services world whose remixlet adds menuScript's command, on svc.test, with
// the command added.
func newMenuWorld(t *testing.T) *servicesWorld {
	t.Helper()
	w := newServicesWorld(t, []string{sandbox.PermMenu}, menuScript)
	w.tab.Navigate("https://svc.test/")
	w.tab.WaitConnected()
	w.waitLogLine(t, 10*time.Second, "MENU ADDED")
	return w
}

// chooseFirstCommand waits for the panel's commands to arm, clicks the first like a person and
// waits for its callback.
func chooseFirstCommand(t *testing.T, w *servicesWorld, pf *frameEval, f childFrame) {
	t.Helper()
	pf.waitFor(t, 5*time.Second, "the commands to arm", `document.getElementById('commands').getAttribute('data-armed') === 'true'`)
	x, y := pointAt(t, w.tab, pf, f, "#command-list button")
	clickAt(t, w.tab, x, y)
	w.waitLogLine(t, 10*time.Second, "MENU menu expand")
}

// TestRMXMenuCommandRunsFromThePanel: a remixlet's command is chosen in the panel (a
// remix.proxy document), never in the page (proxy/page/commands.go): the launcher's commands
// button opens the panel, whose list runs the callback on the person's real click.
func TestRMXMenuCommandRunsFromThePanel(t *testing.T) {
	w := newMenuWorld(t)
	tab := w.tab

	var more *cdp.Node
	for deadline := time.Now().Add(5 * time.Second); more == nil; time.Sleep(50 * time.Millisecond) {
		ns := findNodes(trayNode(t, tab), func(n *cdp.Node) bool { return hasClass(n, "more") })
		if len(ns) > 0 {
			if _, none := attrOf(ns[0], "data-none"); !none {
				more = ns[0]
			}
		}
		if more == nil && time.Now().After(deadline) {
			t.Fatalf("no commands button in the tray\n%s", w.diagnose(t))
		}
	}
	if got := findNodes(trayNode(t, tab), func(n *cdp.Node) bool { return hasClass(n, "item") || hasClass(n, "menu") }); len(got) != 0 {
		t.Errorf("the page lists the commands itself: %d nodes", len(got))
	}
	// A synthetic click from the page reaches nothing (it cannot reach the button at all).
	e2etest.Eval[bool](tab, `(document.querySelector('[data-remixproxy-tray]').click(), true)`)
	x, y := nodeCenter(t, tab, more)
	clickAt(t, tab, x, y)
	f := waitPanelFrame(t, tab)
	pf := attachFrame(t, tab, f)
	pf.waitFor(t, panelTimeout, "the panel's commands", `(() => { const b = document.querySelector('#command-list button'); return !!b && !document.getElementById('commands').hidden; })()`)
	if got := pf.eval(t, `[...document.querySelectorAll('#command-list button')].map((b) => b.textContent).join('|') + ' / ' + document.querySelector('.command-src').textContent`); got != "Expand <all> posts / services" {
		t.Errorf("the panel's commands: %q", got)
	}
	if strings.Contains(remixletLog(t, w.st, w.rx.ID), "MENU menu") {
		t.Fatal("the callback ran before the command was chosen")
	}
	chooseFirstCommand(t, w, pf, f)
	tab.WaitFor(5*time.Second, "the callback's change", `document.getElementById('status').textContent === 'expanded'`)
}

// TestRMXMenuCommandResistsCovering: the page covers the panel with a translucent layer that
// lets clicks through (clickjacking); the panel's commands do not arm, and a real click on one
// runs nothing. Uncovered, the same click runs it.
func TestRMXMenuCommandResistsCovering(t *testing.T) {
	w := newMenuWorld(t)
	tab := w.tab
	pf, f := openPanel(t, tab)
	pf.waitFor(t, panelTimeout, "the panel's commands", `!!document.querySelector('#command-list button')`)

	e2etest.Eval[bool](tab, `(() => { const d = document.createElement('div'); d.id = 'cover';
  d.style.cssText = 'position:fixed;inset:0;background:rgba(255,255,255,0.6);z-index:2147483647;pointer-events:none';
  document.documentElement.appendChild(d); return true; })()`)
	// Covered for well past the arming time: still off.
	time.Sleep(1500 * time.Millisecond)
	if armed := pf.eval(t, `document.getElementById('commands').getAttribute('data-armed')`); armed != "false" {
		t.Fatalf("the covered panel's commands armed: %q", armed)
	}
	x, y := pointAt(t, tab, pf, f, "#command-list button")
	clickAt(t, tab, x, y)
	time.Sleep(time.Second)
	if strings.Contains(remixletLog(t, w.st, w.rx.ID), "MENU menu") {
		t.Fatalf("a click on the covered panel ran the command\n%s", w.diagnose(t))
	}

	e2etest.Eval[bool](tab, `(document.getElementById('cover').remove(), true)`)
	chooseFirstCommand(t, w, pf, f)
}

const scheduleScript = `await rmx.onMessage(async (m) => {
  await dom.setText(await dom.query('#status'), 'got ' + m.schedule + ' ' + JSON.stringify(m.data));
});
if (!(await rmx.storage.get('scheduled'))) {
  await rmx.schedule.every('poll', { minutes: 1, action: { message: { hello: 'world' } } });
  await rmx.storage.set('scheduled', true);
  rmx.log('SCHEDULED');
}
`

func TestRMXScheduledMessageArrivesOnTheNextLoad(t *testing.T) {
	w := newServicesWorld(t, []string{sandbox.PermSchedule, sandbox.PermStorage}, scheduleScript)
	tab := w.tab
	tab.Navigate("https://svc.test/")
	tab.WaitConnected()
	w.waitLogLine(t, 10*time.Second, "SCHEDULED")

	// No remixlet code runs at schedule time: the proxy queues the message. The test hook runs
	// the schedules due two minutes from now instead of waiting a minute.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := w.p.Server.RunSchedules(ctx, time.Now().Add(2*time.Minute))
	if err != nil || n != 1 {
		t.Fatalf("RunSchedules = %d, %v; want 1 action\n%s", n, err, w.diagnose(t))
	}
	if got := e2etest.Eval[string](tab, `document.getElementById('status').textContent`); got != "idle" {
		t.Errorf("status = %q before a reload: the message reached the running page", got)
	}
	tab.Reload()
	tab.WaitConnected()
	tab.WaitFor(10*time.Second, "the queued message", `document.getElementById('status').textContent === 'got poll {"hello":"world"}'`)
	// Each message is delivered once.
	tab.Reload()
	tab.WaitConnected()
	time.Sleep(time.Second)
	if got := e2etest.Eval[string](tab, `document.getElementById('status').textContent`); got != "idle" {
		t.Errorf("status after a second reload = %q, want idle (delivered once)", got)
	}
}

const storageEventsScript = `const page = (await rmx.page()).url;
await rmx.storage.onChange(async (c) => {
  await dom.setText(await dom.query('#status'), 'changed ' + c.key + ' ' + JSON.stringify(c.value));
});
await dom.on(await dom.query('#copy'), 'click', () => rmx.storage.set('theme', 'dark'));
rmx.log('READY', page);
`

func TestRMXStorageChangeReachesTheOtherTab(t *testing.T) {
	w := newServicesWorld(t, []string{sandbox.PermStorage}, storageEventsScript)
	a := w.tab
	a.Navigate("https://svc.test/a")
	a.WaitConnected()
	w.waitLogLine(t, 10*time.Second, "READY https://svc.test/a")
	b := a.Browser().NewTab(t)
	b.Navigate("https://svc.test/b")
	b.WaitConnected()
	w.waitLogLine(t, 10*time.Second, "READY https://svc.test/b")

	x, y := nodeCenterBySelector(t, b, "#copy")
	clickAt(t, b, x, y)
	a.WaitFor(10*time.Second, "the change made in the other tab", `document.getElementById('status').textContent === 'changed theme "dark"'`)
	time.Sleep(300 * time.Millisecond)
	if got := e2etest.Eval[string](b, `document.getElementById('status').textContent`); got != "idle" {
		t.Errorf("the tab that made the change was told: status %q", got)
	}
}
