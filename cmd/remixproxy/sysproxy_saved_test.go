package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gnomeDesktop is a fake GNOME whose settings really change: gsettings set and get work on a map.
type gnomeDesktop struct {
	vals map[string]string
	ran  []string
}

func (g *gnomeDesktop) env(out *bytes.Buffer) *sysproxyEnv {
	return &sysproxyEnv{
		goos: "linux",
		lookPath: func(name string) (string, error) {
			if name == "gsettings" {
				return "/usr/bin/gsettings", nil
			}
			return "", os.ErrNotExist
		},
		run: func(name string, args ...string) ([]byte, error) {
			g.ran = append(g.ran, quoteCommand(append([]string{name}, args...)))
			if name != "gsettings" || len(args) < 3 {
				return nil, os.ErrNotExist
			}
			key := args[1] + " " + args[2]
			switch args[0] {
			case "get":
				return []byte(g.vals[key] + "\n"), nil
			case "set":
				v := args[3]
				if args[2] != "port" {
					v = "'" + v + "'"
				}
				g.vals[key] = v
				return nil, nil
			}
			return nil, os.ErrNotExist
		},
		dial: func(string) error { return nil },
		out:  out,
	}
}

// TestSysproxyRestoresThePersonsProxy: `on` remembers a manual proxy the person had and `off`
// puts it back (twice `on` keeps the first record); with none before, `off` switches it off.
func TestSysproxyRestoresThePersonsProxy(t *testing.T) {
	dir := t.TempDir()
	g := &gnomeDesktop{vals: map[string]string{
		"org.gnome.system.proxy mode":       "'manual'",
		"org.gnome.system.proxy.http host":  "'corp-proxy.example'",
		"org.gnome.system.proxy.http port":  "3128",
		"org.gnome.system.proxy.https host": "'corp-proxy.example'",
		"org.gnome.system.proxy.https port": "3129",
	}}
	var out bytes.Buffer
	run := func(args ...string) {
		t.Helper()
		if err := g.env(&out).command(append([]string{"--data-dir", dir}, args...)); err != nil {
			t.Fatalf("sysproxy %v: %v\n%s", args, err, out.String())
		}
	}
	run("on")
	run("on") // a second on must not record remixproxy's own setting as the person's
	if g.vals["org.gnome.system.proxy.http host"] != "'127.0.0.1'" {
		t.Fatalf("on did not set the proxy: %v", g.vals)
	}
	if _, err := os.Stat(filepath.Join(dir, savedProxyFile)); err != nil {
		t.Fatalf("no record of the proxy set before: %v", err)
	}
	run("off")
	for k, want := range map[string]string{
		"org.gnome.system.proxy mode":       "'manual'",
		"org.gnome.system.proxy.http host":  "'corp-proxy.example'",
		"org.gnome.system.proxy.http port":  "3128",
		"org.gnome.system.proxy.https port": "3129",
	} {
		if got := g.vals[k]; got != want {
			t.Errorf("after off, %s = %s, want %s", k, got, want)
		}
	}
	if !strings.Contains(out.String(), "the proxy set before remixproxy is back (corp-proxy.example:3128)") {
		t.Errorf("output:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, savedProxyFile)); !os.IsNotExist(err) {
		t.Errorf("the record outlives the restore: %v", err)
	}
	// With nothing set before, off switches the proxy off.
	g.vals["org.gnome.system.proxy mode"] = "'none'"
	run("on")
	g.ran = nil
	run("off")
	if g.vals["org.gnome.system.proxy mode"] != "'none'" || !slices.Contains(g.ran, "gsettings set org.gnome.system.proxy mode none") {
		t.Errorf("off with nothing set before: mode %s, ran %q", g.vals["org.gnome.system.proxy mode"], g.ran)
	}
}

// TestSysproxySavesOnOtherDesktops: KDE, Windows and macOS remember a proxy set before and put it
// back on off.
func TestSysproxySavesOnOtherDesktops(t *testing.T) {
	macList := "networksetup -listallnetworkservices"
	tests := []struct {
		name, goos string
		sys        fakeSystem
		wantOff    []string // commands of off, after the on
	}{
		{"KDE", "linux", fakeSystem{have: []string{"kwriteconfig5"}, outputs: map[string]string{
			"kreadconfig5 --file kioslaverc --group 'Proxy Settings' --key ProxyType":  "1\n",
			"kreadconfig5 --file kioslaverc --group 'Proxy Settings' --key httpProxy":  "http://corp 3128\n",
			"kreadconfig5 --file kioslaverc --group 'Proxy Settings' --key httpsProxy": "http://corp 3129\n",
		}}, []string{
			"kwriteconfig5 --file kioslaverc --group 'Proxy Settings' --key httpProxy 'http://corp 3128'",
			"kwriteconfig5 --file kioslaverc --group 'Proxy Settings' --key httpsProxy 'http://corp 3129'",
			"kwriteconfig5 --file kioslaverc --group 'Proxy Settings' --key ProxyType 1",
		}},
		{"Windows", "windows", fakeSystem{have: []string{"reg"}, outputs: map[string]string{
			"reg query " + winKey + " /v ProxyEnable": "    ProxyEnable    REG_DWORD    0x1\n",
			"reg query " + winKey + " /v ProxyServer": "    ProxyServer    REG_SZ    corp:3128\n",
		}}, []string{
			"reg add " + winKey + " /v ProxyServer /t REG_SZ /d corp:3128 /f",
			"reg add " + winKey + " /v ProxyEnable /t REG_DWORD /d 1 /f",
		}},
		{"macOS", "darwin", fakeSystem{have: []string{"networksetup"}, outputs: map[string]string{
			macList:                                 "An asterisk (*) denotes that a network service is disabled.\nWi-Fi\n",
			"networksetup -getwebproxy Wi-Fi":       "Enabled: Yes\nServer: corp\nPort: 3128\n",
			"networksetup -getsecurewebproxy Wi-Fi": "Enabled: No\nServer: \nPort: 0\n",
		}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var out bytes.Buffer
			sys := tc.sys
			env := sys.env(tc.goos, true, &out)
			if err := env.command([]string{"--data-dir", dir, "on"}); err != nil {
				t.Fatalf("on: %v\n%s", err, out.String())
			}
			sys.ran = nil
			if err := env.command([]string{"--data-dir", dir, "off"}); err != nil {
				t.Fatalf("off: %v\n%s", err, out.String())
			}
			if tc.wantOff != nil && !slices.Equal(sys.ran, tc.wantOff) {
				t.Errorf("off ran %q\nwant %q", sys.ran, tc.wantOff)
			}
			if tc.wantOff == nil { // macOS: map order; check the set commands are there
				for _, want := range []string{"networksetup -setwebproxy Wi-Fi corp 3128", "networksetup -setsecurewebproxystate Wi-Fi off"} {
					if !slices.Contains(sys.ran, want) {
						t.Errorf("off ran %q, want it to include %q", sys.ran, want)
					}
				}
			}
			if !strings.Contains(out.String(), "the proxy set before remixproxy is back (corp:3128)") {
				t.Errorf("output:\n%s", out.String())
			}
		})
	}
}
