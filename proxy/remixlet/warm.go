package remixlet

import (
	"context"
	"errors"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/sandbox"
)

// A warm sandbox: the sandbox host (a child process, sandbox.Supervisor) takes tens to hundreds
// of milliseconds to start, so it is not started by the first page that needs it but ahead:
// when the proxy starts with a remixlet that has a script switched on (Warm, from proxy.New),
// when one is switched on or activated (Activator.Applied), and, for one enabled behind the
// proxy's back (the CLI writes the store), when the proxy injects into a page while no host runs
// (Prepare: the page agent connects tens of milliseconds later). Once started, the supervisor
// restarts a host that dies in the background, with backoff (sandbox.Supervisor); a host that
// cannot be started at all is tried again after supervisorRetry.

// supervisorRetry is how long after a failed start of the sandbox host the runner tries again.
const supervisorRetry = 10 * time.Second

// Warm starts the sandbox host in the background if some enabled remixlet has a script and the
// host is not running yet. It returns at once.
func (r *Runner) Warm() {
	if r.warmRunning() || !r.warming.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer r.warming.Store(false)
		defer httpx.Recovered(r.log, "starting the sandbox host ahead of the first page")
		ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
		defer cancel()
		if !r.anyScriptEnabled(ctx) {
			return
		}
		if _, err := r.supervisor(); err != nil {
			if !errors.Is(err, sandbox.ErrSupervisorClosed) { // the proxy is closing
				r.log.Warn("the sandbox host could not start ahead of the first page", "err", err)
			}
			return
		}
		r.log.Debug("sandbox host started ahead of the first page")
	}()
}

// Prepare is told that the proxy is injecting the page agent into a page; if no sandbox host
// runs, it warms one (Warm) so it is ready when the page agent connects. It costs one atomic
// load when the host runs. When none runs (no remixlet with a script is on: the common case for
// a person with only stylesheets, or none), it asks the injection's copy of the remixlets'
// standing (firstframe.go), which the same page's first-frame sheets read next: the store is
// read again only after this process wrote to it or standingMaxAge passed, not for every page
// (a store read per injected page nearly doubled the proxy's CPU per small page, e2e/bench).
func (r *Runner) Prepare() {
	if r.warmRunning() {
		return
	}
	if c, err := r.standing(r.ctx); err == nil && c.anyScript() {
		r.Warm()
	}
}

// warmRunning reports whether the supervisor has started (its child may be restarting).
func (r *Runner) warmRunning() bool { return r.supStarted.Load() }

// anyScriptEnabled reports whether some remixlet is enabled, not archived, and has an active
// version with a script.
func (r *Runner) anyScriptEnabled(ctx context.Context) bool {
	c, err := r.standing(ctx)
	if err != nil {
		r.log.Warn("listing remixlets to warm the sandbox", "err", err)
		return false
	}
	return c.anyScript()
}
