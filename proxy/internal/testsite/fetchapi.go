package testsite

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
)

// AddFetchAPI adds to mux the hosts of rmx.fetch's tests, to be served on one TLS server for
// *.example.com:
//   - api.example.com/echo and api2.example.com/echo answer JSON naming the request's host,
//     method, Cookie, Authorization, X-Test and body ("host", "method", "cookie",
//     "authorization", "x", "body"), and set a cookie fromfetch=1;
//   - api.example.com/same redirects to /echo, /cross to api2's echo (307), /to-witness to the
//     witness, /loop to itself;
//   - api.example.com/big answers bigBody bytes, /300k 300 KiB, /bytes four bytes that are not
//     UTF-8;
//   - witness.example.com counts in witness every request that reaches it.
func AddFetchAPI(mux *http.ServeMux, bigBody int, witness *atomic.Int64) {
	echo := func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.Header().Set("Set-Cookie", "fromfetch=1")
		body, _ := io.ReadAll(r.Body)
		json.NewEncoder(rw).Encode(map[string]string{
			"host": r.Host, "method": r.Method, "cookie": r.Header.Get("Cookie"),
			"authorization": r.Header.Get("Authorization"), "body": string(body), "x": r.Header.Get("X-Test"),
		})
	}
	mux.HandleFunc("api.example.com/echo", echo)
	mux.HandleFunc("api2.example.com/echo", echo)
	mux.HandleFunc("api.example.com/same", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "/echo", http.StatusFound)
	})
	mux.HandleFunc("api.example.com/cross", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "https://api2.example.com/echo", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("api.example.com/to-witness", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "https://witness.example.com/steal", http.StatusFound)
	})
	mux.HandleFunc("api.example.com/loop", func(rw http.ResponseWriter, r *http.Request) {
		http.Redirect(rw, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("api.example.com/big", func(rw http.ResponseWriter, r *http.Request) {
		rw.Write([]byte(strings.Repeat("x", bigBody)))
	})
	mux.HandleFunc("api.example.com/300k", func(rw http.ResponseWriter, r *http.Request) {
		rw.Write([]byte(strings.Repeat("x", 300<<10)))
	})
	mux.HandleFunc("api.example.com/bytes", func(rw http.ResponseWriter, r *http.Request) {
		rw.Write([]byte{0, 1, 2, 255})
	})
	mux.HandleFunc("witness.example.com/", func(rw http.ResponseWriter, r *http.Request) {
		witness.Add(1)
	})
}
