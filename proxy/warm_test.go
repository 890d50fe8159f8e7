package proxy

import (
	"context"
	"crypto/x509"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
	"github.com/remixproxy/remixproxy/store/storetest"
)

// warmProxy starts a proxy on st and returns a client through it and a channel of the sandbox
// hosts it starts (their pids).
func warmProxy(t *testing.T, st *store.Store, resolve map[string]string, roots *x509.CertPool) (*Server, *http.Client, <-chan int) {
	t.Helper()
	started := make(chan int, 10)
	f := newFixture(t, fixtureOpts{resolve: resolve, roots: roots, onlyResolved: true, config: func(c *Config) {
		c.Store = st
		c.Sandbox = sandbox.SupervisorConfig{Events: func(e sandbox.Event) {
			if e.Kind == sandbox.EventHostStarted {
				started <- e.PID
			}
		}}
	}})
	return f.srv, f.client, started
}

// addScriptRemixlet saves and activates a remixlet with a script on siteHost.
func addScriptRemixlet(t *testing.T, st *store.Store, name string) *sandbox.Manifest {
	t.Helper()
	manifest := `{"name": "` + name + `", "description": "t", "api": 1, "matches": ["https://` + siteHost + `/*"], "permissions": []}`
	storetest.Create(t, st, name, store.Files{sandbox.ManifestFile: []byte(manifest), sandbox.ScriptFile: []byte(`rmx.log(1)`)})
	m, _ := sandbox.ParseManifest([]byte(manifest))
	return m
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "remixproxy.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func wantHostStarted(t *testing.T, started <-chan int, when string) {
	t.Helper()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no sandbox host started", when)
	}
}

func wantNoHost(t *testing.T, started <-chan int, when string) {
	t.Helper()
	select {
	case pid := <-started:
		t.Fatalf("%s: a sandbox host started (pid %d)", when, pid)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestSandboxHostStartsAhead: the sandbox host starts with the proxy when a remixlet with a
// script is on, when the first one is switched on (the Activator), and, for one the store gained
// behind the proxy's back, when the proxy injects into a page; never with none on.
func TestSandboxHostStartsAhead(t *testing.T) {
	resolve, roots := tlsSite(t, siteHost, htmlHandler(plainPage))

	t.Run("with the proxy", func(t *testing.T) {
		st := openStore(t)
		addScriptRemixlet(t, st, "on at start")
		_, _, started := warmProxy(t, st, resolve, roots)
		wantHostStarted(t, started, "a proxy started with a remixlet on")
	})

	t.Run("when the first is switched on", func(t *testing.T) {
		st := openStore(t)
		srv, _, started := warmProxy(t, st, resolve, roots)
		wantNoHost(t, started, "a proxy with no remixlet")
		m := addScriptRemixlet(t, st, "switched on")
		srv.activator.Applied(context.Background(), "", nil, m)
		wantHostStarted(t, started, "after a remixlet was switched on")
	})

	t.Run("when a page is injected", func(t *testing.T) {
		st := openStore(t)
		_, client, started := warmProxy(t, st, resolve, roots)
		wantNoHost(t, started, "a proxy with no remixlet")
		addScriptRemixlet(t, st, "added by the CLI") // the CLI writes the store, the proxy is not told
		resp, err := client.Get("https://" + siteHost + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		wantHostStarted(t, started, "after the proxy injected into a page")
	})
}
