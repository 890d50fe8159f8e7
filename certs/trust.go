package certs

import (
	"context"
	"crypto/sha1" //nolint:gosec // only to find the CA in Java 8's keytool listing
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/smallstep/truststore"
)

// StoreResult is what happened to one trust store.
type StoreResult struct {
	Store   string // "system", "nss (Chrome/Chromium profile ~/.pki/nssdb)", "firefox (N profiles)", "java"
	Changed bool   // installed/removed now
	Already bool   // was already in the wanted state (for Trusted: the CA is trusted there)
	Skipped bool   // could not be done (or, for Trusted, could not be checked)
	Why     string // for Skipped: exactly what is missing or what failed
	Fix     string // for Skipped: the exact command that fixes it, e.g. "sudo apt-get install -y libnss3-tools"
}

// Store names as they appear in StoreResult.Store.
const (
	storeSystem  = "system"
	storeNSS     = "nss (Chrome/Chromium profile ~/.pki/nssdb)"
	storeFirefox = "firefox"
	storeJava    = "java"
)

// Install makes the system and browser trust stores trust ca. Stores already trusting it are
// reported Already; stores that cannot be changed here are reported Skipped with what is missing
// and the command that fixes it. The system store may ask for the sudo password. The error is
// only for problems that stop every store (no CA, no temporary file).
func Install(ca *CA) ([]StoreResult, error) {
	return newTrustEnv().apply(context.Background(), ca, opInstall)
}

// Uninstall removes ca from the stores Install writes. Stores without it are reported Already.
func Uninstall(ca *CA) ([]StoreResult, error) {
	return newTrustEnv().apply(context.Background(), ca, opUninstall)
}

// Trusted reports per store whether ca is currently trusted there (Already), not trusted
// (neither Already nor Skipped), or cannot be checked (Skipped, with Why and Fix). It only reads:
// it never prompts and never asks for sudo. Java is left out, because checking it starts a JVM.
func Trusted(ca *CA) []StoreResult {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := newTrustEnv().apply(ctx, ca, opCheck)
	if err != nil {
		return []StoreResult{{Store: storeSystem, Skipped: true, Why: err.Error(), Fix: "remixproxy ca"}}
	}
	return res
}

type trustOp int

const (
	opCheck trustOp = iota
	opInstall
	opUninstall
)

// trustEnv is everything the trust code reads from or does to the machine, so tests can run it
// against a temporary HOME with fake commands and never touch the real stores.
type trustEnv struct {
	goos string
	// home is the user's home directory ("" if unknown); NSS databases are looked up under it.
	home string
	// euid is the effective user id (-1 where there is none); not 0 means sudo is needed.
	euid int
	// getenv reads the environment (JAVA_HOME).
	getenv func(string) string
	// lookPath finds commands on PATH.
	lookPath func(string) (string, error)
	// run runs a command and returns its combined output.
	run func(ctx context.Context, name string, args ...string) ([]byte, error)
	// osRelease is the contents of /etc/os-release, for install hints.
	osRelease string

	// systemTrusted says whether the OS trust store trusts cert (read-only, never prompts).
	systemTrusted func(cert *x509.Certificate) bool

	// Linux system store: the anchor file name pattern and the update command, as detected by
	// truststore for this distribution ("" and nil if none was found).
	anchorPattern string
	updateCommand []string

	// Other systems' stores are changed by truststore (macOS: security + trust settings;
	// Windows: the user's ROOT store through crypt32).
	platformInstall   func(cert *x509.Certificate) error
	platformUninstall func(cert *x509.Certificate) error
}

func newTrustEnv() *trustEnv {
	home, _ := os.UserHomeDir()
	osRelease, _ := os.ReadFile("/etc/os-release")
	return &trustEnv{
		goos:          runtime.GOOS,
		home:          home,
		euid:          os.Geteuid(),
		getenv:        os.Getenv,
		lookPath:      exec.LookPath,
		run:           runCommand,
		osRelease:     string(osRelease),
		systemTrusted: systemTrusts,
		anchorPattern: truststore.SystemTrustFilename,
		updateCommand: truststore.SystemTrustCommand,
		platformInstall: func(cert *x509.Certificate) error {
			return truststore.Install(cert) // no options: the system store only
		},
		platformUninstall: func(cert *x509.Certificate) error {
			return truststore.Uninstall(cert)
		},
	}
}

