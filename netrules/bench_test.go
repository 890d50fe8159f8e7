package netrules

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// benchRules is a realistic mix of n rules: mostly "||host^" blocks across many hosts, some
// with resourceTypes, some requestDomains rules, modifyHeaders, and a few percent of
// regexFilter and unanchored urlFilter rules (the catch-all bucket).
func benchRules(n int) string {
	rng := rand.New(rand.NewPCG(1, 2))
	types := []string{"image", "script", "stylesheet", "xmlhttprequest", "sub_frame", "font", "media"}
	var b strings.Builder
	b.WriteString("[")
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		host := fmt.Sprintf("tracker%d.example%d.test", i, i%500)
		switch k := rng.IntN(100); {
		case k < 60:
			fmt.Fprintf(&b, `{"id":%d,"action":{"type":"block"},"condition":{"urlFilter":"||%s^"}}`, i, host)
		case k < 75:
			fmt.Fprintf(&b, `{"id":%d,"action":{"type":"block"},"condition":{"urlFilter":"||%s/ads/","resourceTypes":["%s","%s"]}}`,
				i, host, types[rng.IntN(len(types))], types[rng.IntN(len(types))])
		case k < 85:
			fmt.Fprintf(&b, `{"id":%d,"priority":2,"action":{"type":"allow"},"condition":{"requestDomains":["%s"],"resourceTypes":["script"]}}`, i, host)
		case k < 92:
			fmt.Fprintf(&b, `{"id":%d,"action":{"type":"modifyHeaders","requestHeaders":[{"header":"X-Remixlet-%d","operation":"set","value":"1"}]},"condition":{"requestDomains":["%s"]}}`, i, i, host)
		case k < 96:
			fmt.Fprintf(&b, `{"id":%d,"action":{"type":"block"},"condition":{"regexFilter":"^https://cdn%d\\.test/[a-z]+/banner-[0-9]+\\.(png|gif)$","resourceTypes":["image"]}}`, i, i)
		default:
			fmt.Fprintf(&b, `{"id":%d,"action":{"type":"block"},"condition":{"urlFilter":"/adserver%d/*/pixel^"}}`, i, i)
		}
	}
	b.WriteString("]")
	return b.String()
}

// benchRequests is a mix of requests: hosts with rules and without, a few deep subdomains.
type benchReq struct {
	u *weburl.URL
	h http.Header
}

func benchRequests(n int) []benchReq {
	rng := rand.New(rand.NewPCG(3, 4))
	dests := []string{"image", "script", "style", "empty", "document", "font"}
	out := make([]benchReq, 1000)
	for i := range out {
		var raw string
		switch k := rng.IntN(10); {
		case k < 3:
			j := rng.IntN(n) + 1
			raw = fmt.Sprintf("https://tracker%d.example%d.test/ads/x.js?i=%d", j, j%500, i)
		case k < 5:
			raw = fmt.Sprintf("https://cdn%d.test/img/banner-%d.png", rng.IntN(n)+1, i)
		default:
			raw = fmt.Sprintf("https://www.site%d.test/assets/app-%d/main.js?v=%d&lang=en", rng.IntN(200), i, i*7)
		}
		u, _ := weburl.Parse(raw)
		h := http.Header{"Sec-Fetch-Dest": {dests[rng.IntN(len(dests))]}, "Sec-Fetch-Site": {"cross-site"},
			"Referer": {fmt.Sprintf("https://news%d.test/article/%d", rng.IntN(50), i)}}
		out[i] = benchReq{u, h}
	}
	return out
}

// BenchmarkMatch measures the cost rules add to one request (NewRequest + Set.Match) with 1 000 and 10 000 rules installed, split
// over 4 every-site remixlets; it reports the p99 (and p50) time per request as ns-p99/op.
//
//	go test ./netrules/ -run '^$' -bench Match -benchtime 20000x
func BenchmarkMatch(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			rules, probs := Parse([]byte(benchRules(n)))
			if len(probs) > 0 {
				b.Fatal(probs[0])
			}
			var sets []*Ruleset
			for k := range 4 {
				part := rules[k*len(rules)/4 : (k+1)*len(rules)/4]
				rs, probs := Compile(fmt.Sprintf("rx%d", k), part, Sites{Every: true})
				if len(probs) > 0 {
					b.Fatal(probs[0])
				}
				sets = append(sets, rs)
			}
			set := NewSet(sets...)
			reqs := benchRequests(n)
			lat := make([]time.Duration, 0, b.N)
			blocked := 0
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				r := reqs[i%len(reqs)]
				t0 := time.Now()
				res := set.Match(NewRequest("GET", r.u, r.h))
				lat = append(lat, time.Since(t0))
				if res.Action == Block {
					blocked++
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "ns-p99/op")
				b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "ns-p50/op")
			}
			_ = blocked
		})
	}
}

// BenchmarkNewRequest is the per-request cost of describing a request for matching.
func BenchmarkNewRequest(b *testing.B) {
	u, _ := weburl.Parse("https://www.site1.test/assets/app/main.js?v=1&lang=en")
	h := http.Header{"Sec-Fetch-Dest": {"script"}, "Sec-Fetch-Site": {"cross-site"}, "Referer": {"https://news1.test/article/1"}}
	for b.Loop() {
		NewRequest("GET", u, h)
	}
}
