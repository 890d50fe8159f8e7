package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/remixproxy/remixproxy/certs"
)

// Server is the running proxy: goproxy with remixproxy's stages installed, the magic host, and
// the page sessions of connected page agents.
type Server struct {
	cfg    Config
	log    *slog.Logger
	issuer *certs.Issuer
	gp     *goproxy.ProxyHttpServer
	http   *http.Server

	upstream *http.Transport // to real sites
	magic    *magicHost      // remix.proxy, served in-process
	sessions *sessions
	boot     bootstrap // the page-agent script and its CSP hash

	started time.Time
	counts  counters

	closeOnce sync.Once
}

// counters are the totals reported by the status page since start.
type counters struct {
	requests         atomic.Int64
	injected         atomic.Int64
	agentConnections atomic.Int64
}

// New validates cfg and builds a proxy ready to Serve.
func New(cfg Config) (*Server, error) {
	if cfg.CA == nil {
		return nil, errors.New("creating proxy: no CA given")
	}
	if cfg.Listen == "" {
		return nil, errors.New("creating proxy: no listen address given")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 15 * time.Second
	}
	if cfg.ResponseHeaderTimeout == 0 {
		cfg.ResponseHeaderTimeout = 60 * time.Second
	}
	for hostport, addr := range cfg.Resolve {
		if _, _, err := net.SplitHostPort(hostport); err != nil {
			return nil, fmt.Errorf("creating proxy: resolve entry %q: want HOST:PORT=ADDR:PORT: %w", hostport, err)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("creating proxy: resolve entry %q=%q: want HOST:PORT=ADDR:PORT: %w", hostport, addr, err)
		}
	}
	secret, err := loadSecret(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("creating proxy: %w", err)
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		issuer:  certs.NewIssuer(cfg.CA, 2000),
		started: time.Now(),
		boot:    newBootstrap(),
	}
	s.sessions = newSessions(secret)
	s.upstream = s.newUpstreamTransport()
	s.magic = newMagicHost(s)
	s.gp = s.newGoproxy()
	s.http = &http.Server{
		Handler:           s.gp,
		ReadHeaderTimeout: 30 * time.Second,
		MaxHeaderBytes:    256 << 10,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	return s, nil
}

// newGoproxy installs the stages, in the order they run for each request.
func (s *Server) newGoproxy() *goproxy.ProxyHttpServer {
	gp := goproxy.NewProxyHttpServer()
	gp.Logger = goproxyLogger{s.log}
	gp.AllowHTTP2 = true
	gp.KeepAcceptEncoding = true // the browser's Accept-Encoding reaches the site; html.go decodes what it injects into
	gp.Tr = s.upstream
	gp.ConnectDialWithReq = func(req *http.Request, network, addr string) (net.Conn, error) {
		return s.dialUpstream(req.Context(), network, addr)
	}
	gp.NonproxyHandler = http.HandlerFunc(s.serveListenAddress)

	// 1. CONNECT: intercept, tunnel or refuse (connect.go).
	gp.OnRequest().HandleConnectFunc(s.handleConnect)
	// 2. Every request: count it and route it through Server.RoundTrip, which answers the magic
	//    host itself and turns upstream failures into error pages (upstream.go, magic.go).
	gp.OnRequest().DoFunc(func(req *http.Request, ctx *goproxy.ProxyCtx) (*http.Request, *http.Response) {
		s.counts.requests.Add(1)
		ctx.RoundTripper = s
		return req, nil
	})
	// 3. Responses: service-worker scripts get the shim (swshim.go); HTML documents get the
	//    bootstrap (html.go). Everything else passes untouched.
	gp.OnResponse().DoFunc(func(resp *http.Response, ctx *goproxy.ProxyCtx) *http.Response {
		if resp == nil || ctx.Req == nil {
			return resp
		}
		resp = s.shimServiceWorker(ctx.Req, resp)
		return s.injectHTML(ctx.Req, resp)
	})
	return gp
}

// Serve accepts browser connections on ln until Close is called.
func (s *Server) Serve(ln net.Listener) error {
	err := s.http.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Handler is the proxy as an http.Handler, for callers that run their own server.
func (s *Server) Handler() http.Handler { return s.gp }

// Close stops accepting connections and closes the page sessions and idle upstream connections.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err = s.http.Shutdown(ctx)
		if errors.Is(err, context.DeadlineExceeded) {
			err = s.http.Close()
		}
		s.sessions.closeAll()
		s.magic.close()
		s.upstream.CloseIdleConnections()
	})
	return err
}

// goproxyLogger sends goproxy's own warnings (a client that went away, a failed handshake) to
// the debug level: they are routine for a browser's proxy and never actionable one by one.
type goproxyLogger struct{ log *slog.Logger }

func (l goproxyLogger) Printf(format string, args ...any) {
	l.log.Debug(strings.TrimSpace(fmt.Sprintf(format, args...)), "from", "goproxy")
}

var _ io.Closer = (*Server)(nil)