func runCommand(ctx context.Context, name string, args ...string) ([]byte, error) {
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

// systemTrusts verifies cert against the OS roots (on macOS and Windows, the platform verifier).
func systemTrusts(cert *x509.Certificate) bool {
	pool, err := x509.SystemCertPool()
	if err != nil {
		return false
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err == nil
}

func (e *trustEnv) apply(ctx context.Context, ca *CA, op trustOp) ([]StoreResult, error) {
	if ca == nil || ca.Cert == nil {
		return nil, errors.New("changing trust stores: no CA loaded (run `remixproxy ca` first)")
	}
	certPath := ca.CertPath
	if certPath == "" && op != opCheck {
		// Commands read the certificate from a file; make one if the CA has none.
		f, err := os.CreateTemp("", "remixproxy-ca-*.pem")
		if err != nil {
			return nil, fmt.Errorf("writing the CA certificate to a temporary file: %w (check $TMPDIR)", err)
		}
		defer os.Remove(f.Name())
		_, err = f.Write(ca.CertPEM)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("writing the CA certificate to %s: %w (check $TMPDIR)", f.Name(), err)
		}
		certPath = f.Name()
	}
	results := []StoreResult{e.system(ctx, ca, certPath, op)}
	if e.goos == "linux" {
		results = append(results, e.nss(ctx, ca, certPath, op, storeNSS, e.chromeNSSDBs(), e.chromeMissing()))
	}
	if e.goos == "linux" || e.goos == "darwin" {
		dbs := e.firefoxDBs()
		name := storeFirefox
		if len(dbs) > 0 {
			name = fmt.Sprintf("firefox (%d profile%s)", len(dbs), plural(len(dbs)))
		}
		results = append(results, e.nss(ctx, ca, certPath, op, name, dbs, e.firefoxMissing()))
	}
	if op != opCheck {
		results = append(results, e.java(ctx, ca, certPath, op))
	}
	return results, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// nickname is the name the CA gets in NSS and Java stores; it matches truststore's, so either
// tool finds what the other installed.
func nickname(cert *x509.Certificate) string {
	return cert.Subject.CommonName + " " + cert.SerialNumber.String()
}

func skipped(store, why, fix string) StoreResult {
	return StoreResult{Store: store, Skipped: true, Why: why, Fix: fix}
}

// --- system store ---

func (e *trustEnv) system(ctx context.Context, ca *CA, certPath string, op trustOp) StoreResult {
	trusted := e.systemTrusted(ca.Cert)
	if op == opCheck {
		return StoreResult{Store: storeSystem, Already: trusted}
	}
	if e.goos == "linux" {
		return e.linuxSystem(ctx, ca, certPath, op, trusted)
	}
	switch {
	case op == opInstall && trusted, op == opUninstall && !trusted:
		return StoreResult{Store: storeSystem, Already: true}
	}
	var err error
	if op == opInstall {
		err = e.platformInstall(ca.Cert)
	} else {
		err = e.platformUninstall(ca.Cert)
	}
	if errors.Is(err, truststore.ErrTrustNotSupported) || errors.Is(err, truststore.ErrNotSupported) {
		return skipped(storeSystem, "remixproxy cannot change the system trust store on "+e.goos,
			"add "+certPath+" to the system's trusted roots by hand")
	}
	if err != nil {
		return skipped(storeSystem, fmt.Sprintf("%s failed: %v", opVerb(op), err), e.platformFix(certPath, op))
	}
	return StoreResult{Store: storeSystem, Changed: true}
}

func opVerb(op trustOp) string {
	if op == opUninstall {
		return "removing the CA"
	}
	return "adding the CA"
}

func (e *trustEnv) platformFix(certPath string, op trustOp) string {
	switch {
	case e.goos == "darwin" && op == opInstall:
		return shellJoin("sudo", "security", "add-trusted-cert", "-d", "-r", "trustRoot", "-k", "/Library/Keychains/System.keychain", certPath)
	case e.goos == "darwin":
		return shellJoin("sudo", "security", "remove-trusted-cert", "-d", certPath)
	case e.goos == "windows" && op == opInstall:
		return "certutil -user -addstore Root " + certPath
	case e.goos == "windows":
		return "certutil -user -delstore Root " + certPath
	}
	return "change the system's trusted roots by hand with " + certPath
}

// linuxSystem copies the CA into the distribution's anchor directory and runs its update
// command (update-ca-certificates, update-ca-trust or trust extract-compat), through sudo when
// not root. The anchor file name carries the CA's fingerprint, so several installs never clash.
func (e *trustEnv) linuxSystem(ctx context.Context, ca *CA, certPath string, op trustOp, trusted bool) StoreResult {
	if e.anchorPattern == "" || len(e.updateCommand) == 0 {
		return skipped(storeSystem, "no system trust directory found (looked for /etc/pki/ca-trust/source/anchors, "+
			"/usr/local/share/ca-certificates, /usr/share/pki/trust/anchors, /etc/ca-certificates/trust-source/anchors)",
			e.caCertificatesFix())
	}
	anchor := e.anchorPath(ca)
	_, statErr := os.Stat(anchor)
	anchorExists := statErr == nil
	switch {
	case op == opInstall && trusted:
		return StoreResult{Store: storeSystem, Already: true}
	case op == opUninstall && !trusted && !anchorExists:
		return StoreResult{Store: storeSystem, Already: true}
	case op == opUninstall && !anchorExists:
		return skipped(storeSystem, "the system trusts this CA, but not through "+anchor+": it was added another way",
			"remove it where it was added (look in "+filepath.Dir(anchor)+"), then run "+shellJoin(e.updateCommand...))
	}
	if _, err := e.lookPath(e.updateCommand[0]); err != nil {
		return skipped(storeSystem, e.updateCommand[0]+" is not installed", e.caCertificatesFix())
	}
	var steps [][]string
	if op == opInstall {
		steps = [][]string{{"install", "-m", "0644", certPath, anchor}, e.updateCommand}
	} else {
		steps = [][]string{{"rm", "-f", anchor}, e.updateCommand}
	}
	var prefix []string
	if e.euid != 0 {
		if _, err := e.lookPath("sudo"); err != nil {
			return skipped(storeSystem, "changing the system trust store needs root, and sudo is not installed",
				"su -c "+shellQuote(shellJoin(steps[0]...)+" && "+shellJoin(steps[1]...)))
		}
		prefix = []string{"sudo", "--"}
	}
	for _, step := range steps {
		argv := append(append([]string{}, prefix...), step...)
		if out, err := e.run(ctx, argv[0], argv[1:]...); err != nil {
			return skipped(storeSystem, fmt.Sprintf("`%s` failed: %v%s", shellJoin(argv...), err, outputTail(out)),
				shellJoin(append(append([]string{}, prefix...), steps[0]...)...)+" && "+
					shellJoin(append(append([]string{}, prefix...), steps[1]...)...))
		}
	}
	return StoreResult{Store: storeSystem, Changed: true}
}

func (e *trustEnv) anchorPath(ca *CA) string {
	sum := sha256.Sum256(ca.Cert.Raw)
	return fmt.Sprintf(e.anchorPattern, "remixproxy-"+hex.EncodeToString(sum[:8]))
}

// --- NSS stores (Chrome/Chromium on Linux, Firefox) ---

// missingStore says why a store has no database and how to get one.
type missingStore struct {
	why, fix      string
	fixNeedsTools bool // fix runs certutil, so it must install it first where it is missing
}

func (e *trustEnv) chromeNSSDBs() []string {
	if e.home == "" {
		return nil
	}
	return nssDBs([]string{filepath.Join(e.home, ".pki", "nssdb")})
}

func (e *trustEnv) chromeMissing() missingStore {
	if e.home == "" {
		return missingStore{why: "$HOME is not set, so ~/.pki/nssdb cannot be found", fix: "export HOME=/home/$(id -un)"}
	}
	return missingStore{
		why:           "no NSS database at ~/.pki/nssdb (Chrome/Chromium makes it when it first starts)",
		fix:           "mkdir -p ~/.pki/nssdb && certutil -d sql:$HOME/.pki/nssdb -N --empty-password && remixproxy trust",
		fixNeedsTools: true,
	}
}

// firefoxProfileGlobs are where Firefox keeps profiles: the plain, snap and flatpak installs on
// Linux; the one place on macOS. (Windows Firefox reads the Windows store.)
func (e *trustEnv) firefoxProfileGlobs() []string {
	if e.home == "" {
		return nil
	}
	if e.goos == "darwin" {
		return []string{filepath.Join(e.home, "Library", "Application Support", "Firefox", "Profiles", "*")}
	}
	return []string{
		filepath.Join(e.home, ".mozilla", "firefox", "*"),
		filepath.Join(e.home, "snap", "firefox", "common", ".mozilla", "firefox", "*"),
		filepath.Join(e.home, ".var", "app", "org.mozilla.firefox", ".mozilla", "firefox", "*"),
	}
}

func (e *trustEnv) firefoxDBs() []string {
	var dirs []string
	for _, g := range e.firefoxProfileGlobs() {
		m, _ := filepath.Glob(g)
		dirs = append(dirs, m...)
	}
	return nssDBs(dirs)
}

func (e *trustEnv) firefoxMissing() missingStore {
	return missingStore{
		why: "no Firefox profile with a certificate database found (looked in " + strings.Join(e.firefoxProfileGlobs(), ", ") + ")",
		fix: "start Firefox once so it creates its profile, then run remixproxy trust again (not needed if you do not use Firefox)",
	}
}

// nssDBs returns the NSS database names ("sql:DIR" or legacy "dbm:DIR") found in dirs.
func nssDBs(dirs []string) []string {
	var dbs []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "cert9.db")); err == nil {
			dbs = append(dbs, "sql:"+d)
		} else if _, err := os.Stat(filepath.Join(d, "cert8.db")); err == nil {
			dbs = append(dbs, "dbm:"+d)
		}
	}
	return dbs
}

