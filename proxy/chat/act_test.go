package chat

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/agent"
	pagesession "github.com/remixproxy/remixproxy/proxy/page"
)

// fakeActPage answers page tools from a function and has a URL the test can change or end.
type fakeActPage struct {
	mu     sync.Mutex
	addr   string
	gone   bool
	calls  []string
	answer func(tool string, args map[string]any) (string, error)
}

func (p *fakeActPage) call(ctx context.Context, tool string, raw json.RawMessage) (json.RawMessage, error) {
	var args map[string]any
	json.Unmarshal(raw, &args)
	p.mu.Lock()
	p.calls = append(p.calls, tool+" "+string(raw))
	p.mu.Unlock()
	out, err := p.answer(tool, args)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(out), nil
}

func (p *fakeActPage) url() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr, !p.gone
}

// clickPage refuses a click whose name the chat says was just clicked, as the page agent does.
func clickPage(name string) *fakeActPage {
	return &fakeActPage{addr: "https://shop.test/new", answer: func(tool string, args map[string]any) (string, error) {
		if recent, ok := args["recent"].([]any); ok {
			for _, r := range recent {
				if r.(map[string]any)["name"] == name {
					return "", errors.New("click: not clicked: already clicked on this page")
				}
			}
		}
		return `{"clicked":"button","name":"` + name + `","navigated":false,"mayLeave":false,"url":"https://shop.test/new"}`, nil
	}}
}

func TestChatActDuplicateSubmit(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	st := newActState(func() time.Time { return now })
	ctx := context.Background()
	page := clickPage("create product")
	click := func(args string) error {
		_, err := st.run(ctx, page, "click", json.RawMessage(args))
		return err
	}
	if err := click(`{"text":"Create product"}`); err != nil {
		t.Fatalf("first click: %v", err)
	}
	now = now.Add(10 * time.Second)
	if err := click(`{"text":"Create product"}`); err == nil || !strings.Contains(err.Error(), "already clicked") {
		t.Errorf("second click within 45 s: %v, want refused", err)
	}
	if err := click(`{"text":"Create product","resubmit":true}`); err != nil {
		t.Errorf("click with resubmit: %v", err)
	}
	// The model cannot pass its own (empty) list, and resubmit never reaches the page.
	if err := click(`{"text":"Create product","recent":[]}`); err == nil {
		t.Errorf("a model-made recent list reset the guard")
	}
	for _, c := range page.calls {
		if strings.Contains(c, "resubmit") {
			t.Errorf("the page got %s", c)
		}
	}
	// Another address, another chat, or after the window: allowed.
	page.addr = "https://shop.test/other"
	if err := click(`{"text":"Create product"}`); err != nil {
		t.Errorf("on another page: %v", err)
	}
	page.addr = "https://shop.test/new#frag"
	now = now.Add(46 * time.Second)
	if err := click(`{"text":"Create product"}`); err != nil {
		t.Errorf("after 45 s: %v", err)
	}
	if _, err := newActState(time.Now).run(ctx, clickPage("create product"), "click", json.RawMessage(`{"text":"Create product"}`)); err != nil {
		t.Errorf("in another chat: %v", err)
	}
	// Names that do not submit are never guarded.
	other := clickPage("next page")
	for i := 0; i < 3; i++ {
		if _, err := st.run(ctx, other, "click", json.RawMessage(`{"text":"Next page"}`)); err != nil {
			t.Errorf("click %d on a non-submit control: %v", i, err)
		}
	}
}

