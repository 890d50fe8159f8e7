package main

import (
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/remixproxy/remixproxy/certs"
)

// browserStartURL is the proxy's own start page, served on its magic host.
const browserStartURL = "https://remix.proxy/"

// runBrowser is `remixproxy browser [--listen 127.0.0.1:8080] [--browser PATH] [--profile DIR]
// [-- extra chromium args]`: launch Chromium or Chrome with a dedicated profile that uses the
// proxy and trusts the CA's key for that profile only. No system setting is touched.
func runBrowser(args []string) error {
	return newBrowserEnv().command(args)
}

// browserEnv is what the browser command reads from the machine; tests replace every field.
type browserEnv struct {
	goos     string
	lookPath func(string) (string, error)
	stat     func(string) (fs.FileInfo, error)
	getenv   func(string) string
	dial     func(addr string) error
	start    func(cmd *exec.Cmd) error // starts the browser and lets it run on its own
	out      io.Writer
}

func newBrowserEnv() *browserEnv {
	return &browserEnv{
		goos:     runtime.GOOS,
		lookPath: exec.LookPath,
		stat:     os.Stat,
		getenv:   os.Getenv,
		dial:     dialCheck,
		start: func(cmd *exec.Cmd) error {
			if err := cmd.Start(); err != nil {
				return err
			}
			return cmd.Process.Release()
		},
		out: os.Stdout,
	}
}

func (e *browserEnv) command(args []string) error {
	var dataDir, listen, browser, profile string
	fset := newFlagSet("browser", &dataDir)
	fset.StringVar(&listen, "listen", defaultListen, "address remixproxy listens on")
	fset.StringVar(&browser, "browser", "", "Chromium or Chrome executable (default: the first one found)")
	fset.StringVar(&profile, "profile", "", "browser profile directory (default: <data-dir>/browser-profile)")
	if err := fset.Parse(args); err != nil {
		return err
	}
	extra := fset.Args() // everything after "--" goes to the browser

	host, port, err := proxyAddr(listen)
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(host, port)
	if err := e.dial(addr); err != nil {
		return fmt.Errorf("nothing is listening on %s (%v): start it first with `remixproxy` (or `go run ./cmd/remixproxy`), "+
			"then run remixproxy browser again (pass --listen if the proxy uses another address)", addr, err)
	}
	if browser == "" {
		if browser, err = e.findBrowser(); err != nil {
			return err
		}
	}
	ca, created, err := certs.LoadOrCreate(dataDir)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(e.out, "warning: there was no CA in %s, so a new one was made; if the running proxy uses another "+
			"--data-dir, pass the same one here, or every HTTPS page will show a certificate error\n", dataDir)
	}
	if profile == "" {
		profile = filepath.Join(dataDir, "browser-profile")
	}
	if err := os.MkdirAll(profile, 0o700); err != nil {
		return fmt.Errorf("creating browser profile %s: %w (choose another one with --profile)", profile, err)
	}
	logPath := filepath.Join(profile, "remixproxy-browser.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening browser log %s: %w (choose another profile with --profile)", logPath, err)
	}
	defer logFile.Close() // the browser keeps its own copy of the descriptor

	argv := browserArgs(addr, ca.SPKIHash(), profile, extra)
	cmd := exec.Command(browser, argv...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	detach(cmd)
	if err := e.start(cmd); err != nil {
		return fmt.Errorf("starting browser %s: %w (pass another one with --browser PATH)", browser, err)
	}
	fmt.Fprintf(e.out, "launched: %s\n", quoteCommand(append([]string{browser}, argv...)))
	fmt.Fprintf(e.out, "profile:  %s (this profile only trusts the CA; no system setting was changed)\n", profile)
	fmt.Fprintf(e.out, "log:      %s\n", logPath)
	return nil
}

// browserArgs are the browser's arguments: the proxy for everything including loopback, the
// CA's key trusted by SPKI hash (Chromium honours that only with --user-data-dir), no QUIC
// (it would bypass the proxy), then the extra arguments and the start page.
func browserArgs(proxyAddr, spkiHash, profile string, extra []string) []string {
	args := []string{
		"--proxy-server=http://" + proxyAddr,
		"--proxy-bypass-list=<-loopback>",
		"--ignore-certificate-errors-spki-list=" + spkiHash,
		"--user-data-dir=" + profile,
		"--no-first-run",
		"--no-default-browser-check",
		"--disable-quic",
	}
	args = append(args, extra...)
	return append(args, browserStartURL)
}

// browserCandidates lists where Chromium or Chrome may be on goos: names to look up on PATH and
// absolute paths to check.
func (e *browserEnv) browserCandidates() (names, paths []string) {
	switch e.goos {
	case "darwin":
		paths = []string{
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
			"/Applications/Chromium.app/Contents/MacOS/Chromium",
		}
		if home := e.getenv("HOME"); home != "" {
			paths = append(paths,
				home+"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
				home+"/Applications/Chromium.app/Contents/MacOS/Chromium")
		}
		return []string{"chromium", "google-chrome"}, paths
	case "windows":
		for _, env := range []string{"ProgramFiles", "ProgramFiles(x86)", "LocalAppData"} {
			if dir := e.getenv(env); dir != "" {
				paths = append(paths, dir+`\Google\Chrome\Application\chrome.exe`)
			}
		}
		if dir := e.getenv("LocalAppData"); dir != "" {
			paths = append(paths, dir+`\Chromium\Application\chrome.exe`)
		}
		return []string{"chrome.exe", "chromium.exe"}, paths
	default:
		return []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}, nil
	}
}

// findBrowser returns the first Chromium or Chrome found, or an error saying how to get one.
func (e *browserEnv) findBrowser() (string, error) {
	names, paths := e.browserCandidates()
	for _, n := range names {
		if p, err := e.lookPath(n); err == nil {
			return p, nil
		}
	}
	for _, p := range paths {
		if fi, err := e.stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	install := "install Chromium or Google Chrome"
	if e.goos == "linux" {
		install = "install one (Debian/Ubuntu: sudo apt-get install -y chromium; Fedora: sudo dnf install chromium)"
	}
	looked := strings.Join(names, ", ") + " on PATH"
	if len(paths) > 0 {
		looked += "; " + strings.Join(paths, ", ")
	}
	return "", fmt.Errorf("finding a browser: no Chromium or Chrome found (looked for %s): %s, or pass --browser PATH", looked, install)
}

// quoteCommand formats argv for display, quoting arguments with spaces or shell characters.
func quoteCommand(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`<>|&;()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
