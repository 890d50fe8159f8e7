package e2e

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// panelURLPrefix is where the page agent's panel iframe loads from.
const panelURLPrefix = "https://remix.proxy/panel"

// panelTimeout bounds waiting for the panel frame to appear and to show its page.
const panelTimeout = 20 * time.Second

// cdpTimeout bounds one DevTools command of the tests here.
const cdpTimeout = 10 * time.Second

func TestPanelOpensAndShowsPage(t *testing.T) {
	tab := world.ProxiedTab(t)
	// A query of its own makes the page's session and panel text this test's alone.
	pageURL := "https://plain.test/?panel=" + rand.Text()
	tab.Navigate(pageURL)
	tab.WaitConnected()

	x, y := launcherButtonCenter(t, tab)

	// The page can see the launcher's host element at that point (the shadow root retargets it),
	// so a click there reaches the launcher and nothing of the page's covers it.
	if !e2etest.Eval[bool](tab, fmt.Sprintf(`document.elementFromPoint(%v, %v) === document.querySelector('%s')`, x, y, e2etest.LauncherSelector)) {
		desc := e2etest.Eval[string](tab, fmt.Sprintf(`(() => { const e = document.elementFromPoint(%v, %v); return e ? e.outerHTML.slice(0, 200) : 'nothing'; })()`, x, y))
		t.Fatalf("the launcher button's centre (%v, %v) hits %s, not the launcher's host element", x, y, desc)
	}

	// Clicks made by page script are not the person's: they must not open the panel. The agent
	// handles a click synchronously (it creates the iframe inside the click listener), so right
	// after dispatchEvent returns there is either an iframe in the closed shadow root or none.
	e2etest.Eval[bool](tab, fmt.Sprintf(`(() => {
		const host = document.querySelector('%s');
		host.dispatchEvent(new MouseEvent('click', {bubbles: true, composed: true, cancelable: true,
			view: window, clientX: %v, clientY: %v, button: 0}));
		host.click();
		return true;
	})()`, e2etest.LauncherSelector, x, y))
	if got := launcherShadowChildren(t, tab); len(got) != 1 || got[0] != "BUTTON" {
		t.Errorf("after synthetic clicks from page script, the launcher's shadow root holds %v, want only [BUTTON]: an untrusted click opened the panel", got)
	}
	if urls := childFrameURLs(t, tab); len(urls) != 0 {
		t.Errorf("after synthetic clicks from page script, the page has child frames %q, want none: an untrusted click opened the panel", urls)
	}

	// A person's click: real mouse events through the browser's input pipeline.
	clickAt(t, tab, x, y)

	pf := attachFrame(t, tab, waitPanelFrame(t, tab))
	// The open panel is the launcher's 380 × 560 px card (its sheet, made on the first open).
	if w, h := panelFrameSize(t, tab); w != 380 || h != 560 {
		t.Errorf("the open panel is %v × %v px, want 380 × 560: the frame's stylesheet is missing", w, h)
	}
	pf.waitFor(t, panelTimeout, fmt.Sprintf("the panel to show Connected and the page URL %s", pageURL), fmt.Sprintf(`(() => {
		const s = document.getElementById('status-text'), u = document.getElementById('page-url');
		return !!s && !!u && s.textContent === 'Connected' && u.textContent === %q;
	})()`, pageURL))
	if text := pf.eval(t, `document.body.innerText`); !strings.Contains(text, "Connected") || !strings.Contains(text, pageURL) {
		t.Errorf("the panel's text does not show Connected and %s:\n%s", pageURL, text)
	}

	// The page cannot see or reach the panel: the iframe lives in a closed shadow root, and frames
	// inside shadow trees are not in window.frames.
	seen := e2etest.Eval[map[string]any](tab, `({frames: window.frames.length, iframe: document.querySelector('iframe') === null,
		all: document.querySelectorAll('iframe').length, shadowRoot: document.querySelector('`+e2etest.LauncherSelector+`').shadowRoot === null})`)
	if seen["frames"] != float64(0) {
		t.Errorf("window.frames.length is %v with the panel open, want 0: the page can reach the panel's window", seen["frames"])
	}
	if seen["iframe"] != true || seen["all"] != float64(0) {
		t.Errorf("document.querySelector('iframe') finds the panel (querySelectorAll: %v), want null", seen["all"])
	}
	if seen["shadowRoot"] != true {
		t.Errorf("the launcher host's shadowRoot is visible to the page, want null (a closed shadow root)")
	}
	// The panel frame is still there (so the checks above were made with it open).
	if urls := childFrameURLs(t, tab); len(urls) != 1 || !strings.HasPrefix(urls[0], panelURLPrefix) {
		t.Errorf("the page's child frames are %q, want just the panel", urls)
	}
}

