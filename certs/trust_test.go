package certs

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/smallstep/truststore"
)

const debianOSRelease = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n"

// commandLog records the commands a trustEnv runs.
type commandLog struct{ cmds []string }

func (l *commandLog) String() string { return strings.Join(l.cmds, "\n") }

// testEnv returns a Linux trustEnv with a temporary HOME that cannot touch the real machine:
// the system store has no anchor directory, Java is absent, and any command other than the
// real certutil fails the test.
func testEnv(t *testing.T) (*trustEnv, *commandLog) {
	t.Helper()
	log := &commandLog{}
	certutil, _ := exec.LookPath("certutil")
	e := &trustEnv{
		goos:          "linux",
		home:          t.TempDir(),
		euid:          1000,
		getenv:        func(string) string { return "" },
		lookPath:      exec.LookPath,
		osRelease:     debianOSRelease,
		systemTrusted: func(*x509.Certificate) bool { return false },
		run: func(ctx context.Context, name string, args ...string) ([]byte, error) {
			log.cmds = append(log.cmds, shellJoin(append([]string{filepath.Base(name)}, args...)...))
			if certutil == "" || name != certutil {
				t.Errorf("test ran %s %v; only the real certutil is allowed here", name, args)
				return nil, errors.New("not allowed in tests")
			}
			return exec.CommandContext(ctx, name, args...).CombinedOutput()
		},
		platformInstall: func(*x509.Certificate) error {
			t.Error("platformInstall called in a test")
			return errors.New("not allowed in tests")
		},
		platformUninstall: func(*x509.Certificate) error {
			t.Error("platformUninstall called in a test")
			return errors.New("not allowed in tests")
		},
	}
	return e, log
}

// newNSSDB makes an empty NSS database in dir with the real certutil, as Chromium does.
func newNSSDB(t *testing.T, certutil, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(certutil, "-N", "-d", "sql:"+dir, "--empty-password").CombinedOutput(); err != nil {
		t.Fatalf("certutil -N -d sql:%s: %v\n%s", dir, err, out)
	}
}

func needCertutil(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("certutil")
	if err != nil {
		t.Fatal("certutil is needed to test NSS trust; install it with: apt-get install -y libnss3-tools (make test does)")
	}
	return p
}

func resultFor(t *testing.T, results []StoreResult, prefix string) StoreResult {
	t.Helper()
	for _, r := range results {
		if strings.HasPrefix(r.Store, prefix) {
			return r
		}
	}
	t.Fatalf("no result for store %q in %+v", prefix, results)
	return StoreResult{}
}

// state is a compact form of a StoreResult for comparisons.
func state(r StoreResult) string {
	switch {
	case r.Skipped:
		return "skipped"
	case r.Changed:
		return "changed"
	case r.Already:
		return "already"
	}
	return "none"
}

func TestNSSInstallUninstallRoundTrip(t *testing.T) {
	certutil := needCertutil(t)
	e, log := testEnv(t)
	ca := newTestCA(t)
	chromeDB := filepath.Join(e.home, ".pki", "nssdb")
	firefoxDB := filepath.Join(e.home, ".mozilla", "firefox", "abcd1234.default-release")
	newNSSDB(t, certutil, chromeDB)
	newNSSDB(t, certutil, firefoxDB)

	steps := []struct {
		name      string
		op        trustOp
		want      string // state of both NSS stores
		inDB      bool   // CA listed with C trust in both databases afterwards
		mayModify bool   // whether certutil -A/-D may run
	}{
		{"check before install", opCheck, "none", false, false},
		{"install", opInstall, "changed", true, true},
		{"check after install", opCheck, "already", true, false},
		{"install again", opInstall, "already", true, false},
		{"uninstall", opUninstall, "changed", false, true},
		{"check after uninstall", opCheck, "none", false, false},
		{"uninstall again", opUninstall, "already", false, false},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			log.cmds = nil
			results, err := e.apply(t.Context(), ca, s.op)
			if err != nil {
				t.Fatal(err)
			}
			for _, store := range []string{"nss (Chrome", "firefox (1 profile)"} {
				r := resultFor(t, results, store)
				if got := state(r); got != s.want {
					t.Errorf("%s: got %s (%+v), want %s", store, got, r, s.want)
				}
			}
			modified := strings.Contains(log.String(), " -A ") || strings.Contains(log.String(), " -D ")
			if modified && !s.mayModify {
				t.Errorf("ran a modifying command:\n%s", log)
			}
			for _, db := range []string{chromeDB, firefoxDB} {
				out, _ := exec.Command(certutil, "-L", "-d", "sql:"+db).CombinedOutput()
				listed := strings.Contains(string(out), nickname(ca.Cert)) && strings.Contains(string(out), "C,,")
				if listed != s.inDB {
					t.Errorf("%s lists the CA with C trust: got %v, want %v\n%s", db, listed, s.inDB, out)
				}
			}
		})
	}
}

