// Command bench measures remixproxy against a direct connection and, when `mitmdump` is
// installed, mitmproxy doing the same injection, side by side in one run on this machine. It
// prints a Markdown table of absolute figures and ratios to direct. Run it with `make bench`
// (scripts/bench.sh). Everything talks to loopback only; each load loop is bounded in time.
//
// Scenarios (the targets are ratios to direct in the same run):
//   - small HTML pages over HTTPS keep-alive, injected: requests/s and p50 latency;
//   - 200 KB HTML pages, injected: MiB/s;
//   - a 1 GiB download: MiB/s and the proxy process's peak RSS growth;
//   - first contact with new hosts (a new TLS connection and a new host name each): connections/s;
//   - for every proxy, in the small, 200 KB and first-contact runs: the proxy's own CPU time per
//     request (cpu.go), for remixproxy, remixproxy with injection switched off (`run
//     --bench-no-inject`: the same pipeline relaying pages untouched) and the other proxies;
//     a second table sets them side by side with what injection adds to the relay's CPU.
//
// Each non-direct row's note also gives the median of the per-round ratios to direct (each
// round's figure divided by direct's in the same round), which varies less than the ratio of the
// medians when other work shares the machine; every single measurement is printed to stderr as
// a "bench: sample" line (round, scenario, target, value, tab-separated) for paired comparisons.
//
// Options for investigations (none changes the default run):
//   - --scenarios small,200k,download,first-contact runs only those;
//   - --goproxy-bare adds a reference proxy, e2e/bench/goproxybare: goproxy's own MITM loop with
//     a CA of its own, buffering HTML bodies and inserting a tag, nothing else;
//   - --also NAME=PATH,… adds more remixproxy binaries to the same rounds (A/B of a change);
//   - --client-h2 makes the clients offer HTTP/2, as Chromium does (default HTTP/1.1);
//   - --live starts every remixproxy target with a remixlet on for the bench's pages (live.go);
//   - --proxy-cpus 1 runs the proxies under taskset; with `taskset -c 0 go run ./e2e/bench …`
//     the load generator and the site get CPU 0 and each proxy CPU 1 (a pinned-core variant, not
//     the shared-core figures of the README).
package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/remixproxy/remixproxy/panel"
)

var (
	duration    = flag.Duration("d", 4*time.Second, "how long each throughput run lasts")
	concurrency = flag.Int("c", 4, "concurrent clients")
	downloadMiB = flag.Int("download-mib", 1024, "size of the large download in MiB")
	newHosts    = flag.Int("hosts", 300, "new host names per first-contact run")
	noMitm      = flag.Bool("no-mitmproxy", false, "skip mitmproxy even when installed")
	rounds      = flag.Int("rounds", 3, "rounds of every scenario, targets interleaved; the median is reported")
	binPath     = flag.String("remixproxy", "", "remixproxy binary (default: go build it)")
	only        = flag.String("scenarios", "", "comma-separated scenarios to run (small, 200k, download, first-contact); default all")
	bare        = flag.Bool("goproxy-bare", false, "also measure goproxy-bare (e2e/bench/goproxybare): a minimal goproxy MITM that buffers HTML and inserts a tag")
	extra       = flag.String("also", "", "more remixproxy binaries measured in the same rounds, as NAME=PATH[,NAME=PATH] (A/B comparisons)")
	proxyCPUs   = flag.String("proxy-cpus", "", "run the proxies under `taskset -c LIST` (pinned-core variant; pin the bench itself with taskset too)")
	clientH2    = flag.Bool("client-h2", false, "clients offer HTTP/2 (as Chromium does) instead of HTTP/1.1; goproxy-bare and mitmproxy still answer HTTP/1.1")
	bareH2      = flag.Bool("goproxy-bare-h2", false, "let goproxy-bare's upstream transport use HTTP/2 (default HTTP/1.1, goproxy's default)")
	noInject    = flag.Bool("injection-off", true, "also measure remixproxy with injection switched off (run --bench-no-inject), for the CPU per request table")
)

// noInjectName is the target remixproxy with injection switched off.
const noInjectName = "remixproxy-noinject"

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// target is one way of reaching the test site: direct, or through a proxy.
type target struct {
	name     string
	proxy    string         // "" for direct
	roots    *x509.CertPool // what the client trusts
	pid      int            // the proxy process, for RSS
	maxBody  int64          // largest download this target is measured on (0 = all)
	siteAddr string         // where direct connections go
	bin      string         // remixproxy targets: the binary
}

