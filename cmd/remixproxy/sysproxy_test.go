package main

import (
	"bytes"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const winKey = `'HKCU\Software\Microsoft\Windows\CurrentVersion\Internet Settings'`

// fakeSystem is a sysproxyEnv whose commands are recorded and answered from a table.
type fakeSystem struct {
	have    []string          // commands on PATH
	outputs map[string]string // command line → output
	then    map[string]string // command line → output from its second run on (settings read back)
	fail    map[string]bool   // command lines that fail
	ran     []string
}

func (f *fakeSystem) env(goos string, listening bool, out *bytes.Buffer) *sysproxyEnv {
	return &sysproxyEnv{
		goos: goos,
		lookPath: func(name string) (string, error) {
			if slices.Contains(f.have, name) {
				return "/usr/bin/" + name, nil
			}
			return "", exec.ErrNotFound
		},
		run: func(name string, args ...string) ([]byte, error) {
			line := quoteCommand(append([]string{name}, args...))
			f.ran = append(f.ran, line)
			if f.fail[line] {
				return []byte("permission denied"), errors.New("exit status 1")
			}
			if out, ok := f.then[line]; ok && slices.Contains(f.ran[:len(f.ran)-1], line) {
				return []byte(out), nil
			}
			return []byte(f.outputs[line]), nil
		},
		dial: func(string) error {
			if listening {
				return nil
			}
			return errors.New("connection refused")
		},
		out: out,
	}
}

func TestSysproxyCommandsPerPlatform(t *testing.T) {
	gnomeMode := "gsettings get org.gnome.system.proxy mode"
	macList := "networksetup -listallnetworkservices"
	macServices := "An asterisk (*) denotes that a network service is disabled.\nWi-Fi\n*Bluetooth PAN\nThunderbolt Bridge\n"
	tests := []struct {
		name      string
		goos      string
		args      []string
		sys       fakeSystem
		listening bool
		wantCmds  []string
		wantOut   []string // substrings of the output
		wantErrIn string
	}{
		{
			name: "GNOME on",
			goos: "linux", args: []string{"on"}, listening: true,
			sys: fakeSystem{have: []string{"gsettings"}, outputs: map[string]string{gnomeMode: "'none'\n"},
				then: map[string]string{gnomeMode: "'manual'\n"}},
			wantCmds: []string{
				gnomeMode,
				"gsettings set org.gnome.system.proxy.http host 127.0.0.1",
				"gsettings set org.gnome.system.proxy.http port 8080",
				"gsettings set org.gnome.system.proxy.https host 127.0.0.1",
				"gsettings set org.gnome.system.proxy.https port 8080",
				"gsettings set org.gnome.system.proxy mode manual",
				gnomeMode,
			},
			wantOut: []string{"✓ GNOME: HTTP and HTTPS proxy set to 127.0.0.1:8080", "export http_proxy=http://127.0.0.1:8080 https_proxy=http://127.0.0.1:8080"},
		},
		{
			name: "GNOME on with another port, flags first, proxy not running",
			goos: "linux", args: []string{"--listen", "0.0.0.0:9090", "on"},
			sys: fakeSystem{have: []string{"gsettings"}, outputs: map[string]string{gnomeMode: "'none'\n"},
				then: map[string]string{gnomeMode: "'manual'\n"}},
			wantCmds: []string{
				gnomeMode,
				"gsettings set org.gnome.system.proxy.http host 127.0.0.1",
				"gsettings set org.gnome.system.proxy.http port 9090",
				"gsettings set org.gnome.system.proxy.https host 127.0.0.1",
				"gsettings set org.gnome.system.proxy.https port 9090",
				"gsettings set org.gnome.system.proxy mode manual",
				gnomeMode,
			},
			wantOut: []string{"warning: nothing is listening on 127.0.0.1:9090"},
		},
		{
			name: "GNOME off",
			goos: "linux", args: []string{"off"},
			sys: fakeSystem{have: []string{"gsettings"}, outputs: map[string]string{gnomeMode: "'manual'\n"},
				then: map[string]string{gnomeMode: "'none'\n"}},
			wantCmds: []string{gnomeMode, "gsettings set org.gnome.system.proxy mode none", gnomeMode},
			wantOut:  []string{"✓ GNOME: proxy switched off"},
		},
		{
			name: "GNOME setting not kept (no session bus)",
			goos: "linux", args: []string{"off"},
			sys: fakeSystem{have: []string{"gsettings"}, outputs: map[string]string{
				gnomeMode: "'manual'\n",
				"gsettings set org.gnome.system.proxy mode none": "dconf-WARNING **: failed to commit changes to dconf: Cannot autolaunch D-Bus without X11 $DISPLAY\n",
			}},
			wantCmds:  []string{gnomeMode, "gsettings set org.gnome.system.proxy mode none", gnomeMode},
			wantOut:   []string{`✗ GNOME: gsettings did not keep mode none (it reads back "manual"): dconf-WARNING`},
			wantErrIn: "switching the system proxy off",
		},
		{
			name: "GNOME status",
			goos: "linux", args: []string{"status"}, listening: true,
			sys: fakeSystem{have: []string{"gsettings"}, outputs: map[string]string{
				gnomeMode: "'manual'\n",
				"gsettings get org.gnome.system.proxy.http host":  "'127.0.0.1'\n",
				"gsettings get org.gnome.system.proxy.http port":  "8080\n",
				"gsettings get org.gnome.system.proxy.https host": "'127.0.0.1'\n",
				"gsettings get org.gnome.system.proxy.https port": "8080\n",
			}},
			wantCmds: []string{
				gnomeMode, gnomeMode,
				"gsettings get org.gnome.system.proxy.http host",
				"gsettings get org.gnome.system.proxy.http port",
				"gsettings get org.gnome.system.proxy.https host",
				"gsettings get org.gnome.system.proxy.https port",
			},
			wantOut: []string{"remixproxy: listening on 127.0.0.1:8080", "GNOME: mode manual, HTTP 127.0.0.1:8080, HTTPS 127.0.0.1:8080"},
		},
		{
			name: "GNOME failing",
			goos: "linux", args: []string{"on"},
			sys: fakeSystem{have: []string{"gsettings"}, outputs: map[string]string{gnomeMode: "'none'\n"},
				fail: map[string]bool{"gsettings set org.gnome.system.proxy.http host 127.0.0.1": true}},
			wantCmds:  []string{gnomeMode, "gsettings set org.gnome.system.proxy.http host 127.0.0.1"},
			wantOut:   []string{"✗ GNOME: running gsettings", "permission denied", "http://127.0.0.1:8080/proxy.pac"},
			wantErrIn: "follow the steps above",
		},
		{
			name: "gsettings without a session is not used",
			goos: "linux", args: []string{"on"},
			sys: fakeSystem{have: []string{"gsettings"}, outputs: map[string]string{
				gnomeMode: "GLib-GIO-Message: Using the 'memory' GSettings backend.  Your settings will not be saved\n'none'\n"}},
			wantCmds:  []string{gnomeMode},
			wantOut:   []string{"No proxy setting that remixproxy can change was found"},
			wantErrIn: "no system proxy setting could be changed",
		},
		{
			name: "KDE 6 on",
			goos: "linux", args: []string{"on"},
			sys: fakeSystem{have: []string{"kwriteconfig6", "kwriteconfig5"}},
			wantCmds: []string{
				"kreadconfig6 --file kioslaverc --group 'Proxy Settings' --key ProxyType", // what was set before
				"kwriteconfig6 --file kioslaverc --group 'Proxy Settings' --key httpProxy 'http://127.0.0.1 8080'",
				"kwriteconfig6 --file kioslaverc --group 'Proxy Settings' --key httpsProxy 'http://127.0.0.1 8080'",
				"kwriteconfig6 --file kioslaverc --group 'Proxy Settings' --key ProxyType 1",
			},
			wantOut: []string{"✓ KDE (kwriteconfig6): HTTP and HTTPS proxy set to 127.0.0.1:8080"},
		},
		{
			name: "KDE 5 off tells running programs",
			goos: "linux", args: []string{"off"},
			sys: fakeSystem{have: []string{"kwriteconfig5", "dbus-send"}},
			wantCmds: []string{
				"kwriteconfig5 --file kioslaverc --group 'Proxy Settings' --key ProxyType 0",
				"dbus-send --type=signal /KIO/Scheduler org.kde.KIO.Scheduler.reparseSlaveConfiguration string:",
			},
		},
		{
			name: "KDE 5 status",
			goos: "linux", args: []string{"status"},
			sys: fakeSystem{have: []string{"kwriteconfig5"}, outputs: map[string]string{
				"kreadconfig5 --file kioslaverc --group 'Proxy Settings' --key ProxyType":  "1\n",
				"kreadconfig5 --file kioslaverc --group 'Proxy Settings' --key httpProxy":  "http://127.0.0.1 8080\n",
				"kreadconfig5 --file kioslaverc --group 'Proxy Settings' --key httpsProxy": "http://127.0.0.1 8080\n",
			}},
			wantCmds: []string{
				"kreadconfig5 --file kioslaverc --group 'Proxy Settings' --key ProxyType",
				"kreadconfig5 --file kioslaverc --group 'Proxy Settings' --key httpProxy",
				"kreadconfig5 --file kioslaverc --group 'Proxy Settings' --key httpsProxy",
			},
			wantOut: []string{"remixproxy: nothing is listening on 127.0.0.1:8080", "KDE (kwriteconfig5): manual, HTTP http://127.0.0.1 8080, HTTPS http://127.0.0.1 8080"},
		},
		{
			name: "GNOME and KDE both",
			goos: "linux", args: []string{"off"},
			sys: fakeSystem{have: []string{"gsettings", "kwriteconfig5"}, outputs: map[string]string{gnomeMode: "'manual'\n"},
				then: map[string]string{gnomeMode: "'none'\n"}},
			wantCmds: []string{gnomeMode, "gsettings set org.gnome.system.proxy mode none", gnomeMode,
				"kwriteconfig5 --file kioslaverc --group 'Proxy Settings' --key ProxyType 0"},
		},
		{
			name: "macOS on",
			goos: "darwin", args: []string{"on"}, listening: true,
			sys: fakeSystem{have: []string{"networksetup"}, outputs: map[string]string{macList: macServices}},
			wantCmds: []string{
				macList, // what was set before
				"networksetup -getwebproxy Wi-Fi",
				"networksetup -getsecurewebproxy Wi-Fi",
				"networksetup -getwebproxy 'Thunderbolt Bridge'",
				"networksetup -getsecurewebproxy 'Thunderbolt Bridge'",
				macList,
				"networksetup -setwebproxy Wi-Fi 127.0.0.1 8080",
				"networksetup -setsecurewebproxy Wi-Fi 127.0.0.1 8080",
				"networksetup -setwebproxy 'Thunderbolt Bridge' 127.0.0.1 8080",
				"networksetup -setsecurewebproxy 'Thunderbolt Bridge' 127.0.0.1 8080",
			},
			wantOut: []string{"✓ macOS: HTTP and HTTPS proxy set to 127.0.0.1:8080"},
		},
		{
			name: "macOS off",
			goos: "darwin", args: []string{"off"},
			sys: fakeSystem{have: []string{"networksetup"}, outputs: map[string]string{macList: macServices}},
			wantCmds: []string{
				macList,
				"networksetup -setwebproxystate Wi-Fi off",
				"networksetup -setsecurewebproxystate Wi-Fi off",
				"networksetup -setwebproxystate 'Thunderbolt Bridge' off",
				"networksetup -setsecurewebproxystate 'Thunderbolt Bridge' off",
			},
		},
		{
			name: "macOS status",
			goos: "darwin", args: []string{"status"},
			sys: fakeSystem{have: []string{"networksetup"}, outputs: map[string]string{
				macList:                                 "Wi-Fi\n",
				"networksetup -getwebproxy Wi-Fi":       "Enabled: Yes\nServer: 127.0.0.1\nPort: 8080\nAuthenticated Proxy Enabled: 0\n",
				"networksetup -getsecurewebproxy Wi-Fi": "Enabled: No\nServer: \nPort: 0\n",
			}},
			wantCmds: []string{macList, "networksetup -getwebproxy Wi-Fi", "networksetup -getsecurewebproxy Wi-Fi"},
			wantOut:  []string{"macOS: Wi-Fi HTTP 127.0.0.1:8080; Wi-Fi HTTPS off"},
		},
		{
			name: "Windows on",
			goos: "windows", args: []string{"on", "--listen", "127.0.0.1:8081"}, listening: true,
			sys: fakeSystem{have: []string{"reg"}},
			wantCmds: []string{
				"reg query " + winKey + " /v ProxyEnable", // what was set before
				"reg add " + winKey + " /v ProxyServer /t REG_SZ /d 127.0.0.1:8081 /f",
				"reg add " + winKey + " /v ProxyEnable /t REG_DWORD /d 1 /f",
			},
		},
		{
			name: "Windows off",
			goos: "windows", args: []string{"off"},
			sys:      fakeSystem{have: []string{"reg"}},
			wantCmds: []string{"reg add " + winKey + " /v ProxyEnable /t REG_DWORD /d 0 /f"},
		},
		{
			name: "Windows status",
			goos: "windows", args: []string{"status"},
			sys: fakeSystem{have: []string{"reg"}, outputs: map[string]string{
				"reg query " + winKey + " /v ProxyEnable": "\r\nHKEY_CURRENT_USER\\...\\Internet Settings\r\n    ProxyEnable    REG_DWORD    0x1\r\n",
				"reg query " + winKey + " /v ProxyServer": "\r\nHKEY_CURRENT_USER\\...\\Internet Settings\r\n    ProxyServer    REG_SZ    127.0.0.1:8080\r\n",
			}},
			wantCmds: []string{"reg query " + winKey + " /v ProxyEnable", "reg query " + winKey + " /v ProxyServer"},
			wantOut:  []string{"Windows: ProxyEnable 1, ProxyServer 127.0.0.1:8080"},
		},
		{
			name: "nothing available: on prints manual steps",
			goos: "linux", args: []string{"on"},
			wantOut: []string{
				"looked for gsettings (GNOME) and kwriteconfig5/kwriteconfig6 (KDE)",
				"HTTP and HTTPS proxy: 127.0.0.1, port 8080",
				"(PAC) URL: http://127.0.0.1:8080/proxy.pac",
				"export http_proxy=http://127.0.0.1:8080 https_proxy=http://127.0.0.1:8080",
				"remixproxy browser",
			},
			wantErrIn: "follow the steps above",
		},
		{
			name: "nothing available: status prints manual steps",
			goos: "freebsd", args: []string{"status"},
			wantOut: []string{"http://127.0.0.1:8080/proxy.pac"},
		},
		{
			name: "nothing available: off",
			goos: "linux", args: []string{"off"},
			wantOut: []string{"nothing to switch off"},
		},
		{
			name: "missing action", goos: "linux", args: nil,
			wantErrIn: "missing action",
		},
		{
			name: "unknown action", goos: "linux", args: []string{"enable"},
			wantErrIn: `unknown action "enable"`,
		},
		{
			name: "bad listen", goos: "linux", args: []string{"on", "--listen", "8080"},
			wantErrIn: "want HOST:PORT",
		},
		{
			name: "extra argument", goos: "linux", args: []string{"on", "now"},
			wantErrIn: `unexpected argument "now"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			sys := tc.sys
			env := sys.env(tc.goos, tc.listening, &out)
			err := env.command(append([]string{"--data-dir", t.TempDir()}, tc.args...))
			switch {
			case tc.wantErrIn == "" && err != nil:
				t.Errorf("got error %v, want none", err)
			case tc.wantErrIn != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErrIn)):
				t.Errorf("got error %v, want one containing %q", err, tc.wantErrIn)
			}
			if !slices.Equal(sys.ran, tc.wantCmds) {
				t.Errorf("commands:\n got %q\nwant %q", sys.ran, tc.wantCmds)
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output does not contain %q; got:\n%s", w, out.String())
				}
			}
		})
	}
}

func TestProxyAddr(t *testing.T) {
	tests := []struct {
		name, listen       string
		wantHost, wantPort string
		wantErr            bool
	}{
		{"loopback", "127.0.0.1:8080", "127.0.0.1", "8080", false},
		{"any IPv4", "0.0.0.0:8080", "127.0.0.1", "8080", false},
		{"any IPv6", "[::]:9000", "127.0.0.1", "9000", false},
		{"empty host", ":8080", "127.0.0.1", "8080", false},
		{"IPv6 loopback", "[::1]:8080", "::1", "8080", false},
		{"name", "localhost:8080", "localhost", "8080", false},
		{"no port", "127.0.0.1", "", "", true},
		{"port zero", "127.0.0.1:0", "", "", true},
		{"named port", "127.0.0.1:http", "", "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, p, err := proxyAddr(tc.listen)
			if (err != nil) != tc.wantErr {
				t.Fatalf("proxyAddr(%q) error %v, want error %v", tc.listen, err, tc.wantErr)
			}
			if h != tc.wantHost || p != tc.wantPort {
				t.Errorf("proxyAddr(%q) = %q, %q; want %q, %q", tc.listen, h, p, tc.wantHost, tc.wantPort)
			}
		})
	}
}
