package proxy

import (
	"log/slog"
	"runtime/debug"
)

// recovered, deferred at the top of a goroutine the proxy starts in the background, turns a
// panic into a log line: the proxy must never go down because of one page, remixlet or upstream
// (a decoder fed a hostile body, a bug in one feature). net/http already does this for request
// handlers; these goroutines are outside them. log may be nil (slog.Default).
func recovered(log *slog.Logger, what string) {
	v := recover()
	if v == nil {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	log.Error("recovered from a panic; the proxy goes on", "in", what, "panic", v, "stack", string(debug.Stack()))
}
