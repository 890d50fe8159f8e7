// Package sessionlog keeps what the proxy records for a page session — the JSON answers of the
// page-data tap (proxy/page), the responses of network:observe (proxy/remixlet) — within bounds
// per session and for all sessions together. It sits beside the taps, after a response has been
// read; it never decides what may be recorded (httpx.PageCanRead does), only how much is kept.
//
// Past the bound for all sessions, the oldest item of the largest session of the site whose
// sessions hold the most bytes goes, until all fit: one site's pages flooding the record lose
// their own first, and another site's page keeps what it has.
package sessionlog

// Log is one session's record, oldest first.
type Log[T any] struct {
	Items []T
	Bytes int    // the sizes of Items
	Site  string // the session's site (weburl.Site of its page's host)
}

// Limits are a kind of record's bounds.
type Limits[T any] struct {
	PerSession      int // items in one session
	PerSessionBytes int // bytes in one session (its newest item is kept even when larger)
	AllBytes        int // bytes in every session together
	Size            func(T) int
}

// Add appends v to l within the bounds of one session, dropping l's oldest items past them.
func (l *Log[T]) Add(v T, lim Limits[T]) {
	l.Items = append(l.Items, v)
	l.Bytes += lim.Size(v)
	for len(l.Items) > lim.PerSession || (l.Bytes > lim.PerSessionBytes && len(l.Items) > 1) {
		l.dropOldest(lim)
	}
}

func (l *Log[T]) dropOldest(lim Limits[T]) int {
	n := lim.Size(l.Items[0])
	l.Bytes -= n
	var zero T
	l.Items[0] = zero
	l.Items = l.Items[1:]
	return n
}

// Record adds v to l, one of the sessions of all, within l's bounds and within lim.AllBytes
// for all; *total is the bytes of all sessions and is kept up to date. The caller holds the
// lock that guards all.
func Record[K comparable, T any](all map[K]*Log[T], total *int, l *Log[T], v T, lim Limits[T]) {
	before := l.Bytes
	l.Add(v, lim)
	*total += l.Bytes - before
	for *total > lim.AllBytes {
		bySite := map[string]int{}
		for _, s := range all {
			bySite[s.Site] += s.Bytes
		}
		site, most := "", -1
		for s, n := range bySite {
			if n > most || n == most && s < site {
				site, most = s, n
			}
		}
		var victim *Log[T]
		for _, s := range all {
			if s.Site == site && len(s.Items) > 0 && (victim == nil || s.Bytes > victim.Bytes) {
				victim = s
			}
		}
		if victim == nil {
			return
		}
		*total -= victim.dropOldest(lim)
	}
}