func run() error {
	tmp, err := os.MkdirTemp("", "remixbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	site, err := startSite(tmp)
	if err != nil {
		return err
	}
	defer site.close()

	targets := []*target{{name: "direct", roots: site.pool, siteAddr: site.addr}}
	rp, stopRP, err := startRemixproxy(tmp, site, "remixproxy", *binPath)
	if err != nil {
		return err
	}
	defer stopRP()
	targets = append(targets, rp)
	if *noInject {
		t, stop, err := startRemixproxy(tmp, site, noInjectName, rp.bin, "--bench-no-inject")
		if err != nil {
			return fmt.Errorf("starting %s: %w", noInjectName, err)
		}
		defer stop()
		targets = append(targets, t)
	}
	if *extra != "" {
		for _, nb := range strings.Split(*extra, ",") {
			name, bin, ok := strings.Cut(nb, "=")
			if !ok || bin == "" {
				return fmt.Errorf("--also %q: want NAME=PATH", nb)
			}
			t, stop, err := startRemixproxy(tmp, site, name, bin)
			if err != nil {
				return fmt.Errorf("starting %s: %w", name, err)
			}
			defer stop()
			targets = append(targets, t)
		}
	}
	if *bare {
		gb, stopGB, err := startGoproxyBare(tmp, site)
		if err != nil {
			return fmt.Errorf("starting goproxy-bare: %w", err)
		}
		defer stopGB()
		targets = append(targets, gb)
	}
	if _, err := exec.LookPath("mitmdump"); err == nil && !*noMitm {
		mp, stopMP, err := startMitmproxy(tmp, site)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: mitmproxy not measured:", err)
		} else {
			defer stopMP()
			targets = append(targets, mp)
		}
	}

	rows, samples := measureAll(targets, site)
	printTable(os.Stdout, rows)
	printCPUTable(os.Stdout, targets, samples)
	return nil
}

// row is one measured figure.
type row struct {
	scenario, target, unit string
	value                  float64
	higherBetter           bool
	note                   string
}

// sample is a row and the round (1-based) it was measured in.
type sample struct {
	row
	round int
}

// scenario measures one thing on one target; it returns the rows it measured.
type scenario struct {
	name string
	run  func(tg *target, s *site) []row
}

// scenarios are the scenarios -scenarios selects (all by default).
func scenarios() []scenario {
	if *only == "" {
		return allScenarios()
	}
	var out []scenario
	for _, sc := range allScenarios() {
		for _, name := range strings.Split(*only, ",") {
			if strings.TrimSpace(name) == sc.name {
				out = append(out, sc)
			}
		}
	}
	return out
}

func allScenarios() []scenario {
	return []scenario{
		{"small", func(tg *target, s *site) []row {
			rps, p50, n, cpu := loadLoop(tg, s.url("/small"), *duration, true)
			return append([]row{
				{"small HTML, HTTPS keep-alive", tg.name, "req/s", rps, true, fmt.Sprintf("%d requests", n)},
				{"small HTML, HTTPS keep-alive, p50", tg.name, "ms", p50.Seconds() * 1000, false, ""},
			}, cpuRow(cpuSmall, tg, cpu, n, "requests")...)
		}},
		{"200k", func(tg *target, s *site) []row {
			bytesPerSec, n, cpu := bytesLoop(tg, s.url("/page200k"), *duration)
			return append([]row{{"200 KB HTML pages", tg.name, "MiB/s", bytesPerSec / (1 << 20), true, fmt.Sprintf("%d pages", n)}},
				cpuRow(cpu200k, tg, cpu, n, "pages")...)
		}},
		{"download", func(tg *target, s *site) []row {
			size := int64(*downloadMiB) << 20
			if tg.maxBody > 0 && size > tg.maxBody {
				size = tg.maxBody
			}
			resetPeakRSS(tg.pid)
			before := rss(tg.pid)
			mibs, err := download(tg, s.url("/download?bytes="+strconv.FormatInt(size, 10)), size)
			note := fmt.Sprintf("%d MiB", size>>20)
			if err != nil {
				note = "failed: " + err.Error()
			}
			out := []row{{"large download", tg.name, "MiB/s", mibs, true, note}}
			if tg.pid != 0 {
				out = append(out, row{"large download, peak RSS growth", tg.name, "MiB", float64(peakRSS(tg.pid)-before) / (1 << 20), false, ""})
			}
			return out
		}},
		{"first-contact", func(tg *target, s *site) []row {
			cps, n, cpu := firstContact(tg, s, *newHosts)
			return append([]row{{"first contact, new host each", tg.name, "conn/s", cps, true, fmt.Sprintf("%d hosts", *newHosts)}},
				cpuRow(cpuNewHost, tg, cpu, n, "hosts")...)
		}},
	}
}

