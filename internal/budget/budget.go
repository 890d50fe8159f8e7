// Package budget is a bound on bytes that many holders take from at once: the proxy's zstd
// windows (proxy/internal/httpx), the events waiting in the sandbox's runtimes (sandbox). It
// only counts; what is refused when a take does not fit is the caller's decision, and a
// holder must give back exactly what it took.
package budget

import "sync"

// Bytes is one bound and what its holders have taken from it.
type Bytes struct {
	mu    sync.Mutex
	used  int64
	limit int64
}

// New returns a bound of limit bytes.
func New(limit int64) *Bytes {
	return &Bytes{limit: limit}
}

// Take takes n bytes; false, taking nothing, when they do not fit.
func (b *Bytes) Take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.used+n > b.limit {
		return false
	}
	b.used += n
	return true
}

// Give gives back n bytes taken before.
func (b *Bytes) Give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// InUse is how much the holders hold now.
func (b *Bytes) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