func TestTrustedRunsOnlyReadOnlyCommands(t *testing.T) {
	certutil := needCertutil(t)
	e, log := testEnv(t)
	newNSSDB(t, certutil, filepath.Join(e.home, ".pki", "nssdb"))
	results, err := e.apply(t.Context(), newTestCA(t), opCheck)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range log.cmds {
		if !strings.HasPrefix(c, "certutil -V ") {
			t.Errorf("check ran %q, want only certutil -V", c)
		}
	}
	if slices.ContainsFunc(results, func(r StoreResult) bool { return r.Store == storeJava }) {
		t.Errorf("check reported java, want it left out (it starts a JVM)")
	}
}

func TestNSSMissingCertutil(t *testing.T) {
	certutil := needCertutil(t)
	e, log := testEnv(t)
	newNSSDB(t, certutil, filepath.Join(e.home, ".pki", "nssdb"))
	newNSSDB(t, certutil, filepath.Join(e.home, ".mozilla", "firefox", "p.default"))
	t.Setenv("PATH", t.TempDir()) // a PATH without certutil

	for _, tc := range []struct {
		name string
		op   trustOp
	}{{"install", opInstall}, {"uninstall", opUninstall}, {"check", opCheck}} {
		t.Run(tc.name, func(t *testing.T) {
			results, err := e.apply(t.Context(), newTestCA(t), tc.op)
			if err != nil {
				t.Fatal(err)
			}
			for _, store := range []string{"nss (Chrome", "firefox"} {
				r := resultFor(t, results, store)
				if !r.Skipped {
					t.Fatalf("%s: got %+v, want Skipped", store, r)
				}
				if !strings.Contains(r.Why, "certutil") {
					t.Errorf("%s Why %q, want it to name certutil", store, r.Why)
				}
				if got, want := r.Fix, "sudo apt-get install -y libnss3-tools"; got != want {
					t.Errorf("%s Fix %q, want %q", store, got, want)
				}
			}
		})
	}
	if len(log.cmds) != 0 {
		t.Errorf("ran commands without certutil:\n%s", log)
	}
}

func TestNSSNoDatabases(t *testing.T) {
	e, log := testEnv(t) // empty HOME
	e.lookPath = func(string) (string, error) { return "", exec.ErrNotFound }
	tests := []struct {
		name     string
		op       trustOp
		store    string
		want     string
		whyIn    string
		fixIn    string
		fixNotIn string
	}{
		{"chrome install", opInstall, "nss (Chrome", "skipped", "no NSS database at ~/.pki/nssdb",
			"sudo apt-get install -y libnss3-tools && mkdir -p ~/.pki/nssdb && certutil -d sql:$HOME/.pki/nssdb -N --empty-password", ""},
		{"chrome check", opCheck, "nss (Chrome", "skipped", "~/.pki/nssdb", "certutil", ""},
		{"chrome uninstall", opUninstall, "nss (Chrome", "already", "", "", ""},
		{"firefox install", opInstall, "firefox", "skipped", ".mozilla/firefox", "start Firefox once", "apt-get"},
		{"firefox uninstall", opUninstall, "firefox", "already", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			results, err := e.apply(t.Context(), newTestCA(t), tc.op)
			if err != nil {
				t.Fatal(err)
			}
			r := resultFor(t, results, tc.store)
			if got := state(r); got != tc.want {
				t.Errorf("got %s (%+v), want %s", got, r, tc.want)
			}
			if !strings.Contains(r.Why, tc.whyIn) {
				t.Errorf("Why %q, want it to contain %q", r.Why, tc.whyIn)
			}
			if !strings.Contains(r.Fix, tc.fixIn) {
				t.Errorf("Fix %q, want it to contain %q", r.Fix, tc.fixIn)
			}
			if tc.fixNotIn != "" && strings.Contains(r.Fix, tc.fixNotIn) {
				t.Errorf("Fix %q, want it not to contain %q", r.Fix, tc.fixNotIn)
			}
		})
	}
	if len(log.cmds) != 0 {
		t.Errorf("ran commands with no databases:\n%s", log)
	}
}

