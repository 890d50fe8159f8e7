package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/elazarl/goproxy"

	"github.com/remixproxy/remixproxy/certs"
	"github.com/remixproxy/remixproxy/proxy/chat"
	"github.com/remixproxy/remixproxy/proxy/fetch"
	"github.com/remixproxy/remixproxy/proxy/manager"
	"github.com/remixproxy/remixproxy/proxy/page"
	"github.com/remixproxy/remixproxy/proxy/remixlet"
)

// Server is the running proxy: the browser-facing listener, goproxy for CONNECT, the
// interception server for tunnelled connections, the request pipeline, the magic host and the
// page sessions of connected page agents.
type Server struct {
	cfg    Config
	log    *slog.Logger
	issuer *certs.Issuer

	outer *http.Server             // the address the browser is configured with
	gp    *goproxy.ProxyHttpServer // CONNECT: intercept, tunnel or refuse (connect.go)
	inner *http.Server             // intercepted connections, HTTP/1.1 and HTTP/2 (mitm.go)
	mitm  *connListener            // feeds inner

	// upstream is the transport to sites (upstream.go), at public addresses only; upstreamLocal
	// the one for the requests that may reach a local address and did; spaces what the proxy
	// has seen of each name's addresses (localnet.go).
	upstream      *http.Transport
	upstreamLocal *http.Transport
	spaces        addressSpaces
	rp            *httputil.ReverseProxy // the pipeline for every proxied request (pipeline.go)
	magic         http.Handler           // remix.proxy (magic.go)
	listen        http.Handler           // the listen address's own pages (magic.go)
	// pages are the page sessions of connected page agents, their channel, page tools,
	// recorded responses and reported secrets (page/).
	pages  *page.Hub
	secret []byte // the per-install secret: page tokens, the manager's form token (secret.go)
	// fetch sends requests as the person (rmx.fetch, http_request) with its cookie view and
	// the credentials seen (fetch/).
	fetch *fetch.Client
	// remixlets runs remixlets in connected pages, netrules are their network rules, sched
	// runs their rmx.schedule actions, activator applies a change of them to the open pages
	// (remixlet/); all nil without a Store. observed are network:observe's records.
	remixlets *remixlet.Runner
	netrules  *remixlet.NetRules
	sched     *remixlet.Scheduler
	activator *remixlet.Activator
	observed  *remixlet.Observed
	boot      bootstrap     // the page-agent script and its CSP hash
	taps      []responseTap // what sees and changes a response on its way, in order (pipeline.go)
	// chats are the agent's conversations, one per tab (chat/); without a Store the panel gets
	// its page's state and no agent.
	chats     *chat.Hub
	stopChats context.CancelFunc
	manager   *manager.Manager // the manager web UI (manager/)

	started time.Time
	counts  counters

	closeOnce sync.Once
}

