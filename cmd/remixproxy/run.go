package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/remixproxy/remixproxy/certs"
	"github.com/remixproxy/remixproxy/proxy"
)

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// runFlags are the flags of `remixproxy run`.
type runFlags struct {
	dataDir      string
	listen       string
	upstreamCAs  listFlag
	resolve      listFlag
	noMITM       listFlag
	onlyResolved bool
	verbose      bool
	modelURL     string
	modelAPI     string

	benchNoInject bool // hidden: benchmarks only (proxy.Config.BenchNoInject)
}

func parseRunFlags(args []string) (*runFlags, error) {
	f := &runFlags{}
	fs := newFlagSet("run", &f.dataDir)
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to serve the proxy on")
	fs.Var(&f.upstreamCAs, "upstream-ca", "PEM `FILE` of extra root CAs to trust for upstream sites (repeatable)")
	fs.Var(&f.resolve, "resolve", "`HOST:PORT=ADDR:PORT`: dial ADDR:PORT for HOST:PORT, like curl's --resolve (repeatable)")
	fs.Var(&f.noMITM, "no-mitm", "host `PATTERN` (example.com, *.example.com) tunnelled untouched (repeatable)")
	fs.BoolVar(&f.onlyResolved, "only-resolved", false, "refuse every host without a --resolve entry, without dialing (offline use and tests)")
	fs.BoolVar(&f.verbose, "v", false, "log every connection-level event")
	fs.StringVar(&f.modelURL, "model-url", "", "`URL` of a model endpoint offered to the agent as provider \"local\" (e.g. the scripted model: http://127.0.0.1:8787/v1)")
	fs.StringVar(&f.modelAPI, "model-api", "openai", "wire format of --model-url: openai or anthropic")
	fs.BoolVar(&f.benchNoInject, benchNoInjectFlag, false, "benchmarks only: relay HTML pages untouched (no page agent, no CSP change)")
	fs.Usage = func() { printVisibleDefaults(fs, benchNoInjectFlag) }
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see remixproxy run -h)", fs.Arg(0))
	}
	if f.modelAPI != "openai" && f.modelAPI != "anthropic" {
		return nil, fmt.Errorf("--model-api %q: want openai or anthropic", f.modelAPI)
	}
	if f.modelURL != "" {
		u, err := url.Parse(f.modelURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--model-url %q: want an http or https address such as http://127.0.0.1:8787/v1", f.modelURL)
		}
	}
	return f, nil
}

// benchNoInjectFlag is `run`'s hidden flag for e2e/bench: pages relayed without injection, to
// measure what injection costs. It is left out of -h; nobody browsing should set it.
const benchNoInjectFlag = "bench-no-inject"