func TestNSSToolsFixPerPlatform(t *testing.T) {
	tests := []struct {
		name, goos, osRelease, want string
	}{
		{"Debian", "linux", "ID=debian\n", "sudo apt-get install -y libnss3-tools"},
		{"Ubuntu", "linux", "ID=ubuntu\nID_LIKE=debian\n", "sudo apt-get install -y libnss3-tools"},
		{"Linux Mint", "linux", "ID=linuxmint\nID_LIKE=\"ubuntu debian\"\n", "sudo apt-get install -y libnss3-tools"},
		{"Fedora", "linux", "ID=fedora\n", "sudo dnf install nss-tools"},
		{"Rocky", "linux", "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n", "sudo dnf install nss-tools"},
		{"Arch", "linux", "ID=arch\n", "sudo pacman -S nss"},
		{"Manjaro", "linux", "ID=manjaro\nID_LIKE=arch\n", "sudo pacman -S nss"},
		{"openSUSE", "linux", "ID=\"opensuse-tumbleweed\"\nID_LIKE=\"opensuse suse\"\n", "sudo zypper install mozilla-nss-tools"},
		{"unknown", "linux", "", "sudo apt-get install -y libnss3-tools (Debian/Ubuntu), sudo dnf install nss-tools (Fedora), or sudo pacman -S nss (Arch)"},
		{"macOS", "darwin", "", "brew install nss"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &trustEnv{goos: tc.goos, osRelease: tc.osRelease}
			if got := e.nssToolsFix(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestLinuxSystemStoreCommands(t *testing.T) {
	ca := newTestCA(t)
	anchorDir := t.TempDir()
	sum := sha256.Sum256(ca.Cert.Raw)
	anchor := filepath.Join(anchorDir, "remixproxy-"+hex.EncodeToString(sum[:8])+".crt")
	tests := []struct {
		name         string
		op           trustOp
		euid         int
		have         []string // commands on PATH
		trusted      bool     // the system pool verifies the CA
		anchorExists bool
		failCmd      string // a command that fails
		noAnchorDir  bool
		want         string
		wantCmds     []string
		whyIn, fixIn string
	}{
		{
			name: "install as root", op: opInstall, euid: 0, have: []string{"update-ca-certificates"},
			want: "changed",
			wantCmds: []string{
				"install -m 0644 " + ca.CertPath + " " + anchor,
				"update-ca-certificates",
			},
		},
		{
			name: "install with sudo", op: opInstall, euid: 1000, have: []string{"update-ca-certificates", "sudo"},
			want: "changed",
			wantCmds: []string{
				"sudo -- install -m 0644 " + ca.CertPath + " " + anchor,
				"sudo -- update-ca-certificates",
			},
		},
		{
			name: "install without sudo", op: opInstall, euid: 1000, have: []string{"update-ca-certificates"},
			want: "skipped", whyIn: "needs root, and sudo is not installed",
			fixIn: "su -c 'install -m 0644 " + ca.CertPath + " " + anchor + " && update-ca-certificates'",
		},
		{
			name: "install when already trusted", op: opInstall, euid: 1000, trusted: true,
			have: []string{"update-ca-certificates", "sudo"}, want: "already",
		},
		{
			name: "install without update-ca-certificates", op: opInstall, euid: 0,
			want: "skipped", whyIn: "update-ca-certificates is not installed", fixIn: "sudo apt-get install -y ca-certificates",
		},
		{
			name: "install with no anchor directory", op: opInstall, euid: 0, noAnchorDir: true,
			want: "skipped", whyIn: "no system trust directory", fixIn: "sudo apt-get install -y ca-certificates",
		},
		{
			name: "install fails", op: opInstall, euid: 0, have: []string{"update-ca-certificates"},
			failCmd: "update-ca-certificates", want: "skipped",
			whyIn:    "`update-ca-certificates` failed: exit status 1: boom",
			fixIn:    "install -m 0644 " + ca.CertPath + " " + anchor + " && update-ca-certificates",
			wantCmds: []string{"install -m 0644 " + ca.CertPath + " " + anchor, "update-ca-certificates"},
		},
		{
			name: "uninstall with sudo", op: opUninstall, euid: 1000, trusted: true, anchorExists: true,
			have: []string{"update-ca-certificates", "sudo"}, want: "changed",
			wantCmds: []string{"sudo -- rm -f " + anchor, "sudo -- update-ca-certificates"},
		},
		{
			name: "uninstall when absent", op: opUninstall, euid: 1000,
			have: []string{"update-ca-certificates", "sudo"}, want: "already",
		},
		{
			name: "uninstall of a CA added another way", op: opUninstall, euid: 0, trusted: true,
			have: []string{"update-ca-certificates"}, want: "skipped", whyIn: "added another way", fixIn: anchorDir,
		},
		{
			name: "check trusted", op: opCheck, trusted: true, want: "already",
		},
		{
			name: "check untrusted", op: opCheck, want: "none",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(anchor)
			if tc.anchorExists {
				if err := os.WriteFile(anchor, ca.CertPEM, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var ran []string
			e := &trustEnv{
				goos:          "linux",
				euid:          tc.euid,
				osRelease:     debianOSRelease,
				systemTrusted: func(*x509.Certificate) bool { return tc.trusted },
				anchorPattern: filepath.Join(anchorDir, "%s.crt"),
				updateCommand: []string{"update-ca-certificates"},
				lookPath: func(name string) (string, error) {
					if slices.Contains(tc.have, name) {
						return "/usr/bin/" + name, nil
					}
					return "", exec.ErrNotFound
				},
				run: func(_ context.Context, name string, args ...string) ([]byte, error) {
					ran = append(ran, shellJoin(append([]string{name}, args...)...))
					if name == tc.failCmd || (len(args) > 1 && args[1] == tc.failCmd) {
						return []byte("boom\n"), errors.New("exit status 1")
					}
					return nil, nil
				},
			}
			if tc.noAnchorDir {
				e.anchorPattern, e.updateCommand = "", nil
			}
			r := e.system(t.Context(), ca, ca.CertPath, tc.op)
			if got := state(r); got != tc.want {
				t.Errorf("got %s (%+v), want %s", got, r, tc.want)
			}
			if !slices.Equal(ran, tc.wantCmds) {
				t.Errorf("commands:\n got %q\nwant %q", ran, tc.wantCmds)
			}
			if !strings.Contains(r.Why, tc.whyIn) {
				t.Errorf("Why %q, want it to contain %q", r.Why, tc.whyIn)
			}
			if !strings.Contains(r.Fix, tc.fixIn) {
				t.Errorf("Fix %q, want it to contain %q", r.Fix, tc.fixIn)
			}
		})
	}
}

func TestLinuxAnchorNameFollowsTruststoreLayout(t *testing.T) {
	// On this machine truststore detected a layout (or none); the name must fit its pattern.
	if truststore.SystemTrustFilename == "" {
		if runtime.GOOS == "linux" {
			t.Fatal("truststore found no system trust directory on this Linux machine: `remixproxy trust` could not install the CA here either (install ca-certificates)")
		}
		t.Skipf("the system trust directory layout is Linux's; this is %s", runtime.GOOS)
	}
	ca := newTestCA(t)
	e := &trustEnv{anchorPattern: truststore.SystemTrustFilename}
	got := e.anchorPath(ca)
	if !strings.Contains(got, "remixproxy-") || strings.ContainsAny(got, " (),") {
		t.Errorf("anchor path %q, want a plain remixproxy-<fingerprint> file name", got)
	}
}

func TestPlatformSystemStore(t *testing.T) {
	ca := newTestCA(t)
	tests := []struct {
		name     string
		goos     string
		op       trustOp
		trusted  bool
		err      error
		want     string
		wantCall bool
		fixIn    string
	}{
		{"macOS install", "darwin", opInstall, false, nil, "changed", true, ""},
		{"macOS install already", "darwin", opInstall, true, nil, "already", false, ""},
		{"macOS install fails", "darwin", opInstall, false, errors.New("sudo: a password is required"), "skipped", true,
			"sudo security add-trusted-cert -d -r trustRoot -k /Library/Keychains/System.keychain " + ca.CertPath},
		{"macOS uninstall", "darwin", opUninstall, true, nil, "changed", true, ""},
		{"macOS uninstall absent", "darwin", opUninstall, false, nil, "already", false, ""},
		{"Windows install fails", "windows", opInstall, false, errors.New("denied"), "skipped", true, "certutil -user -addstore Root " + ca.CertPath},
		{"unsupported system", "plan9", opInstall, false, truststore.ErrTrustNotSupported, "skipped", true, "by hand"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			fake := func(*x509.Certificate) error { called = true; return tc.err }
			e := &trustEnv{
				goos:              tc.goos,
				systemTrusted:     func(*x509.Certificate) bool { return tc.trusted },
				platformInstall:   fake,
				platformUninstall: fake,
			}
			r := e.system(t.Context(), ca, ca.CertPath, tc.op)
			if got := state(r); got != tc.want {
				t.Errorf("got %s (%+v), want %s", got, r, tc.want)
			}
			if called != tc.wantCall {
				t.Errorf("truststore called: got %v, want %v", called, tc.wantCall)
			}
			if !strings.Contains(r.Fix, tc.fixIn) {
				t.Errorf("Fix %q, want it to contain %q", r.Fix, tc.fixIn)
			}
		})
	}
}

func TestJavaStore(t *testing.T) {
	ca := newTestCA(t)
	javaHome := t.TempDir()
	keytool := filepath.Join(javaHome, "bin", "keytool")
	cacerts := filepath.Join(javaHome, "lib", "security", "cacerts")
	for _, p := range []string{keytool, cacerts} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	listed := "remixproxy, 1 Jan 2026, trustedCertEntry,\nCertificate fingerprint (SHA-256): " + ca.Fingerprint() + "\n"
	nick := nickname(ca.Cert)
	tests := []struct {
		name      string
		javaHome  string
		op        trustOp
		list      string
		want      string
		wantCmd   string // the modifying command, if any
		whyIn     string
		wantCalls int
	}{
		{"no JAVA_HOME", "", opInstall, "", "skipped", "", "JAVA_HOME is not set", 0},
		{"not a JDK", t.TempDir(), opInstall, "", "skipped", "", "no keytool", 0},
		{"install", javaHome, opInstall, "other, trustedCertEntry\n", "changed",
			shellJoin(keytool, "-importcert", "-noprompt", "-keystore", cacerts, "-storepass", "changeit", "-file", ca.CertPath, "-alias", nick), "", 2},
		{"install already", javaHome, opInstall, listed, "already", "", "", 1},
		{"uninstall", javaHome, opUninstall, listed, "changed",
			shellJoin(keytool, "-delete", "-alias", nick, "-keystore", cacerts, "-storepass", "changeit"), "", 2},
		{"uninstall absent", javaHome, opUninstall, "", "already", "", "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ran []string
			e := &trustEnv{
				goos:   "linux",
				euid:   0,
				getenv: func(k string) string { return map[string]string{"JAVA_HOME": tc.javaHome}[k] },
				run: func(_ context.Context, name string, args ...string) ([]byte, error) {
					ran = append(ran, shellJoin(append([]string{name}, args...)...))
					if slices.Contains(args, "-list") {
						return []byte(tc.list), nil
					}
					return nil, nil
				},
			}
			r := e.java(t.Context(), ca, ca.CertPath, tc.op)
			if got := state(r); got != tc.want {
				t.Errorf("got %s (%+v), want %s", got, r, tc.want)
			}
			if len(ran) != tc.wantCalls {
				t.Errorf("ran %d commands %q, want %d", len(ran), ran, tc.wantCalls)
			}
			if tc.wantCmd != "" && (len(ran) == 0 || ran[len(ran)-1] != tc.wantCmd) {
				t.Errorf("last command:\n got %q\nwant %q", ran, tc.wantCmd)
			}
			if !strings.Contains(r.Why, tc.whyIn) {
				t.Errorf("Why %q, want it to contain %q", r.Why, tc.whyIn)
			}
		})
	}
}

func TestApplyWithoutCA(t *testing.T) {
	e, _ := testEnv(t)
	for _, ca := range []*CA{nil, {}} {
		if _, err := e.apply(t.Context(), ca, opInstall); err == nil || !strings.Contains(err.Error(), "remixproxy ca") {
			t.Errorf("apply(%v): got %v, want an error saying to run remixproxy ca", ca, err)
		}
	}
}

func TestShellJoin(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"plain", []string{"certutil", "-A", "-t", "C,,"}, "certutil -A -t C,,"},
		{"spaces", []string{"certutil", "-n", "remixproxy CA (h, 2026-01-02) 123"}, `certutil -n 'remixproxy CA (h, 2026-01-02) 123'`},
		{"quote", []string{"echo", "it's"}, `echo 'it'\''s'`},
		{"empty", []string{"x", ""}, `x ''`},
		{"dollar", []string{"echo", "$HOME"}, `echo '$HOME'`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := shellJoin(tc.argv...); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}
