package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remixproxy/remixproxy/sandbox"
)

// recordingHost answers every call with null and remembers them.
type recordingHost struct {
	mu    sync.Mutex
	calls []string
}

func (h *recordingHost) Call(ctx context.Context, ns, method string, args json.RawMessage) (json.RawMessage, error) {
	h.mu.Lock()
	h.calls = append(h.calls, ns+"."+method+string(args))
	h.mu.Unlock()
	return json.RawMessage("null"), nil
}

// TestSandboxHostCommand runs the real binary's hidden sandbox-host command as the supervisor's
// child: a remixlet's console line and dom call come back through it.
func TestSandboxHostCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "remixproxy")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sup := sandbox.NewSupervisor(sandbox.SupervisorConfig{Command: []string{bin, "sandbox-host"}})
	if err := sup.Start(ctx); err != nil {
		t.Fatalf("starting the sandbox host: %v", err)
	}
	logs := make(chan string, 16)
	host := &recordingHost{}
	h, err := sup.StartRemixlet(sandbox.RemixletConfig{
		RemixletID: "rx_smoke", API: sandbox.APIVersion, Host: host,
		Script: `console.log("hello from the sandbox"); await dom.query(".promoted");`,
		Log:    func(level, msg string) { logs <- level + " " + msg },
	})
	if err != nil {
		t.Fatalf("StartRemixlet: %v", err)
	}
	defer h.Stop()
	select {
	case line := <-logs:
		if !strings.Contains(line, "hello from the sandbox") {
			t.Errorf("first log line %q", line)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no log line from the remixlet within 20s")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		host.mu.Lock()
		n := len(host.calls)
		host.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	host.mu.Lock()
	defer host.mu.Unlock()
	if len(host.calls) != 1 || !strings.HasPrefix(host.calls[0], `dom.query[".promoted"`) {
		t.Errorf("host calls = %q, want one dom.query", host.calls)
	}
}