// printVisibleDefaults is fs's -h text without the hidden flags.
func printVisibleDefaults(fs *flag.FlagSet, hidden ...string) {
	fmt.Fprintf(fs.Output(), "Usage of %s:\n", fs.Name())
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(fs.Output())
	fs.VisitAll(func(f *flag.Flag) {
		if !slices.Contains(hidden, f.Name) {
			shown.Var(f.Value, f.Name, f.Usage)
			shown.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	shown.PrintDefaults()
}

// parseResolve turns --resolve values into the proxy's map.
func parseResolve(values []string) (map[string]string, error) {
	m := map[string]string{}
	for _, v := range values {
		from, to, ok := strings.Cut(v, "=")
		if !ok {
			return nil, fmt.Errorf("--resolve %q: want HOST:PORT=ADDR:PORT", v)
		}
		if _, _, err := net.SplitHostPort(from); err != nil {
			return nil, fmt.Errorf("--resolve %q: %q is not HOST:PORT", v, from)
		}
		if _, _, err := net.SplitHostPort(to); err != nil {
			return nil, fmt.Errorf("--resolve %q: %q is not ADDR:PORT", v, to)
		}
		m[strings.ToLower(from)] = to
	}
	return m, nil
}

// loadUpstreamRoots is the system pool plus the --upstream-ca files; nil when there are none.
func loadUpstreamRoots(files []string) (*x509.CertPool, error) {
	if len(files) == 0 {
		return nil, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	for _, f := range files {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--upstream-ca: %w", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--upstream-ca %s: no PEM certificate found in the file", f)
		}
	}
	return pool, nil
}

func runProxy(args []string) error {
	f, err := parseRunFlags(args)
	if err != nil {
		return err
	}
	tuneGC() // a heap floor for the request path's garbage (gctune.go)
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	resolve, err := parseResolve(f.resolve)
	if err != nil {
		return err
	}
	roots, err := loadUpstreamRoots(f.upstreamCAs)
	if err != nil {
		return err
	}
	ca, created, err := certs.LoadOrCreate(f.dataDir)
	if err != nil {
		return err
	}
	st, err := openStore(f.dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("listening: %w (is another remixproxy running? pick another address with --listen)", err)
	}
	srv, err := proxy.New(proxy.Config{
		Listen:        ln.Addr().String(),
		DataDir:       f.dataDir,
		CA:            ca,
		UpstreamRoots: roots,
		Resolve:       resolve,
		OnlyResolved:  f.onlyResolved,
		NoMITM:        f.noMITM,
		Store:         st,
		ModelURL:      f.modelURL,
		ModelAPI:      f.modelAPI,
		BenchNoInject: f.benchNoInject,
		Version:       version,
		Logger:        log,
	})
	if err != nil {
		ln.Close()
		return err
	}
	printBanner(os.Stdout, ln.Addr().String(), ca, created, f.modelURL)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if err != nil && !errors.Is(err, net.ErrClosed) {
			return fmt.Errorf("serving: %w", err)
		}
		return nil
	case <-ctx.Done():
		fmt.Fprintln(os.Stderr, "remixproxy: shutting down")
		return srv.Close()
	}
}

// printBanner tells a newcomer where things are and what to do next.
func printBanner(w *os.File, listen string, ca *certs.CA, created bool, modelURL string) {
	fmt.Fprintf(w, "remixproxy %s listening on http://%s\n", version, listen)
	state := "existing"
	if created {
		state = "created now"
	}
	fmt.Fprintf(w, "  CA certificate: %s (%s)\n  CA SHA-256:     %s\n", ca.CertPath, state, ca.Fingerprint())
	var trustedIn, notIn []string
	for _, r := range certs.Trusted(ca) {
		switch {
		case r.Already:
			trustedIn = append(trustedIn, r.Store)
		case !r.Skipped:
			notIn = append(notIn, r.Store)
		}
	}
	trusted := len(trustedIn) > 0
	if trusted {
		fmt.Fprintf(w, "  trusted by:     %s\n", strings.Join(trustedIn, "; "))
	}
	if len(notIn) > 0 {
		fmt.Fprintf(w, "  not trusted by: %s\n", strings.Join(notIn, "; "))
	}
	fmt.Fprintln(w, "Next:")
	if !trusted {
		fmt.Fprintln(w, "  - zero setup: `remixproxy browser` opens Chromium through the proxy, trusting the CA for that profile only")
		fmt.Fprintln(w, "  - or trust the CA everywhere: `remixproxy trust`, then set your browser's proxy (`remixproxy sysproxy on`)")
	} else {
		fmt.Fprintf(w, "  - point your browser's proxy at %s (`remixproxy sysproxy on`, or the PAC file http://%s/proxy.pac)\n", listen, listen)
	}
	fmt.Fprintf(w, "  - certificate and setup help: http://%s/cert   status: http://%s/status\n", listen, listen)
	fmt.Fprintf(w, "  - the chat: click the remixproxy button on any page; models are set in https://remix.proxy/manager/settings\n")
	if modelURL != "" {
		fmt.Fprintf(w, "  - the agent also has provider \"local\" at %s (--model-url)\n", modelURL)
	}
}

var _ flag.Value = (*listFlag)(nil)