// certutil finds NSS's certutil: on PATH, or on macOS in Homebrew's nss. On Windows a
// "certutil" on PATH is Microsoft's unrelated tool, so NSS stores are not used there.
func (e *trustEnv) certutil(ctx context.Context) (string, bool) {
	if p, err := e.lookPath("certutil"); err == nil {
		return p, true
	}
	if e.goos == "darwin" {
		if out, err := e.run(ctx, "brew", "--prefix", "nss"); err == nil {
			p := filepath.Join(strings.TrimSpace(string(out)), "bin", "certutil")
			if _, err := os.Stat(p); err == nil {
				return p, true
			}
		}
	}
	return "", false
}

func (e *trustEnv) nss(ctx context.Context, ca *CA, certPath string, op trustOp, store string, dbs []string, missing missingStore) StoreResult {
	if len(dbs) == 0 {
		if op == opUninstall {
			return StoreResult{Store: store, Already: true}
		}
		fix := missing.fix
		if _, ok := e.certutil(ctx); missing.fixNeedsTools && !ok {
			if e.goos == "darwin" || e.distro() != "" {
				fix = e.nssToolsFix() + " && " + fix
			} else {
				fix = "install certutil (" + e.nssToolsFix() + "), then " + fix
			}
		}
		return skipped(store, missing.why, fix)
	}
	certutil, ok := e.certutil(ctx)
	if !ok {
		return skipped(store, "certutil (the NSS tools) is not installed, so "+store+" cannot be "+checkedOrChanged(op),
			e.nssToolsFix())
	}
	nick := nickname(ca.Cert)
	// trusted: certutil -V verifies the CA as an SSL CA, so it fails if the trust flags are missing.
	trusted := func(db string) bool {
		_, err := e.run(ctx, certutil, "-V", "-d", db, "-u", "L", "-n", nick)
		return err == nil
	}
	present := func(db string) bool {
		_, err := e.run(ctx, certutil, "-L", "-d", db, "-n", nick)
		return err == nil
	}

	var todo []string
	for _, db := range dbs {
		if (op == opUninstall && present(db)) || (op != opUninstall && !trusted(db)) {
			todo = append(todo, db)
		}
	}
	if len(todo) == 0 {
		return StoreResult{Store: store, Already: true}
	}
	if op == opCheck {
		return StoreResult{Store: store}
	}
	for _, db := range todo {
		var argv []string
		if op == opInstall {
			argv = []string{certutil, "-A", "-d", db, "-t", "C,,", "-n", nick, "-i", certPath}
		} else {
			argv = []string{certutil, "-D", "-d", db, "-n", nick}
		}
		out, err := e.run(ctx, argv[0], argv[1:]...)
		if err != nil {
			return skipped(store, fmt.Sprintf("`%s` failed: %v%s", shellJoin(argv...), err, outputTail(out)),
				shellJoin(argv...)+" (close the browser first if it holds the database)")
		}
		if op == opInstall && !trusted(db) {
			return skipped(store, "certutil added the CA to "+db+" but it still does not verify as trusted",
				shellJoin(argv...))
		}
		// A database may hold the nickname more than once; remove every copy.
		for n := 0; op == opUninstall && n < 8 && present(db); n++ {
			if _, err := e.run(ctx, argv[0], argv[1:]...); err != nil {
				break
			}
		}
	}
	return StoreResult{Store: store, Changed: true}
}

