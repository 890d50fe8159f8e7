package remixlet

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

func TestObservedSessionBounds(t *testing.T) {
	var r observedSession
	for range maxObservedPerPage + 20 {
		r.Add(ObservedResponse{URL: "https://a.test/", Body: "x"}, observedLimits)
	}
	if len(r.Items) != maxObservedPerPage {
		t.Errorf("kept %d responses, want %d", len(r.Items), maxObservedPerPage)
	}
	for range 10 {
		r.Add(ObservedResponse{URL: "https://a.test/", Body: strings.Repeat("y", maxObservedBody)}, observedLimits)
	}
	if r.Bytes > maxObservedPerPageBytes {
		t.Errorf("kept %d bytes, limit %d", r.Bytes, maxObservedPerPageBytes)
	}
}

func TestRMXNetworkResponsesNeedsThePermission(t *testing.T) {
	st := openTestStore(t)
	rx := addTestRemixlet(t, st, "watcher", `"https://shop.test/*"`, `{"name": "network:observe:api.shop.test", "reason": "prices"}`, rxTestScript)
	r := newRunner(st, sandbox.SupervisorConfig{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.standingTTL = 0
	t.Cleanup(r.Close)
	fp := &fakePage{url: "https://shop.test/"}
	fp.run = r.newPageRun(fp.conn())
	h := fp.run.newHost(rx.id, rx.versionID, rx.manifest)
	ctx := context.Background()

	for _, args := range []string{`[{"host": "bank.test"}]`, `[{"host": "shop.test"}]`, `[{"host": "evil.api.shop.test"}]`,
		`[{"host": "api.shop.test\u3002bank.test"}]`, `[{"host": "\uff42ank.test"}]`} {
		_, err := h.Call(ctx, "rmx", "network.responses", json.RawMessage(args))
		var ref *httpx.Refusal
		if !errors.As(err, &ref) || !strings.Contains(ref.Why, "needs the network:observe:") {
			t.Errorf("network.responses(%s) = %v; want a refusal", args, err)
		}
	}
	waitLog(t, st, rx.id, "needs the network:observe:bank.test permission")
	// The host is read as the browser reads it: every spelling of the observed host is it.
	for _, args := range []string{`[{"host": "API.shop.test."}]`, `[{"host": "api.shop.test", "path": "/v1", "since": 5}]`,
		`[{"host": "\uff41\uff50\uff49.shop.test"}]`, `[{"host": "api\u3002shop\uff0etest"}]`, `[{"host": "api.%73hop.test"}]`} {
		got, err := h.Call(ctx, "rmx", "network.responses", json.RawMessage(args))
		if err != nil || string(got) != "[]" {
			t.Errorf("network.responses(%s) = %s, %v; want []", args, got, err)
		}
	}
	_, err := h.Call(ctx, "rmx", "network.onResponse", json.RawMessage(`[{"host": "bank.test"}, {"$listener": 3}]`))
	if err == nil || !strings.Contains(err.Error(), "needs the network:observe:bank.test permission") {
		t.Errorf("network.onResponse for another host: %v", err)
	}
	for _, args := range []string{`[{"host": "api.shop.test/x"}]`, `[{"host": "me@api.shop.test"}]`, `[{"host": "api.shop.test:443"}]`} {
		if _, err := h.Call(ctx, "rmx", "network.responses", json.RawMessage(args)); err == nil || !strings.Contains(err.Error(), "not a host") {
			t.Errorf("network.responses(%s) = %v; want a refusal: not a host", args, err)
		}
	}
	if _, err := h.Call(ctx, "rmx", "network.onResponse", json.RawMessage(`[{"host": "api.shop.test"}, 3]`)); err == nil || !strings.Contains(err.Error(), "must be a function") {
		t.Errorf("network.onResponse without a callback: %v", err)
	}
	if _, err := h.Call(ctx, "rmx", "network.onResponse", json.RawMessage(`[{"host": "api.shop.test"}, {"$listener": 3}]`)); err != nil {
		t.Errorf("network.onResponse: %v", err)
	}
	// network:observe allows no loads: it is not a fetch: permission.
	if _, err := h.Call(ctx, "rmx", "fetch", json.RawMessage(`["https://api.shop.test/"]`)); err == nil || !strings.Contains(err.Error(), "needs a fetch:HOST permission") {
		t.Errorf("rmx.fetch with only network:observe: %v", err)
	}
}

func TestFitObservedKeepsAnswersWithinTheSandboxLimit(t *testing.T) {
	var rs []ObservedResponse
	for i := range 10 {
		rs = append(rs, ObservedResponse{URL: "https://a.test/" + strings.Repeat("p", i), Body: strings.Repeat("\"é", 20<<10)})
	}
	const limit = 256 << 10
	got := fitObserved(rs, limit)
	b, _ := json.Marshal(got)
	if len(b) > limit || len(got) == 0 || got[len(got)-1].URL != rs[len(rs)-1].URL {
		t.Errorf("fitObserved kept %d responses in %d bytes; want the newest, within %d", len(got), len(b), limit)
	}
	one := fitObserved([]ObservedResponse{{URL: "https://a.test/", Body: strings.Repeat("\"é", 100<<10)}}, limit)
	b, _ = json.Marshal(one)
	if len(b) > limit || len(one) != 1 || !one[0].Truncated || !utf8.ValidString(one[0].Body) || one[0].Body == "" {
		t.Errorf("one large response: %d bytes, truncated %v", len(b), one[0].Truncated)
	}
}
