package proxy

import (
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/remixproxy/remixproxy/certs"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Config is everything the proxy needs, parsed and validated by the caller (cmd/remixproxy).
type Config struct {
	// Listen is the address the proxy serves on, e.g. "127.0.0.1:8080". Used to recognise
	// requests addressed to the proxy itself and in the PAC file. Required.
	Listen string
	// DataDir holds the per-install secret that signs page-session tokens. If empty, a fresh
	// secret is made for this run only (tokens in pages cached by the browser then stop working
	// after a restart).
	DataDir string
	// CA signs the leaf certificates presented to the browser. Required.
	CA *certs.CA
	// UpstreamRoots verifies upstream servers. If nil, the system roots.
	UpstreamRoots *x509.CertPool
	// Resolve maps "host:port" to the "addr:port" dialed instead, like curl's --resolve.
	Resolve map[string]string
	// OnlyResolved refuses, without dialing, every upstream host not named in Resolve. For tests
	// and offline use: the browser's background requests fail fast instead of waiting on DNS.
	OnlyResolved bool
	// PublicAddress reports whether an upstream address is on the public internet. A page's
	// request reaches any other address (the person's machine, local network, VPN …) only when
	// the person could be the one asking (localnet.go). If nil, netaddr.IsPublic. Tests set it:
	// their sites, on loopback, stand for the public web.
	PublicAddress func(netip.Addr) bool
	// NoMITM lists host patterns that are tunnelled untouched: "example.com" matches that host,
	// "*.example.com" its subdomains.
	NoMITM []string
	// Store holds the remixlets, their versions, logs and paused sites. If nil, no remixlet runs
	// and the manager shows nothing (the proxy core alone, as in its own tests).
	Store *store.Store
	// Sandbox configures the sandbox supervisor that runs remixlets (used only with a Store). It
	// is started when the first page with a matching remixlet connects. Zero fields take the
	// defaults of sandbox.SupervisorConfig: the sandbox host is this executable with the argument
	// "sandbox-host". If Sandbox.Log is nil, the supervisor's lines go to Logger.
	Sandbox sandbox.SupervisorConfig
	// Version is reported by the status page.
	Version string
	// Logger receives one line per notable event. If nil, slog.Default().
	Logger *slog.Logger
	// DialTimeout bounds connecting to an upstream. If zero, 15 seconds.
	DialTimeout time.Duration
	// ResponseHeaderTimeout bounds waiting for an upstream's response headers. If zero, 60 seconds.
	ResponseHeaderTimeout time.Duration

	// ModelURL, when set, is an OpenAI-compatible (or, with ModelAPI "anthropic", an Anthropic
	// Messages) endpoint offered to the agent as provider "local", model "scripted", ahead of
	// the providers in Settings: --model-url, e.g. the scripted model server.
	ModelURL string
	// ModelAPI is the wire format of ModelURL: "openai" (the default) or "anthropic".
	ModelAPI string
	// ModelClient is the HTTP client for model providers. If nil, a direct client with a
	// ten-minute overall timeout.
	ModelClient *http.Client

	// BenchNoInject exists for benchmarks only (`remixproxy run --bench-no-inject`, hidden):
	// HTML documents are relayed untouched — no bootstrap, no CSP change, no decoding — through
	// the same pipeline, so e2e/bench can measure what injection adds to the relay's own CPU per
	// request. Default false. Never set it for browsing: pages then get no page agent at all.
	BenchNoInject bool
}
