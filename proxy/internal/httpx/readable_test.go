package httpx

import (
	"net/http"
	"testing"
)

func TestPageCanRead(t *testing.T) {
	const page = "https://shop.test"
	for _, tt := range []struct {
		name   string
		url    string
		req    map[string]string
		resp   map[string]string
		expect bool
	}{
		{"same origin, fetch metadata", "https://shop.test/api", map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-origin", "Referer": page + "/"}, nil, true},
		{"same origin no-cors", "https://shop.test/a.json", map[string]string{"Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Site": "same-origin"}, nil, true},
		{"same origin over http, by the Referer", "http://shop.test/api", map[string]string{"Referer": "http://SHOP.test:80/page"}, nil, true},
		{"another origin, no-cors", "https://intranet.test/payroll", map[string]string{"Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Site": "cross-site", "Referer": page + "/", "Cookie": "s=1"}, nil, false},
		{"another origin, no-cors, the answer allows every origin", "https://intranet.test/payroll", map[string]string{"Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Site": "cross-site", "Referer": page + "/"}, map[string]string{"Access-Control-Allow-Origin": "*"}, false},
		{"another origin, cors, no allowance", "https://intranet.test/payroll", map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "cross-site", "Origin": page}, nil, false},
		{"another origin, cors, *", "https://open.test/x", map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "cross-site", "Origin": page}, map[string]string{"Access-Control-Allow-Origin": "*"}, true},
		{"another origin, cors, * with cookies", "https://open.test/x", map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "cross-site", "Origin": page, "Cookie": "s=1"}, map[string]string{"Access-Control-Allow-Origin": "*"}, false},
		{"another origin, cors, its origin", "https://api.shop.test/x", map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-site", "Origin": page}, map[string]string{"Access-Control-Allow-Origin": page}, true},
		{"another origin, cors, its origin, cookies and credentials", "https://api.shop.test/x", map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-site", "Origin": page, "Cookie": "s=1"}, map[string]string{"Access-Control-Allow-Origin": page, "Access-Control-Allow-Credentials": "true"}, true},
		{"another origin, cors, its origin, cookies, no credentials", "https://api.shop.test/x", map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-site", "Origin": page, "Cookie": "s=1"}, map[string]string{"Access-Control-Allow-Origin": page}, false},
		{"another origin, cors, another origin allowed", "https://api.shop.test/x", map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-site", "Origin": page}, map[string]string{"Access-Control-Allow-Origin": "https://other.test"}, false},
		{"another origin, cors, the origin in another case", "https://api.shop.test/x", map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "same-site", "Origin": page}, map[string]string{"Access-Control-Allow-Origin": "https://SHOP.test"}, false},
		{"another origin, cors, a null origin", "https://api.shop.test/x", map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Site": "cross-site", "Origin": "null"}, map[string]string{"Access-Control-Allow-Origin": "null"}, false},
		{"another origin over http, no Origin (a no-cors GET)", "http://intranet.test/payroll", map[string]string{"Referer": "http://shop.test/"}, nil, false},
		{"another origin over http, a CORS answer", "http://open.test/x", map[string]string{"Referer": "http://shop.test/", "Origin": "http://shop.test"}, map[string]string{"Access-Control-Allow-Origin": "http://shop.test"}, true},
		{"a service worker's script (the proxy's shim in it)", "https://shop.test/sw.js", map[string]string{"Sec-Fetch-Mode": "same-origin", "Sec-Fetch-Site": "same-origin", "Sec-Fetch-Dest": "serviceworker", "Service-Worker": "script", "Referer": page + "/"}, nil, false},
		{"an http navigation (the bootstrap and its token in it)", "http://shop.test/next", map[string]string{"Upgrade-Insecure-Requests": "1", "Referer": "http://shop.test/"}, nil, false},
		{"an iframe's document", "https://shop.test/frame", map[string]string{"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Site": "same-origin"}, nil, false},
		{"a navigation", "https://shop.test/", map[string]string{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Site": "same-origin"}, nil, false},
		{"no Referer, no metadata", "http://shop.test/api", nil, nil, false},
	} {
		req, err := http.NewRequest("GET", tt.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tt.req {
			req.Header.Set(k, v)
		}
		resp := &http.Response{Header: http.Header{}, Request: req}
		for k, v := range tt.resp {
			resp.Header.Set(k, v)
		}
		if got := PageCanRead(req, resp); got != tt.expect {
			t.Errorf("%s: PageCanRead = %v, want %v", tt.name, got, tt.expect)
		}
	}
}
