package page

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// A page's same-document navigations (nav messages) reach the listeners at a bounded rate. Each
// one makes the remixlet runner match the page's remixlets again, which reads the store and may
// start or stop sandboxes: about a millisecond of the proxy's time or more. A page's own
// history.pushState is throttled by the browser (Chromium allows 200 in ten seconds), but a
// page that holds a session of its own (a same-origin popup's opener, a plain-http page that
// forged a navigation: NOTES, red-team passes 2 and 3) writes nav messages at the socket's
// speed and kept a core of the proxy busy with them. So the session's URL still follows every
// nav at once (it is cheap, and every check reads it), but the listeners hear of navigations
// at most navBurst at once and navPerSecond after that; the ones between are merged into one
// that comes when the rate allows, with the URL of that moment.

const (
	navBurst     = 32
	navPerSecond = 10
)

// navRate is one session's budget of navigations for the listeners: a token bucket
// (golang.org/x/time/rate) and whether a merged navigation is scheduled.
type navRate struct {
	mu       sync.Mutex
	lim      *rate.Limiter
	deferred bool // a merged navigation is scheduled
}

func newNavRate(now time.Time) *navRate {
	lim := rate.NewLimiter(navPerSecond, navBurst)
	lim.AllowN(now, 0) // the bucket starts full at now, the clock the caller passes
	return &navRate{lim: lim}
}

// take is asked for each navigation at now: now is true when the listeners hear of it at once;
// otherwise, when after is not zero, the caller schedules one merged navigation after that long
// and calls fire when it runs. A navigation while a merged one is scheduled is part of it.
func (r *navRate) take(now time.Time) (ok bool, after time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.deferred {
		return false, 0
	}
	if r.lim.AllowN(now, 1) {
		return true, 0
	}
	r.deferred = true
	// The merged navigation's token is reserved now: fire only ends the wait.
	after = r.lim.ReserveN(now, 1).DelayFrom(now)
	if after <= 0 {
		after = time.Millisecond
	}
	return false, after
}

// fire is called when the merged navigation runs.
func (r *navRate) fire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deferred = false
}
