package remixlet

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
)

func TestNotify(t *testing.T) {
	ctx := context.Background()
	st := openTestStore(t)
	h, f := newServiceHost(t, st, "price watch", sandbox.PermNotifications)

	html := `<img src=x onerror=alert(1)>`
	if _, err := h.Call(ctx, "rmx", "notify", json.RawMessage(`["`+html+`", "now <b>12</b>"]`)); err != nil {
		t.Fatalf("notify: %v", err)
	}
	got := sentOf[panel.Notify](f)
	want := panel.Notify{Type: panel.TypeNotify, Remixlet: h.id, Source: "price watch", Title: html, Body: "now <b>12</b>"}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("the page got %+v, want %+v (the text as it was, to be shown as text)", got, want)
	}
	waitLog(t, st, h.id, "notification: "+html)

	for _, tt := range []struct{ name, args, want string }{
		{"title not text", `[{"a": 1}]`, "must be a string"},
		{"body not text", `["t", ["b"]]`, "must be a string"},
		{"no title", `[]`, "missing"},
		{"blank title", `["  "]`, "empty"},
		{"long title", `["` + strings.Repeat("é", maxNotifyTitle+1) + `"]`, "longer than 100"},
		{"long body", `["t", "` + strings.Repeat("b", maxNotifyBody+1) + `"]`, "longer than 500"},
	} {
		before := len(sentOf[panel.Notify](f))
		_, err := h.Call(ctx, "rmx", "notify", json.RawMessage(tt.args))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want a refusal containing %q", tt.name, err, tt.want)
		}
		if len(sentOf[panel.Notify](f)) != before {
			t.Errorf("%s: refused, but shown", tt.name)
		}
	}

	// At most NotifyPerMinute a minute per remixlet, across its pages.
	h2, f2 := newServiceHost(t, st, "other", sandbox.PermNotifications)
	_ = f2
	refused := 0
	for i := 0; i < panel.NotifyPerMinute+2; i++ {
		if _, err := h2.Call(ctx, "rmx", "notify", json.RawMessage(`["n"]`)); err != nil {
			if !strings.Contains(err.Error(), "more than 5 notifications in a minute") {
				t.Fatalf("notify %d: %v", i, err)
			}
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("%d of %d notifications refused, want 2", refused, panel.NotifyPerMinute+2)
	}
}

func TestMinuteRate(t *testing.T) {
	m := &minuteRate{max: 2}
	t0 := time.Unix(1000, 0)
	if !m.allow(t0) || !m.allow(t0.Add(time.Second)) || m.allow(t0.Add(2*time.Second)) {
		t.Fatal("want two allowed, the third refused")
	}
	if !m.allow(t0.Add(time.Minute)) {
		t.Error("after a minute the first slot is free again")
	}
}
