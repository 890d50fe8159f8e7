package e2e

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// rawBound bounds every read and write of the raw clients: a proxy that leaves a client hanging
// fails the test instead of stalling it.
const rawBound = 10 * time.Second

// okSite is a well-behaved upstream for the bad-input test.
func okSite() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("/upload", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			return // the client went away
		}
		fmt.Fprintf(w, "got %d bytes", n)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", fmt.Sprint(64<<20))
		buf := bytes.Repeat([]byte("0123456789abcdef"), 4096)
		for range (64 << 20) / len(buf) {
			if _, err := w.Write(buf); err != nil {
				return
			}
		}
	})
	return mux
}

// Raw upstreams that break HTTP in different ways. Each reads the request head first.
var badUpstreams = map[string]string{
	"garbage.test":    "THIS IS NOT HTTP\x00\xff\r\n\r\nat all\r\n",
	"empty.test":      "",
	"truncchunk.test": "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n1000\r\n" + strings.Repeat("x", 100),
	"truncchunk-html.test": "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"1000\r\n<!doctype html><html><head><title>cut</title></head><body>" + strings.Repeat("x", 100),
	"liar.test":      "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 100000\r\n\r\n" + strings.Repeat("y", 10),
	"liar-html.test": "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<!doctype html><html><head><title>liar</title></head><body>short",
	"badstatus.test": "HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok",
	"badheader.test": "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nNo colon here\r\n\r\nok",
}

func serveRaw(reply string) func(net.Conn) {
	return func(c net.Conn) {
		c.SetDeadline(time.Now().Add(rawBound))
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		io.WriteString(c, reply)
	}
}

func TestBadInput(t *testing.T) {
	// A proxy of its own, so the goroutine count is about this test's connections.
	sites := e2etest.StartSites(t)
	sites.Handle("ok.test", okSite())
	for host, reply := range badUpstreams {
		if err := sites.HandleRaw(host, serveRaw(reply)); err != nil {
			t.Fatal(err)
		}
	}
	p := e2etest.StartProxy(t, sites)
	client := p.Client()
	client.Timeout = rawBound

	checkStillServing := func(t *testing.T) {
		t.Helper()
		for _, url := range []string{"http://ok.test/", "https://ok.test/"} {
			resp, err := client.Get(url)
			if err != nil {
				t.Fatalf("the proxy stopped serving: GET %s: %v\nproxy log:\n%s", url, err, tail(p.Logs(), 3000))
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != "ok" {
				t.Fatalf("GET %s: %s %q, want 200 \"ok\"", url, resp.Status, body)
			}
		}
	}
	checkStillServing(t) // warms up the connections counted in the baseline
	client.CloseIdleConnections()
	baseline := settledGoroutines()

	const repeat = 5 // a leak per bad request shows up several times over
	clientCases := []struct {
		name string
		run  func(t *testing.T, addr string) error
	}{
		{"malformed request line", func(t *testing.T, addr string) error {
			return expectErrorOrClose(rawRequest(addr, []byte("THIS IS NOT HTTP\r\n\r\n")))
		}},
		{"malformed absolute URL", func(t *testing.T, addr string) error {
			return expectErrorOrClose(rawRequest(addr, []byte("GET http://[::1/ HTTP/1.1\r\nHost: x\r\n\r\n")))
		}},
		{"1 MiB of headers", func(t *testing.T, addr string) error {
			req := "GET http://ok.test/ HTTP/1.1\r\nHost: ok.test\r\nX-Big: " + strings.Repeat("a", 1<<20) + "\r\n\r\n"
			return expectErrorOrClose(rawRequest(addr, []byte(req)))
		}},
		{"short garbage after CONNECT", func(t *testing.T, addr string) error {
			c, err := connect(addr, "ok.test:443")
			if err != nil {
				return err
			}
			defer c.Close()
			c.Write([]byte("this is not TLS\r\n\r\n")) // 19 bytes: shorter than an h2c preface
			return expectClose(c)
		}},
		{"long garbage after CONNECT", func(t *testing.T, addr string) error {
			c, err := connect(addr, "ok.test:443")
			if err != nil {
				return err
			}
			defer c.Close()
			c.Write([]byte("this is not TLS, and it is longer than the h2c preface\r\n\r\n"))
			return expectClose(c)
		}},
		{"TLS garbage after CONNECT", func(t *testing.T, addr string) error {
			c, err := connect(addr, "ok.test:443")
			if err != nil {
				return err
			}
			defer c.Close()
			c.Write([]byte("\x16\x03\x01\x00\x05hello\x16\x03\x01\xff\xffmore"))
			return expectClose(c)
		}},
		{"CONNECT then silence", func(t *testing.T, addr string) error {
			// Leaves a CONNECT tunnel idle and closes it: nothing may stay behind.
			c, err := connect(addr, "ok.test:443")
			if err != nil {
				return err
			}
			return c.Close()
		}},
		{"CONNECT to a bad port", func(t *testing.T, addr string) error {
			for _, target := range []string{"ok.test:99999", "ok.test:notaport", "ok.test:0", "ok.test:25"} {
				if err := connectAndGet(addr, target, p.CA.Cert); err != nil {
					return fmt.Errorf("CONNECT %s: %w", target, err)
				}
			}
			return nil
		}},
		{"upload cut short http", func(t *testing.T, addr string) error {
			return cutUpload(addr, "http")
		}},
		{"upload cut short https", func(t *testing.T, addr string) error {
			return cutUpload(addr, "https", p.CA.Cert)
		}},
		{"download cut short http", func(t *testing.T, addr string) error {
			return cutDownload(addr, "http")
		}},
		{"download cut short https", func(t *testing.T, addr string) error {
			return cutDownload(addr, "https", p.CA.Cert)
		}},
	}
	for _, tc := range clientCases {
		t.Run(tc.name, func(t *testing.T) {
			for range repeat {
				if err := tc.run(t, p.Addr); err != nil {
					t.Errorf("%v", err)
					break // once is enough to know; repeating a hang only costs time
				}
			}
			checkStillServing(t)
		})
	}

	for _, host := range slices.Sorted(maps.Keys(badUpstreams)) {
		for _, scheme := range []string{"http", "https"} {
			t.Run("upstream "+scheme+" "+host, func(t *testing.T) {
				for i := range repeat {
					outcome, err := expectUpstreamFailure(client, scheme+"://"+host+"/")
					if err != nil {
						t.Errorf("%v", err)
						break
					}
					if i == 0 {
						t.Logf("outcome: %s", outcome)
					}
				}
				checkStillServing(t)
			})
		}
	}

	t.Run("goroutines return to baseline", func(t *testing.T) {
		client.CloseIdleConnections()
		const slack = 8
		deadline := time.Now().Add(15 * time.Second)
		n := runtime.NumGoroutine()
		for n > baseline+slack && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			n = runtime.NumGoroutine()
		}
		t.Logf("goroutines: %d at the baseline, %d after the bad inputs", baseline, n)
		if n > baseline+slack {
			var b strings.Builder
			pprof.Lookup("goroutine").WriteTo(&b, 1)
			t.Errorf("%d goroutines 15s after the bad inputs, baseline %d (+%d allowed): something leaks per bad request\n%s",
				n, baseline, slack, tail(b.String(), 12000))
		}
	})
}