func checkedOrChanged(op trustOp) string {
	if op == opCheck {
		return "checked"
	}
	return "changed"
}

// --- Java ---

// java imports the CA into $JAVA_HOME's cacerts with keytool, as truststore's Java option does
// (store password "changeit"), through sudo when the keystore is not writable.
func (e *trustEnv) java(ctx context.Context, ca *CA, certPath string, op trustOp) StoreResult {
	home := e.getenv("JAVA_HOME")
	if home == "" {
		return skipped(storeJava, "JAVA_HOME is not set, so no Java keystore was found (only Java programs need it)",
			"export JAVA_HOME=/path/to/your/jdk && remixproxy "+trustCommand(op))
	}
	keytool := filepath.Join(home, "bin", "keytool")
	if e.goos == "windows" {
		keytool += ".exe"
	}
	if _, err := os.Stat(keytool); err != nil {
		return skipped(storeJava, "no keytool at "+keytool+" (JAVA_HOME="+home+" is not a JDK or JRE)",
			"export JAVA_HOME=/path/to/your/jdk && remixproxy "+trustCommand(op))
	}
	var cacerts string
	for _, p := range []string{filepath.Join(home, "lib", "security", "cacerts"), filepath.Join(home, "jre", "lib", "security", "cacerts")} {
		if _, err := os.Stat(p); err == nil {
			cacerts = p
		}
	}
	if cacerts == "" {
		return skipped(storeJava, "no cacerts keystore under "+home+"/lib/security or "+home+"/jre/lib/security",
			"export JAVA_HOME=/path/to/your/jdk && remixproxy "+trustCommand(op))
	}
	out, err := e.run(ctx, keytool, "-list", "-keystore", cacerts, "-storepass", truststore.JavaStorePass)
	if err != nil {
		return skipped(storeJava, fmt.Sprintf("`keytool -list -keystore %s` failed: %v%s", cacerts, err, outputTail(out)),
			"check that "+cacerts+" is a keystore with the password "+truststore.JavaStorePass)
	}
	has := keytoolListHas(out, ca.Cert)
	if (op == opInstall && has) || (op == opUninstall && !has) {
		return StoreResult{Store: storeJava, Already: true}
	}
	argv := []string{keytool, "-importcert", "-noprompt", "-keystore", cacerts, "-storepass", truststore.JavaStorePass,
		"-file", certPath, "-alias", nickname(ca.Cert)}
	if op == opUninstall {
		argv = []string{keytool, "-delete", "-alias", nickname(ca.Cert), "-keystore", cacerts, "-storepass", truststore.JavaStorePass}
	}
	if e.euid > 0 && !writable(cacerts) {
		if _, err := e.lookPath("sudo"); err != nil {
			return skipped(storeJava, cacerts+" is not writable by you, and sudo is not installed",
				"su -c "+shellQuote(shellJoin(argv...)))
		}
		argv = append([]string{"sudo", "--"}, argv...)
	}
	if out, err := e.run(ctx, argv[0], argv[1:]...); err != nil {
		return skipped(storeJava, fmt.Sprintf("`%s` failed: %v%s", shellJoin(argv...), err, outputTail(out)), shellJoin(argv...))
	}
	return StoreResult{Store: storeJava, Changed: true}
}

