package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

const defaultListen = "127.0.0.1:8080"

// runSysproxy is `remixproxy sysproxy on|off|status [--listen 127.0.0.1:8080]`: point the
// desktop's proxy setting at remixproxy (GNOME, KDE, macOS, Windows), switch it off, or show it.
// Where no setting can be changed, it prints the manual steps.
func runSysproxy(args []string) error {
	return newSysproxyEnv().command(args)
}

// sysproxyEnv is what sysproxy reads from and does to the machine; tests replace every field.
type sysproxyEnv struct {
	goos     string
	lookPath func(string) (string, error)
	run      func(name string, args ...string) ([]byte, error) // combined output
	dial     func(addr string) error                           // is something listening?
	out      io.Writer

	gnomeMode string // the GNOME proxy mode gnomeUsable read, before anything changed it
}

func newSysproxyEnv() *sysproxyEnv {
	return &sysproxyEnv{
		goos:     runtime.GOOS,
		lookPath: exec.LookPath,
		run: func(name string, args ...string) ([]byte, error) {
			return exec.Command(name, args...).CombinedOutput()
		},
		dial: dialCheck,
		out:  os.Stdout,
	}
}

// dialCheck reports whether something accepts TCP connections at addr.
func dialCheck(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// proxyAddr turns a --listen value into the host and port clients should use: a wildcard or
// empty host ("0.0.0.0:8080", ":8080") becomes 127.0.0.1.
func proxyAddr(listen string) (host, port string, err error) {
	host, port, err = net.SplitHostPort(listen)
	if err != nil {
		return "", "", fmt.Errorf("--listen %q: want HOST:PORT, e.g. %s: %w", listen, defaultListen, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", "", fmt.Errorf("--listen %q: port %q is not a number from 1 to 65535", listen, port)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return host, port, nil
}

func (e *sysproxyEnv) command(args []string) error {
	var dataDir, listen string
	fset := newFlagSet("sysproxy", &dataDir)
	fset.StringVar(&listen, "listen", defaultListen, "address remixproxy listens on")
	// The action may come before, between or after the flags.
	if err := fset.Parse(args); err != nil {
		return err
	}
	action, rest := "", fset.Args()
	if len(rest) > 0 {
		action = rest[0]
		if err := fset.Parse(rest[1:]); err != nil {
			return err
		}
		rest = fset.Args()
	}
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q (usage: remixproxy sysproxy on|off|status [--listen HOST:PORT])", rest[0])
	}
	host, port, err := proxyAddr(listen)
	if err != nil {
		return err
	}
	backends := e.backends()
	saved := savedFile(dataDir)
	switch action {
	case "on":
		return e.on(backends, host, port, saved)
	case "off":
		return e.off(backends, host, port, saved)
	case "status":
		return e.status(backends, host, port)
	case "":
		return errors.New("missing action: use remixproxy sysproxy on, off or status")
	default:
		return fmt.Errorf("unknown action %q: use remixproxy sysproxy on, off or status", action)
	}
}

func (e *sysproxyEnv) on(backends []proxyBackend, host, port, savedPath string) error {
	if len(backends) == 0 {
		e.printManual(host, port)
		return errors.New("no system proxy setting could be changed here: follow the steps above")
	}
	// Remember a proxy the person had set, so `off` can put it back. A setting saved by an
	// earlier `on` is kept (this one would only find remixproxy's own).
	saved := loadSaved(savedPath)
	changed := false
	for _, b := range backends {
		if _, ok := saved[b.name]; ok || b.save == nil {
			continue
		}
		if prev, ok := b.save(e); ok && !pointsAt(prev, host, port) {
			saved[b.name] = prev
			changed = true
		}
	}
	if changed {
		if err := storeSaved(savedPath, saved); err != nil {
			fmt.Fprintf(e.out, "warning: the proxy set before could not be remembered (%v); `sysproxy off` will switch the proxy off instead of restoring it\n", err)
		}
	}
	var failed []error
	for _, b := range backends {
		if err := b.on(e, host, port); err != nil {
			fmt.Fprintf(e.out, "✗ %s: %v\n", b.name, err)
			failed = append(failed, err)
			continue
		}
		fmt.Fprintf(e.out, "✓ %s: HTTP and HTTPS proxy set to %s\n", b.name, net.JoinHostPort(host, port))
	}
	if len(failed) == len(backends) {
		e.printManual(host, port)
		return fmt.Errorf("setting the system proxy: %w (follow the steps above instead)", errors.Join(failed...))
	}
	addr := net.JoinHostPort(host, port)
	if err := e.dial(addr); err != nil {
		fmt.Fprintf(e.out, "warning: nothing is listening on %s yet: start remixproxy (`remixproxy --listen %s`), "+
			"or pages will not load until you do (undo with `remixproxy sysproxy off`)\n", addr, addr)
	}
	fmt.Fprintf(e.out, "Programs that follow the desktop setting now use remixproxy; some pick it up only after a restart.\n")
	fmt.Fprintf(e.out, "HTTPS pages need the CA trusted: `remixproxy trust`.\n")
	fmt.Fprintf(e.out, "Command-line programs do not read this setting: export http_proxy=http://%s https_proxy=http://%s\n", addr, addr)
	return nil
}

func (e *sysproxyEnv) off(backends []proxyBackend, host, port, savedPath string) error {
	if len(backends) == 0 {
		fmt.Fprintf(e.out, "No system proxy setting that remixproxy can change was found here, so there is nothing to switch off.\n")
		fmt.Fprintf(e.out, "If you set the proxy by hand, remove %s from your desktop or browser proxy settings, and unset http_proxy https_proxy.\n",
			net.JoinHostPort(host, port))
		return nil
	}
	saved := loadSaved(savedPath)
	var failed []error
	for _, b := range backends {
		if prev, ok := saved[b.name]; ok && b.restore != nil {
			if err := b.restore(e, prev); err != nil {
				fmt.Fprintf(e.out, "✗ %s: restoring the proxy set before: %v\n", b.name, err)
				failed = append(failed, err)
				continue
			}
			delete(saved, b.name)
			fmt.Fprintf(e.out, "✓ %s: the proxy set before remixproxy is back (%s)\n", b.name, describeSaved(prev))
			continue
		}
		if err := b.off(e); err != nil {
			fmt.Fprintf(e.out, "✗ %s: %v\n", b.name, err)
			failed = append(failed, err)
			continue
		}
		fmt.Fprintf(e.out, "✓ %s: proxy switched off\n", b.name)
	}
	if err := storeSaved(savedPath, saved); err != nil {
		failed = append(failed, err)
	}
	if len(failed) > 0 {
		return fmt.Errorf("switching the system proxy off: %w", errors.Join(failed...))
	}
	return nil
}

func (e *sysproxyEnv) status(backends []proxyBackend, host, port string) error {
	addr := net.JoinHostPort(host, port)
	if err := e.dial(addr); err != nil {
		fmt.Fprintf(e.out, "remixproxy: nothing is listening on %s\n", addr)
	} else {
		fmt.Fprintf(e.out, "remixproxy: listening on %s\n", addr)
	}
	if len(backends) == 0 {
		e.printManual(host, port)
		return nil
	}
	for _, b := range backends {
		s, err := b.status(e)
		if err != nil {
			fmt.Fprintf(e.out, "%s: cannot read the setting: %v\n", b.name, err)
			continue
		}
		fmt.Fprintf(e.out, "%s: %s\n", b.name, s)
	}
	return nil
}

// printManual prints how to point programs at the proxy by hand.
func (e *sysproxyEnv) printManual(host, port string) {
	addr := net.JoinHostPort(host, port)
	looked := map[string]string{
		"linux":   "gsettings (GNOME) and kwriteconfig5/kwriteconfig6 (KDE)",
		"darwin":  "networksetup",
		"windows": "reg",
	}[e.goos]
	if looked == "" {
		looked = "nothing: remixproxy knows no proxy setting on " + e.goos
	}
	fmt.Fprintf(e.out, `No proxy setting that remixproxy can change was found here (looked for %s).
Set it by hand, in your desktop's or browser's network settings:
  HTTP and HTTPS proxy: %s, port %s
  or automatic proxy configuration (PAC) URL: http://%s/proxy.pac
For command-line programs:
  export http_proxy=http://%s https_proxy=http://%s
Or change no setting at all: remixproxy browser (Chromium with its own profile that uses the proxy)
`, looked, host, port, addr, addr, addr)
}

// proxyBackend is one place a desktop keeps its proxy setting.
type proxyBackend struct {
	name   string
	on     func(e *sysproxyEnv, host, port string) error
	off    func(e *sysproxyEnv) error
	status func(e *sysproxyEnv) (string, error)
	// save reads a manual proxy set now (ok false when none is, or it cannot be read), as
	// key → value with "host" and "port" among them; restore sets it again. Either may be nil.
	save    func(e *sysproxyEnv) (map[string]string, bool)
	restore func(e *sysproxyEnv, saved map[string]string) error
}

// backends returns the proxy settings that can be changed on e.goos with the tools present.
func (e *sysproxyEnv) backends() []proxyBackend {
	var bs []proxyBackend
	switch e.goos {
	case "darwin":
		if _, err := e.lookPath("networksetup"); err == nil {
			bs = append(bs, macOSBackend("networksetup"))
		} else if _, err := e.lookPath("/usr/sbin/networksetup"); err == nil {
			bs = append(bs, macOSBackend("/usr/sbin/networksetup"))
		}
	case "windows":
		if _, err := e.lookPath("reg"); err == nil {
			bs = append(bs, windowsBackend)
		}
	default:
		if e.gnomeUsable() {
			bs = append(bs, gnomeBackend)
		}
		for _, v := range []string{"6", "5"} {
			if _, err := e.lookPath("kwriteconfig" + v); err == nil {
				bs = append(bs, kdeBackend(v))
				break
			}
		}
	}
	return bs
}

// runChecked runs a command and turns a failure into an error carrying its output.
func (e *sysproxyEnv) runChecked(name string, args ...string) (string, error) {
	out, err := e.run(name, args...)
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg != "" {
			msg = ": " + msg
		}
		return "", fmt.Errorf("running %s %s: %w%s", name, strings.Join(args, " "), err, msg)
	}
	return string(out), nil
}

// --- GNOME ---

const gnomeSchema = "org.gnome.system.proxy"

// gnomeUsable reports whether gsettings exists and writes to a real settings backend: without
// a desktop session it silently uses a memory backend, and changes would be lost.
func (e *sysproxyEnv) gnomeUsable() bool {
	if _, err := e.lookPath("gsettings"); err != nil {
		return false
	}
	out, err := e.run("gsettings", "get", gnomeSchema, "mode")
	if err != nil || strings.Contains(string(out), "memory") {
		return false
	}
	e.gnomeMode = strings.Trim(strings.TrimSpace(string(out)), "'")
	return true
}

// gnomeSetMode sets the proxy mode and reads it back: without a session bus, gsettings
// reports success but dconf never stores the change.
func gnomeSetMode(e *sysproxyEnv, mode string) error {
	setOut, err := e.runChecked("gsettings", "set", gnomeSchema, "mode", mode)
	if err != nil {
		return err
	}
	got, err := e.runChecked("gsettings", "get", gnomeSchema, "mode")
	if err != nil {
		return err
	}
	if got = strings.Trim(strings.TrimSpace(got), "'"); got != mode {
		why := strings.TrimSpace(setOut)
		if why == "" {
			why = "is a desktop session running? gsettings needs its D-Bus session bus"
		}
		return fmt.Errorf("gsettings did not keep mode %s (it reads back %q): %s", mode, got, why)
	}
	return nil
}

var gnomeBackend = proxyBackend{
	name: "GNOME",
	on: func(e *sysproxyEnv, host, port string) error {
		// Host and port first, so the mode never switches to manual with stale values.
		for _, scheme := range []string{"http", "https"} {
			if _, err := e.runChecked("gsettings", "set", gnomeSchema+"."+scheme, "host", host); err != nil {
				return err
			}
			if _, err := e.runChecked("gsettings", "set", gnomeSchema+"."+scheme, "port", port); err != nil {
				return err
			}
		}
		return gnomeSetMode(e, "manual")
	},
	off: func(e *sysproxyEnv) error {
		return gnomeSetMode(e, "none")
	},
	save: func(e *sysproxyEnv) (map[string]string, bool) {
		get := func(schema, key string) (string, error) {
			out, err := e.runChecked("gsettings", "get", schema, key)
			return strings.Trim(strings.TrimSpace(out), "'"), err
		}
		if e.gnomeMode != "manual" { // read by gnomeUsable, before any change
			return nil, false
		}
		m := map[string]string{}
		for _, scheme := range []string{"http", "https"} {
			h, err1 := get(gnomeSchema+"."+scheme, "host")
			p, err2 := get(gnomeSchema+"."+scheme, "port")
			if err1 != nil || err2 != nil {
				return nil, false
			}
			m[scheme+".host"], m[scheme+".port"] = h, p
		}
		m["host"], m["port"] = m["http.host"], m["http.port"]
		return m, true
	},
	restore: func(e *sysproxyEnv, m map[string]string) error {
		for _, scheme := range []string{"http", "https"} {
			if _, err := e.runChecked("gsettings", "set", gnomeSchema+"."+scheme, "host", m[scheme+".host"]); err != nil {
				return err
			}
			if _, err := e.runChecked("gsettings", "set", gnomeSchema+"."+scheme, "port", m[scheme+".port"]); err != nil {
				return err
			}
		}
		return gnomeSetMode(e, "manual")
	},
	status: func(e *sysproxyEnv) (string, error) {
		get := func(schema, key string) (string, error) {
			out, err := e.runChecked("gsettings", "get", schema, key)
			return strings.Trim(strings.TrimSpace(out), "'"), err
		}
		mode, err := get(gnomeSchema, "mode")
		if err != nil {
			return "", err
		}
		if mode != "manual" {
			return "mode " + mode + " (not using a manual proxy)", nil
		}
		parts := []string{"mode manual"}
		for _, scheme := range []string{"http", "https"} {
			h, err := get(gnomeSchema+"."+scheme, "host")
			if err != nil {
				return "", err
			}
			p, err := get(gnomeSchema+"."+scheme, "port")
			if err != nil {
				return "", err
			}
			parts = append(parts, strings.ToUpper(scheme)+" "+net.JoinHostPort(h, p))
		}
		return strings.Join(parts, ", "), nil
	},
}

// --- KDE ---

func kdeBackend(version string) proxyBackend {
	write := "kwriteconfig" + version
	read := "kreadconfig" + version
	set := func(e *sysproxyEnv, key, value string) error {
		_, err := e.runChecked(write, "--file", "kioslaverc", "--group", "Proxy Settings", "--key", key, value)
		return err
	}
	// notify asks running KDE programs to reread the setting; without it they do on restart.
	notify := func(e *sysproxyEnv) {
		if _, err := e.lookPath("dbus-send"); err == nil {
			e.run("dbus-send", "--type=signal", "/KIO/Scheduler", "org.kde.KIO.Scheduler.reparseSlaveConfiguration", "string:")
		}
	}
	get := func(e *sysproxyEnv, key string) (string, error) {
		out, err := e.runChecked(read, "--file", "kioslaverc", "--group", "Proxy Settings", "--key", key)
		return strings.TrimSpace(out), err
	}
	return proxyBackend{
		name: "KDE (" + write + ")",
		save: func(e *sysproxyEnv) (map[string]string, bool) {
			if typ, err := get(e, "ProxyType"); err != nil || typ != "1" {
				return nil, false
			}
			h, err1 := get(e, "httpProxy")
			hs, err2 := get(e, "httpsProxy")
			if err1 != nil || err2 != nil {
				return nil, false
			}
			m := map[string]string{"httpProxy": h, "httpsProxy": hs}
			// KDE's format: "http://HOST PORT".
			if u, p, ok := strings.Cut(strings.TrimPrefix(h, "http://"), " "); ok {
				m["host"], m["port"] = strings.Trim(u, "[]"), p
			}
			return m, true
		},
		restore: func(e *sysproxyEnv, m map[string]string) error {
			for _, kv := range [][2]string{{"httpProxy", m["httpProxy"]}, {"httpsProxy", m["httpsProxy"]}, {"ProxyType", "1"}} {
				if err := set(e, kv[0], kv[1]); err != nil {
					return err
				}
			}
			notify(e)
			return nil
		},
		on: func(e *sysproxyEnv, host, port string) error {
			value := "http://" + host + " " + port // KDE's format: URL, space, port
			if strings.Contains(host, ":") {
				value = "http://[" + host + "] " + port
			}
			for _, kv := range [][2]string{{"httpProxy", value}, {"httpsProxy", value}, {"ProxyType", "1"}} {
				if err := set(e, kv[0], kv[1]); err != nil {
					return err
				}
			}
			notify(e)
			return nil
		},
		off: func(e *sysproxyEnv) error {
			if err := set(e, "ProxyType", "0"); err != nil {
				return err
			}
			notify(e)
			return nil
		},
		status: func(e *sysproxyEnv) (string, error) {
			get := func(key string) (string, error) {
				out, err := e.runChecked(read, "--file", "kioslaverc", "--group", "Proxy Settings", "--key", key)
				return strings.TrimSpace(out), err
			}
			typ, err := get("ProxyType")
			if err != nil {
				return "", err
			}
			if typ != "1" {
				return "ProxyType " + typ + " (not using a manual proxy)", nil
			}
			h, err := get("httpProxy")
			if err != nil {
				return "", err
			}
			hs, err := get("httpsProxy")
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("manual, HTTP %s, HTTPS %s", h, hs), nil
		},
	}
}

// --- macOS ---

func macOSBackend(networksetup string) proxyBackend {
	services := func(e *sysproxyEnv) ([]string, error) {
		out, err := e.runChecked(networksetup, "-listallnetworkservices")
		if err != nil {
			return nil, err
		}
		var names []string
		for _, line := range strings.Split(out, "\n") {
			line = strings.TrimSpace(line)
			// The first line explains the asterisk; an asterisk marks a disabled service.
			if line == "" || strings.HasPrefix(line, "An asterisk") || strings.HasPrefix(line, "*") {
				continue
			}
			names = append(names, line)
		}
		if len(names) == 0 {
			return nil, errors.New("networksetup lists no enabled network service")
		}
		return names, nil
	}
	kinds := []struct{ get, set, state string }{
		{"-getwebproxy", "-setwebproxy", "-setwebproxystate"},
		{"-getsecurewebproxy", "-setsecurewebproxy", "-setsecurewebproxystate"},
	}
	return proxyBackend{
		name: "macOS",
		// save keeps, per service and kind, "SERVER PORT" for an enabled proxy or "off".
		save: func(e *sysproxyEnv) (map[string]string, bool) {
			svcs, err := services(e)
			if err != nil {
				return nil, false
			}
			m := map[string]string{}
			any := false
			for _, s := range svcs {
				for _, k := range kinds {
					out, err := e.runChecked(networksetup, k.get, s)
					if err != nil {
						return nil, false
					}
					d := describeNetworksetup(out)
					if d == "off" {
						m[s+"\x00"+k.set] = "off"
						continue
					}
					h, p, err := net.SplitHostPort(d)
					if err != nil {
						return nil, false
					}
					m[s+"\x00"+k.set] = h + " " + p
					if !any {
						m["host"], m["port"] = h, p
					}
					any = true
				}
			}
			return m, any
		},
		restore: func(e *sysproxyEnv, m map[string]string) error {
			for key, v := range m {
				s, set, ok := strings.Cut(key, "\x00")
				if !ok {
					continue
				}
				if v == "off" {
					state := "-setwebproxystate"
					if set == "-setsecurewebproxy" {
						state = "-setsecurewebproxystate"
					}
					if _, err := e.runChecked(networksetup, state, s, "off"); err != nil {
						return err
					}
					continue
				}
				h, p, _ := strings.Cut(v, " ")
				if _, err := e.runChecked(networksetup, set, s, h, p); err != nil {
					return err
				}
			}
			return nil
		},
		on: func(e *sysproxyEnv, host, port string) error {
			svcs, err := services(e)
			if err != nil {
				return err
			}
			for _, s := range svcs {
				for _, flag := range []string{"-setwebproxy", "-setsecurewebproxy"} {
					if _, err := e.runChecked(networksetup, flag, s, host, port); err != nil {
						return err
					}
				}
			}
			return nil
		},
		off: func(e *sysproxyEnv) error {
			svcs, err := services(e)
			if err != nil {
				return err
			}
			for _, s := range svcs {
				for _, flag := range []string{"-setwebproxystate", "-setsecurewebproxystate"} {
					if _, err := e.runChecked(networksetup, flag, s, "off"); err != nil {
						return err
					}
				}
			}
			return nil
		},
		status: func(e *sysproxyEnv) (string, error) {
			svcs, err := services(e)
			if err != nil {
				return "", err
			}
			var parts []string
			for _, s := range svcs {
				for _, kind := range []struct{ flag, label string }{{"-getwebproxy", "HTTP"}, {"-getsecurewebproxy", "HTTPS"}} {
					out, err := e.runChecked(networksetup, kind.flag, s)
					if err != nil {
						return "", err
					}
					parts = append(parts, fmt.Sprintf("%s %s %s", s, kind.label, describeNetworksetup(out)))
				}
			}
			return strings.Join(parts, "; "), nil
		},
	}
}

// describeNetworksetup summarises `networksetup -getwebproxy` output ("Enabled: Yes\nServer: …\nPort: …").
func describeNetworksetup(out string) string {
	fields := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if fields["Enabled"] != "Yes" {
		return "off"
	}
	return net.JoinHostPort(fields["Server"], fields["Port"])
}

// --- Windows ---

const windowsInternetSettings = `HKCU\Software\Microsoft\Windows\CurrentVersion\Internet Settings`

var windowsBackend = proxyBackend{
	name: "Windows",
	save: func(e *sysproxyEnv) (map[string]string, bool) {
		enable, err := e.runChecked("reg", "query", windowsInternetSettings, "/v", "ProxyEnable")
		if err != nil || !strings.Contains(enable, "0x1") {
			return nil, false
		}
		server, err := e.runChecked("reg", "query", windowsInternetSettings, "/v", "ProxyServer")
		f := strings.Fields(server)
		if err != nil || len(f) == 0 {
			return nil, false
		}
		m := map[string]string{"ProxyServer": f[len(f)-1]}
		if h, p, err := net.SplitHostPort(m["ProxyServer"]); err == nil {
			m["host"], m["port"] = h, p
		}
		return m, true
	},
	restore: func(e *sysproxyEnv, m map[string]string) error {
		if _, err := e.runChecked("reg", "add", windowsInternetSettings, "/v", "ProxyServer", "/t", "REG_SZ", "/d", m["ProxyServer"], "/f"); err != nil {
			return err
		}
		_, err := e.runChecked("reg", "add", windowsInternetSettings, "/v", "ProxyEnable", "/t", "REG_DWORD", "/d", "1", "/f")
		return err
	},
	on: func(e *sysproxyEnv, host, port string) error {
		if _, err := e.runChecked("reg", "add", windowsInternetSettings, "/v", "ProxyServer", "/t", "REG_SZ",
			"/d", net.JoinHostPort(host, port), "/f"); err != nil {
			return err
		}
		_, err := e.runChecked("reg", "add", windowsInternetSettings, "/v", "ProxyEnable", "/t", "REG_DWORD", "/d", "1", "/f")
		return err
	},
	off: func(e *sysproxyEnv) error {
		_, err := e.runChecked("reg", "add", windowsInternetSettings, "/v", "ProxyEnable", "/t", "REG_DWORD", "/d", "0", "/f")
		return err
	},
	status: func(e *sysproxyEnv) (string, error) {
		enable, err := e.runChecked("reg", "query", windowsInternetSettings, "/v", "ProxyEnable")
		if err != nil {
			return "", err
		}
		if !strings.Contains(enable, "0x1") {
			return "ProxyEnable 0 (not using a proxy)", nil
		}
		server, err := e.runChecked("reg", "query", windowsInternetSettings, "/v", "ProxyServer")
		if err != nil {
			return "", err
		}
		f := strings.Fields(server)
		if len(f) == 0 {
			return "ProxyEnable 1, no ProxyServer", nil
		}
		return "ProxyEnable 1, ProxyServer " + f[len(f)-1], nil
	},
}