// measureAll runs every scenario *rounds times, each round on every target one after the other,
// so that whatever else the machine does hits all targets alike; it reports the median per row,
// and every sample by scenario and target (key scenario + "\x00" + target).
func measureAll(targets []*target, s *site) ([]row, map[string][]sample) {
	var order []string
	samples := map[string][]sample{}
	for r := 1; r <= *rounds; r++ {
		for _, sc := range scenarios() {
			for _, tg := range targets {
				fmt.Fprintf(os.Stderr, "bench: round %d/%d %s on %s\n", r, *rounds, sc.name, tg.name)
				for _, row := range sc.run(tg, s) {
					key := row.scenario + "\x00" + row.target
					if _, ok := samples[key]; !ok {
						order = append(order, key)
					}
					samples[key] = append(samples[key], sample{row, r})
					fmt.Fprintf(os.Stderr, "bench: sample\t%d\t%s\t%s\t%.4f\n", r, row.scenario, row.target, row.value)
				}
			}
		}
	}
	var out []row
	for _, key := range order {
		rs := append([]sample(nil), samples[key]...)
		paired := pairedRatios(rs, samples[rs[0].scenario+"\x00direct"])
		sort.Slice(rs, func(i, j int) bool { return rs[i].value < rs[j].value })
		med := rs[len(rs)/2].row
		if len(rs) > 1 {
			med.note = strings.TrimSpace(fmt.Sprintf("%s; median of %d (%.2f–%.2f)", med.note, len(rs), rs[0].value, rs[len(rs)-1].value))
		}
		if len(paired) > 1 {
			med.note += fmt.Sprintf("; per-round ratio median %.2f× (%.2f–%.2f)", paired[len(paired)/2], paired[0], paired[len(paired)-1])
		}
		out = append(out, med)
	}
	// Group the table by scenario, targets in order.
	sort.SliceStable(out, func(i, j int) bool { return scenarioRank(out[i].scenario) < scenarioRank(out[j].scenario) })
	return out, samples
}

// pairedRatios are rs's values divided by direct's in the same round, sorted: with other load
// on the machine these vary less than the ratio of the two medians.
func pairedRatios(rs, direct []sample) []float64 {
	if len(rs) == 0 || rs[0].target == "direct" || strings.Contains(rs[0].scenario, "RSS") {
		return nil
	}
	byRound := map[int]float64{}
	for _, d := range direct {
		byRound[d.round] = d.value
	}
	var out []float64
	for _, r := range rs {
		if d := byRound[r.round]; d > 0 {
			out = append(out, r.value/d)
		}
	}
	sort.Float64s(out)
	return out
}

func scenarioRank(name string) int {
	for i, n := range []string{"small HTML, HTTPS keep-alive", "small HTML, HTTPS keep-alive, p50", cpuSmall,
		"200 KB HTML pages", cpu200k, "large download", "large download, peak RSS growth", "first contact, new host each", cpuNewHost} {
		if n == name {
			return i
		}
	}
	return 99
}

func client(tg *target, keepAlive bool) *http.Client {
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: tg.roots},
		DisableCompression:  true,
		DisableKeepAlives:   !keepAlive,
		MaxIdleConnsPerHost: *concurrency * 2,
		ForceAttemptHTTP2:   *clientH2,
	}
	if tg.proxy != "" {
		u, _ := url.Parse("http://" + tg.proxy)
		tr.Proxy = http.ProxyURL(u)
	} else {
		// Direct: every *.bench.test name dials the test site, as --resolve does for the proxies.
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if strings.HasSuffix(addr, ".bench.test:443") {
				addr = tg.siteAddr
			}
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		}
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Minute}
}

