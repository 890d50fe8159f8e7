package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseResolve(t *testing.T) {
	cases := []struct {
		name    string
		in      []string
		want    map[string]string
		wantErr string
	}{
		{"one", []string{"Site.test:443=127.0.0.1:8443"}, map[string]string{"site.test:443": "127.0.0.1:8443"}, ""},
		{"no equals", []string{"site.test:443"}, nil, "want HOST:PORT=ADDR:PORT"},
		{"no port", []string{"site.test=127.0.0.1:1"}, nil, "is not HOST:PORT"},
		{"bad target", []string{"site.test:443=127.0.0.1"}, nil, "is not ADDR:PORT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseResolve(c.in)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(c.want) {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("got[%q] = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

func TestLoadUpstreamRootsErrors(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "x.pem")
	os.WriteFile(notPEM, []byte("hello"), 0o644)
	if _, err := loadUpstreamRoots([]string{notPEM}); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("non-PEM file: err = %v", err)
	}
	if _, err := loadUpstreamRoots([]string{filepath.Join(dir, "missing.pem")}); err == nil || !strings.Contains(err.Error(), "missing.pem") {
		t.Errorf("missing file: err = %v", err)
	}
}

// TestRunCommand builds the binary, starts `remixproxy` as a person would, reads the banner,
// asks the status page, and stops it with SIGTERM.
func TestRunCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "remixproxy")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := t.TempDir()
	cmd := exec.Command(bin, "--listen", "127.0.0.1:0", "--data-dir", data, "--only-resolved")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()

	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var banner []string
	timeout := time.After(20 * time.Second)
collect:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break collect
			}
			banner = append(banner, l)
			if strings.Contains(l, "status:") {
				break collect
			}
		case <-timeout:
			t.Fatalf("no banner after 20s; got %q", banner)
		}
	}
	text := strings.Join(banner, "\n")
	addr := regexp.MustCompile(`listening on http://(127\.0\.0\.1:\d+)`).FindStringSubmatch(text)
	if addr == nil {
		t.Fatalf("banner has no listen address:\n%s", text)
	}
	for _, want := range []string{filepath.Join(data, "remixproxy-ca.pem"), "created now", "remixproxy browser", "/cert"} {
		if !strings.Contains(text, want) {
			t.Errorf("banner lacks %q:\n%s", want, text)
		}
	}
	resp, err := http.Get("http://" + addr[1] + "/status.json")
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	var st struct {
		Version       string `json:"version"`
		CAFingerprint string `json:"ca_fingerprint"`
	}
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if st.CAFingerprint == "" || st.Version == "" {
		t.Errorf("status.json = %+v", st)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("still running 10s after SIGTERM")
	}
}
