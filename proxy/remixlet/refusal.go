package remixlet

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
)

// The answer every remixlet guard gives what it refuses, on the request side (a request that
// never leaves) and on the response side (an answer replaced): a 403 in plain text, never cached
// or sniffed, whose first line says what was refused and whose second says what to do — which
// remixlet, what it would need, and where the manager shows its log of the refusal. The
// remixlet's log has the address; the body does not repeat it.

// managerAddress is where a person finds a remixlet's log of what its guards refused.
const managerAddress = "https://" + httpx.MagicHost + "/manager"

// refusalHeader is the header of every remixlet guard's refusal.
func refusalHeader() http.Header {
	h := http.Header{"Cache-Control": {"no-store"}}
	httpx.SetType(h, "text/plain; charset=utf-8")
	return h
}

// writeRefusal answers a request a remixlet guard refuses before it leaves, with body
// (refusalBody). Headers already set on w (netrules' X-Remixproxy) stay.
func writeRefusal(w http.ResponseWriter, body []byte) {
	maps.Copy(w.Header(), refusalHeader())
	w.WriteHeader(http.StatusForbidden)
	w.Write(body)
}

// replaceWithRefusal replaces an answer a remixlet guard refuses with the same refusal.
func replaceWithRefusal(resp *http.Response, body []byte) {
	httpx.ReplaceResponse(resp, http.StatusForbidden, refusalHeader(), body)
}

// maxRefusalNames bounds the remixlets a refusal names; the rest are counted.
const maxRefusalNames = 3

// refusalBody is a refusal's text: "remixproxy: " what, then on its own line the remixlets
// concerned by name (none when names is empty), todo, and where their logs are.
func refusalBody(what string, names []string, todo string) []byte {
	var b strings.Builder
	b.WriteString("remixproxy: ")
	b.WriteString(what)
	b.WriteString("\n")
	names = uniqueNames(names)
	switch {
	case len(names) == 1:
		b.WriteString("Remixlet ")
	case len(names) > 1:
		b.WriteString("Remixlets ")
	}
	for i, n := range names {
		if i == maxRefusalNames {
			b.WriteString(" and " + strconv.Itoa(len(names)-i) + " more")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(httpx.Clip(n, 80)))
	}
	if len(names) > 0 {
		b.WriteString(": ")
	} else if todo != "" {
		todo = strings.ToUpper(todo[:1]) + todo[1:]
	}
	b.WriteString(todo)
	switch len(names) {
	case 0:
		b.WriteString("; the logs of the page's remixlets in " + managerAddress + " say which address and why.\n")
	case 1:
		b.WriteString("; its log in " + managerAddress + " says which address and why.\n")
	default:
		b.WriteString("; their logs in " + managerAddress + " say which address and why.\n")
	}
	return []byte(b.String())
}

// uniqueNames is names without repeats, in their order.
func uniqueNames(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// hitNames is the names of the remixlets of hits, for refusalBody.
func hitNames(hits []guardHit) []string {
	names := make([]string, 0, len(hits))
	for _, h := range hits {
		if h.manifest != nil && h.manifest.Name != "" {
			names = append(names, h.manifest.Name)
		} else {
			names = append(names, h.remixlet)
		}
	}
	return names
}
