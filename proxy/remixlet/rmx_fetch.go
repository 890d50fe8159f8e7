package remixlet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/remixproxy/remixproxy/proxy/fetch"
	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// rmx.fetch (permission fetch:HOST): the remixlet's request, sent by the proxy as the person to
// a host a fetch: permission names exactly (fetch.Client.Fetch holds every check of the address,
// its redirects, headers and sizes; each refusal goes to the remixlet's log). A remixlet has at
// most maxFetchInFlight fetches running at once, and the result must fit in the sandbox's
// answer limit (sandbox.Limits.MaxMessageBytes, 256 KiB by default).

// maxFetchInFlight bounds the fetches of one remixlet running at once.
const maxFetchInFlight = 6

// fetchSlots counts the fetches running, by remixlet.
type fetchSlots struct {
	mu       sync.Mutex
	inFlight map[string]int
}

// rmxFetch answers rmx.fetch(url, options).
func rmxFetch(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	if len(h.manifest.FetchHosts()) == 0 {
		return nil, &httpx.Refusal{Why: "rmx.fetch needs a fetch:HOST permission in manifest.json"}
	}
	n := h.p.r.net
	if n == nil {
		return nil, &httpx.Refusal{Why: "rmx.fetch is not available in this proxy"}
	}
	var rawURL string
	if len(args) < 1 || json.Unmarshal(args[0], &rawURL) != nil {
		return nil, &httpx.Refusal{Why: "the first argument must be the address, a string"}
	}
	var opts fetch.Options
	if len(args) > 1 && string(args[1]) != "null" {
		if err := json.Unmarshal(args[1], &opts); err != nil {
			return nil, &httpx.Refusal{Why: "options must be {method, headers, body, as} with string values"}
		}
	}
	if !h.p.r.fetches.acquire(h.id) {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("more than %d fetches at once", maxFetchInFlight)}
	}
	defer h.p.r.fetches.release(h.id)
	res, err := n.Fetch(ctx, h.manifest.FetchHosts(), rawURL, opts)
	if err != nil {
		var ref *httpx.Refusal
		if !errors.As(err, &ref) {
			h.p.r.logf(h.id, "warn", "rmx.fetch failed: %v", err)
		}
		return nil, err
	}
	out, err := json.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("rmx.fetch: encoding the result: %w", err)
	}
	if limit := h.p.r.messageLimit(); len(out) > limit {
		return nil, &httpx.Refusal{Why: fmt.Sprintf("the response is %d bytes as a result, more than the %d bytes a remixlet can receive in one answer", len(out), limit)}
	}
	return out, nil
}

func (f *fetchSlots) acquire(remixlet string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inFlight == nil {
		f.inFlight = map[string]int{}
	}
	if f.inFlight[remixlet] >= maxFetchInFlight {
		return false
	}
	f.inFlight[remixlet]++
	return true
}

func (f *fetchSlots) release(remixlet string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inFlight[remixlet]--; f.inFlight[remixlet] <= 0 {
		delete(f.inFlight, remixlet)
	}
}

// messageLimit is the largest answer a remixlet's sandbox accepts (sandbox.Limits.MaxMessageBytes).
func (r *Runner) messageLimit() int {
	return r.supCfg.Limits.WithDefaults().MaxMessageBytes
}