// settledGoroutines waits briefly for the goroutine count to stop falling and returns it.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for range 20 {
		time.Sleep(50 * time.Millisecond)
		m := runtime.NumGoroutine()
		if m >= n {
			return max(m, n)
		}
		n = m
	}
	return n
}

// rawRequest writes payload on a new connection to the proxy and returns the status line of the
// reply ("" if the proxy closed without one). A write cut short by the proxy closing is not an
// error: closing is a clean answer to bad input.
func rawRequest(addr string, payload []byte) (string, error) {
	c, err := net.DialTimeout("tcp", addr, rawBound)
	if err != nil {
		return "", fmt.Errorf("dialing the proxy: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(rawBound))
	c.Write(payload)
	return readStatus(bufio.NewReader(c))
}

func readStatus(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	var ne net.Error
	switch {
	case err == nil:
		return strings.TrimSpace(line), nil
	case errors.As(err, &ne) && ne.Timeout():
		return "", fmt.Errorf("no answer and no close within %v (the connection hangs)", rawBound)
	case line == "":
		return "", nil // closed (EOF or reset)
	default:
		return "", fmt.Errorf("partial status line %q then %v", line, err)
	}
}

func expectErrorOrClose(status string, err error) error {
	if err != nil {
		return err
	}
	if status == "" {
		return nil
	}
	f := strings.Fields(status)
	if len(f) >= 2 && strings.HasPrefix(f[0], "HTTP/1.") && len(f[1]) == 3 && (f[1][0] == '4' || f[1][0] == '5') {
		return nil
	}
	return fmt.Errorf("got %q, want a 4xx/5xx status or a closed connection", status)
}

// connect opens a CONNECT tunnel through the proxy and reads the proxy's answer.
func connect(addr, target string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", addr, rawBound)
	if err != nil {
		return nil, fmt.Errorf("dialing the proxy: %w", err)
	}
	c.SetDeadline(time.Now().Add(rawBound))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	status, err := readStatus(br)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("CONNECT %s: %w", target, err)
	}
	if !strings.Contains(status, " 200") {
		c.Close()
		return nil, fmt.Errorf("CONNECT %s: %q, want 200", target, status)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("CONNECT %s: reading the reply head: %w", target, err)
		}
		if line == "\r\n" {
			break
		}
	}
	if br.Buffered() > 0 {
		c.Close()
		return nil, fmt.Errorf("CONNECT %s: %d unexpected bytes after the reply", target, br.Buffered())
	}
	return c, nil
}