func TestChatActSubmitLike(t *testing.T) {
	for name, want := range map[string]bool{
		"create product": true, "save": true, "submit order": true, "add to cart": true, "post": true,
		"publish release": true, "send": true, "confirm": true, "place order": true, "pay now": true,
		"checkout": true, "update profile": true,
		"address": false, "payment history": false, "posts": false, "cancel": false, "saved items": false, "next": false,
	} {
		if got := submitLike.MatchString(name); got != want {
			t.Errorf("submitLike(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestChatActDone(t *testing.T) {
	st := newActState(time.Now)
	ctx := context.Background()
	state := `{"url":"https://shop.test/new","dialogs":["dialog \"Add a product\" [e5]"],"forms":[{"container":"form [e6]","unsaved":["textbox \"Name\" [e7]"]}],"alerts":["Price is required"]}`
	page := &fakeActPage{addr: "https://shop.test/new", answer: func(tool string, args map[string]any) (string, error) {
		if tool != "page_state" {
			t.Errorf("done asked the page for %s", tool)
		}
		return state, nil
	}}
	done := func(summary string) error {
		b, _ := json.Marshal(map[string]string{"summary": summary})
		_, err := st.run(ctx, page, "done", b)
		return err
	}
	for i := 1; i <= maxDoneRefusals; i++ {
		err := done("Created the product namaz.")
		var te *agent.ToolError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), "done refused") || !strings.Contains(err.Error(), `dialog "Add a product"`) ||
			!strings.Contains(err.Error(), `textbox "Name"`) || !strings.Contains(err.Error(), "Price is required") {
			t.Fatalf("done %d: %v, want refused naming the dialog, the field and the alert", i, err)
		}
	}
	if err := done("Created the product namaz."); err != nil {
		t.Errorf("a third done was refused: %v", err)
	}
	// An honest summary, or one claiming nothing, is never refused.
	st2 := newActState(time.Now)
	for _, s := range []string{"I could not save: the dialog says the price is required.", "The page lists three products."} {
		b, _ := json.Marshal(map[string]string{"summary": s})
		if _, err := st2.run(ctx, page, "done", b); err != nil {
			t.Errorf("done %q: %v", s, err)
		}
	}
	// A clean page: accepted.
	state = `{"url":"https://shop.test/new","dialogs":[],"forms":[],"alerts":["Product created"]}`
	b, _ := json.Marshal(map[string]string{"summary": "Saved."})
	if _, err := st2.run(ctx, page, "done", b); err != nil {
		t.Errorf("done on a clean page: %v", err)
	}
	// No page: accepted.
	page.gone = true
	state = `{"dialogs":["dialog"]}`
	if _, err := newActState(time.Now).run(ctx, page, "done", b); err != nil {
		t.Errorf("done without a page: %v", err)
	}
}

func TestChatActNavigation(t *testing.T) {
	ctx := context.Background()
	// A click that changed the address a moment later, with no link: reported.
	page := &fakeActPage{addr: "https://app.test/list"}
	page.answer = func(tool string, args map[string]any) (string, error) {
		go func() {
			time.Sleep(60 * time.Millisecond)
			page.mu.Lock()
			page.addr = "https://app.test/detail/7"
			page.mu.Unlock()
		}()
		return `{"clicked":"button \"Open\" [e3]","name":"open","navigated":false,"mayLeave":false,"url":"https://app.test/list"}`, nil
	}
	out, err := newActState(time.Now).run(ctx, page, "click", json.RawMessage(`{"ref":"e3"}`))
	if err != nil || !strings.Contains(string(out), `"navigation":"the page's address changed after the click, from https://app.test/list to https://app.test/detail/7`) {
		t.Errorf("click = %s, %v", out, err)
	}
	// A click after which the page session ends.
	page = &fakeActPage{addr: "https://app.test/list"}
	page.answer = func(tool string, args map[string]any) (string, error) {
		go func() {
			time.Sleep(60 * time.Millisecond)
			page.mu.Lock()
			page.gone = true
			page.mu.Unlock()
		}()
		return `{"clicked":"button \"Go\" [e3]","name":"go","navigated":false,"mayLeave":false,"url":"https://app.test/list"}`, nil
	}
	out, _ = newActState(time.Now).run(ctx, page, "click", json.RawMessage(`{"ref":"e3"}`))
	if !strings.Contains(string(out), "unexpected: the click made the tab load a new page") {
		t.Errorf("click = %s", out)
	}
	// A click that changed the address at once (pushState), as the page agent saw.
	page = &fakeActPage{addr: "https://app.test/list", answer: func(tool string, args map[string]any) (string, error) {
		return `{"clicked":"tab \"Details\" [e4]","name":"details","navigated":true,"mayLeave":false,"url":"https://app.test/list?tab=details"}`, nil
	}}
	out, _ = newActState(time.Now).run(ctx, page, "click", json.RawMessage(`{"ref":"e4"}`))
	if !strings.Contains(string(out), "the page's address changed with the click, to https://app.test/list?tab=details (a same-page navigation)") {
		t.Errorf("click = %s", out)
	}
	// Nothing happens: no note.
	page = &fakeActPage{addr: "https://app.test/list", answer: func(tool string, args map[string]any) (string, error) {
		return `{"clicked":"button \"Go\" [e3]","name":"go","navigated":false,"mayLeave":false,"url":"https://app.test/list"}`, nil
	}}
	out, _ = newActState(time.Now).run(ctx, page, "click", json.RawMessage(`{"ref":"e3"}`))
	if strings.Contains(string(out), "navigation") {
		t.Errorf("click = %s", out)
	}
	// The page goes while a tool waits: said plainly.
	gone := &fakeActPage{addr: "https://app.test/list", answer: func(tool string, args map[string]any) (string, error) {
		return "", pagesession.ErrGone
	}}
	if _, err := newActState(time.Now).run(ctx, gone, "type", json.RawMessage(`{"ref":"e3","text":"x"}`)); err == nil ||
		!strings.Contains(err.Error(), "type: the page went away before answering") {
		t.Errorf("type on a page that went: %v", err)
	}
}

// TestChatActDoneAfterASubmit: input left in a form the agent then submitted counts as saved
// (many apps keep the saved value in the field); input changed after the last submit does not.
func TestChatActDoneAfterASubmit(t *testing.T) {
	ctx := context.Background()
	page := &fakeActPage{addr: "https://app.test/settings", answer: func(tool string, args map[string]any) (string, error) {
		switch tool {
		case "page_state":
			return `{"dialogs": [], "forms": [{"container": "form \"Profile\"", "unsaved": ["Name"]}]}`, nil
		case "click":
			return `{"clicked": "button \"Save\"", "submits": "form \"Profile\"", "navigated": false}`, nil
		}
		return `{}`, nil
	}}
	st := newActState(time.Now)
	done := func() error {
		_, err := st.run(ctx, page, "done", json.RawMessage(`{"summary": "Saved the new name."}`))
		return err
	}
	if _, err := st.run(ctx, page, "type", json.RawMessage(`{"ref": "e1", "text": "Ada"}`)); err != nil {
		t.Fatal(err)
	}
	if err := done(); err == nil || !strings.Contains(err.Error(), "unsaved input") {
		t.Errorf("done before saving = %v, want a refusal naming the unsaved input", err)
	}
	if _, err := st.run(ctx, page, "click", json.RawMessage(`{"text": "Save", "resubmit": true}`)); err != nil {
		t.Fatal(err)
	}
	if err := done(); err != nil {
		t.Errorf("done after the submit = %v, want accepted", err)
	}
	time.Sleep(time.Millisecond)
	if _, err := st.run(ctx, page, "type", json.RawMessage(`{"ref": "e1", "text": "Grace"}`)); err != nil {
		t.Fatal(err)
	}
	if err := done(); err == nil {
		t.Error("done after changing the field again was accepted")
	}
}