// navigation is a GET of u with a navigation's headers.
func navigation(u string) *http.Request {
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Sec-Fetch-Dest", "document")
	req.Header.Set("Sec-Fetch-Mode", "navigate")
	req.Header.Set("Upgrade-Insecure-Requests", "1")
	return req
}

// warm requests u once (the connection pool, the proxy's leaf cache) and fails when a
// remixproxy target that injects answers an HTML page of u without the bootstrap: the figures
// would be the relay's.
func warm(tg *target, c *http.Client, u string) error {
	resp, err := c.Do(navigation(u))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	injects := tg.bin != "" && tg.name != noInjectName
	if injects && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") && !bytes.Contains(body, []byte("data-remixproxy=")) {
		return fmt.Errorf("%s answered %s without the bootstrap: it would measure the relay, not the injection", tg.name, u)
	}
	if *live && injects && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") && !bytes.Contains(body, []byte("data-remixproxy-sheets=")) {
		return fmt.Errorf("%s answered %s without the live remixlet's stylesheet: the remixlet is not on (--live)", tg.name, u)
	}
	return nil
}

// loadLoop requests u from *concurrency clients for d and returns requests/s, the p50 latency,
// the number of requests answered, and the CPU time the target's processes spent meanwhile.
func loadLoop(tg *target, u string, d time.Duration, keepAlive bool) (float64, time.Duration, int, time.Duration) {
	c := client(tg, keepAlive)
	defer c.Transport.(*http.Transport).CloseIdleConnections()
	if err := warm(tg, c, u); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	cpu0 := procTreeCPU(tg.pid)
	var mu sync.Mutex
	var lat []time.Duration
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := 0; i < *concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if _, err := get(c, u); err != nil {
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	cpu := procTreeCPU(tg.pid) - cpu0
	if len(lat) == 0 {
		return 0, 0, 0, cpu
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	return float64(len(lat)) / d.Seconds(), lat[len(lat)/2], len(lat), cpu
}

// bytesLoop is loadLoop counting body bytes: bytes/s, pages answered, the target's CPU time.
func bytesLoop(tg *target, u string, d time.Duration) (float64, int, time.Duration) {
	c := client(tg, true)
	defer c.Transport.(*http.Transport).CloseIdleConnections()
	get(c, u)
	cpu0 := procTreeCPU(tg.pid)
	var total atomic.Int64
	var count atomic.Int64
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i < *concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				n, err := get(c, u)
				if err == nil {
					total.Add(n)
					count.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	cpu := procTreeCPU(tg.pid) - cpu0
	return float64(total.Load()) / time.Since(start).Seconds(), int(count.Load()), cpu
}

// get requests u as a browser's navigation does (Sec-Fetch-Dest: document, over http
// Upgrade-Insecure-Requests): remixproxy injects only into navigations (httpx.IsNavigation), so
// a plain GET would measure its relay, not its injection. Every target gets the same request.
func get(c *http.Client, u string) (int64, error) {
	resp, err := c.Do(navigation(u))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return n, err
}

func download(tg *target, u string, size int64) (float64, error) {
	c := client(tg, false)
	t0 := time.Now()
	n, err := get(c, u)
	if err != nil {
		return 0, err
	}
	if n != size {
		return 0, fmt.Errorf("got %d bytes, want %d", n, size)
	}
	return float64(n) / (1 << 20) / time.Since(t0).Seconds(), nil
}

// hostRuns counts each target's first-contact runs: every run of a target uses host names that
// target has never seen (r1-…, r2-…), so no proxy's leaf cache helps. Targets share the names
// of a run: each proxy has its own cache, and the direct clients keep no TLS sessions. Runs are
// sequential.
var hostRuns = map[string]int{}

// firstContact opens a new TLS connection to a host name never used before, n times; it returns
// connections/s, the number that succeeded, and the CPU time the target's processes spent.
func firstContact(tg *target, s *site, n int) (float64, int, time.Duration) {
	hostRuns[tg.name]++
	prefix := fmt.Sprintf("r%d", hostRuns[tg.name])
	cpu0 := procTreeCPU(tg.pid)
	var next atomic.Int64
	t0 := time.Now()
	var wg sync.WaitGroup
	var ok atomic.Int64
	for i := 0; i < *concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) {
					return
				}
				c := client(tg, false)
				if _, err := get(c, fmt.Sprintf("https://%s-%d.bench.test:%d/small", prefix, i, 443)); err == nil {
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	cpu := procTreeCPU(tg.pid) - cpu0
	if ok.Load() != int64(n) {
		fmt.Fprintf(os.Stderr, "bench: %s: %d of %d first contacts failed\n", tg.name, int64(n)-ok.Load(), n)
	}
	return float64(ok.Load()) / time.Since(t0).Seconds(), int(ok.Load()), cpu
}

func printTable(w io.Writer, rows []row) {
	direct := map[string]float64{}
	for _, r := range rows {
		if r.target == "direct" {
			direct[r.scenario] = r.value
		}
	}
	fmt.Fprintf(w, "| scenario | target | value | ratio to direct | note |\n|---|---|---|---|---|\n")

	for _, r := range rows {
		ratio := "—"
		if d := direct[r.scenario]; d > 0 && r.target != "direct" && !strings.Contains(r.scenario, "RSS") {
			ratio = fmt.Sprintf("%.2f×", r.value/d)
		}
		fmt.Fprintf(w, "| %s | %s | %.2f %s | %s | %s |\n", r.scenario, r.target, r.value, r.unit, ratio, r.note)
	}
}

// --- the test site ---

type site struct {
	addr    string // HTTPS listener
	pool    *x509.CertPool
	caPEM   string // file
	srv     *http.Server
	resolve []string // HOST:PORT=ADDR:PORT for the fixed host names
}

const siteHost = "site.bench.test"

func (s *site) url(path string) string { return "https://" + siteHost + path }
func (s *site) close()                 { s.srv.Close() }

func startSite(dir string) (*site, error) {
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench upstream CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("making site CA: %w", err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: siteHost},
		DNSNames:  []string{siteHost, "*.bench.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("making site certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	caFile := filepath.Join(dir, "site-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		return nil, err
	}

	small := []byte("<!doctype html><html><head><meta charset=utf-8><title>small</title></head><body>" +
		strings.Repeat("<p>A small page with a little text.</p>", 40) + "</body></html>")
	big200 := []byte("<!doctype html><html><head><meta charset=utf-8><title>big</title></head><body>" +
		strings.Repeat("<div class=row><a href=/x>link</a> <span>some text in a span</span></div>\n", 200<<10/76) + "</body></html>")
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i * 7)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(small)
	})
	mux.HandleFunc("/page200k", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(big200)
	})
	mux.HandleFunc("/download", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.ParseInt(r.URL.Query().Get("bytes"), 10, 64)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		for n > 0 {
			k := min(n, int64(len(chunk)))
			if _, err := w.Write(chunk[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}},
	}}
	go srv.ServeTLS(ln, "", "")
	s := &site{addr: ln.Addr().String(), pool: pool, caPEM: caFile, srv: srv}
	s.resolve = append(s.resolve, siteHost+":443="+s.addr)
	return s, nil
}