// cdpCall runs one DevTools command on the tab, bounded, failing the test on error.
func cdpCall[P, R any](t *testing.T, tab *e2etest.Tab, cmd cdp.Command[P, R], params P) R {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab.Context(), cdpTimeout)
	defer cancel()
	r, err := chromedp.Call(ctx, cmd, params)
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd.Method, err, tab.Diagnose())
	}
	return r
}

// launcherNode describes the launcher's host element through DevTools, with its closed shadow
// root (DevTools sees into closed shadow roots; the page does not).
func launcherNode(t *testing.T, tab *e2etest.Tab) *cdp.Node {
	t.Helper()
	obj := e2etest.Eval[*runtime.RemoteObject](tab, `document.querySelector('`+e2etest.LauncherSelector+`')`)
	if obj == nil || obj.ObjectID == "" {
		t.Fatalf("no launcher element\n%s", tab.Diagnose())
	}
	depth, pierce := int64(-1), true
	res := cdpCall(t, tab, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: obj.ObjectID, Depth: &depth, Pierce: &pierce})
	if res.Node == nil || len(res.Node.ShadowRoots) != 1 {
		t.Fatalf("the launcher element has no shadow root: %+v", res.Node)
	}
	if typ := res.Node.ShadowRoots[0].ShadowRootType; typ != cdp.ShadowRootTypeClosed {
		t.Errorf("the launcher's shadow root is %q, want closed", typ)
	}
	return res.Node
}

// panelFrameSize is the border-box size of the panel iframe in the launcher's shadow root.
func panelFrameSize(t *testing.T, tab *e2etest.Tab) (w, h float64) {
	t.Helper()
	for _, c := range launcherNode(t, tab).ShadowRoots[0].Children {
		if c.NodeName == "IFRAME" {
			box := cdpCall(t, tab, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: c.BackendNodeID})
			return float64(box.Model.Width), float64(box.Model.Height)
		}
	}
	t.Fatalf("the launcher's shadow root has no iframe")
	return 0, 0
}

// launcherShadowChildren lists the node names of the launcher's shadow root's children.
func launcherShadowChildren(t *testing.T, tab *e2etest.Tab) []string {
	t.Helper()
	var names []string
	for _, c := range launcherNode(t, tab).ShadowRoots[0].Children {
		names = append(names, c.NodeName)
	}
	return names
}

// launcherButtonCenter returns the centre of the launcher's button on screen, in CSS pixels of
// the viewport (what Input.dispatchMouseEvent takes).
func launcherButtonCenter(t *testing.T, tab *e2etest.Tab) (x, y float64) {
	t.Helper()
	var button *cdp.Node
	for _, c := range launcherNode(t, tab).ShadowRoots[0].Children {
		if c.NodeName == "BUTTON" {
			button = c
		}
	}
	if button == nil {
		t.Fatalf("the launcher's shadow root has no button")
	}
	box := cdpCall(t, tab, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: button.BackendNodeID})
	q := box.Model.Border
	if len(q) != 8 || box.Model.Width == 0 || box.Model.Height == 0 {
		t.Fatalf("the launcher button has no box on screen: %+v", box.Model)
	}
	x, y = (q[0]+q[2]+q[4]+q[6])/4, (q[1]+q[3]+q[5]+q[7])/4
	// The host element is the zero-size anchor at the viewport's bottom-right corner; the button
	// sits up and left of it. Check the two agree, so a test that passes clicked the launcher.
	host := e2etest.Eval[map[string]float64](tab, `(() => { const r = document.querySelector('`+e2etest.LauncherSelector+`').getBoundingClientRect();
		return {right: r.right, bottom: r.bottom, w: innerWidth, h: innerHeight}; })()`)
	if x <= 0 || y <= 0 || x >= host["right"] || y >= host["bottom"] || host["right"]-x > 200 || host["bottom"]-y > 200 {
		t.Fatalf("the launcher button's centre (%v, %v) is not in the bottom-right corner of the viewport (host element at %v)", x, y, host)
	}
	return x, y
}