// counters are the totals reported by the status page since start.
type counters struct {
	requests atomic.Int64
	injected atomic.Int64
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
	resolve := make(map[string]string, len(cfg.Resolve))
	for hostport, addr := range cfg.Resolve {
		if _, _, err := net.SplitHostPort(hostport); err != nil {
			return nil, fmt.Errorf("creating proxy: resolve entry %q: want HOST:PORT=ADDR:PORT: %w", hostport, err)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("creating proxy: resolve entry %q=%q: want HOST:PORT=ADDR:PORT: %w", hostport, addr, err)
		}
		resolve[strings.ToLower(hostport)] = addr
	}
	cfg.Resolve = resolve
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

		secret: secret,
		pages:  page.New(page.Config{Secret: secret, Logger: cfg.Logger}),
	}
	errLog := slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug)
	s.fetch = fetch.New(fetch.Config{Dial: s.dialUpstream, Resolvable: s.resolvable, OnlyResolved: cfg.OnlyResolved,
		Listen: cfg.Listen, DialTimeout: cfg.DialTimeout, Roots: cfg.UpstreamRoots})
	s.observed = remixlet.NewObserved(s.pages, cfg.Store, cfg.Logger)
	if cfg.Store != nil {
		s.remixlets = remixlet.NewRunner(remixlet.Config{Store: cfg.Store, Sandbox: cfg.Sandbox, Logger: cfg.Logger,
			Fetch: s.fetch, Observed: s.observed})
		s.netrules = remixlet.NewNetRules(cfg.Store, cfg.Logger, s.isOwnHost)
		s.activator = &remixlet.Activator{Rules: s.netrules, Pages: s.pages, Runner: s.remixlets}
		s.sched = remixlet.NewScheduler(cfg.Store, cfg.Logger, s.pages, s.remixlets)
		s.sched.Start()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.chats = chat.New(ctx, chat.Config{Store: cfg.Store, DataDir: cfg.DataDir, ModelURL: cfg.ModelURL, ModelAPI: cfg.ModelAPI,
		ModelClient: cfg.ModelClient, Logger: cfg.Logger, Pages: s.pages, Fetch: s.fetch, Activator: s.activator,
		RefusedAnyway: s.refuseLocalBeforeCard})
	s.stopChats = cancel
	// The page sessions' listeners, in this order: the chats, then the remixlet runner.
	s.pages.AddListener(s.chats)
	if s.remixlets != nil {
		s.pages.AddListener(s.remixlets)
		s.remixlets.Warm() // the sandbox host starts with the proxy when a remixlet with a script is on
	}
	s.manager = manager.New(manager.Config{Store: cfg.Store, DataDir: cfg.DataDir, ModelURL: cfg.ModelURL, Secret: secret,
		Logger: cfg.Logger, Activator: s.activator, Runs: s.remixlets, Chats: s.chats, IsOwnHost: s.isOwnHost})
	s.spaces.public = map[string]bool{}
	s.upstream = s.newUpstreamTransport(s.dialPublic)
	s.upstreamLocal = s.newUpstreamTransport(s.dialUpstream)
	s.taps = s.responseTaps()
	s.rp = s.newPipeline(errLog)
	s.magic = s.newMagicHost()
	s.listen = ownAnswers(http.HandlerFunc(s.serveListenAddress))
	s.gp = s.newConnectHandler()
	s.mitm = newConnListener()
	s.inner = &http.Server{
		Handler:           http.HandlerFunc(s.serveProxied),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    256 << 10,
		ErrorLog:          errLog,
	}
	s.outer = &http.Server{
		Handler:           http.HandlerFunc(s.serveOuter),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    256 << 10,
		ErrorLog:          errLog,
	}
	go s.inner.Serve(s.mitm)
	return s, nil
}

// serveOuter routes what arrives on the listen address: CONNECT to goproxy, absolute-form
// (plain http://) proxy requests to the pipeline, and requests for the proxy itself to its pages.
func (s *Server) serveOuter(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		s.gp.ServeHTTP(w, r)
	case r.URL.IsAbs():
		s.serveProxied(w, r)
	default:
		s.listen.ServeHTTP(w, r)
	}
}

// Serve accepts browser connections on ln until Close is called.
func (s *Server) Serve(ln net.Listener) error {
	err := s.outer.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Handler is the proxy as an http.Handler, for callers that run their own server.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveOuter) }

// Close stops accepting connections, ends intercepted connections and page sessions, and closes
// idle upstream connections.
func (s *Server) Close() error {
	var err error
	s.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s.pages.CloseAll()
		if s.stopChats != nil {
			s.stopChats()
		}
		if s.sched != nil {
			s.sched.Close()
		}
		if s.remixlets != nil {
			s.remixlets.Close()
		}
		s.mitm.Close()
		err = errors.Join(shutdown(ctx, s.outer), shutdown(ctx, s.inner))
		s.closeIdleUpstream()
		s.fetch.Close()
	})
	return err
}

func shutdown(ctx context.Context, srv *http.Server) error {
	if err := srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
		return srv.Close()
	} else if err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

// PageTool runs a page tool in the page of sessionID, as the agent's tools do (page.Hub.Tool),
// for callers outside the package: the end-to-end tests and the outline bench.
func (s *Server) PageTool(ctx context.Context, sessionID, tool string, args json.RawMessage) (json.RawMessage, error) {
	return s.pages.Tool(ctx, sessionID, tool, args)
}

// RunSchedules runs the schedules due at now, as the scheduler does on its own every few seconds,
// and reports how many actions ran. It is for tests (a clock jump without waiting); without a
// store it does nothing.
func (s *Server) RunSchedules(ctx context.Context, now time.Time) (int, error) {
	if s.sched == nil {
		return 0, nil
	}
	return s.sched.RunDue(ctx, now)
}

// InvalidateNetRules makes the next browser request rebuild the network rules from the store,
// for callers outside the package (tests that change the store directly).
func (s *Server) InvalidateNetRules() { s.netrules.Invalidate() }