// hostResolves are the --resolve entries for every host name the first-contact runs use.
func (s *site) hostResolves() []string {
	out := append([]string{}, s.resolve...)
	// One first-contact run per round (see hostRuns), and one to spare.
	for r := 1; r <= *rounds+1; r++ {
		for i := 0; i < *newHosts; i++ {
			out = append(out, fmt.Sprintf("r%d-%d.bench.test:443=%s", r, i, s.addr))
		}
	}
	return out
}

// --- the proxies ---

func freePort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitListening(addr string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nothing listening on %s after %v", addr, d)
}

// pinned is cmd, run under taskset when --proxy-cpus is set.
func pinned(name string, args ...string) *exec.Cmd {
	if *proxyCPUs == "" {
		return exec.Command(name, args...)
	}
	return exec.Command("taskset", append([]string{"-c", *proxyCPUs, name}, args...)...)
}

// startRemixproxy starts the remixproxy binary bin (built from the repository when "") as the
// target called name, with extra flags for `run`.
func startRemixproxy(dir string, s *site, name, bin string, extra ...string) (*target, func(), error) {
	if bin == "" {
		bin = filepath.Join(dir, "remixproxy")
		build := exec.Command("go", "build", "-o", bin, "./cmd/remixproxy")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			return nil, nil, fmt.Errorf("building remixproxy (run from the repository root): %w", err)
		}
	}
	addr := freePort()
	data := filepath.Join(dir, name+"-data")
	if *live {
		if err := seedLive(data); err != nil {
			return nil, nil, err
		}
	}
	args := []string{"run", "--listen", addr, "--data-dir", data, "--upstream-ca", s.caPEM, "--only-resolved"}
	for _, r := range s.hostResolves() {
		args = append(args, "--resolve", r)
	}
	args = append(args, extra...)
	cmd := pinned(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	if err := waitListening(addr, 20*time.Second); err != nil {
		stop()
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(filepath.Join(data, "remixproxy-ca.pem"))
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		stop()
		return nil, nil, fmt.Errorf("reading remixproxy's CA: %v", err)
	}
	return &target{name: name, proxy: addr, roots: pool, pid: cmd.Process.Pid, bin: bin}, stop, nil
}