// clickAt sends a left click at (x, y) the way a mouse does: move, press, release.
func clickAt(t *testing.T, tab *e2etest.Tab, x, y float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab.Context(), cdpTimeout)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.MouseEvent(chromedp.MouseMoved, x, y),
		chromedp.MouseClickXY(x, y),
	)
	if err != nil {
		t.Fatalf("clicking at (%v, %v): %v\n%s", x, y, err, tab.Diagnose())
	}
}

// frames flattens a frame tree below its root.
func frames(ft *page.FrameTree) []*cdp.Frame {
	var out []*cdp.Frame
	for _, c := range ft.ChildFrames {
		out = append(out, c.Frame)
		out = append(out, frames(c)...)
	}
	return out
}

// childFrame is a frame inside the tab's page.
type childFrame struct {
	URL string
	// Frame is set for a frame that runs in the page's process (listed by Page.getFrameTree).
	Frame cdp.FrameID
	// Target is set for a frame the browser runs in a process of its own (a cross-site iframe
	// under site isolation): Page.getFrameTree of the page does not list it; Target.getTargets
	// lists it as an "iframe" target whose parent is the page's target.
	Target target.ID
}

// childFrames lists the frames inside the tab's page, in its process and out of it.
func childFrames(t *testing.T, tab *e2etest.Tab) []childFrame {
	t.Helper()
	var out []childFrame
	tree := cdpCall(t, tab, page.GetFrameTree, cdp.Empty{})
	for _, f := range frames(tree.FrameTree) {
		out = append(out, childFrame{URL: f.URL, Frame: f.ID})
	}
	ctx, cancel := context.WithTimeout(tab.Context(), cdpTimeout)
	defer cancel()
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		t.Fatalf("listing targets: %v", err)
	}
	self := chromedp.FromContext(tab.Context()).Target.TargetID
	// Out-of-process frames can nest: keep the iframe targets whose parent is the page or one of
	// the frames found so far.
	ours := map[target.ID]bool{self: true}
	// Chromium before about 150 leaves an iframe target's parentId empty; there an out-of-process
	// frame is the page's when an iframe element of its DOM (shadow roots pierced) holds it: its
	// frame id is the target's id.
	inDOM := map[target.ID]bool{}
	for _, info := range infos {
		if info.Type == "iframe" && info.ParentID == "" {
			inDOM = domFrameIDs(t, tab)
			break
		}
	}
	for added := true; added; {
		added = false
		for _, info := range infos {
			if info.Type == "iframe" && (ours[info.ParentID] || (info.ParentID == "" && inDOM[info.TargetID])) && !ours[info.TargetID] {
				ours[info.TargetID] = true
				out = append(out, childFrame{URL: info.URL, Target: info.TargetID})
				added = true
			}
		}
	}
	return out
}

// domFrameIDs are the frame ids of the frame elements in the tab's DOM, shadow roots included.
func domFrameIDs(t *testing.T, tab *e2etest.Tab) map[target.ID]bool {
	t.Helper()
	depth, pierce := int64(-1), true
	root := cdpCall(t, tab, dom.GetDocument, dom.GetDocumentParams{Depth: &depth, Pierce: &pierce})
	out := map[target.ID]bool{}
	var walk func(n *cdp.Node)
	walk = func(n *cdp.Node) {
		if n == nil {
			return
		}
		if n.FrameID != "" {
			out[target.ID(n.FrameID)] = true
		}
		for _, c := range n.Children {
			walk(c)
		}
		for _, c := range n.ShadowRoots {
			walk(c)
		}
		walk(n.ContentDocument)
	}
	walk(root.Root)
	return out
}

// childFrameURLs lists the URLs of the frames inside the tab's page.
func childFrameURLs(t *testing.T, tab *e2etest.Tab) []string {
	t.Helper()
	var urls []string
	for _, f := range childFrames(t, tab) {
		urls = append(urls, f.URL)
	}
	return urls
}

