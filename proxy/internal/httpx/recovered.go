package httpx

import (
	"log/slog"
	"runtime/debug"
)

// Recovered, deferred at the top of a goroutine the proxy starts in the background, turns a
// panic into a line in log: the proxy must never go down because of one page, remixlet or
// upstream (a decoder fed a hostile body, a bug in one feature). net/http already does this
// for request handlers; these goroutines are outside them. Each caller passes its own
// configured logger; nil falls back to slog.Default.
func Recovered(log *slog.Logger, what string) {
	v := recover()
	if v == nil {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	log.Error("recovered from a panic; the proxy goes on", "in", what, "panic", v, "stack", string(debug.Stack()))
}