// startGoproxyBare builds and starts e2e/bench/goproxybare with a CA of its own.
func startGoproxyBare(dir string, s *site) (*target, func(), error) {
	bin := filepath.Join(dir, "goproxybare")
	build := exec.Command("go", "build", "-o", bin, "./e2e/bench/goproxybare")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return nil, nil, fmt.Errorf("building goproxybare (run from the repository root): %w", err)
	}
	addr := freePort()
	caFile := filepath.Join(dir, "goproxybare-ca.pem")
	args := []string{"--listen", addr, "--site", s.addr, "--upstream-ca", s.caPEM, "--ca-out", caFile}
	if *bareH2 {
		args = append(args, "--h2-upstream")
	}
	cmd := pinned(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("starting goproxybare: %w", err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	if err := waitListening(addr, 20*time.Second); err != nil {
		stop()
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(caFile)
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		stop()
		return nil, nil, fmt.Errorf("reading goproxy-bare's CA: %v", err)
	}
	return &target{name: "goproxy-bare", proxy: addr, roots: pool, pid: cmd.Process.Pid}, stop, nil
}

func startMitmproxy(dir string, s *site) (*target, func(), error) {
	addr := freePort()
	_, port, _ := net.SplitHostPort(addr)
	conf := filepath.Join(dir, "mitm-conf")
	tagFile := filepath.Join(dir, "tag.html")
	tag := append(append([]byte(`<script data-remixproxy="bench">`), panel.Bootstrap()...), "</script>"...)
	if err := os.WriteFile(tagFile, tag, 0o644); err != nil {
		return nil, nil, err
	}
	var mapping []string
	for _, r := range s.hostResolves() {
		mapping = append(mapping, r)
	}
	addon, err := filepath.Abs("e2e/bench/mitm_inject.py")
	if err != nil {
		return nil, nil, err
	}
	cmd := pinned("mitmdump", "-q", "--listen-host", "127.0.0.1", "--listen-port", port,
		"--set", "confdir="+conf, "--set", "connection_strategy=lazy",
		"--set", "ssl_verify_upstream_trusted_ca="+s.caPEM, "-s", addon)
	cmd.Env = append(os.Environ(), "BENCH_MAP="+strings.Join(mapping, ","), "BENCH_TAG_FILE="+tagFile)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	if err := waitListening(addr, 30*time.Second); err != nil {
		stop()
		return nil, nil, err
	}
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(filepath.Join(conf, "mitmproxy-ca-cert.pem"))
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		stop()
		return nil, nil, fmt.Errorf("reading mitmproxy's CA: %v", err)
	}
	// mitmproxy holds whole bodies in memory; a 1 GiB download would measure swap, not the proxy.
	return &target{name: "mitmproxy", proxy: addr, roots: pool, pid: cmd.Process.Pid, maxBody: 16 << 20}, stop, nil
}

// --- process memory (Linux /proc) ---

func procStatus(pid int, field string) int64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, field+":") {
			f := strings.Fields(line[len(field)+1:])
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func rss(pid int) int64     { return procStatus(pid, "VmRSS") }
func peakRSS(pid int) int64 { return procStatus(pid, "VmHWM") }

// resetPeakRSS makes VmHWM start again from the current RSS (Linux: write 5 to clear_refs).
func resetPeakRSS(pid int) {
	if pid != 0 {
		os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0o200)
	}
}