// waitPanelFrame waits for a frame inside the tab's page that has loaded the panel.
func waitPanelFrame(t *testing.T, tab *e2etest.Tab) childFrame {
	t.Helper()
	deadline := time.Now().Add(panelTimeout)
	for {
		fs := childFrames(t, tab)
		var urls []string
		for _, f := range fs {
			if strings.HasPrefix(f.URL, panelURLPrefix) {
				return f
			}
			urls = append(urls, f.URL)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no panel frame (%s…) within %v of clicking the launcher; frames in the page: %q; launcher shadow root: %v\n%s",
				panelURLPrefix, panelTimeout, urls, launcherShadowChildren(t, tab), tab.Diagnose())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// frameEval evaluates JavaScript in one frame of a tab: in the frame's own target when the
// browser runs it out of process (a cross-site iframe under site isolation), else in an
// isolated world of the frame inside the tab's target.
type frameEval struct {
	tab *e2etest.Tab
	ctx context.Context // the frame's target, or the tab's
	// world is the execution context in the tab's target; 0 when ctx is the frame's own target.
	world runtime.ExecutionContextID

	mu  sync.Mutex
	log []string
}

// attachFrame attaches to the frame's own target when it has one, else creates an isolated
// world of the frame in the tab (it shares the frame's DOM, not its scripts).
func attachFrame(t *testing.T, tab *e2etest.Tab, f childFrame) *frameEval {
	t.Helper()
	fe := &frameEval{tab: tab}
	if f.Target != "" {
		// Detach, not close, when the test ends: closing an iframe target is not ours to do.
		fctx, fcancel := chromedp.NewContext(tab.Context(), chromedp.WithTargetID(f.Target), chromedp.WithDetachOnCancel(),
			chromedp.WithListener(fe.onEvent))
		t.Cleanup(fcancel)
		fe.ctx = fctx
		if err := e2etest.Within(cdpTimeout, func() error { return chromedp.Do(fctx) }); err != nil {
			t.Fatalf("attaching to the panel frame's target %s: %v", f.Target, err)
		}
		return fe
	}
	w := cdpCall(t, tab, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: f.Frame, WorldName: "remixproxy-e2e-panel"})
	fe.ctx, fe.world = tab.Context(), w.ExecutionContextID
	return fe
}

func (fe *frameEval) onEvent(ev any) {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		var parts []string
		for _, a := range ev.Args {
			parts = append(parts, string(a.Value)+a.Description)
		}
		fe.log = append(fe.log, "console."+string(ev.Type)+": "+strings.Join(parts, " "))
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil {
			text += " " + d.Exception.Description
		}
		fe.log = append(fe.log, "exception: "+text)
	}
}

func (fe *frameEval) consoleLog() string {
	fe.mu.Lock()
	defer fe.mu.Unlock()
	if len(fe.log) == 0 {
		return "(nothing)"
	}
	return strings.Join(fe.log, "\n")
}

func (fe *frameEval) evalErr(expr string) (string, error) {
	ctx, cancel := context.WithTimeout(fe.ctx, 5*time.Second)
	defer cancel()
	var opts []chromedp.EvaluateOption
	if fe.world != 0 {
		opts = append(opts, func(p *runtime.EvaluateParams) { p.ContextID = fe.world })
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[any](expr, opts...))
	if err != nil {
		return "", err
	}
	if s, ok := v.(string); ok {
		return s, nil
	}
	return fmt.Sprint(v), nil
}

// eval evaluates expr in the frame and returns its result as text.
func (fe *frameEval) eval(t *testing.T, expr string) string {
	t.Helper()
	s, err := fe.evalErr(expr)
	if err != nil {
		t.Fatalf("evaluating in the panel frame: %v\npanel console:\n%s", err, fe.consoleLog())
	}
	return s
}

// waitFor polls cond in the frame until it is true, for at most d.
func (fe *frameEval) waitFor(t *testing.T, d time.Duration, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(d)
	var last error
	for {
		s, err := fe.evalErr("String(!!(" + cond + "))")
		if err == nil && s == "true" {
			return
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			text, terr := fe.evalErr(`document.body ? document.body.innerText : document.documentElement.outerHTML`)
			if terr != nil {
				text = "(unreadable: " + terr.Error() + ")"
			}
			t.Fatalf("waiting for %s: not true after %v (last error: %v)\npanel text:\n%s\npanel console:\n%s\npage:\n%s",
				what, d, last, text, fe.consoleLog(), fe.tab.Diagnose())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
