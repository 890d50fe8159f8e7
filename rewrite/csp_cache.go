package rewrite

import "sync"

// A site sends the same Content-Security-Policy with every page, and the proxy reads each
// header value four times per page (BlocksInjection, PageNonce, ExternalAllowed, AdjustCSP):
// parsing was most of the policy work of an injection. parsedPolicies keeps the parse of recent
// values, keyed by the exact value, so a policy is parsed once rather than four times a page.
// A parse depends on nothing but the value and is only read, never changed, so a cached one is
// the one a new parse would give (TestParsedPoliciesCache). Policies that change with every
// page (a fresh nonce in the value) miss and are parsed as before.

// maxCachedPolicies bounds the cache; when it is full it is emptied.
const maxCachedPolicies = 256

// maxCachedPolicyLen is the longest value kept; longer ones are parsed every time.
const maxCachedPolicyLen = 8 << 10

var policyCache struct {
	mu sync.Mutex
	m  map[string][]cspPolicy
}

// parsedPolicies is parsePolicies(v), from the cache when v was parsed recently. The result is
// shared: callers only read it.
func parsedPolicies(v string) []cspPolicy {
	if len(v) > maxCachedPolicyLen {
		return parsePolicies(v)
	}
	policyCache.mu.Lock()
	p, ok := policyCache.m[v]
	policyCache.mu.Unlock()
	if ok {
		return p
	}
	p = parsePolicies(v)
	policyCache.mu.Lock()
	if policyCache.m == nil || len(policyCache.m) >= maxCachedPolicies {
		policyCache.m = make(map[string][]cspPolicy, maxCachedPolicies)
	}
	policyCache.m[v] = p
	policyCache.mu.Unlock()
	return p
}

// AdjustCSP's answers are kept the same way, keyed by the exact value and the needs: a page's
// needs depend only on its scheme, its policy's nonce and the bootstrap, so one site's pages
// ask the same question again and again.

// adjustKey is a value and the needs it is adjusted for, comparable without allocating; needs
// with more sources than it holds are not cached.
type adjustKey struct {
	value, hash, nonce    string
	src, connect, frame   [2]string
	nsrc, nconnect, nfrme uint8
}

// makeAdjustKey is the key of AdjustCSP(value, n), ok false when it cannot be cached.
func makeAdjustKey(value string, n CSPNeeds) (k adjustKey, ok bool) {
	if len(value) > maxCachedPolicyLen || len(n.ScriptSrc) > 2 || len(n.Connect) > 2 || len(n.Frame) > 2 {
		return adjustKey{}, false
	}
	k = adjustKey{value: value, hash: n.ScriptHash, nonce: n.Nonce,
		nsrc: uint8(len(n.ScriptSrc)), nconnect: uint8(len(n.Connect)), nfrme: uint8(len(n.Frame))}
	copy(k.src[:], n.ScriptSrc)
	copy(k.connect[:], n.Connect)
	copy(k.frame[:], n.Frame)
	return k, true
}

var adjustCache struct {
	mu sync.Mutex
	m  map[adjustKey]string
}

// AdjustCSP returns value (one header value or meta content) changed so the bootstrap can run
// and connect: adjustCSP's answer, which csp.go describes in full, kept for recent values and
// needs (TestAdjustCSPCache).
func AdjustCSP(value string, n CSPNeeds) string {
	k, ok := makeAdjustKey(value, n)
	if !ok {
		return adjustCSP(value, n)
	}
	adjustCache.mu.Lock()
	out, hit := adjustCache.m[k]
	adjustCache.mu.Unlock()
	if hit {
		return out
	}
	out = adjustCSP(value, n)
	adjustCache.mu.Lock()
	if adjustCache.m == nil || len(adjustCache.m) >= maxCachedPolicies {
		adjustCache.m = make(map[adjustKey]string, maxCachedPolicies)
	}
	adjustCache.m[k] = out
	adjustCache.mu.Unlock()
	return out
}
