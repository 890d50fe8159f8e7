package remixlet

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// rmx.storage.onChange(callback): a remixlet's pages hear of the rmx.storage changes its other
// pages make. The callback gets {key, value} (value null when the key was removed). The page
// that made the change is not told (it knows). Events go only to the same remixlet's sandboxes,
// through Handle.Dispatch; the page agent's events cannot reach these listeners.

// maxStorageWatchers bounds the onChange callbacks of one remixlet on one page.
const maxStorageWatchers = 10

// storageWatchers are the onChange callbacks of a remixlet's running pages.
type storageWatchers struct {
	mu sync.Mutex
	m  map[*remixletHost][]int64 // listeners by page
}

// storageWatching holds the storageWatchers of each remixlet.
type storageWatching struct {
	mu sync.Mutex
	m  map[string]*storageWatchers // by remixlet
}

func (r *Runner) storageWatchers(remixlet string) *storageWatchers {
	sw := &r.watchers
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.m == nil {
		sw.m = map[string]*storageWatchers{}
	}
	w := sw.m[remixlet]
	if w == nil {
		w = &storageWatchers{m: map[*remixletHost][]int64{}}
		sw.m[remixlet] = w
	}
	return w
}

func rmxStorageOnChange(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error) {
	if !h.manifest.HasPermission(sandbox.PermStorage) {
		return nil, &httpx.Refusal{Why: "rmx.storage needs the storage permission in manifest.json"}
	}
	listener, err := listenerArg(args, 0, "the callback")
	if err != nil {
		return nil, err
	}
	w := h.p.r.storageWatchers(h.id)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.m[h]) >= maxStorageWatchers {
		return nil, &httpx.Refusal{Why: "more than 10 rmx.storage.onChange callbacks"}
	}
	w.m[h] = append(w.m[h], listener)
	return nil, nil
}

// storageEvent is what an rmx.storage.onChange callback receives.
type storageEvent struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// storageChanged tells the remixlet's other pages that key changed to value (null: removed).
// Pages that are gone are forgotten.
func (h *remixletHost) storageChanged(key string, value json.RawMessage) {
	if len(value) == 0 {
		value = json.RawMessage("null")
	}
	w := h.p.r.storageWatchers(h.id)
	w.mu.Lock()
	type target struct {
		h         *remixletHost
		listeners []int64
	}
	var targets []target
	for other, ls := range w.m {
		if other != h {
			targets = append(targets, target{other, append([]int64(nil), ls...)})
		}
	}
	w.mu.Unlock()
	ev := storageEvent{Key: key, Value: value}
	for _, t := range targets {
		go func() {
			defer httpx.Recovered(h.p.r.log, "delivering a storage change")
			for _, l := range t.listeners {
				if err := t.h.p.dispatch(t.h, l, ev); err != nil {
					w.mu.Lock()
					delete(w.m, t.h)
					w.mu.Unlock()
					return
				}
			}
		}()
	}
}
