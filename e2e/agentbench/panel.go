package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Driving the chat through the real panel, as e2e/agent_test.go does: click the launcher in the
// page's closed shadow root like a person, find the panel's frame (its own target under site
// isolation, else an isolated world in the tab), and type in its composer.

const panelURLPrefix = "https://remix.proxy/panel"

// panelFrame evaluates JavaScript in the panel's frame.
type panelFrame struct {
	ctx    context.Context
	world  runtime.ExecutionContextID
	cancel context.CancelFunc
}

func (p *panelFrame) eval(expr string) (string, error) {
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	var opts []chromedp.EvaluateOption
	if p.world != 0 {
		opts = append(opts, func(ep *runtime.EvaluateParams) { ep.ContextID = p.world })
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

func (p *panelFrame) waitFor(d time.Duration, what, cond string) error {
	deadline := time.Now().Add(d)
	for {
		s, err := p.eval("String(!!(" + cond + "))")
		if err == nil && s == "true" {
			return nil
		}
		if time.Now().After(deadline) {
			text, _ := p.eval(`document.body ? document.body.innerText : ''`)
			return fmt.Errorf("waiting in the panel for %s: not true after %v (last error: %v)\npanel text:\n%s", what, d, err, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// openPanel clicks the launcher and returns the panel frame, connected.
func openPanel(tab context.Context) (*panelFrame, error) {
	x, y, err := launcherCenter(tab)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	err = chromedp.Do(ctx, chromedp.MouseEvent(chromedp.MouseMoved, x, y), chromedp.MouseClickXY(x, y))
	cancel()
	if err != nil {
		return nil, fmt.Errorf("clicking the launcher: %w", err)
	}
	var pf *panelFrame
	for deadline := time.Now().Add(20 * time.Second); pf == nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no panel frame within 20s of clicking the launcher")
		}
		if pf, err = findPanel(tab); err != nil {
			return nil, err
		}
	}
	if err := pf.waitFor(20*time.Second, "the panel to connect", `document.getElementById('status-text').textContent === 'Connected' && !document.getElementById('send').disabled`); err != nil {
		pf.cancel()
		return nil, err
	}
	return pf, nil
}

// launcherCenter is the centre of the launcher's button, inside its closed shadow root.
func launcherCenter(tab context.Context) (float64, float64, error) {
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	obj, err := chromedp.Run(ctx, chromedp.Evaluate[*runtime.RemoteObject](`document.querySelector('[data-remixproxy-launcher]')`))
	if err != nil || obj == nil || obj.ObjectID == "" {
		return 0, 0, fmt.Errorf("no launcher element: %v", err)
	}
	depth, pierce := int64(-1), true
	node, err := chromedp.Call(ctx, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: obj.ObjectID, Depth: &depth, Pierce: &pierce})
	if err != nil || node.Node == nil || len(node.Node.ShadowRoots) != 1 {
		return 0, 0, fmt.Errorf("the launcher has no shadow root: %v", err)
	}
	var button *cdp.Node
	for _, c := range node.Node.ShadowRoots[0].Children {
		if c.NodeName == "BUTTON" {
			button = c
		}
	}
	if button == nil {
		return 0, 0, fmt.Errorf("the launcher's shadow root has no button")
	}
	box, err := chromedp.Call(ctx, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: button.BackendNodeID})
	if err != nil || len(box.Model.Border) != 8 {
		return 0, 0, fmt.Errorf("the launcher button has no box: %v", err)
	}
	q := box.Model.Border
	return (q[0] + q[2] + q[4] + q[6]) / 4, (q[1] + q[3] + q[5] + q[7]) / 4, nil
}

// findPanel returns the panel frame when the page has one, else nil.
func findPanel(tab context.Context) (*panelFrame, error) {
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing targets: %w", err)
	}
	self := chromedp.FromContext(tab).Target.TargetID
	for _, info := range infos {
		if info.Type == "iframe" && info.ParentID == self && strings.HasPrefix(info.URL, panelURLPrefix) {
			fctx, fcancel := chromedp.NewContext(tab, chromedp.WithTargetID(info.TargetID), chromedp.WithDetachOnCancel())
			if err := chromedp.Do(fctx); err != nil {
				fcancel()
				return nil, fmt.Errorf("attaching to the panel frame: %w", err)
			}
			return &panelFrame{ctx: fctx, cancel: fcancel}, nil
		}
	}
	tree, err := chromedp.Call(ctx, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, fmt.Errorf("reading the frame tree: %w", err)
	}
	var walk func(ft *page.FrameTree) *cdp.Frame
	walk = func(ft *page.FrameTree) *cdp.Frame {
		for _, c := range ft.ChildFrames {
			if strings.HasPrefix(c.Frame.URL, panelURLPrefix) {
				return c.Frame
			}
			if f := walk(c); f != nil {
				return f
			}
		}
		return nil
	}
	f := walk(tree.FrameTree)
	if f == nil {
		return nil, nil
	}
	w, err := chromedp.Call(ctx, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: f.ID, WorldName: "agentbench"})
	if err != nil {
		return nil, fmt.Errorf("creating a world in the panel frame: %w", err)
	}
	return &panelFrame{ctx: tab, world: w.ExecutionContextID, cancel: func() {}}, nil
}
