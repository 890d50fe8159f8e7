// Package httpx holds the small helpers every part of the proxy shares: cutting text to a
// bound without splitting a character, the proxy's magic host name, the refusal a policy check
// returns, origins and addresses as requests carry them, the headers and bodies of the proxy's
// own answers, decoding and copying response bodies, and recovering a background goroutine
// from a panic.
//
// It sits at the bottom of proxy/: every proxy package may import it, and it imports no proxy
// package (only the standard library, the body decoders and internal/weburl, a leaf). It must
// never hold state, start work of its own, or decide a policy: each check that matters lives
// with the thing it guards, under a name a reviewer can search for.
package httpx
