package remixlet

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// rmx.notify(title, body?): a text notification, shown by the page agent as a toast in its
// closed shadow root (textContent, never HTML) and as a system notification only where the page's
// origin already has that permission (panel.Notify). Bounded lengths; at most
// panel.NotifyPerMinute a minute per remixlet, across all its pages.

// Limits of rmx.notify.
const (
	maxNotifyTitle = 100 // characters
	maxNotifyBody  = 500 // characters
)

func rmxNotify(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	if !h.manifest.HasPermission(sandbox.PermNotifications) {
		return nil, &httpx.Refusal{Why: "rmx.notify needs the notifications permission in manifest.json"}
	}
	title, body, err := notifyText(args)
	if err != nil {
		return nil, err
	}
	if !h.p.r.notifyRate(h.id).allow(h.p.r.clock()) {
		return nil, &httpx.Refusal{Why: "more than 5 notifications in a minute"}
	}
	h.p.r.logf(h.id, "info", "notification: %s", oneLine(title, body))
	if err := h.p.tell(ctx, h, panel.Notify{Type: panel.TypeNotify, Remixlet: h.id, Source: h.manifest.Name, Title: title, Body: body}); err != nil {
		return nil, err
	}
	return nil, nil
}

// notifyText reads and checks (title, body?) of rmx.notify.
func notifyText(args []json.RawMessage) (title, body string, err error) {
	title, err = rmxString(args, 0, "the title", 4*maxNotifyTitle, false)
	if err != nil {
		return "", "", err
	}
	body, err = rmxString(args, 1, "the body", 4*maxNotifyBody, true)
	if err != nil {
		return "", "", err
	}
	return checkNotifyText(title, body)
}

// checkNotifyText checks the lengths (in characters) of a notification and that the title is not
// blank; rmx.notify and schedule {notify} actions share it.
func checkNotifyText(title, body string) (string, string, error) {
	switch {
	case strings.TrimSpace(title) == "":
		return "", "", &httpx.Refusal{Why: "the title is empty"}
	case len([]rune(title)) > maxNotifyTitle:
		return "", "", &httpx.Refusal{Why: "the title is longer than 100 characters"}
	case len([]rune(body)) > maxNotifyBody:
		return "", "", &httpx.Refusal{Why: "the body is longer than 500 characters"}
	}
	return title, body, nil
}

// oneLine renders a notification for a log line.
func oneLine(title, body string) string {
	s := title
	if body != "" {
		s += " — " + body
	}
	return httpx.Clip(strings.Join(strings.Fields(s), " "), 700)
}

// notifyRates are the remixlets' notification rate windows, each shared by its pages.
type notifyRates struct {
	mu sync.Mutex
	m  map[string]*minuteRate // by remixlet
}

// notifyRate returns the notification rate window of a remixlet, shared by its pages.
func (r *Runner) notifyRate(remixlet string) *minuteRate {
	n := &r.notifyRates
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[string]*minuteRate{}
	}
	m := n.m[remixlet]
	if m == nil {
		m = &minuteRate{max: panel.NotifyPerMinute}
		n.m[remixlet] = m
	}
	return m
}

// minuteRate allows at most max events in any minute.
type minuteRate struct {
	max int

	mu    sync.Mutex
	times []time.Time
}

func (m *minuteRate) allow(now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	keep := m.times[:0]
	for _, t := range m.times {
		if now.Sub(t) < time.Minute {
			keep = append(keep, t)
		}
	}
	m.times = keep
	if len(m.times) >= m.max {
		return false
	}
	m.times = append(m.times, now)
	return true
}
