package rewrite

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
)

// cacheNeeds are needs that differ from each other in every field the answer depends on.
var cacheNeeds = []CSPNeeds{
	testNeeds,
	externalNeeds,
	withNonce(testNeeds, "abc123"),
	withNonce(externalNeeds, "abc123"),
	{ScriptSrc: []string{"http://remix.proxy"}, Connect: []string{"http://remix.proxy", "ws://remix.proxy"}, Frame: []string{"http://remix.proxy"}},
	{ScriptHash: ScriptHash([]byte("other()")), Connect: testNeeds.Connect, Frame: testNeeds.Frame},
	{ScriptSrc: []string{"https://a.test", "https://b.test", "https://c.test"}, Connect: testNeeds.Connect}, // too many to key
}

// TestAdjustCSPCache: AdjustCSP with its cache answers every value and needs as adjustCSP does,
// asked again, asked for other needs of the same value (a key missing a field would answer
// with another page's adjustment), from several goroutines (run with -race), and past the
// cache's bound.
func TestAdjustCSPCache(t *testing.T) {
	var values []string
	for _, c := range adjustCases {
		values = append(values, c.value)
	}
	for i := range maxCachedPolicies + 10 {
		values = append(values, fmt.Sprintf("script-src 'nonce-n%d' 'strict-dynamic'; connect-src 'self'", i))
	}
	// Needs that differ from the first in one field each, for a value where every field changes
	// the answer: asked one after the other, a key without that field answers wrongly.
	base := CSPNeeds{ScriptSrc: []string{"https://remix.proxy"}, Connect: []string{"https://remix.proxy", "wss://remix.proxy"}, Frame: []string{"https://remix.proxy"}}
	oneField := []CSPNeeds{base, withNonce(base, "abc123"), base, base, base, base, base, base}
	oneField[2].ScriptSrc = []string{"https://other.proxy"}
	oneField[3].Connect = []string{"https://remix.proxy"}
	oneField[4].Connect = []string{"https://remix.proxy", "wss://other.proxy"}
	oneField[5].Frame = []string{"https://other.proxy"}
	oneField[6].ScriptSrc, oneField[6].ScriptHash = nil, testHash
	oneField[7].ScriptSrc, oneField[7].ScriptHash = nil, ScriptHash([]byte("other()"))
	// Every field of CSPNeeds must be in adjustKey and have its case above: a field the key
	// misses would hand one page the policy adjusted for another's needs.
	if got, want := reflect.TypeOf(CSPNeeds{}).NumField(), 5; got != want {
		t.Fatalf("CSPNeeds has %d fields, this test covers %d: add the new one to adjustKey (csp_cache.go) and a case here", got, want)
	}
	const everyField = "default-src 'self'; script-src 'self' 'nonce-abc123' 'strict-dynamic'"
	answers := map[string]bool{}
	for _, n := range oneField {
		got, want := AdjustCSP(everyField, n), adjustCSP(everyField, n)
		if got != want {
			t.Errorf("AdjustCSP(%q, %+v) = %q, want adjustCSP's %q", everyField, n, got, want)
		}
		answers[want] = true
	}
	if len(answers) != len(oneField) {
		t.Errorf("%d needs gave %d answers, want as many (each field must matter for this test)", len(oneField), len(answers))
	}

	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 2 {
				for i, v := range values {
					n := cacheNeeds[(i+g+round)%len(cacheNeeds)]
					if got, want := AdjustCSP(v, n), adjustCSP(v, n); got != want {
						t.Errorf("AdjustCSP(%q, %+v) = %q, want adjustCSP's %q", v, n, got, want)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// TestParsedPoliciesCache: a cached parse is the parse, for values asked once and again, and
// for a value longer than the cache keeps.
func TestParsedPoliciesCache(t *testing.T) {
	long := "script-src 'self'"
	for len(long) <= maxCachedPolicyLen {
		long += " https://cdn.example"
	}
	values := []string{"", "script-src 'self'", "default-src 'none', script-src 'nonce-x'", " ;;connect-src  a  b ;", long}
	for _, c := range adjustCases {
		values = append(values, c.value)
	}
	for _, v := range values {
		for range 2 {
			if got, want := parsedPolicies(v), parsePolicies(v); !reflect.DeepEqual(got, want) {
				t.Fatalf("parsedPolicies(%q) = %+v, want %+v", v, got, want)
			}
		}
	}
}