func trustCommand(op trustOp) string {
	if op == opUninstall {
		return "untrust"
	}
	return "trust"
}

func writable(path string) bool {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// keytoolListHas reports whether keytool -list output shows cert's SHA-256 (Java 9+) or SHA-1
// (Java 8) fingerprint.
func keytoolListHas(out []byte, cert *x509.Certificate) bool {
	list := strings.ReplaceAll(strings.ToUpper(string(out)), ":", "")
	s256 := sha256.Sum256(cert.Raw)
	s1 := sha1.Sum(cert.Raw) //nolint:gosec // matching keytool's listing, not security
	return strings.Contains(list, strings.ToUpper(hex.EncodeToString(s256[:]))) ||
		strings.Contains(list, strings.ToUpper(hex.EncodeToString(s1[:])))
}

// --- install hints ---

// distro returns "debian", "fedora", "arch", "suse" or "" from /etc/os-release's ID and ID_LIKE.
func (e *trustEnv) distro() string {
	var ids []string
	for _, line := range strings.Split(e.osRelease, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if ok && (k == "ID" || k == "ID_LIKE") {
			ids = append(ids, strings.Fields(strings.ToLower(strings.Trim(v, `"'`)))...)
		}
	}
	for _, id := range ids {
		switch id {
		case "debian", "ubuntu":
			return "debian"
		case "fedora", "rhel", "centos":
			return "fedora"
		case "arch":
			return "arch"
		case "suse", "opensuse":
			return "suse"
		}
	}
	return ""
}

func (e *trustEnv) nssToolsFix() string {
	if e.goos == "darwin" {
		return "brew install nss"
	}
	switch e.distro() {
	case "debian":
		return "sudo apt-get install -y libnss3-tools"
	case "fedora":
		return "sudo dnf install nss-tools"
	case "arch":
		return "sudo pacman -S nss"
	case "suse":
		return "sudo zypper install mozilla-nss-tools"
	}
	return "sudo apt-get install -y libnss3-tools (Debian/Ubuntu), sudo dnf install nss-tools (Fedora), or sudo pacman -S nss (Arch)"
}

func (e *trustEnv) caCertificatesFix() string {
	switch e.distro() {
	case "debian":
		return "sudo apt-get install -y ca-certificates"
	case "fedora":
		return "sudo dnf install ca-certificates"
	case "arch":
		return "sudo pacman -S ca-certificates p11-kit"
	case "suse":
		return "sudo zypper install ca-certificates"
	}
	return "install your distribution's ca-certificates package"
}

// --- helpers ---

// outputTail formats the last part of a command's output for an error message.
func outputTail(out []byte) string {
	s := strings.TrimSpace(string(out))
	if s == "" {
		return ""
	}
	if len(s) > 300 {
		s = "…" + s[len(s)-300:]
	}
	return ": " + strings.ReplaceAll(s, "\n", " / ")
}

// shellJoin formats a command line that can be pasted into a POSIX shell.
func shellJoin(argv ...string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,@+%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