// expectClose reads until the proxy closes the connection (a TLS alert on the way is fine).
func expectClose(c net.Conn) error {
	c.SetDeadline(time.Now().Add(rawBound))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("the proxy kept the connection open for %v after garbage", rawBound)
	}
	return nil
}

// connectAndGet tries CONNECT to target. The proxy may refuse it (4xx/5xx, or close), or accept
// it and fail the request inside the tunnel with an error page; both are clean.
func connectAndGet(addr, target string, ca *x509.Certificate) error {
	c, err := net.DialTimeout("tcp", addr, rawBound)
	if err != nil {
		return fmt.Errorf("dialing the proxy: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(rawBound))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	status, err := readStatus(br)
	if err != nil || !strings.Contains(status, " 200") {
		return expectErrorOrClose(status, err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil // closed after accepting: clean enough
		}
		if line == "\r\n" {
			break
		}
	}
	host, _, _ := strings.Cut(target, ":")
	tc := tls.Client(c, &tls.Config{ServerName: host, RootCAs: poolOf(ca)})
	if err := tc.Handshake(); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("TLS in the accepted tunnel hangs: %w", err)
		}
		return nil // refused inside the tunnel
	}
	fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", target)
	return expectErrorOrClose(readStatus(bufio.NewReader(tc)))
}

// dialHTTP returns a connection on which plain HTTP/1.1 reaches host through the proxy: the
// proxy connection itself for http (requests in absolute form), a MITM'd tunnel for https.
func dialHTTP(addr, scheme, host string, ca ...*x509.Certificate) (net.Conn, string, error) {
	if scheme == "http" {
		c, err := net.DialTimeout("tcp", addr, rawBound)
		if err != nil {
			return nil, "", fmt.Errorf("dialing the proxy: %w", err)
		}
		c.SetDeadline(time.Now().Add(rawBound))
		return c, "http://" + host, nil
	}
	c, err := connect(addr, host+":443")
	if err != nil {
		return nil, "", err
	}
	tc := tls.Client(c, &tls.Config{ServerName: host, RootCAs: poolOf(ca...), NextProtos: []string{"http/1.1"}})
	if err := tc.Handshake(); err != nil {
		c.Close()
		return nil, "", fmt.Errorf("TLS through the proxy: %w", err)
	}
	return tc, "", nil
}

func cutUpload(addr, scheme string, ca ...*x509.Certificate) error {
	c, prefix, err := dialHTTP(addr, scheme, "ok.test", ca...)
	if err != nil {
		return err
	}
	fmt.Fprintf(c, "POST %s/upload HTTP/1.1\r\nHost: ok.test\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", prefix, 10<<20)
	chunk := bytes.Repeat([]byte("u"), 64<<10)
	for range 16 { // 1 MiB of the promised 10
		if _, err := c.Write(chunk); err != nil {
			break
		}
	}
	return c.Close()
}

func cutDownload(addr, scheme string, ca ...*x509.Certificate) error {
	c, prefix, err := dialHTTP(addr, scheme, "ok.test", ca...)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s/big HTTP/1.1\r\nHost: ok.test\r\n\r\n", prefix)
	n, err := io.CopyN(io.Discard, c, 1<<20)
	if err != nil {
		return fmt.Errorf("reading the first MiB of the download (got %d bytes): %w", n, err)
	}
	return nil
}

// expectUpstreamFailure fetches url from a broken upstream through the proxy: the client must get
// an error status, or an error while reading a body the upstream cut short — never a clean,
// complete-looking response.
func expectUpstreamFailure(c *http.Client, url string) (outcome string, _ error) {
	resp, err := c.Get(url)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return "", fmt.Errorf("GET %s: no answer within %v", url, rawBound)
		}
		return "closed: " + err.Error(), nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode >= 500:
		return resp.Status, nil
	case err != nil:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return "", fmt.Errorf("GET %s: %s, then the body hangs", url, resp.Status)
		}
		return fmt.Sprintf("%s, body cut after %d bytes: %v", resp.Status, len(body), err), nil
	default:
		return "", fmt.Errorf("GET %s: %s with a complete-looking %d-byte body %q; want a 5xx or a body that ends in an error",
			url, resp.Status, len(body), head(string(body), 100))
	}
}

func poolOf(certs ...*x509.Certificate) *x509.CertPool {
	p := x509.NewCertPool()
	for _, c := range certs {
		p.AddCert(c)
	}
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
