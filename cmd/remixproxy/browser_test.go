package main

import (
	"bytes"
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/certs"
)

func TestBrowserArgs(t *testing.T) {
	tests := []struct {
		name  string
		addr  string
		extra []string
		want  []string
	}{
		{
			name: "defaults",
			addr: "127.0.0.1:8080",
			want: []string{
				"--proxy-server=http://127.0.0.1:8080",
				"--proxy-bypass-list=<-loopback>",
				"--ignore-certificate-errors-spki-list=SPKI=",
				"--user-data-dir=/p",
				"--no-first-run",
				"--no-default-browser-check",
				"--disable-quic",
				"https://remix.proxy/",
			},
		},
		{
			name:  "IPv6 and extra args before the start page",
			addr:  "[::1]:9000",
			extra: []string{"--headless=new", "--remote-debugging-port=0"},
			want: []string{
				"--proxy-server=http://[::1]:9000",
				"--proxy-bypass-list=<-loopback>",
				"--ignore-certificate-errors-spki-list=SPKI=",
				"--user-data-dir=/p",
				"--no-first-run",
				"--no-default-browser-check",
				"--disable-quic",
				"--headless=new",
				"--remote-debugging-port=0",
				"https://remix.proxy/",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := browserArgs(tc.addr, "SPKI=", "/p", tc.extra); !slices.Equal(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// fakeFileInfo is a regular file for the stat fake.
type fakeFileInfo struct{ fs.FileInfo }

func (fakeFileInfo) IsDir() bool { return false }

func TestFindBrowser(t *testing.T) {
	tests := []struct {
		name    string
		goos    string
		onPath  []string
		files   []string
		env     map[string]string
		want    string
		wantErr string
	}{
		{"Linux chromium", "linux", []string{"chromium", "google-chrome"}, nil, nil, "/usr/bin/chromium", ""},
		{"Linux chrome stable", "linux", []string{"google-chrome-stable"}, nil, nil, "/usr/bin/google-chrome-stable", ""},
		{"Linux none", "linux", nil, nil, nil, "", "sudo apt-get install -y chromium"},
		{"macOS Chrome app", "darwin", nil, []string{"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"}, nil,
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", ""},
		{"macOS Chromium in home", "darwin", nil, []string{"/Users/u/Applications/Chromium.app/Contents/MacOS/Chromium"},
			map[string]string{"HOME": "/Users/u"}, "/Users/u/Applications/Chromium.app/Contents/MacOS/Chromium", ""},
		{"Windows Program Files", "windows", nil, []string{`C:\Program Files\Google\Chrome\Application\chrome.exe`},
			map[string]string{"ProgramFiles": `C:\Program Files`}, `C:\Program Files\Google\Chrome\Application\chrome.exe`, ""},
		{"Windows on PATH", "windows", []string{"chrome.exe"}, nil, nil, "/usr/bin/chrome.exe", ""},
		{"Windows none", "windows", nil, nil, map[string]string{"LocalAppData": `C:\Users\u\AppData\Local`}, "",
			`C:\Users\u\AppData\Local\Google\Chrome\Application\chrome.exe`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &browserEnv{
				goos: tc.goos,
				lookPath: func(n string) (string, error) {
					if slices.Contains(tc.onPath, n) {
						return "/usr/bin/" + n, nil
					}
					return "", exec.ErrNotFound
				},
				stat: func(p string) (fs.FileInfo, error) {
					if slices.Contains(tc.files, p) {
						return fakeFileInfo{}, nil
					}
					return nil, fs.ErrNotExist
				},
				getenv: func(k string) string { return tc.env[k] },
			}
			got, err := e.findBrowser()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--browser PATH") {
					t.Errorf("got %q, %v; want an error containing %q and --browser PATH", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// fakeBrowser writes a shell script that records its arguments, one per line, to record.
func fakeBrowser(t *testing.T) (script, record string) {
	t.Helper()
	dir := t.TempDir()
	script = filepath.Join(dir, "fake-chromium")
	record = filepath.Join(dir, "args.txt")
	body := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" + record + "'\necho started >&2\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script, record
}

func testBrowserEnv(out *bytes.Buffer) *browserEnv {
	e := newBrowserEnv()
	e.out = out
	e.lookPath = func(string) (string, error) { return "", exec.ErrNotFound } // only --browser
	e.start = func(cmd *exec.Cmd) error {
		if err := cmd.Start(); err != nil {
			return err
		}
		return cmd.Wait() // wait, so the test can read what the fake recorded
	}
	return e
}

func TestBrowserLaunchesWithArgs(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatalf("no sh to run the fake browser (every supported system has /bin/sh): %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept the readiness probe
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	script, record := fakeBrowser(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	ca, _, err := certs.LoadOrCreate(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	listen := ln.Addr().String()
	profile := filepath.Join(dataDir, "browser-profile")

	var out bytes.Buffer
	err = testBrowserEnv(&out).command([]string{
		"--data-dir", dataDir, "--listen", listen, "--browser", script, "--", "--headless=new", "--mute-audio",
	})
	if err != nil {
		t.Fatalf("browser command: %v", err)
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("the fake browser recorded nothing: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	want := []string{
		"--proxy-server=http://" + listen,
		"--proxy-bypass-list=<-loopback>",
		"--ignore-certificate-errors-spki-list=" + ca.SPKIHash(),
		"--user-data-dir=" + profile,
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-quic",
		"--headless=new",
		"--mute-audio",
		"https://remix.proxy/",
	}
	if !slices.Equal(got, want) {
		t.Errorf("browser arguments:\n got %q\nwant %q", got, want)
	}
	if fi, err := os.Stat(profile); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("profile dir %s: %v, %v; want a 0700 directory", profile, fi, err)
	}
	if log, _ := os.ReadFile(filepath.Join(profile, "remixproxy-browser.log")); !strings.Contains(string(log), "started") {
		t.Errorf("browser log %q, want the browser's stderr", log)
	}
	for _, w := range []string{"launched: " + script + " --proxy-server=http://" + listen, "profile:  " + profile, "no system setting was changed"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output does not contain %q; got:\n%s", w, out.String())
		}
	}
	if strings.Contains(out.String(), "warning") {
		t.Errorf("output warns although the CA existed:\n%s", out.String())
	}
}

func TestBrowserRefusesWhenProxyIsNotListening(t *testing.T) {
	// A port that was just free: nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()

	script, record := fakeBrowser(t)
	dataDir := filepath.Join(t.TempDir(), "data")
	var out bytes.Buffer
	e := testBrowserEnv(&out)
	err = e.command([]string{"--data-dir", dataDir, "--listen", addr, "--browser", script})
	if err == nil || !strings.Contains(err.Error(), "start it first with `remixproxy` (or `go run ./cmd/remixproxy`)") {
		t.Errorf("got %v, want an error telling to start the proxy first", err)
	}
	if _, err := os.Stat(record); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the browser was launched although the proxy is not running")
	}
	if _, err := os.Stat(dataDir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("data dir %s was created although nothing was launched", dataDir)
	}
}

func TestBrowserWarnsWhenCAIsNew(t *testing.T) {
	script, _ := fakeBrowser(t)
	var out bytes.Buffer
	e := testBrowserEnv(&out)
	e.dial = func(string) error { return nil }
	dataDir := filepath.Join(t.TempDir(), "data")
	if err := e.command([]string{"--data-dir", dataDir, "--browser", script}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "warning: there was no CA in "+dataDir) {
		t.Errorf("output does not warn about the new CA; got:\n%s", out.String())
	}
}
